"""A2A clients over HTTP (httpx): JSON-RPC (:class:`HTTPClient`) and HTTP+JSON (:class:`RESTClient`).

Both speak A2A 1.0 or 0.3 (``version=``), run the base class's interceptors
and timeouts, and resume a dropped stream by themselves: when the connection
of a ``SendStreamingMessage`` or ``SubscribeToTask`` stream breaks before the
task reached a final state, the iterator re-subscribes to the task with
``Last-Event-ID`` set to the last event id it saw (spec §3.1.6, W3C
EventSource), up to ``reconnect.attempts`` times in a row with exponential
backoff, and goes on yielding events as if nothing happened.

>>> async with HTTPClient("https://agent.example.com/a2a") as client:    # doctest: +SKIP
...     task = await client.send_message(Message.user("hi"))
...     async for event in client.subscribe(task.id):
...         print(event)

Timeouts are per phase (:class:`Timeouts`): 10 s to connect, 600 s to wait
for a unary answer (a blocking ``SendMessage`` may run for minutes), and no
limit between the events of a stream (a task may stay quiet for hours). The
base class's ``timeout`` (per call, or per event for streams) applies on top.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any, Final

import attrs
import httpx

from ... import codec
from ... import models as m
from ..._closing import aclose_if_closable
from ...client import (
    A2AClient,
    BrokenStreamError,
    ClientCall,
    ClientInterceptor,
    ClientTimeoutError,
    Reconnect,
    StreamChunk,
)
from ...errors import (
    A2AError,
    AuthenticationError,
    DecodeError,
    InvalidAgentResponseError,
    JSONRPCError,
    PermissionDeniedError,
    TransportError,
)
from ...protocol import (
    A2A_MEDIA_TYPE,
    JSON_MEDIA_TYPE,
    SSE_MEDIA_TYPE,
    V1_0,
    ErrorResponse,
    MethodSpec,
    RestRequest,
    SSEError,
    SSEEvent,
    SSEParser,
    SuccessResponse,
    build_rest_request,
    decode_params,
    decode_rest_result,
    encode_response,
    encode_result,
    method_for,
    parse_message,
    rest_error_from_body,
    rest_media_type,
)
from ...protocol import Request as RPCRequest

__all__ = [
    "A2A_MEDIA_TYPE",
    "BaseHTTPClient",
    "HTTPClient",
    "HTTPStatusError",
    "HTTPTransportError",
    "JSON_MEDIA_TYPE",
    "RESTClient",
    "Reconnect",
    "SSE_MEDIA_TYPE",
    "StreamDisconnectedError",
    "Timeouts",
]

_ERROR_BODY_LIMIT: Final = 2000
#: Headers about the body as sent (its length and encoding), dropped once it is read.
_BODY_HEADERS: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})


async def read_at_most(response: httpx.Response, limit: int | None) -> bytes:
    """The body of a streamed ``response`` (then closed), read in chunks until it ends or
    passes ``limit`` bytes: then what was read so far, longer than ``limit``, for the
    caller to refuse or cut (a huge or endless body is never held whole)."""
    body = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if limit is not None and len(body) > limit:
                break
    finally:
        await response.aclose()
    return bytes(body)


# ---------------------------------------------------------------------------- errors


class HTTPTransportError(TransportError):
    """The HTTP exchange itself failed: no connection, a reset, an unreadable stream."""


class StreamDisconnectedError(HTTPTransportError, BrokenStreamError):
    """An HTTP stream broke (or ended) before its last event.

    ``last_event_id`` is the id of the last event received (``None``: none
    had an id); the clients resume from there on their own before giving up.
    """

    def __init__(self, message: str, last_event_id: str | None = None) -> None:
        BrokenStreamError.__init__(self, message, last_event_id)


class HTTPStatusError(A2AError):
    """The server answered with an HTTP error status and no A2A error in the body.

    Typically 401/403 from an authenticating proxy, 404 for a wrong URL, or
    a 5xx from a gateway. ``body`` is the start of the response text.
    """

    def __init__(self, status_code: int, body: str, url: str) -> None:
        self.status_code = status_code
        self.body = body
        self.url = url
        reason = httpx.codes.get_reason_phrase(status_code) or "HTTP error"
        detail = f": {body[:200]}" if body else ""
        super().__init__(f"{url} answered {status_code} {reason}{detail}")


# ---------------------------------------------------------------------------- options


@attrs.frozen(slots=True, kw_only=True)
class Timeouts:
    """Per-phase HTTP timeouts in seconds (``None``: no limit).

    ``read`` bounds the wait for a unary answer (long: blocking sends run
    until the task finishes), and the whole of its body; ``stream_read`` bounds the silence between two
    chunks of a stream (none by default: tasks may pause for long). A stream
    silent for longer is taken for a dead connection and resumed, so set it
    above the server's keep-alive interval (15 s for this package's server)
    to detect half-open connections.
    """

    connect: float | None = 10.0
    read: float | None = 600.0
    stream_read: float | None = None
    write: float | None = 60.0
    pool: float | None = 10.0

    def unary(self) -> httpx.Timeout:
        """The httpx timeout of a request/response call."""
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)

    def stream(self) -> httpx.Timeout:
        """The httpx timeout of a stream."""
        return httpx.Timeout(
            connect=self.connect, read=self.stream_read, write=self.write, pool=self.pool
        )


# ---------------------------------------------------------------------------- helpers


def _body_text(response: httpx.Response) -> str:
    try:
        return response.text[:_ERROR_BODY_LIMIT]
    except Exception:
        return ""


def _json_object(content: bytes) -> dict[str, Any] | None:
    if not content:
        return None
    try:
        value = codec.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


#: HTTP statuses of a refused caller, and their errors.
_REFUSALS: Final[dict[int, type[AuthenticationError | PermissionDeniedError]]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
}


def _refusal(response: httpx.Response) -> AuthenticationError | PermissionDeniedError | None:
    """The agent refused the caller (401/403 with an A2A error body): the typed error,
    its message the agent's and its ``challenges`` the ``WWW-Authenticate`` values.
    ``None`` for any other answer (a proxy's 401 page stays an :class:`HTTPStatusError`)."""
    klass = _REFUSALS.get(response.status_code)
    body = _json_object(response.content) if klass is not None else None
    if klass is None or body is None:
        return None
    error = body.get("error")
    if not isinstance(error, dict):
        return None
    if body.get("jsonrpc") == "2.0" and error.get("code") != JSONRPCError.code:
        return None  # another JSON-RPC error, typed by its own code
    message = error.get("message")
    return klass(
        message if isinstance(message, str) else None,
        error.get("data", error.get("details")),
        challenges=response.headers.get_list("www-authenticate"),
        remote=True,
    )


def _status_error(response: httpx.Response) -> A2AError:
    """The typed error for an HTTP error answer (``google.rpc.Status`` body if any)."""
    refused = _refusal(response)
    if refused is not None:
        return refused
    error = rest_error_from_body(response.content)
    if error is not None:
        return error
    return HTTPStatusError(response.status_code, _body_text(response), str(response.request.url))


#: The phase each httpx timeout bounds (its key in the request's timeout extension).
_TIMEOUT_PHASES: Final = {
    httpx.ConnectTimeout: ("connect", "to connect"),
    httpx.ReadTimeout: ("read", "for data"),
    httpx.WriteTimeout: ("write", "to send"),
    httpx.PoolTimeout: ("pool", "for a free connection"),
}


def _timed_out(request: httpx.Request, exc: httpx.TimeoutException) -> str:
    """``POST URL: nothing within 60.0 s waiting for data`` (httpx's own text is often empty)."""
    key, waiting = _TIMEOUT_PHASES.get(type(exc), ("", "for the answer"))
    seconds = request.extensions.get("timeout", {}).get(key)
    within = f" within {seconds} s" if seconds is not None else ""
    return (
        f"{request.method} {request.url}: nothing{within} waiting {waiting} ({type(exc).__name__})"
    )


def _merge_headers(headers: Mapping[str, str], **fixed: str) -> httpx.Headers:
    merged = httpx.Headers(dict(headers))
    for name, value in fixed.items():
        merged[name.replace("_", "-")] = value
    return merged


# ---------------------------------------------------------------------------- shared base


class BaseHTTPClient(A2AClient):
    """What both HTTP bindings share: the httpx client, SSE reading, stream resumption.

    Use :class:`HTTPClient` or :class:`RESTClient`; this is their common type
    (what :func:`~a2a_models.adapters.http.connect` returns).
    """

    binding: str = ""

    def __init__(
        self,
        url: str,
        *,
        version: str = "1.0",
        tenant: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeouts: Timeouts | None = None,
        reconnect: Reconnect | None = None,
        max_event_size: int | None = 64 * 1024 * 1024,
        card: m.AgentCard | None = None,
        timeout: float | None = None,
        interceptors: Sequence[ClientInterceptor] = (),
        extensions: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(
            version=version,
            timeout=timeout,
            interceptors=interceptors,
            extensions=extensions,
            headers=headers,
            reconnect=reconnect or Reconnect(),
        )
        self.url = url
        #: The tenant of the chosen interface, sent with every request (spec §8.3.2).
        self.tenant = tenant or None
        self.timeouts = timeouts or Timeouts()
        self.max_event_size = max_event_size
        #: The agent card this client was made from (by :func:`connect`), if any.
        self.card = card
        #: Response headers of the most recent exchange (e.g. activated extensions).
        self.last_headers: Mapping[str, str] = {}
        # ``tls``: e.g. client_tls_context(cert, key, ca=...) for mutual TLS.
        self._http = (
            http_client
            if http_client is not None
            else httpx.AsyncClient(verify=tls if tls is not None else True)
        )
        self._owns_http = http_client is None
        self._server_retry: float | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r}, version={self.version!r})"

    async def aclose(self) -> None:
        """Close the httpx client (unless it was passed in)."""
        if self._owns_http:
            await self._http.aclose()

    # ------------------------------------------------------------------ http

    async def _send(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await self._http.send(request, stream=True)
            self.last_headers = response.headers
            return await self._read(response)
        except httpx.TimeoutException as exc:
            raise ClientTimeoutError(_timed_out(request, exc)) from exc
        except httpx.HTTPError as exc:
            raise HTTPTransportError(f"{request.method} {request.url} failed: {exc!r}") from exc

    async def _read(self, response: httpx.Response) -> httpx.Response:
        """``response`` read whole, up to ``max_event_size`` bytes (like one event of a
        stream): a bigger answer is refused as it arrives, not held in memory. The
        whole body gets ``timeouts.read`` seconds: httpx bounds each read only, so a
        server trickling a byte at a time held the call for as long as it liked."""
        seconds = self.timeouts.read
        try:
            async with asyncio.timeout(seconds):
                return await self._read_body(response)
        except TimeoutError:
            await response.aclose()
            raise ClientTimeoutError(
                f"{response.request.method} {response.request.url}: the answer's body "
                f"did not end within {seconds} s"
            ) from None

    async def _read_body(self, response: httpx.Response) -> httpx.Response:
        limit = self.max_event_size
        length = response.headers.get("content-length", "")
        if limit is None or (
            length.isdigit() and int(length) <= limit and "content-encoding" not in response.headers
        ):
            # Framed by its length (h11 reads no byte past it), not inflated: within the limit.
            await response.aread()
            return response
        body = await read_at_most(response, limit)
        if limit is not None and len(body) > limit:
            raise InvalidAgentResponseError(
                f"Invalid agent response: the answer from {response.request.url} "
                f"is larger than {limit} bytes"
            )
        # The body is decoded already: its length and encoding headers no longer apply.
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in _BODY_HEADERS
        ]
        return httpx.Response(
            response.status_code, headers=headers, content=body, request=response.request
        )

    async def _events(
        self, request: httpx.Request
    ) -> AsyncGenerator[SSEEvent | httpx.Response, None]:
        """Open a stream: its SSE events, or the (read) response if it is not a stream."""
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise ClientTimeoutError(_timed_out(request, exc)) from exc
        except httpx.HTTPError as exc:
            raise HTTPTransportError(f"{request.method} {request.url} failed: {exc!r}") from exc
        try:
            self.last_headers = response.headers
            media = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if not response.is_success or media != SSE_MEDIA_TYPE:
                try:
                    answer = await self._read(response)
                except httpx.HTTPError as exc:
                    raise HTTPTransportError(f"reading {request.url} failed: {exc!r}") from exc
                yield answer
                return
            parser = SSEParser(max_event_size=self.max_event_size)
            try:
                async for chunk in response.aiter_bytes():
                    for event in parser.feed(chunk):
                        if parser.retry is not None:
                            self._server_retry = parser.retry / 1000
                        yield event
            except httpx.TimeoutException as exc:
                # Silence beyond ``stream_read``: the connection is taken for dead.
                raise StreamDisconnectedError(
                    f"the stream from {request.url} went silent: {_timed_out(request, exc)}",
                    parser.last_event_id or None,
                ) from exc
            except httpx.HTTPError as exc:
                raise StreamDisconnectedError(
                    f"the stream from {request.url} broke: {exc!r}", parser.last_event_id or None
                ) from exc
            except SSEError as exc:
                raise InvalidAgentResponseError(f"Invalid agent response: {exc}") from exc
            parser.close()
        finally:
            await response.aclose()

    # ------------------------------------------------------------------ resumption

    broken_stream_error = StreamDisconnectedError

    def _server_retry_delay(self) -> float | None:
        return self._server_retry

    # ------------------------------------------------------------------ tenant

    def _with_tenant(self, params: Any) -> Any:
        if (
            self.tenant is not None
            and self.version == V1_0
            and attrs.has(type(params))
            and "tenant" in attrs.fields_dict(type(params))
            and params.tenant is None
        ):
            return attrs.evolve(params, tenant=self.tenant)
        return params


# ---------------------------------------------------------------------------- JSON-RPC


class HTTPClient(BaseHTTPClient):
    """A2A over JSON-RPC 2.0 + HTTP (spec §9): ``POST url`` for every call.

    Streams are ``text/event-stream`` answers whose events each carry one
    JSON-RPC response. ``tenant`` (from the chosen card interface) is set in
    every request's params (1.0 only). Options are those of :class:`A2AClient`
    plus ``http_client`` (an ``httpx.AsyncClient`` to share; it is not closed),
    ``timeouts``, ``reconnect``, ``max_event_size`` (the largest stream event or
    answer, in bytes) and ``card``.
    """

    binding = "JSONRPC"

    async def _unary(self, spec: MethodSpec, call: ClientCall) -> Any:
        call.params = self._with_tenant(call.params)
        return await super()._unary(spec, call)

    def _streaming(self, spec: MethodSpec, call: ClientCall) -> AsyncIterator[Any]:
        call.params = self._with_tenant(call.params)
        return super()._streaming(spec, call)

    async def send_bytes(self, body: bytes, headers: Mapping[str, str]) -> bytes:
        """POST one JSON-RPC request; the response body (typed error for HTTP failures)."""
        request = self._http.build_request(
            "POST",
            self.url,
            content=body,
            headers=_merge_headers(headers, Content_Type=JSON_MEDIA_TYPE, Accept=JSON_MEDIA_TYPE),
            timeout=self.timeouts.unary(),
        )
        response = await self._send(request)
        _check_jsonrpc_answer(response)
        return response.content

    async def stream_bytes(
        self, body: bytes, headers: Mapping[str, str]
    ) -> AsyncIterator[StreamChunk]:
        """POST one JSON-RPC request accepting ``text/event-stream``; one chunk per event."""
        request = self._http.build_request(
            "POST",
            self.url,
            content=body,
            headers=_merge_headers(
                headers,
                Content_Type=JSON_MEDIA_TYPE,
                Accept=f"{SSE_MEDIA_TYPE}, {JSON_MEDIA_TYPE}",
                Cache_Control="no-cache",
            ),
            timeout=self.timeouts.stream(),
        )
        async for event in self._events(request):
            if isinstance(event, httpx.Response):
                # Answered without a stream: a JSON-RPC error (or one result).
                _check_jsonrpc_answer(event)
                yield StreamChunk(event.content)
                return
            yield StreamChunk(event.data.encode("utf-8"), event.id or None)


def _is_jsonrpc(content: bytes) -> bool:
    body = _json_object(content)
    return body is not None and body.get("jsonrpc") == "2.0"


def _check_jsonrpc_answer(response: httpx.Response) -> None:
    """Return when ``response`` carries a JSON-RPC body to decode (a success, or an error
    other than a refusal of the caller); raise the typed error of any other answer."""
    if response.is_success:
        return
    refused = _refusal(response)
    if refused is not None:
        raise refused
    if not _is_jsonrpc(response.content):
        raise _status_error(response)


# ---------------------------------------------------------------------------- HTTP+JSON


class RESTClient(BaseHTTPClient):
    """A2A over HTTP+JSON (spec §11): one REST route per operation.

    1.0 uses ``/message:send``, ``/tasks/{id}``, ... under ``url`` (below
    ``/{tenant}`` when the interface has a tenant) with ProtoJSON bodies
    (``application/a2a+json``); errors are ``google.rpc.Status`` bodies,
    raised as the typed :mod:`a2a_models.errors`. 0.3 uses the same routes
    below ``/v1`` (``/v1/card`` for the extended card), in the 0.3 proto's
    ProtoJSON (the ``"0.3-http"`` dialect). ``SubscribeToTask`` is sent as
    ``POST`` (spec §11.3), and as ``GET`` (the proto's binding) from then on
    if the server answers 405. Options are those of :class:`HTTPClient`.

    Routes and mappings are the I/O-free binding of :mod:`a2a_models.protocol`.
    The byte primitives (:meth:`send_bytes`, :meth:`stream_bytes`) take and
    give JSON-RPC envelopes like every client's, translated to and from the
    operation's route, so custom callers work on either binding.
    """

    binding = "HTTP+JSON"

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url.rstrip("/"), **options)
        self._subscribe_method = "POST"

    async def send_bytes(self, body: bytes, headers: Mapping[str, str]) -> bytes:
        """One JSON-RPC request, sent as its HTTP+JSON route; the JSON-RPC response body."""
        request, spec, params = self._from_envelope(body)
        try:
            call = ClientCall(spec, params, self.version, dict(headers), None)
            result = await self._unary(spec, call)
            wire = encode_result(spec, result, self.version)
            answer: SuccessResponse | ErrorResponse = SuccessResponse(request.id, wire)
        except JSONRPCError as exc:
            answer = ErrorResponse(request.id, exc)
        return encode_response(answer, self.version)

    async def stream_bytes(
        self, body: bytes, headers: Mapping[str, str]
    ) -> AsyncIterator[StreamChunk]:
        """One streaming JSON-RPC request over its route; a JSON-RPC response per event."""
        request, spec, params = self._from_envelope(body)
        call = ClientCall(spec, params, self.version, dict(headers), None)
        items = self._streaming(spec, call)
        try:
            async for event_id, item in items:
                wire = encode_result(spec, item, self.version)
                data = encode_response(SuccessResponse(request.id, wire), self.version)
                yield StreamChunk(data, event_id)
        except JSONRPCError as exc:
            yield StreamChunk(encode_response(ErrorResponse(request.id, exc), self.version))
        finally:
            await aclose_if_closable(items)

    def _from_envelope(self, body: bytes) -> tuple[RPCRequest, MethodSpec, Any]:
        message = parse_message(body)
        if not isinstance(message, RPCRequest):
            raise ValueError("send_bytes and stream_bytes take one JSON-RPC request with an id")
        spec = method_for(message.method, self.version)
        return message, spec, decode_params(spec, message.params, self.version)

    # ------------------------------------------------------------------ routes

    def _route(self, spec: MethodSpec, params: Any) -> RestRequest:
        return build_rest_request(
            spec,
            params,
            self.version,
            tenant=self.tenant,
            subscribe_method=self._subscribe_method,
        )

    def _request(
        self, route: RestRequest, headers: Mapping[str, str], *, stream: bool
    ) -> httpx.Request:
        media = rest_media_type(self.version)
        fixed: dict[str, str] = {
            "Accept": f"{SSE_MEDIA_TYPE}, {media}" if stream else f"{media}, {JSON_MEDIA_TYPE}"
        }
        if route.body is not None:
            fixed["Content_Type"] = media
        if stream:
            fixed["Cache_Control"] = "no-cache"
        return self._http.build_request(
            route.method,
            self.url + route.path,
            content=route.content,
            params=list(route.query) if route.query else None,
            headers=_merge_headers(headers, **fixed),
            timeout=self.timeouts.stream() if stream else self.timeouts.unary(),
        )

    def _decode(self, spec: MethodSpec, content: bytes) -> Any:
        try:
            return decode_rest_result(spec, content, self.version)
        except DecodeError as exc:
            raise InvalidAgentResponseError(
                f"Invalid agent response to {spec.name}: {exc.path}: {exc.expected}"
            ) from None

    # ------------------------------------------------------------------ hooks

    async def _unary(self, spec: MethodSpec, call: ClientCall) -> Any:
        route = self._route(spec, call.params)
        response = await self._send(self._request(route, call.headers, stream=False))
        if not response.is_success:
            raise _status_error(response)
        return self._decode(spec, response.content)

    async def _streaming(
        self, spec: MethodSpec, call: ClientCall
    ) -> AsyncIterator[tuple[str | None, Any]]:
        route = self._route(spec, call.params)
        retried = False
        while True:
            events = self._events(self._request(route, call.headers, stream=True))
            try:
                async for event in events:
                    if isinstance(event, httpx.Response):
                        if (
                            event.status_code == 405
                            and spec.name == "SubscribeToTask"
                            and not retried
                        ):
                            # The proto binds subscribe to GET, the spec text to POST.
                            self._subscribe_method = "GET" if route.method == "POST" else "POST"
                            route = self._route(spec, call.params)
                            retried = True
                            break
                        if not event.is_success:
                            raise _status_error(event)
                        # One result instead of a stream.
                        yield None, self._decode(spec, event.content)
                        return
                    if event.event == "error":
                        body = _json_object(event.data.encode("utf-8"))
                        if body is None:
                            raise InvalidAgentResponseError(
                                f"Invalid agent response: stream error event {event.data[:200]!r}"
                            )
                        raise JSONRPCError.from_http_status(body)
                    yield (
                        event.id or None,
                        self._decode(spec, event.data.encode("utf-8")),
                    )
                else:
                    return
            finally:
                await events.aclose()
