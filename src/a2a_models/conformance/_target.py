"""Discovery: fetch the agent card and work out which endpoints to test.

Endpoints are read from the *raw* card JSON, leniently, so that a card which
fails validation (reported by the card checks) still gets its endpoints
tested: 1.0 ``supportedInterfaces`` entries and the 0.3 top-level
``url``/``preferredTransport``/``additionalInterfaces``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import attrs
import httpx

from ._agent import CONTRACT_SKILL_ID
from ._registry import GRPC, JSONRPC, REST, Exchange, Requirement

__all__ = [
    "MAX_BODY",
    "Endpoint",
    "Target",
    "body_too_slow",
    "discover",
    "excerpt",
    "fetch",
    "normalize_version",
    "override_endpoints",
    "parse_endpoint_override",
    "read_body",
    "record",
]

WELL_KNOWN = "/.well-known/agent-card.json"
_BINDINGS = {"JSONRPC": JSONRPC, "HTTP+JSON": REST, "GRPC": GRPC}
_VERSION = re.compile(r"\s*(\d+)(?:\.(\d+))?(?:\.\d+)?\s*")
EXCERPT = 1200
_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "x-api-key"}
#: The most bytes of one response body (and of one stream) the harness reads: a server
#: that sends more (an endless card or body) is reported, not held in memory.
MAX_BODY = 64 * 1024 * 1024


def normalize_version(value: object) -> str | None:
    """``"0.3.0"`` → ``"0.3"``, ``"1"`` → ``"1.0"``; ``None`` for junk."""
    if not isinstance(value, str):
        return None
    m = _VERSION.fullmatch(value)
    if m is None:
        return None
    return f"{int(m.group(1))}.{int(m.group(2) or 0)}"


def excerpt(data: bytes | str, limit: int = EXCERPT) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes | bytearray) else data
    if len(text) > limit:
        return text[:limit] + f"... ({len(text)} chars)"
    return text


def excerpt_ends(text: str, limit: int = 2400) -> str:
    """Head and tail of a long text (streams: the end is where the trouble is)."""
    if len(text) <= limit:
        return text
    head, tail = limit // 3, limit - limit // 3
    return f"{text[:head]}\n... ({len(text) - limit} chars left out) ...\n{text[-tail:]}"


def _redact(headers: Any) -> tuple[tuple[str, str], ...]:
    out = []
    for k, v in headers.items():
        if k.lower() in _SECRET_HEADERS:
            v = (v.split(" ", 1)[0] + " ***") if " " in v else "***"
        out.append((str(k), str(v)))
    return tuple(out)


_SHOWN_REQUEST = {
    "content-type",
    "a2a-version",
    "a2a-extensions",
    "accept",
    "authorization",
    "x-api-key",
    "last-event-id",
}
_SHOWN_RESPONSE = {
    "content-type",
    "content-length",
    "cache-control",
    "etag",
    "a2a-version",
    "a2a-extensions",
    "www-authenticate",
    "location",
}


def record(
    request: httpx.Request,
    *,
    status: int | None = None,
    response_headers: httpx.Headers | None = None,
    body: bytes | str = b"",
    error: str | None = None,
    started: float = 0.0,
    request_body: bytes | None = None,
    keep_ends: bool = False,
) -> Exchange:
    """An :class:`Exchange` for the evidence list (secrets redacted, bodies cut)."""
    req_headers = {k: v for k, v in request.headers.items() if k.lower() in _SHOWN_REQUEST}
    resp_headers: dict[str, str] = {}
    if response_headers is not None:
        resp_headers = {k: v for k, v in response_headers.items() if k.lower() in _SHOWN_RESPONSE}
    content = request_body if request_body is not None else _request_content(request)
    return Exchange(
        method=request.method,
        url=str(request.url),
        request_headers=_redact(req_headers),
        request_body=excerpt(content, 600),
        status=status,
        response_headers=tuple(resp_headers.items()),
        response_body=(
            excerpt_ends(body.decode("utf-8", "replace") if isinstance(body, bytes) else body)
            if keep_ends
            else excerpt(body)
        ),
        error=error,
        elapsed=time.monotonic() - started if started else 0.0,
    )


async def read_body(response: httpx.Response, body: bytearray, limit: int = MAX_BODY) -> str | None:
    """Read ``response``'s body into ``body``, at most ``limit`` bytes: why it was cut, or
    ``None``. (Bound the time around it; ``body`` holds what came when that runs out.)"""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            del body[limit:]
            return f"the response body exceeded {limit} bytes: the harness stopped reading"
    return None


def body_too_slow(timeout: float, body: bytearray) -> str:
    """Why a body is cut whose reading took longer than ``timeout`` seconds."""
    return f"the response body did not end within {timeout:g} s ({len(body)} bytes read)"


async def fetch(
    client: httpx.AsyncClient, request: httpx.Request, *, timeout: float, limit: int | None = None
) -> tuple[httpx.Response, bytes, str | None]:
    """Send ``request`` and read its body: ``(response, body, why the body is cut or None)``.

    The whole exchange gets ``timeout`` seconds (httpx's timeouts are per read, so a
    server trickling a byte a second would hold it forever) and at most ``limit`` body
    bytes (default :data:`MAX_BODY`). Raises ``httpx.HTTPError`` when no response head
    arrives in time.
    """
    response: httpx.Response | None = None
    body = bytearray()
    cut: str | None = None
    try:
        async with asyncio.timeout(timeout):
            response = await client.send(request, stream=True)
            cut = await read_body(response, body, MAX_BODY if limit is None else limit)
    except TimeoutError:
        if response is None:
            raise httpx.ReadTimeout(
                f"no response head within {timeout:g} s", request=request
            ) from None
        cut = body_too_slow(timeout, body)
    finally:
        if response is not None:
            await response.aclose()
    return response, bytes(body), cut


def _request_content(request: httpx.Request) -> bytes:
    try:
        return request.content
    except httpx.RequestNotRead:
        return b""


@attrs.frozen(slots=True)
class Endpoint:
    """One interface to test: protocol version, transport, URL (and tenant).

    ``declared_url`` is the card's URL of an interface the tester told to test at
    ``url`` instead (``--endpoint``); ``None`` when ``url`` is the card's own.
    """

    version: str
    transport: str
    url: str
    tenant: str | None = None
    source: str = ""
    declared_url: str | None = None

    @property
    def label(self) -> str:
        return f"{self.version}-{self.transport}"

    def describe(self) -> str:
        """``"1.0 jsonrpc URL"``, with the card's URL when the tester replaced it."""
        where = f" (the card says {self.declared_url})" if self.declared_url else ""
        return f"{self.version} {self.transport} {self.url}{where}"


@attrs.define
class Target:
    """The agent under test, as discovered."""

    url: str
    card_url: str
    card: dict[str, Any] | None = None
    card_problem: str | None = None
    card_status: int | None = None
    card_headers: dict[str, str] = attrs.field(factory=dict)
    card_exchange: Exchange | None = None
    endpoints: list[Endpoint] = attrs.field(factory=list)
    #: True when no card was available and endpoints were guessed from the URL.
    guessed: bool = False

    @property
    def versions(self) -> list[str]:
        seen: list[str] = []
        for e in self.endpoints:
            if e.version not in seen:
                seen.append(e.version)
        return seen

    def endpoint(self, version: str, transport: str) -> Endpoint | None:
        for e in self.endpoints:
            if e.version == version and e.transport == transport:
                return e
        return None

    def capabilities(self) -> dict[str, Any]:
        caps = (self.card or {}).get("capabilities")
        return caps if isinstance(caps, dict) else {}

    def required_extensions(self) -> list[str]:
        """URIs of the extensions the card marks ``required`` (§3.3.4)."""
        exts = self.capabilities().get("extensions")
        return (
            [
                e["uri"]
                for e in exts or []
                if isinstance(e, dict)
                and e.get("required") is True
                and isinstance(e.get("uri"), str)
            ]
            if isinstance(exts, list)
            else []
        )

    def claims(self, requirement: Requirement, version: str) -> bool:
        """Whether the card claims ``requirement`` (for the ``NO_*`` ones: does not claim)."""
        caps = self.capabilities()
        card = self.card or {}
        if requirement is Requirement.REQUIRED_EXTENSION:
            return bool(self.required_extensions())
        if requirement is Requirement.CONTRACT:
            skills = card.get("skills")
            return isinstance(skills, list) and any(
                isinstance(s, dict) and s.get("id") == CONTRACT_SKILL_ID for s in skills
            )
        if requirement is Requirement.SECURED:
            reqs = card.get("securityRequirements" if version != "0.3" else "security")
            if version == "0.3" and reqs is None:
                reqs = card.get("securityRequirements")
            return isinstance(reqs, list) and any(isinstance(r, dict) and r for r in reqs)
        if requirement in (Requirement.STREAMING, Requirement.NO_STREAMING):
            on = caps.get("streaming") is True
            return on if requirement is Requirement.STREAMING else not on
        if requirement in (Requirement.PUSH, Requirement.NO_PUSH):
            on = caps.get("pushNotifications") is True
            return on if requirement is Requirement.PUSH else not on
        v10 = caps.get("extendedAgentCard") is True
        v03 = card.get("supportsAuthenticatedExtendedCard") is True
        if version == "0.3":
            on = v03 if "supportsAuthenticatedExtendedCard" in card else v10
        else:
            on = v10
        return on if requirement is Requirement.EXTENDED_CARD else not on


def card_urls(url: str) -> list[str]:
    """Where to look for the card of ``url``, in order."""
    parts = urlsplit(url)
    if parts.path.endswith(".json"):
        return [url]
    base = url.rstrip("/")
    first = base + WELL_KNOWN
    root = urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN, "", ""))
    return [first] if root == first else [first, root]


def resolve_endpoints(card: dict[str, Any]) -> list[Endpoint]:
    found: list[Endpoint] = []

    def add(version: str | None, binding: object, url: object, tenant: object, source: str) -> None:
        if version is None or not isinstance(url, str) or not url:
            return
        transport = _BINDINGS.get(binding) if isinstance(binding, str) else None
        if transport is None or (transport == GRPC and version != "1.0"):
            return  # (0.3's gRPC service is another one: not tested)
        if any(e.version == version and e.transport == transport for e in found):
            return
        found.append(
            Endpoint(
                version=version,
                transport=transport,
                url=url,
                tenant=tenant if isinstance(tenant, str) and tenant else None,
                source=source,
            )
        )

    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list):
        for i, iface in enumerate(interfaces):
            if isinstance(iface, dict):
                version = normalize_version(iface.get("protocolVersion", "1.0"))
                add(
                    version,
                    iface.get("protocolBinding"),
                    iface.get("url"),
                    iface.get("tenant"),
                    f"supportedInterfaces[{i}]",
                )
    if isinstance(card.get("url"), str):
        version = normalize_version(card.get("protocolVersion", "0.3"))
        if version == "0.3":
            add(
                version,
                card.get("preferredTransport", "JSONRPC"),
                card["url"],
                None,
                "url/preferredTransport",
            )
            extra = card.get("additionalInterfaces")
            if isinstance(extra, list):
                for i, iface in enumerate(extra):
                    if isinstance(iface, dict):
                        add(
                            version,
                            iface.get("transport"),
                            iface.get("url"),
                            None,
                            f"additionalInterfaces[{i}]",
                        )
    return [e for e in found if e.version in ("1.0", "0.3")]


def parse_endpoint_override(text: str) -> tuple[str, str]:
    """``"jsonrpc=URL"`` or ``"0.3/rest=URL"`` → ``(key, URL)`` (``--endpoint``).

    The key names a transport (``jsonrpc``, ``rest`` or ``grpc``), optionally
    after a protocol version and a slash; raises ``ValueError`` saying what is wrong.
    """
    key, sep, url = text.partition("=")
    key, url = key.strip().lower(), url.strip()
    if not sep or not url:
        raise ValueError(f"expected TRANSPORT=URL or VERSION/TRANSPORT=URL, got {text!r}")
    _override_key(key)
    return key, url


def _override_key(key: str) -> tuple[str | None, str]:
    version, sep, transport = key.rpartition("/")
    if transport not in (JSONRPC, REST, GRPC):
        raise ValueError(f"unknown transport {transport!r} in {key!r}: jsonrpc, rest or grpc")
    if not sep:
        return None, transport
    normalized = normalize_version(version)
    if normalized not in ("1.0", "0.3"):
        raise ValueError(f"unknown protocol version {version!r} in {key!r}: 1.0 or 0.3")
    return normalized, transport


def override_endpoints(target: Target, urls: dict[str, str]) -> list[str]:
    """Test the interfaces ``urls`` names (``{"jsonrpc": URL, "0.3/rest": URL}``) at the
    given URLs instead of the card's: for a card that advertises an address the tester
    cannot reach (a proxy's, a container's). A versioned key wins over a bare one. The
    card's own URLs stay in ``declared_url`` (``card.interfaces-reachable`` still probes
    them, and :meth:`Endpoint.describe` shows both). Returns a note per key that matched
    no interface."""
    keys = {key: _override_key(key) for key in urls}
    used: set[str] = set()
    for i, ep in enumerate(target.endpoints):
        versioned = [k for k, (v, t) in keys.items() if v == ep.version and t == ep.transport]
        bare = [k for k, (v, t) in keys.items() if v is None and t == ep.transport]
        if not (versioned or bare):
            continue
        chosen = (versioned or bare)[0]
        used.add(chosen)
        url = urls[chosen]
        target.endpoints[i] = attrs.evolve(ep, url=url, declared_url=ep.declared_url or ep.url)
    return [
        f"--endpoint {key}: the card declares no such interface; not used"
        for key in urls
        if key not in used
    ]


async def discover(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str] | None = None,
    *,
    timeout: float = 10.0,
) -> Target:
    """Fetch the card of ``url`` (each attempt within ``timeout`` seconds and
    :data:`MAX_BODY` bytes) and resolve the endpoints it declares."""
    urls = card_urls(url)
    target = Target(url=url, card_url=urls[0])
    for card_url in urls:
        request = client.build_request(
            "GET", card_url, headers={"Accept": "application/json", **(headers or {})}
        )
        started = time.monotonic()
        try:
            response, content, cut = await fetch(client, request, timeout=timeout)
        except httpx.HTTPError as exc:
            target.card_exchange = record(request, error=repr(exc), started=started)
            target.card_problem = f"GET {card_url} failed: {exc!r}"
            continue
        target.card_url = card_url
        target.card_status = response.status_code
        target.card_headers = {k.lower(): v for k, v in response.headers.items()}
        target.card_exchange = record(
            request,
            status=response.status_code,
            response_headers=response.headers,
            body=content,
            error=cut,
            started=started,
        )
        if cut is not None:
            target.card_problem = f"GET {card_url}: {cut}"
            break
        if response.status_code != 200:
            target.card_problem = f"GET {card_url} answered HTTP {response.status_code}"
            continue
        try:
            value = json.loads(content)
        except ValueError as exc:
            target.card_problem = f"the card at {card_url} is not JSON: {exc}"
            break
        if not isinstance(value, dict):
            target.card_problem = f"the card at {card_url} is not a JSON object"
            break
        target.card = value
        target.card_problem = None
        break
    if target.card is not None:
        target.endpoints = resolve_endpoints(target.card)
    if not target.endpoints:
        # No usable card: assume JSON-RPC at the given URL, both versions.
        target.guessed = True
        base = url if not urlsplit(url).path.endswith(".json") else url.rsplit("/.well-known", 1)[0]
        target.endpoints = [
            Endpoint("1.0", JSONRPC, base, source="(guessed: no usable card)"),
            Endpoint("0.3", JSONRPC, base, source="(guessed: no usable card)"),
        ]
    return target
