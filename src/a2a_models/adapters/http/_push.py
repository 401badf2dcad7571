"""Webhook delivery of push notifications (spec §4.3.3, §13.2).

:class:`WebhookPushSender` is the engine's
:class:`~a2a_models.server.PushNotificationSender` over httpx::

    server = AgentServer(agent, card, push_sender=WebhookPushSender())

Each notification is one ``POST`` to ``config.url`` of what the protocol the
config was set through defines: for a 1.0 config the StreamResponse (1.0
ProtoJSON, ``Content-Type: application/a2a+json``), for a 0.3 one (JSON-RPC or
HTTP+JSON) the Task object (0.3 JSON, ``"kind": "task"``, ``Content-Type:
application/json``, 0.3 §9.5); with ``Authorization: {scheme} {credentials}``
from ``config.authentication`` and ``X-A2A-Notification-Token: {token}`` when
the config has a token (both dialects). Failures
(a host name that does not resolve, connection errors, timeouts, 408/425/429 and
5xx answers) are retried with
exponential backoff, a bounded number of times; any other answer is final.
The engine calls senders in a background task per task, in order, so a slow
webhook never holds up the task; every attempt still has a timeout, for all
of it (only the answer's status counts; its body is read and dropped, up to
64 KiB and 1 s, so that the connection can carry the next notification).

SSRF guard: only ``http``/``https`` URLs are accepted, and the host's
addresses (every one ``getaddrinfo`` returns) must be public: loopback,
private, link-local, multicast, reserved, unspecified, shared (CGNAT) and
cloud-metadata addresses are refused unless ``allow_private=True`` or the
host or address is in ``allowlist``. A connection is then opened to an address
that was checked (TLS verifies the URL's host name), so a DNS answer that
changes between check and connect cannot redirect it; connections are kept
and reused per host name. Redirects are not followed.

The same check runs when a config is created (:meth:`WebhookPushSender.check_config`,
which the engine turns into ``InvalidParams``), a task may have at most
``max_configs_per_task`` configs (default 10), and deliveries of one task are
rate-limited (``rate_per_task`` a second, bursts of ``burst_per_task``;
excess notifications wait, in order; the engine keeps at most
``max_queued_per_webhook`` of them per task and webhook, dropping the oldest).

A webhook that fails a notification after all its attempts is *down*: later
notifications to its URL get one attempt each (no retries, no backoff), so a
dead webhook costs one try per notification instead of ``max_attempts`` of
them and the backlog does not fall further behind, until one is delivered
again. That is logged as one line when it goes down and one when it is back
(failures in between at debug level); a refused delivery (an answer that is
not retried) is one line each. URLs in messages and logs carry no query
string (which may hold a secret).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as dt
import ipaddress
import logging
import math
import random
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx

from ... import codec, observability
from ... import models as m
from ..._http_syntax import TOKEN, field_value_problem
from ..._outages import ReportedOutage
from ...errors import A2AError, InvalidParamsError, quote_input
from ...server import PushNotificationSender
from ._client import A2A_MEDIA_TYPE

__all__ = [
    "NOTIFICATION_TOKEN_HEADER",
    "display_url",
    "UnsafeWebhookURLError",
    "WebhookDeliveryError",
    "WebhookPushSender",
]

log = logging.getLogger("a2a_models.push")

#: The header carrying ``config.token`` (0.3 practice, kept by 1.0 agents).
NOTIFICATION_TOKEN_HEADER: Final = "X-A2A-Notification-Token"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

#: Cloud instance-metadata endpoints (AWS, GCP, Azure, ...; and AWS's IPv6 one).
METADATA_ADDRESSES: Final[frozenset[IPAddress]] = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("169.254.170.2"),
        ipaddress.ip_address("100.100.100.200"),
        ipaddress.ip_address("fd00:ec2::254"),
    }
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_RETRY_STATUSES: Final = frozenset({408, 425, 429})


def _retried(status: int) -> bool:
    """Whether an answer with ``status`` is tried again (not the webhook's last word)."""
    return status >= 500 or status in _RETRY_STATUSES


#: An answer's body is read (and dropped) up to this size and for this long, so its
#: connection can carry the next notification; a longer or slower one closes it.
_ANSWER_BODY_LIMIT: Final = 64 * 1024
_ANSWER_BODY_WAIT: Final = 1.0

#: Where the delivery being made may connect: (the URL's host as httpcore has it, the
#: address that was vetted). Set around one attempt; read by :class:`_PinnedBackend`.
_TARGET: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "a2a_push_target", default=None
)
#: The task whose rate-limit token :meth:`WebhookPushSender.turn` took and the next
#: attempt (the first of a send inside it) uses, instead of taking another.
_PAID: contextvars.ContextVar[str | None] = contextvars.ContextVar("a2a_push_paid", default=None)


class UnsafeWebhookURLError(A2AError, ValueError):
    """The webhook URL is refused by the SSRF guard (or is not a valid http(s) URL)."""


class _UnresolvedHostError(UnsafeWebhookURLError):
    """The webhook's host name did not resolve: at delivery, possibly for now only (a
    DNS outage), so that is tried again like a refused connection."""


class WebhookDeliveryError(A2AError):
    """The notification could not be delivered (``status_code``: the last answer, if any)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class WebhookDownError(WebhookDeliveryError, ReportedOutage):
    """The notification's one attempt failed, its webhook being down already (the failure
    that took it down was a :class:`WebhookDeliveryError`, logged)."""


def _unsafe_reason(address: IPAddress) -> str | None:
    """Why ``address`` may not be called (``None``: it is a public address)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is not None:
            reason = _unsafe_reason(embedded)
            if reason is not None:
                return f"{reason} (embedded in {address})"
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("shared (CGNAT)", isinstance(address, ipaddress.IPv4Address) and address in _SHARED),
        ("not globally routable", not address.is_global),
    )
    for name, hit in checks:
        if hit:
            return f"a {name} address"
    return None


async def _getaddrinfo(host: str, port: int) -> Sequence[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Opens a delivery's connection to the address its host was vetted at (``_TARGET``),
    never to where the name resolves by then. The URL keeps the host name, so the pool
    keeps connections apart per host name and TLS verifies that name; a connection
    reused later was opened to an address vetted then."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        target = _TARGET.get()
        if target is not None:
            name, address = target
            if host != name:  # a connection for another host than the one vetted
                raise httpcore.ConnectError(f"{host} is not the vetted host {name}")
            host = address
        return await self._backend.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def _pinning_client(timeout: float, tls: ssl.SSLContext | None) -> httpx.AsyncClient:
    """The sender's own client: its connections are opened by :class:`_PinnedBackend`."""
    # Idle connections are dropped after 4 s: before the 5 s after which common servers
    # (uvicorn, Node) close theirs, so a notification is not sent on one as it closes.
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=20, keepalive_expiry=4)
    context = tls or httpx.create_ssl_context(trust_env=False)
    transport = httpx.AsyncHTTPTransport(verify=context, trust_env=False, limits=limits)
    # httpx takes no network backend; its transport is the mapping of requests, answers
    # and errors around this pool (the same arguments, plus the backend).
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_PinnedBackend(),
    )
    return httpx.AsyncClient(
        transport=transport, follow_redirects=False, trust_env=False, timeout=timeout
    )


def display_url(url: str) -> str:
    """``url`` without credentials, query or fragment: safe for logs and error messages."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class _Buckets:
    """Token buckets per key: ``rate`` tokens a second, at most ``burst`` saved up."""

    #: Keys held before the buckets that have refilled are forgotten.
    KEEP = 4096

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._state: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._limit = self.KEEP
        self.prunes = 0

    def delay(self, key: str) -> float:
        """Take a token for ``key``; the seconds to wait before using it (0: now)."""
        now = time.monotonic()
        tokens, at = self._state.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate) - 1.0
        self._state[key] = (tokens, now)
        if len(self._state) > self._limit:  # forget keys whose bucket has refilled
            full = now - self.burst / self.rate
            self._state = {k: v for k, v in self._state.items() if v[1] > full or k == key}
            self.prunes += 1
            # More keys still refilling than KEEP (that many tasks notified within a
            # few seconds): the next pass waits until as many again came, or each
            # delivery would go over them all.
            self._limit = max(self.KEEP, 2 * len(self._state))
        return 0.0 if tokens >= 0 else -tokens / self.rate


class _HostSlots:
    """At most ``size`` requests in flight per webhook host: a host that never answers ties
    up its own slots while its attempts time out, not the connections of every other."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._hosts: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}  # host -> (slots, users)

    @contextlib.asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold one of ``host``'s slots (waiting for one first: that is not the host's time)."""
        semaphore, users = self._hosts.setdefault(host, (asyncio.Semaphore(self.size), [0]))
        users[0] += 1
        try:
            async with semaphore:
                yield
        finally:
            users[0] -= 1
            if not users[0]:  # forgotten when unused: one entry per host in use
                del self._hosts[host]

    def __len__(self) -> int:
        return len(self._hosts)


#: The longest token or credentials a config may carry (webhook servers refuse
#: headers much beyond 8 KiB with 431).
MAX_HEADER_VALUE: Final = 4096


def _header_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be an HTTP header value (``None``: it can)."""
    if len(value) > MAX_HEADER_VALUE:
        return f"is {len(value)} characters long, more than the {MAX_HEADER_VALUE} allowed"
    return field_value_problem(value)


def _scheme_problem(scheme: str) -> str | None:
    """Why ``scheme`` (a valid header value) cannot start an ``Authorization`` header."""
    if TOKEN.fullmatch(scheme):
        return None
    bad = next(c for c in scheme if not TOKEN.fullmatch(c))
    return (
        f"contains {bad!r}: an HTTP authentication scheme is one token "
        "(such as Bearer or Basic; the credentials go in authentication.credentials)"
    )


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


class WebhookPushSender(PushNotificationSender):
    """POSTs notifications to webhooks, with retries and an SSRF guard.

    * ``timeout``: seconds one attempt may take in all (connecting, sending,
      and the answer's status line and headers; the answer's body is not read).
    * ``max_attempts``: tries per notification (1 = no retry).
    * ``backoff`` / ``max_backoff``: the wait before retry *n* is
      ``backoff * 2**n`` seconds (at most ``max_backoff``, plus jitter; a
      ``Retry-After`` answer is honoured up to ``max_backoff``).
    * ``allow_private``: turn the address check off (tests, trusted networks).
    * ``allowlist``: host names (exact, case-insensitive) and IP addresses or
      networks (``"10.1.0.0/16"``) that may be called although private.
    * ``max_configs_per_task``: most push configs one task may have
      (``None``: no limit).
    * ``rate_per_task`` / ``burst_per_task``: deliveries (attempts included)
      per second for one task, and the burst allowed above it; ``None`` turns
      the limit off. Notifications over it wait.
    * ``max_queued_per_webhook``: most notifications waiting for one webhook of
      one task; beyond it the oldest are dropped (``None``: no limit).
    * ``max_requests_per_host``: most deliveries in flight to one webhook host
      (``host:port``) at once; more wait for one to end, and that wait is not part
      of their ``timeout``.
    * ``tls``: the ``ssl.SSLContext`` verifying ``https`` webhooks (default: the
      system's CAs; e.g. for webhooks with certificates of a private CA).
    * ``http_client``: an ``httpx.AsyncClient`` to use (not closed by
      :meth:`aclose`; ``tls`` does not apply to it); ``resolver``:
      ``async (host, port) -> [address, ...]`` replacing ``getaddrinfo``;
      ``resolve_timeout``: seconds a host name's lookup may take (it is done when
      a config is created and before each delivery; a host that does not resolve
      in time is one that does not resolve: refused when a config is created, tried
      again like a refused connection at a delivery).

    Connections are kept open and reused for later notifications to the same
    host name (the answer's body is read and dropped, up to 64 KiB and 1 s; a
    longer or slower one closes the connection). Each is opened to an address
    the guard checked, and TLS verifies the URL's host name. With ``http_client``,
    a request is aimed at the checked address instead (the URL's host goes in
    the ``Host`` header and TLS server name), and ``https`` connections are not
    reused (that client's pool keeps them by address, not by name).
    """

    def __init__(
        self,
        *,
        timeout: float = 10.0,
        max_attempts: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        allow_private: bool = False,
        allowlist: Iterable[str] = (),
        http_client: httpx.AsyncClient | None = None,
        resolver: Resolver | None = None,
        user_agent: str = "a2a-models-push/1",
        max_configs_per_task: int | None = 10,
        rate_per_task: float | None = 5.0,
        burst_per_task: int = 20,
        max_queued_per_webhook: int | None = 100,
        max_requests_per_host: int = 20,
        tls: ssl.SSLContext | None = None,
        resolve_timeout: float = 5.0,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if not 0 < resolve_timeout < math.inf:
            raise ValueError("resolve_timeout must be a positive number")
        if max_requests_per_host < 1:
            raise ValueError("max_requests_per_host must be at least 1")
        if max_queued_per_webhook is not None and max_queued_per_webhook < 1:
            raise ValueError("max_queued_per_webhook must be at least 1 (or None)")
        if max_configs_per_task is not None and max_configs_per_task < 1:
            raise ValueError("max_configs_per_task must be at least 1 (or None)")
        if rate_per_task is not None and (not 0 < rate_per_task < math.inf or burst_per_task < 1):
            raise ValueError("rate_per_task must be positive and burst_per_task at least 1")
        self.max_configs_per_task = max_configs_per_task
        self.max_queued_per_webhook = max_queued_per_webhook
        #: Webhooks that are down (URL -> notifications failed since): one attempt each.
        self._down: dict[str, int] = {}
        self._buckets = _Buckets(rate_per_task, burst_per_task) if rate_per_task else None
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.allow_private = allow_private
        self.user_agent = user_agent
        self._hosts: set[str] = set()
        self._networks: list[IPNetwork] = []
        for entry in allowlist:
            try:
                self._networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                self._hosts.add(entry.lower().rstrip("."))
        self._resolve: Resolver = resolver or _getaddrinfo
        self.resolve_timeout = resolve_timeout
        self._slots = _HostSlots(max_requests_per_host)
        # httpx's default pool (100 connections for all hosts, its wait counted in the
        # timeout) was filled by a host that never answers, and every other webhook's
        # deliveries timed out waiting: the limit per host (_slots) bounds them first,
        # the pool's only what very many hosts at once could open.
        self._http = http_client or _pinning_client(timeout, tls)
        self._owns_http = http_client is None

    async def aclose(self) -> None:
        """Close the httpx client (unless it was passed in)."""
        if self._owns_http:
            await self._http.aclose()

    # ------------------------------------------------------------------ the guard

    def _allowed(self, address: IPAddress) -> bool:
        return any(address in net for net in self._networks if net.version == address.version)

    async def check_url(self, url: str) -> list[str]:
        """The addresses ``url`` may be called at; :class:`UnsafeWebhookURLError` if none.

        Servers can call this when a push config is created, to refuse a bad
        URL early; :meth:`send` calls it before every delivery. With
        ``allow_private`` only the URL's form is checked and ``[]`` is returned.
        """
        addresses, _ = await self._vet(url)
        return addresses

    async def check_config(self, config: m.TaskPushNotificationConfig) -> None:
        """Refuse a config that could never be delivered: a URL the guard refuses
        (:class:`UnsafeWebhookURLError`), or a token or authentication that cannot be
        sent as a header value (``InvalidParams`` naming the field)."""
        await self._vet(config.url)
        auth = config.authentication
        for field, value in (
            ("token", config.token),
            ("authentication.scheme", auth.scheme if auth is not None else None),
            ("authentication.credentials", auth.credentials if auth is not None else None),
        ):
            reason = _header_value_problem(value or "")
            if reason is None and field == "authentication.scheme" and value:
                reason = _scheme_problem(value)
            if reason is not None:
                raise InvalidParamsError.of_field(
                    field, f"pushNotificationConfig.{field} {reason}; it is sent as an HTTP header"
                )

    async def _vet(self, url: str) -> tuple[list[str], bool]:
        """The host's addresses, and whether the request must be pinned to them."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise UnsafeWebhookURLError(f"invalid webhook URL: {exc}") from None
        shown = display_url(url)
        if parts.scheme not in ("http", "https"):
            raise UnsafeWebhookURLError(
                f"webhook URL {quote_input(shown)}: only http and https are allowed, not {quote_input(parts.scheme)}"
            )
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise UnsafeWebhookURLError(f"webhook URL {quote_input(shown)} has no host")
        if parts.username is not None or parts.password is not None:
            raise UnsafeWebhookURLError(
                f"webhook URL {quote_input(shown)}: credentials in URLs are refused "
                "(use the config's authentication)"
            )
        if self.allow_private:
            return [], False
        port = port or (443 if parts.scheme == "https" else 80)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                # A resolver that never answers held the delivery (and its webhook's
                # queue) for ever: the lookup is bounded like an attempt.
                async with asyncio.timeout(self.resolve_timeout):
                    addresses = list(dict.fromkeys(await self._resolve(host, port)))
            except TimeoutError:
                raise _UnresolvedHostError(
                    f"webhook host {quote_input(host)} does not resolve: no answer within "
                    f"{self.resolve_timeout:g} s"
                ) from None
            except UnicodeError as exc:  # not a host name at all: no lookup will pass
                raise UnsafeWebhookURLError(
                    f"webhook host {quote_input(host)} does not resolve: {exc}"
                ) from None
            except OSError as exc:
                raise _UnresolvedHostError(
                    f"webhook host {quote_input(host)} does not resolve: {exc}"
                ) from None
            if not addresses:
                raise _UnresolvedHostError(f"webhook host {quote_input(host)} does not resolve")
        if host.lower() in self._hosts:
            return addresses, False
        for text in addresses:
            address = ipaddress.ip_address(text.split("%", 1)[0])
            reason = _unsafe_reason(address)
            if reason is not None and not self._allowed(address):
                raise UnsafeWebhookURLError(
                    f"webhook URL {quote_input(shown)} refused: {host} resolves to {address}, {reason} "
                    "(allow it with allow_private=True or an allowlist entry)"
                )
        return addresses, literal is None

    # ------------------------------------------------------------------ delivery

    def headers(self, config: m.TaskPushNotificationConfig, dialect: str = "1.0") -> dict[str, str]:
        """The request headers for ``config``, set through protocol ``dialect`` (credentials
        and token included)."""
        media = "application/json" if dialect == "0.3" else A2A_MEDIA_TYPE
        headers = {"Content-Type": media, "User-Agent": self.user_agent}
        auth = config.authentication
        if auth is not None:
            headers["Authorization"] = (
                f"{auth.scheme} {auth.credentials}" if auth.credentials else auth.scheme
            )
        if config.token:
            headers[NOTIFICATION_TOKEN_HEADER] = config.token
        observability.inject_trace_context(headers)
        return headers

    def _pinned(self, url: str, address: str) -> tuple[str, dict[str, str], dict[str, str]]:
        """``url`` aimed at ``address``, with the Host header and TLS name of the original."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        netloc = f"[{ip}]" if ip.version == 6 else str(ip)
        if parts.port is not None:
            netloc += f":{parts.port}"
        host_header = host if parts.port is None else f"{host}:{parts.port}"
        pinned = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
        extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
        return pinned, {"Host": host_header}, extensions

    async def _post(
        self, url: str, body: bytes, headers: dict[str, str], extensions: dict[str, str]
    ) -> httpx.Response:
        """One attempt: the webhook's answer, its status and headers only.

        Up to the answer's headers, the attempt is bounded by ``timeout``
        (httpx's timeouts are per phase and per read, so a webhook trickling its
        answer a byte at a time would hold the task's deliveries for ever). The
        body means nothing to the sender: it is read and dropped only up to
        64 KiB and 1 s (to reuse the connection), never kept.
        """
        request = self._http.build_request(
            "POST", url, content=body, headers=headers, timeout=self.timeout, extensions=extensions
        )
        async with asyncio.timeout(self.timeout):
            response = await self._http.send(request, stream=True)
        # The status is the answer. A short body that comes at once is read so the
        # connection can be reused; closing the answer before its end closes it.
        try:
            async with asyncio.timeout(_ANSWER_BODY_WAIT):
                read = 0
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if read > _ANSWER_BODY_LIMIT:
                        break
        except (TimeoutError, httpx.HTTPError, httpx.StreamError):
            pass  # read already (a mock's answer), or cut: the status stands
        finally:
            await response.aclose()
        return response

    async def send(self, config: m.TaskPushNotificationConfig, item: m.StreamResponse) -> None:
        """Deliver ``item`` to ``config.url`` as a 1.0 StreamResponse; raise when every
        attempt failed."""
        await self.send_as(config, item, "1.0")

    async def send_as(
        self, config: m.TaskPushNotificationConfig, item: m.StreamResponse, dialect: str
    ) -> None:
        """Deliver ``item`` to ``config.url`` in the body protocol ``dialect`` defines (0.3:
        ``item`` itself, the Task; 1.0: the StreamResponse); raise when every attempt failed."""
        if dialect == "0.3":
            body = codec.encode(item, "0.3")
        else:
            body = codec.encode(item, "1.0", as_type=m.StreamResponse)
        if observability.instrumented():
            await observability.traced_push(config.task_id or "", self._send(config, body, dialect))
        else:
            await self._send(config, body, dialect)

    async def _send(self, config: m.TaskPushNotificationConfig, body: bytes, dialect: str) -> None:
        addresses: list[str] | None = None
        pin = False
        shown = display_url(config.url)
        host = urlsplit(config.url).netloc.lower()
        last: str = ""
        status: int | None = None
        unreachable = 0  # connection failures so far: try the next checked address
        down = config.url in self._down
        attempts = 1 if down else self.max_attempts
        paid = _PAID.get() == (config.task_id or "")
        if paid:  # this attempt's token was taken by turn(); a next send takes its own
            _PAID.set(None)
        for attempt in range(attempts):
            if self._buckets is not None and not (paid and attempt == 0):
                pause = self._buckets.delay(config.task_id or "")
                if pause:
                    await asyncio.sleep(pause)
            wait: float | None = None
            if addresses is None:
                # Looked up until it answers: a DNS outage passes like a refused connection
                # (an answer the guard refuses is final: it raises).
                try:
                    addresses, pin = await self._vet(config.url)
                except _UnresolvedHostError as exc:
                    last, status = str(exc), None
                    if attempt + 1 == attempts:
                        break
                    await self._pause(attempt, shown, last, None)
                    continue
            headers = self.headers(config, dialect)
            url = config.url
            extensions: dict[str, str] = {}
            target = None
            if pin and self._owns_http:  # the host as httpcore connects to it (IDNA)
                name = httpx.URL(config.url).raw_host.decode("ascii")
                target = (name, addresses[unreachable % len(addresses)])
            elif pin:
                url, host_header, extensions = self._pinned(
                    config.url, addresses[unreachable % len(addresses)]
                )
                headers.update(host_header)
                if extensions:  # https: its pool would reuse it for any name at the address
                    headers["Connection"] = "close"
            token = _TARGET.set(target)
            try:
                async with self._slots.slot(host):
                    response = await self._post(url, body, headers, extensions)
            except httpx.HTTPError as exc:
                last, status = f"{type(exc).__name__}: {exc}", None
                if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
                    unreachable += 1
            except TimeoutError:
                last, status = f"TimeoutError: no answer within {self.timeout:g} s", None
            else:
                status = response.status_code
                last = f"HTTP {status}"
                final = response.is_success or not _retried(status)
                if final:  # it answered: whatever it said, it is up
                    self._up(config.url, shown)
                if response.is_success:
                    return
                if final:
                    raise WebhookDeliveryError(
                        f"webhook {shown} refused the notification: {last}", status
                    )
                wait = _retry_after(response)
            finally:
                _TARGET.reset(token)
            if attempt + 1 == attempts:
                break
            await self._pause(attempt, shown, last, wait)
        if config.url in self._down:  # already (before this one, or by another task meanwhile)
            self._down[config.url] += 1
            raise WebhookDownError(f"webhook {shown} is down: {last}", status)
        self._down[config.url] = 1
        if len(self._down) > _Buckets.KEEP:  # forgetting one only gives it its retries back
            del self._down[next(iter(self._down))]
        raise WebhookDeliveryError(
            f"webhook {shown} failed after {attempts} attempts: {last}; it is down: later "
            "notifications get one attempt each until one is delivered",
            status,
        )

    @contextlib.asynccontextmanager
    async def turn(self, task_id: str) -> AsyncIterator[bool]:
        """Wait for a token of ``task_id``'s rate limit; the first attempt of a send inside
        uses it. Yields whether that took a pause."""
        pause = self._buckets.delay(task_id) if self._buckets is not None else 0.0
        if pause:
            await asyncio.sleep(pause)
        token = _PAID.set(task_id)
        try:
            yield pause > 0
        finally:
            _PAID.reset(token)

    async def _pause(self, attempt: int, shown: str, last: str, wait: float | None) -> None:
        """Back off after failed attempt number ``attempt`` (``wait``: a ``Retry-After``)."""
        delay = min(self.max_backoff, self.backoff * 2**attempt)
        delay *= 1 + random.random() / 4
        if wait is not None:
            delay = min(self.max_backoff, max(delay, wait))
        log.debug(
            "push to %s failed (%s), attempt %d of %d; retrying in %.2f s",
            shown,
            last,
            attempt + 1,
            self.max_attempts,
            delay,
        )
        await asyncio.sleep(delay)

    def retry_later(self, error: Exception) -> bool:
        """A notification is owed again after a failure that is not the webhook's answer
        (no connection, a timeout) or an answer that is retried (408, 425, 429, 5xx);
        not after a refusal, a refused URL or a bug."""
        if not isinstance(error, WebhookDeliveryError):
            return False
        status = error.status_code
        return status is None or _retried(status)

    def is_down(self, url: str) -> bool:
        """Whether ``url``'s last notification failed after all its attempts."""
        return url in self._down

    def _up(self, url: str, shown: str) -> None:
        """``url`` answered: if it was down, say it is back (once)."""
        failed = self._down.pop(url, None)
        if failed is not None:
            log.warning(
                "webhook %s is back: %d notification(s) failed while it was down", shown, failed
            )
