"""What the tests that start real processes share: the ``a2a-models`` command, free
ports (on 127.0.0.1) and the PostgreSQL they use. ``tests/`` is on ``sys.path`` (its
``conftest.py`` puts it there)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

#: The PostgreSQL of the tests (CI's and every machine's: trust auth, database ``test``).
PG_DSN = os.environ.get("A2A_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def a2a_command() -> list[str]:
    """The ``a2a-models`` console script of this interpreter (``python -m`` without it)."""
    script = Path(sys.executable).with_name("a2a-models")
    return [str(script)] if script.exists() else [sys.executable, "-m", "a2a_models"]


def free_port() -> int:
    """A port nothing listens on (right now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
