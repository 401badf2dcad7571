"""The ``a2a-models`` command line: serve an agent, talk to agents, manage their tasks.

::

    a2a-models serve [--store URL] [--agent demo|conformance|module:object] ...
    a2a-models send URL TEXT [--stream/--no-stream] [--no-wait] [--json] ...
    a2a-models get|cancel|follow URL TASK
    a2a-models list URL [--context ID] [--state STATE] [--limit N]
    a2a-models push set|get|list|delete URL TASK ...
    a2a-models card URL [--json | --format 1.0|0.3|raw]

Only the standard library is imported until a subcommand runs; the client
and server subcommands need the ``http`` extra (``pip install a2a-models[http]``),
which brings rich for the terminal output. See ``docs/cli.md``.
"""

from __future__ import annotations

from ._main import build_parser, main

TYPE_CHECKING = False  # importing typing would cost start-up time; mypy knows the name
if TYPE_CHECKING:
    from ._serve import ServeOptions, load_agent

__all__ = ["ServeOptions", "build_parser", "load_agent", "main"]


def __getattr__(name: str) -> object:
    # ServeOptions needs attrs; the command line itself must not pay for it.
    if name in ("ServeOptions", "load_agent"):
        from . import _serve

        return getattr(_serve, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
