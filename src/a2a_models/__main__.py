"""The ``a2a-models`` command (also ``python -m a2a_models``); see :mod:`a2a_models._cli`."""

from __future__ import annotations

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
