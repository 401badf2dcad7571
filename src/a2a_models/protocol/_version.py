"""A2A protocol versions: header negotiation (spec §3.6) and normalization."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ..errors import VersionNotSupportedError, quote_input

__all__ = ["SUPPORTED_VERSIONS", "V0_3", "V1_0", "negotiate_version", "normalize_version"]

#: A2A 1.0: ProtoJSON payloads, PascalCase method names.
V1_0: Final = "1.0"
#: A2A 0.3: ``kind``-tagged payloads, ``category/action`` method names.
V0_3: Final = "0.3"
#: Every version this package speaks, newest first.
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = (V1_0, V0_3)

# Major[.Minor[.Patch]]; the patch part is tolerated and dropped (spec §3.6:
# patch numbers MUST NOT be used in negotiation).
_VERSION_RE = re.compile(r"([0-9]{1,6})(?:\.([0-9]{1,6})(?:\.[0-9]{1,6})?)?")


def negotiate_version(
    header_value: str | None, supported: Sequence[str] = SUPPORTED_VERSIONS
) -> str:
    """The ``Major.Minor`` version to serve for an ``A2A-Version`` header value.

    A missing or blank header means ``"0.3"`` (spec §3.6.2 MUST). ``"1"`` is
    read as ``"1.0"`` and a patch suffix is dropped (``"1.0.1"`` → ``"1.0"``,
    ``"0.3.0"`` → ``"0.3"``). Anything unparsable or not in ``supported``
    raises :class:`VersionNotSupportedError` naming the supported versions. The
    header given more than once (joined with commas) is read if its values agree.
    """
    listing = ", ".join(supported) or "none"
    if header_value is None or not header_value.strip():
        if V0_3 in supported:
            return V0_3
        raise VersionNotSupportedError(
            "A missing or empty A2A-Version header means version 0.3, which is not "
            f"supported; send an A2A-Version header. Supported versions: {listing}"
        )
    if "," in header_value:
        # The header given more than once reaches here joined (RFC 9110 §5.3).
        parts = [value for value in header_value.split(",") if value.strip()]
        values = {negotiate_version(value, supported) for value in parts} or {""}
        if len(values) == 1 and "" not in values:
            return values.pop()
        raise VersionNotSupportedError(
            f"A2A-Version given more than once, naming different versions "
            f"({quote_input(header_value)}): send one. Supported versions: {listing}"
        )
    match = _VERSION_RE.fullmatch(header_value.strip())
    if match is None:
        raise VersionNotSupportedError(
            f"Invalid A2A-Version {quote_input(header_value)}: expected Major.Minor such as "
            f"'1.0'. Supported versions: {listing}"
        )
    requested = f"{int(match.group(1))}.{int(match.group(2) or 0)}"
    if requested in supported:
        return requested
    raise VersionNotSupportedError(
        f"A2A version {requested} is not supported. Supported versions: {listing}"
    )


def normalize_version(version: str) -> str:
    """``"1.0"`` or ``"0.3"`` for an already negotiated version (or a ``Dialect``).

    Raises :class:`VersionNotSupportedError` for anything else; use
    :func:`negotiate_version` on raw header values.
    """
    # Dialect is a str enum whose hash differs from its value's: compare by value.
    value = str(getattr(version, "value", version))
    if value == V1_0:
        return V1_0
    if value == V0_3:
        return V0_3
    raise VersionNotSupportedError(
        f"A2A version {quote_input(value)} is not supported. "
        f"Supported versions: {', '.join(SUPPORTED_VERSIONS)}"
    )
