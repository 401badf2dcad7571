"""The public agent card at ``/.well-known/agent-card.json`` (spec §8.2, §8.6).

A caller that sends ``A2A-Version: 1.0`` (header or query parameter) gets
the card in 1.0 ProtoJSON. Everyone else gets a *combined* card: the 1.0
fields plus the 0.3 ones (``url``, ``preferredTransport``, ``protocolVersion``,
``additionalInterfaces``, ``supportsAuthenticatedExtendedCard``, ``security``,
type-tagged ``securitySchemes``...), so a client of either generation reads
it and ignores the rest, as the official SDK serves it.

Merging rule (the SDK's ``agent_card_to_dict``): objects merge key by key,
lists of the same position merge element by element, and on a conflict the
1.0 value wins. The two generations never collide on a key that matters:
1.0 security schemes are ``{"apiKeySecurityScheme": {...}}`` wrappers while
0.3 ones are flat ``{"type": "apiKey", "in": ..., "name": ...}``, so one
merged object carries both; 1.0 ``securityRequirements`` and 0.3
``security`` are different members (on the card and on each skill).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from starlette.responses import Response

from ... import codec
from ... import models as m
from ...errors import EncodeError, VersionNotSupportedError
from ...protocol import V0_3, V1_0, negotiate_version

__all__ = ["CardRenderer", "combined_card", "etag_matches"]

log = logging.getLogger("a2a_models.adapters.http")


def _merge(primary: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if key not in primary:
            primary[key] = value
        elif isinstance(value, dict) and isinstance(primary[key], dict):
            _merge(primary[key], value)
        elif isinstance(value, list) and isinstance(primary[key], list):
            for mine, theirs in zip(primary[key], value, strict=False):
                if isinstance(mine, dict) and isinstance(theirs, dict):
                    _merge(mine, theirs)
    return primary


def combined_card(card: m.AgentCard) -> dict[str, Any]:
    """The 1.0 ProtoJSON card with the 0.3 fields merged in (1.0 wins on conflicts)."""
    wire: dict[str, Any] = codec.to_wire(card, V1_0)
    try:
        legacy: dict[str, Any] = codec.to_wire(card, V0_3, lossy=True)
    except EncodeError as exc:  # pragma: no cover - lossy encoding drops what it cannot say
        log.warning("agent card has no 0.3 form, serving 1.0 only: %s", exc)
        return wire
    if not legacy.get("supportsAuthenticatedExtendedCard"):
        legacy.pop("supportsAuthenticatedExtendedCard", None)
    return _merge(wire, legacy)


def _strip_weak(tag: str) -> str:
    return tag[2:] if tag.startswith("W/") else tag


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """``If-None-Match`` (weak comparison, RFC 9110 §13.1.2) against ``etag``."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    wanted = _strip_weak(etag)
    return any(_strip_weak(t.strip()) == wanted for t in if_none_match.split(","))


class CardRenderer:
    """Serves one server's public card, cached per dialect until the card object changes."""

    def __init__(self, *, include_v03: bool, max_age: int) -> None:
        self.include_v03 = include_v03
        self.max_age = max_age
        self._card: m.AgentCard | None = None
        self._cache: dict[str, tuple[bytes, str]] = {}

    def _dialect(self, version: str | None) -> str:
        if not self.include_v03:
            return V1_0
        if version is None:
            return "combined"
        try:
            negotiated = negotiate_version(version)
        except VersionNotSupportedError:  # a public document: never refuse it
            return "combined"
        return V1_0 if negotiated == V1_0 else "combined"

    def body(self, card: m.AgentCard, version: str | None) -> tuple[bytes, str]:
        """The card's JSON bytes and strong ETag for a caller asking for ``version``."""
        if card is not self._card:
            self._card, self._cache = card, {}
        dialect = self._dialect(version)
        if dialect not in self._cache:
            wire = codec.to_wire(card, V1_0) if dialect == V1_0 else combined_card(card)
            data = codec.dumps(wire)
            tag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
            self._cache[dialect] = (data, tag)
        return self._cache[dialect]

    def response(
        self, card: m.AgentCard, version: str | None, if_none_match: str | None
    ) -> Response:
        """200 with the card, or 304 when ``If-None-Match`` has its ETag."""
        data, tag = self.body(card, version)
        headers = {
            "ETag": tag,
            "Cache-Control": f"public, max-age={self.max_age}",
            "Vary": "A2A-Version",
        }
        if etag_matches(if_none_match, tag):
            return Response(status_code=304, headers=headers)
        return Response(data, media_type="application/json", headers=headers)
