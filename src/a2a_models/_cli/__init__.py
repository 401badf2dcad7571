"""The ``a2a-models`` command line: talk to agents, show their cards, serve one.

::

    a2a-models send URL "text" [--stream] [--version auto|1.0|0.3] [--header K:V]...
    a2a-models card URL
    a2a-models serve [--host H] [--port P] [--store URL] [--agent demo|conformance|module:object] ...

Only the standard library is imported until a subcommand runs; the HTTP
subcommands need the ``http`` extra (``pip install a2a-models[http]``).
"""

from ._main import build_parser, main
from ._serve import ServeOptions, load_agent

__all__ = ["ServeOptions", "build_parser", "load_agent", "main"]
