"""Why a user's text file (a configuration or workspace file) cannot be read: one
wording for every such file, whichever adapter reads it."""

from __future__ import annotations

__all__ = ["unreadable"]


def unreadable(exc: OSError | UnicodeDecodeError) -> str:
    """``cannot read: <the system's reason>``, or ``not UTF-8 text (byte 0xe9 at offset
    13)`` for a file whose bytes are not UTF-8."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})"
    return f"cannot read: {exc.strerror or exc}"
