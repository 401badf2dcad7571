"""Agent discovery (spec §8): fetch an agent card, pick an interface, connect.

>>> card = await resolve_card("https://agent.example.com")          # doctest: +SKIP
>>> client = await connect("https://agent.example.com")             # doctest: +SKIP
>>> client = await connect(card, prefer=("1.0",))                  # doctest: +SKIP

:func:`resolve_card` reads ``/.well-known/agent-card.json`` (falling back to
0.2's ``/.well-known/agent.json``) and decodes it as a 1.0 card when it has
``supportedInterfaces``, else as a 0.3 card (``url``/``preferredTransport``/
``protocolVersion``). Dual cards (1.0 fields plus the legacy 0.3 ones, as the
a2a-sdk serves) are read as 1.0: their interfaces carry every version.

:func:`connect` follows §8.3.2: the first interface, in the card's order,
whose binding and protocol version this client speaks wins, and the client
speaks that interface's version (0.3 agents get a 0.3 client) and sends its
``tenant``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from ... import codec
from ... import models as m
from ...errors import A2AError, DecodeError, VersionNotSupportedError
from ...protocol import SUPPORTED_VERSIONS, negotiate_version
from ._client import (
    BaseHTTPClient,
    HTTPClient,
    HTTPStatusError,
    RESTClient,
    Timeouts,
    read_at_most,
)

if TYPE_CHECKING:
    from ...signing import CardVerifier

__all__ = [
    "AGENT_CARD_PATH",
    "CARD_TIMEOUT",
    "LEGACY_AGENT_CARD_PATH",
    "DEFAULT_BINDINGS",
    "MAX_CARD_BYTES",
    "CardResolutionError",
    "NoCompatibleInterfaceError",
    "card_urls",
    "connect",
    "decode_card",
    "fetch_card",
    "resolve_card",
    "select_interface",
]

#: The well-known card path of 0.3 and 1.0 (spec §8.2, §14.3).
AGENT_CARD_PATH: Final = "/.well-known/agent-card.json"
#: The path 0.2 used; tried when the current one is missing.
LEGACY_AGENT_CARD_PATH: Final = "/.well-known/agent.json"
#: Bindings this package has HTTP clients for.
HTTP_BINDINGS: Final = ("JSONRPC", "HTTP+JSON")


def _grpc_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("grpc") is not None


#: Bindings :func:`connect` accepts by default: gRPC too when the grpc extra is installed.
DEFAULT_BINDINGS: Final = (*HTTP_BINDINGS, "GRPC") if _grpc_available() else HTTP_BINDINGS


class CardResolutionError(A2AError):
    """No valid agent card could be fetched (``url`` is the last one tried)."""

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message)
        self.url = url


class NoCompatibleInterfaceError(A2AError):
    """The card offers no interface with a binding and version we speak."""


def decode_card(data: bytes | str | dict[str, Any]) -> m.AgentCard:
    """Decode card JSON of either version.

    1.0 if it has ``supportedInterfaces``, else 0.3. Raises
    :class:`~a2a_models.errors.DecodeError`.
    """
    value = data if isinstance(data, dict) else codec.loads(data)
    if not isinstance(value, dict):
        raise DecodeError("$", "expected an object (AgentCard)")
    dialect = "1.0" if "supportedInterfaces" in value else "0.3"
    return codec.from_wire(m.AgentCard, value, dialect)


def card_urls(base_url: str, path: str | None = None) -> list[str]:
    """The URLs :func:`resolve_card` tries for the agent at ``base_url``, in order.

    The well-known path under ``base_url``, then at the origin's root when
    ``base_url`` has a path, then the legacy names; a URL ending in ``.json``
    is the card's own URL; ``path`` replaces the well-known path.
    """
    if path is not None:
        return [urljoin(base_url if base_url.endswith("/") else base_url + "/", path.lstrip("/"))]
    parts = urlsplit(base_url)
    if parts.path.endswith(".json"):
        return [base_url]  # already the card's URL
    here = base_url.rstrip("/")
    root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    urls = [here + AGENT_CARD_PATH]
    if here != root:
        urls.append(root + AGENT_CARD_PATH)
    urls.append(here + LEGACY_AGENT_CARD_PATH)
    if here != root:
        urls.append(root + LEGACY_AGENT_CARD_PATH)
    return urls


#: How long :func:`resolve_card` waits for a card, by default (each URL it tries, as a whole).
CARD_TIMEOUT: Final = 30.0
#: The largest agent card :func:`resolve_card` reads (a card of thousands of skills is far smaller).
MAX_CARD_BYTES: Final = 4 * 1024 * 1024
#: How much of an error answer's text is kept for the message.
_ERROR_TEXT_LIMIT: Final = 200


async def _read_card(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    timeout: float | None,
    max_size: int,
) -> bytes | tuple[int, str]:
    """The body of a 2xx answer from ``url``; else its status and the start of its text.

    ``timeout`` bounds the whole fetch (httpx's timeouts are per read: a peer
    trickling the card a byte at a time would never hit them) and ``max_size``
    the body, which is read in chunks so that a huge one is refused, not held.
    """
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("GET", url, headers=headers, timeout=timeout) as response:
                if not response.is_success:
                    text = await read_at_most(response, _ERROR_TEXT_LIMIT)
                    return response.status_code, text[:_ERROR_TEXT_LIMIT].decode("utf-8", "replace")
                body = await read_at_most(response, max_size)
                if len(body) > max_size:
                    raise CardResolutionError(
                        f"the agent card at {url} is larger than {max_size} bytes "
                        "(the agent's fault, or not an agent card)",
                        url,
                    )
                return body
    except TimeoutError:
        raise CardResolutionError(
            f"fetching the agent card {url} failed: no complete answer within {timeout:g} s",
            url,
        ) from None
    except httpx.HTTPError as exc:
        raise CardResolutionError(f"fetching the agent card {url} failed: {exc!r}", url) from exc


async def fetch_card(
    base_url: str,
    *,
    http_client: httpx.AsyncClient | None = None,
    headers: dict[str, str] | None = None,
    timeout: float | None = CARD_TIMEOUT,
    path: str | None = None,
    verifier: CardVerifier | None = None,
    max_size: int = MAX_CARD_BYTES,
) -> tuple[m.AgentCard, bytes]:
    """:func:`resolve_card`, also giving the card's JSON exactly as it was served."""
    client = http_client if http_client is not None else httpx.AsyncClient()
    try:
        last = base_url
        missing: list[str] = []
        for url in card_urls(base_url, path):
            last = url
            answer = await _read_card(
                client, url, {"Accept": "application/json", **(headers or {})}, timeout, max_size
            )
            if isinstance(answer, tuple):
                status, text = answer
                if status in (404, 410):
                    missing.append(url)
                    continue
                raise CardResolutionError(
                    f"fetching the agent card {url} failed: {HTTPStatusError(status, text, url)}",
                    url,
                )
            try:
                card = decode_card(answer)
            except (DecodeError, ValueError) as exc:
                raise CardResolutionError(f"{url} is not a valid agent card: {exc}", url) from exc
            if verifier is not None:
                verifier.verify(codec.loads(answer))
            return card, answer
        raise CardResolutionError(f"no agent card at {', '.join(missing)}", last)
    finally:
        if http_client is None:
            await client.aclose()


async def resolve_card(
    base_url: str,
    *,
    http_client: httpx.AsyncClient | None = None,
    headers: dict[str, str] | None = None,
    timeout: float | None = CARD_TIMEOUT,
    path: str | None = None,
    verifier: CardVerifier | None = None,
    max_size: int = MAX_CARD_BYTES,
) -> m.AgentCard:
    """Fetch and decode the agent card of the agent at ``base_url``.

    Tries ``{base_url}/.well-known/agent-card.json``, then the same at the
    origin's root when ``base_url`` has a path, then the legacy
    ``agent.json`` names; the first 200 answer that is a valid card wins
    (404s and 410s go on to the next URL; other failures raise). A URL
    ending in ``.json`` is fetched as is; ``path`` replaces the well-known
    path. ``timeout`` bounds each URL's fetch as a whole and ``max_size`` the
    card's bytes. Raises :class:`CardResolutionError`.
    """
    card, _ = await fetch_card(
        base_url,
        http_client=http_client,
        headers=headers,
        timeout=timeout,
        path=path,
        verifier=verifier,
        max_size=max_size,
    )
    return card


# GrpcClient options among what connect() passes on to a client.
# GrpcClient options an HTTP client has no use for (HTTP/2 keep-alive pings).
_GRPC_ONLY = frozenset({"keepalive_time", "keepalive_timeout"})
_GRPC_OPTIONS = frozenset({"headers", "interceptors", "extensions", "timeout", *_GRPC_ONLY})


def _version_of(interface: m.AgentInterface) -> str | None:
    try:
        return negotiate_version(interface.protocol_version, SUPPORTED_VERSIONS)
    except VersionNotSupportedError:
        return None


def select_interface(
    card: m.AgentCard,
    *,
    prefer: Sequence[str] = SUPPORTED_VERSIONS,
    transports: Sequence[str] = HTTP_BINDINGS,
) -> tuple[m.AgentInterface, str]:
    """The interface to use and its ``Major.Minor`` version (spec §8.3.2).

    The card's order decides (its first interface is the agent's preferred
    one); ``prefer`` and ``transports`` say which versions and bindings the
    caller accepts. Raises :class:`NoCompatibleInterfaceError`.
    """
    versions = {negotiate_version(v) for v in prefer}
    bindings = {b.upper() for b in transports}
    for interface in card.supported_interfaces:
        version = _version_of(interface)
        binding = interface.protocol_binding.upper()
        if version in versions and binding in bindings:
            return interface, version
    offered = ", ".join(
        f"{i.protocol_binding} {i.protocol_version} at {i.url}" for i in card.supported_interfaces
    )
    raise NoCompatibleInterfaceError(
        f"agent {card.name!r} offers no interface with a binding in {tuple(transports)} "
        f"and a version in {tuple(prefer)}; it offers: {offered}"
    )


async def connect(
    target: str | m.AgentCard,
    *,
    prefer: Sequence[str] = SUPPORTED_VERSIONS,
    transports: Sequence[str] = DEFAULT_BINDINGS,
    http_client: httpx.AsyncClient | None = None,
    card_url: str | None = None,
    verifier: CardVerifier | None = None,
    **options: Any,
) -> BaseHTTPClient:
    """A client for the best interface of an agent (a base URL, or its card).

    Returns an :class:`HTTPClient` (JSON-RPC), :class:`RESTClient`
    (HTTP+JSON) or, when the card prefers gRPC and the grpc extra is
    installed, a :class:`~a2a_models.adapters.grpc.GrpcClient`, speaking the interface's version, with its ``tenant``, and
    with ``client.card`` set. ``options`` go to the client (``headers``,
    ``interceptors``, ``timeouts``, ``reconnect``, ...; ``keepalive_time`` and
    ``keepalive_timeout`` only for gRPC); ``headers`` are also
    sent when fetching the card. Relative interface URLs are resolved against
    the card's URL (``card_url``, or ``target`` when it is a URL).
    ``verifier`` checks the card's signatures (see :func:`resolve_card`).
    """
    # One connection pool for the card and the calls; the client owns it
    # unless the caller passed one.
    tls = options.get("tls")
    http = (
        http_client
        if http_client is not None
        else httpx.AsyncClient(verify=tls if tls is not None else True)
    )
    try:
        if isinstance(target, m.AgentCard):
            card = target
            base = card_url
        else:
            base = card_url or target
            timeouts = options.get("timeouts")
            card_timeout = timeouts.connect if isinstance(timeouts, Timeouts) else CARD_TIMEOUT
            per_call = options.get("timeout")  # the card is fetched by a call too
            if per_call is not None:
                card_timeout = per_call if card_timeout is None else min(card_timeout, per_call)
            card = await resolve_card(
                target,
                http_client=http,
                headers=options.get("headers"),
                timeout=card_timeout,
                verifier=verifier,
            )
        interface, version = select_interface(card, prefer=prefer, transports=transports)
    except BaseException:
        if http_client is None:
            await http.aclose()
        raise
    if interface.protocol_binding.upper() == "GRPC":
        from ..grpc import GrpcClient

        if http_client is None:
            await http.aclose()
        grpc_options = {k: v for k, v in options.items() if k in _GRPC_OPTIONS}
        return GrpcClient(  # type: ignore[return-value]
            interface.url, version=version, tenant=interface.tenant, card=card, **grpc_options
        )
    options = {k: v for k, v in options.items() if k not in _GRPC_ONLY}
    url = urljoin(base, interface.url) if base else interface.url
    kind = HTTPClient if interface.protocol_binding.upper() == "JSONRPC" else RESTClient
    client = kind(
        url, version=version, tenant=interface.tenant, http_client=http, card=card, **options
    )
    client._owns_http = http_client is None
    return client
