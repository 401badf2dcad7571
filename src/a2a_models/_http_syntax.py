"""HTTP's own syntax that values are checked against before they are sent (RFC 9110)."""

from __future__ import annotations

import re

__all__ = ["TOKEN", "field_value_problem"]

#: A token (RFC 9110 §5.6.2): a header's name (§5.1), an authentication scheme (§11.1).
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def field_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be sent as a header's value as it is (``None``: it can):
    printable ASCII, spaces and tabs only (§5.5; obs-text is left out, as clients
    encode values as ASCII)."""
    bad = next((c for c in value if (c < " " and c != "\t") or c == "\x7f"), None)
    if bad is not None:
        return f"contains the control character {bad!r}"
    if not value.isascii():
        return "contains characters outside ASCII"
    return None
