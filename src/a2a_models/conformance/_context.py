"""What a check gets: the HTTP client, the target, and protocol helpers that keep evidence.

:meth:`CheckContext.call` performs one A2A operation over the endpoint's
transport (a JSON-RPC envelope, or the REST route of the version) and
returns a :class:`CallResult` that hides the transport: a raw ``result``
or a :class:`RemoteError`. :meth:`CheckContext.stream` does the same for
the streaming operations and returns a :class:`StreamSession`. Every HTTP
exchange is appended to :attr:`CheckContext.evidence`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NoReturn, TypeVar
from urllib.parse import quote, urlsplit

import attrs
import httpx

from .. import codec
from .. import models as m
from .._state import TaskState
from ..errors import DecodeError, JSONRPCError, error_from_reason
from ..protocol import METHODS, REST_ROUTES, SSEParser, build_rest_request, decode_result
from ._registry import (
    CARD,
    JSONRPC,
    REST,
    CheckFailed,
    CheckSkipped,
    Exchange,
    NotApplicable,
    Requirement,
)
from ._target import Endpoint, Target, excerpt, record

__all__ = [
    "CallResult",
    "CheckContext",
    "HttpReply",
    "RemoteError",
    "StreamEvent",
    "StreamSession",
    "describe_error_class",
]

T = TypeVar("T")
_UNSET: Any = object()
_IDS = itertools.count(1)
_A2A_REASONS = {
    "TASK_NOT_FOUND",
    "TASK_NOT_CANCELABLE",
    "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "UNSUPPORTED_OPERATION",
    "CONTENT_TYPE_NOT_SUPPORTED",
    "INVALID_AGENT_RESPONSE",
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    "EXTENSION_SUPPORT_REQUIRED",
    "VERSION_NOT_SUPPORTED",
}
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"


def describe_error_class(cls: type[JSONRPCError], transport: str) -> str:
    if transport == REST:
        reason = f" {cls.reason}" if cls.reason else ""
        return f"{cls.__name__} (HTTP {cls.http_status}{reason})"
    return f"{cls.__name__} ({cls.code})"


@attrs.frozen(slots=True)
class HttpReply:
    """A complete HTTP response (or the failure to get one)."""

    exchange: Exchange
    status: int | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    body: bytes = b""
    error: str | None = None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()

    def json(self) -> Any:
        """The parsed body; raises ValueError if it is not JSON."""
        return codec.loads(self.body)


@attrs.frozen(slots=True)
class RemoteError:
    """An error answer, transport-neutral.

    JSON-RPC: ``code``/``message``/``data`` of the error object. REST: the
    HTTP status, and ``code``/``message``/``details`` of the google.rpc.Status
    body when there is one; ``reason`` is the ErrorInfo reason if present.
    """

    transport: str
    code: int | None
    message: str
    data: Any = None
    http_status: int | None = None
    reason: str | None = None
    details: tuple[Any, ...] = ()
    body_shape_ok: bool = True

    def is_(self, cls: type[JSONRPCError]) -> bool:
        if self.transport == JSONRPC:
            return self.code == cls.code
        if self.http_status != cls.http_status:
            return False
        if cls.reason is None:
            return self.reason is None or self.reason not in _A2A_REASONS
        return self.reason is None or self.reason == cls.reason

    def describe(self) -> str:
        if self.transport == JSONRPC:
            return f"JSON-RPC error {self.code} {self.message!r}"
        reason = f" reason={self.reason}" if self.reason else ""
        return f"HTTP {self.http_status}{reason} {self.message!r}"

    def error_info(self) -> dict[str, Any] | None:
        for d in self.details:
            if isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE:
                return d
        return None


@attrs.frozen(slots=True)
class CallResult:
    """The outcome of one operation: a raw ``result`` xor an ``error`` (or a ``problem``)."""

    op: str
    version: str
    transport: str
    http: HttpReply
    result: Any = None
    has_result: bool = False
    error: RemoteError | None = None
    #: Why the reply is neither a result nor an error (not JSON, bad envelope, ...).
    problem: str | None = None
    #: The raw JSON-RPC envelope (JSON-RPC only).
    envelope: Any = None

    @property
    def dialect(self) -> str:
        return _dialect(self.version, self.transport)

    def describe(self) -> str:
        if self.error is not None:
            return self.error.describe()
        if self.problem is not None:
            return self.problem
        return f"a result ({excerpt(codec.dumps(self.result), 160)})"


def _dialect(version: str, transport: str) -> str:
    if version == "1.0":
        return "1.0"
    return "0.3-http" if transport == REST else "0.3"


@attrs.define
class StreamEvent:
    """One SSE event, parsed as far as it goes."""

    index: int
    data: str
    sse_id: str = ""
    json: Any = None
    problem: str | None = None
    #: The StreamResponse member (JSON-RPC: the envelope's ``result``).
    payload: Any = None
    error: RemoteError | None = None
    model: Any = None
    decode_error: str | None = None

    @property
    def kind(self) -> str | None:
        v = self.model
        if isinstance(v, m.Task):
            return "task"
        if isinstance(v, m.Message):
            return "message"
        if isinstance(v, m.TaskStatusUpdateEvent):
            return "status"
        if isinstance(v, m.TaskArtifactUpdateEvent):
            return "artifact"
        return None

    @property
    def state(self) -> TaskState | None:
        v = self.model
        if isinstance(v, m.Task):
            return v.status.state
        if isinstance(v, m.TaskStatusUpdateEvent):
            return v.status.state
        return None

    @property
    def is_terminal(self) -> bool:
        st = self.state
        return st is not None and st.is_terminal

    def describe(self) -> str:
        if self.model is not None:
            st = self.state
            return f"#{self.index} {self.kind}" + (f" {st.name}" if st is not None else "")
        if self.error is not None:
            return f"#{self.index} error: {self.error.describe()}"
        return f"#{self.index} undecodable: {self.problem or self.decode_error}"


class StreamSession:
    """A streaming reply being read. Use :meth:`next` and :meth:`collect`."""

    def __init__(
        self,
        ctx: CheckContext,
        request: httpx.Request,
        response: httpx.Response | None,
        started: float,
        request_body: bytes | None,
        error: str | None = None,
        request_id: Any = None,
    ) -> None:
        self._ctx = ctx
        self.request_id = request_id
        self._request = request
        self._response = response
        self._started = started
        self._request_body = request_body
        self._parser = SSEParser()
        self._pending: list[StreamEvent] = []
        self._iter = response.aiter_raw().__aiter__() if response is not None else None
        self._raw = bytearray()
        self.events: list[StreamEvent] = []
        self.closed = response is None
        self.transport_error = error
        self.timed_out = False
        #: An error reply instead of a stream (a JSON body, or an SSE error event first).
        self.error: RemoteError | None = None
        self.non_stream: HttpReply | None = None
        self._recorded = False
        self._index = 0

    @property
    def status(self) -> int | None:
        return self._response.status_code if self._response is not None else None

    @property
    def media_type(self) -> str:
        if self._response is None:
            return ""
        value: str = self._response.headers.get("content-type", "")
        return value.split(";", 1)[0].strip().lower()

    @property
    def is_sse(self) -> bool:
        return self.media_type == "text/event-stream"

    @property
    def terminal_index(self) -> int | None:
        for e in self.events:
            if e.is_terminal or (e.kind == "message" and e.index == 0):
                return e.index
        return None

    async def _read_non_stream(self) -> None:
        assert self._response is not None
        body = await self._response.aread()
        self._raw.extend(body)
        self.closed = True
        exchange = self._exchange()
        reply = HttpReply(
            exchange,
            self._response.status_code,
            {k.lower(): v for k, v in self._response.headers.items()},
            body,
        )
        self.non_stream = reply
        result = self._ctx._interpret("SendStreamingMessage", reply, None)
        self.error = result.error

    async def next(self, timeout: float = 10.0) -> StreamEvent | None:
        """The next event, ``None`` at the end of the stream; TimeoutError if none comes."""
        if self._pending:
            return self._pending.pop(0)
        if self.closed or self._iter is None:
            return None
        if not self.is_sse:
            await self._read_non_stream()
            return None
        deadline = time.monotonic() + timeout
        while not self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = True
                raise TimeoutError
            try:
                chunk = await asyncio.wait_for(self._iter.__anext__(), remaining)
            except StopAsyncIteration:
                self.closed = True
                return None
            except TimeoutError:
                self.timed_out = True
                raise TimeoutError from None
            except httpx.HTTPError as exc:
                self.closed = True
                self.transport_error = repr(exc)
                return None
            self._raw.extend(chunk)
            for sse in self._parser.feed(chunk):
                event = self._ctx._parse_stream_event(
                    self._index, sse.data, sse.id, self.request_id
                )
                self._index += 1
                self.events.append(event)
                self._pending.append(event)
        return self._pending.pop(0)

    async def collect(self, *, grace: float | None = None, idle: float = 10.0) -> None:
        """Read to the end of the stream, or until ``grace`` seconds after the
        terminal event (or, before one, ``idle`` seconds of silence)."""
        grace = self._ctx.stream_grace if grace is None else grace
        deadline: float | None = None
        while True:
            if deadline is None and self.terminal_index is not None:
                deadline = time.monotonic() + grace
            wait = idle if deadline is None else deadline - time.monotonic()
            if wait <= 0:
                return
            try:
                event = await self.next(wait)
            except TimeoutError:
                return
            if event is None:
                return

    def outcome(self) -> str:
        """What came back, for failure messages."""
        if self._response is None:
            return f"no response ({self.transport_error})"
        parts = [
            f"HTTP {self.status} {self.media_type or '(no content type)'}",
            f"{len(self.events)} events",
        ]
        if self.events:
            parts.append("; ".join(e.describe() for e in self.events[:6]))
        if self.transport_error:
            parts.append(f"connection dropped: {self.transport_error}")
        elif self.timed_out and not self.closed:
            parts.append("still open")
        return ", ".join(parts)

    def first_error(self) -> RemoteError | None:
        """The error the server answered with instead of streaming, if any."""
        if self.error is not None:
            return self.error
        if self.events and self.events[0].error is not None:
            return self.events[0].error
        return None

    async def aclose(self) -> None:
        if self._response is not None:
            await self._response.aclose()
        if not self._recorded:
            self._ctx.evidence.append(self._exchange())
            self._recorded = True

    def _exchange(self) -> Exchange:
        suffix = "" if self.closed else "\n(stream still open when reading stopped)"
        return record(
            self._request,
            status=self.status,
            response_headers=self._response.headers if self._response is not None else None,
            body=bytes(self._raw).decode("utf-8", "replace") + suffix,
            error=self.transport_error if self._response is None else None,
            started=self._started,
            request_body=self._request_body,
            keep_ends=True,
        )

    async def __aenter__(self) -> StreamSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class CheckContext:
    """Everything one check run needs. Created by the runner, one per (check, endpoint)."""

    def __init__(
        self,
        *,
        client: httpx.AsyncClient,
        target: Target,
        version: str,
        transport: str,
        endpoint: Endpoint | None,
        auth_headers: Mapping[str, str],
        shared: dict[str, Any],
        request_timeout: float = 10.0,
        stream_grace: float = 1.0,
        peer_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.client = client
        #: Credentials of a second identity (owner-isolation checks); ``None``: none given.
        self.peer_headers = dict(peer_headers) if peer_headers else None
        self.target = target
        self.version = version
        self.transport = transport
        self.endpoint = endpoint
        self.auth_headers = dict(auth_headers)
        self.shared = shared
        self.request_timeout = request_timeout
        self.stream_grace = stream_grace
        self.evidence: list[Exchange] = []

    # ------------------------------------------------------------------ verdicts

    def fail(self, message: str) -> NoReturn:
        raise CheckFailed(message)

    def skip(self, reason: str) -> NoReturn:
        raise CheckSkipped(reason)

    def not_applicable(self, reason: str) -> NoReturn:
        raise NotApplicable(reason)

    def expect(self, condition: object, message: str) -> None:
        if not condition:
            raise CheckFailed(message)

    # ------------------------------------------------------------------ card

    @property
    def card(self) -> dict[str, Any]:
        if self.target.card is None:
            self.skip(f"no agent card: {self.target.card_problem}")
        return self.target.card

    def claims(self, requirement: Requirement) -> bool:
        return self.target.claims(requirement, self.version)

    @property
    def has_contract(self) -> bool:
        return self.claims(Requirement.CONTRACT)

    @property
    def dialect(self) -> str:
        return _dialect(self.version, self.transport)

    # ------------------------------------------------------------------ HTTP

    def version_headers(self) -> dict[str, str]:
        """The service parameters a client of this version sends (0.3 sends no version), with
        the extensions the card marks required (1.0 ``A2A-Extensions``, 0.3 ``X-A2A-Extensions``)."""
        out = {"A2A-Version": self.version} if self.version != "0.3" else {}
        return {**out, **self.extension_headers()}

    def extension_headers(self) -> dict[str, str]:
        """The extensions the card marks required, as the version's service parameter."""
        required = self.target.required_extensions()
        if not required:
            return {}
        return {
            "A2A-Extensions" if self.version != "0.3" else "X-A2A-Extensions": ",".join(required)
        }

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        params: list[tuple[str, str]] | None = None,
        timeout: float | None = None,
    ) -> HttpReply:
        """One HTTP exchange, recorded as evidence; never raises for transport errors."""
        hdrs = {**self.auth_headers, **(headers or {})}
        request = self.client.build_request(
            method,
            url,
            headers=hdrs,
            content=content,
            params=tuple(params) if params else None,
            timeout=timeout if timeout is not None else self.request_timeout,
        )
        started = time.monotonic()
        try:
            response = await self.client.send(request)
        except httpx.HTTPError as exc:
            ex = record(
                request, error=f"{type(exc).__name__}: {exc}", started=started, request_body=content
            )
            self.evidence.append(ex)
            return HttpReply(ex, error=f"{type(exc).__name__}: {exc}")
        body = response.content
        ex = record(
            request,
            status=response.status_code,
            response_headers=response.headers,
            body=body,
            started=started,
            request_body=content,
        )
        self.evidence.append(ex)
        return HttpReply(
            ex, response.status_code, {k.lower(): v for k, v in response.headers.items()}, body
        )

    # ------------------------------------------------------------------ operations

    def _endpoint(self) -> Endpoint:
        if self.endpoint is None:
            self.skip("this check needs an endpoint")
        return self.endpoint

    def new_id(self) -> str:
        return f"conformance-{next(_IDS)}"

    def encode_params(self, op: str, params: object) -> Any:
        """``params`` (a model) in this endpoint's dialect."""
        return codec.to_wire(params, self.dialect, lossy=True)

    def jsonrpc_body(self, op: str, params: Any, *, id: Any = _UNSET) -> dict[str, Any]:
        spec = METHODS[op]
        name = spec.name_for(self.version)
        if name is None:
            self.not_applicable(f"{op} does not exist in A2A {self.version}")
        body: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": self.new_id() if id is _UNSET else id,
            "method": name,
        }
        if not (self.version == "0.3" and op == "GetExtendedAgentCard") and params is not None:
            body["params"] = params
        return body

    def _rest_route(self, op: str, params: object) -> tuple[str, str, list[tuple[str, str]], Any]:
        """(HTTP method, path, query, body-or-None) of ``op`` on REST (``protocol.REST_ROUTES``)."""
        spec = METHODS[op]
        if spec.name_for(self.version) is None:
            self.not_applicable(f"{op} does not exist in A2A {self.version}")
        if params is None:
            # No params (the caller sends raw ones): the route's path as it stands.
            for route in REST_ROUTES:
                if (
                    route.operation == op
                    and route.version == self.version
                    and "{" not in route.path
                ):
                    path = route.path[3:] if route.path.startswith("/v1/") else route.path
                    return route.methods[-1], path, [], None
            raise ValueError(f"{op} needs params to build its HTTP+JSON path")
        # The spec's own bodies (0.3 §7.5's {"config": ...}), not the SDK-friendly ones.
        req = build_rest_request(spec, params, self.version, sdk_compatible=False)
        return req.method, req.route_path, list(req.query), req.body

    def rest_url(self, path: str) -> str:
        ep = self._endpoint()
        base = ep.url.rstrip("/")
        prefix = ""
        if self.version == "0.3":
            if not urlsplit(base).path.endswith("/v1"):
                prefix = "/v1"
        elif ep.tenant:
            prefix = "/" + quote(ep.tenant, safe="")
        return base + prefix + path

    def rest_headers(self, *, with_body: bool) -> dict[str, str]:
        media = "application/a2a+json" if self.version == "1.0" else "application/json"
        hdrs = (
            {"Accept": f"{media}, application/json"} if self.version == "1.0" else {"Accept": media}
        )
        if with_body:
            hdrs["Content-Type"] = media
        return {**hdrs, **self.version_headers()}

    async def call(
        self,
        op: str,
        params: object = None,
        *,
        raw_params: Any = _UNSET,
        raw_body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        version_headers: Mapping[str, str] | None = None,
        id: Any = _UNSET,
        with_extensions: bool = True,
    ) -> CallResult:
        """Perform ``op`` (a 1.0 method name) with ``params`` (a model) on the endpoint.

        ``raw_params`` replaces the encoded params (JSON-RPC ``params`` / REST
        body); ``raw_body`` replaces the whole HTTP body. ``version_headers``
        replaces the default ``A2A-Version`` header set; the extensions the card
        marks required are named unless ``with_extensions`` is false.
        """
        ep = self._endpoint()
        if version_headers is None:
            vh = self.version_headers()
        else:  # the caller's version headers, still naming the required extensions
            vh = {**self.extension_headers(), **version_headers}
        if not with_extensions:
            vh = {k: v for k, v in vh.items() if k not in ("A2A-Extensions", "X-A2A-Extensions")}
        if self.transport == JSONRPC:
            if raw_body is None:
                wire = (
                    raw_params
                    if raw_params is not _UNSET
                    else (
                        self.encode_params(op, params)
                        if params is not None
                        else (
                            {}
                            if METHODS[op].params_required is False and self.version == "1.0"
                            else None
                        )
                    )
                )
                content = codec.dumps(self.jsonrpc_body(op, wire, id=id))
            else:
                content = raw_body
            hdrs = {
                "Content-Type": "application/json",
                "Accept": "application/json",
                **vh,
                **(headers or {}),
            }
            reply = await self.request("POST", ep.url, headers=hdrs, content=content)
            return self._interpret(op, reply, None)
        method, path, query, body = self._rest_route(op, params)
        if raw_params is not _UNSET:
            body = raw_params
        rest_content = (
            raw_body if raw_body is not None else (codec.dumps(body) if body is not None else None)
        )
        base_headers = self.rest_headers(with_body=rest_content is not None)
        if version_headers is not None or not with_extensions:
            base_headers = {
                k: v
                for k, v in base_headers.items()
                if k.lower() not in ("a2a-version", "a2a-extensions", "x-a2a-extensions")
            }
        hdrs = {**base_headers, **vh, **(headers or {})}
        reply = await self.request(
            method, self.rest_url(path), headers=hdrs, content=rest_content, params=query or None
        )
        return self._interpret(op, reply, None)

    def _interpret(self, op: str, reply: HttpReply, request_id: Any) -> CallResult:
        base: dict[str, Any] = dict(
            op=op, version=self.version, transport=self.transport, http=reply
        )
        if reply.status is None:
            return CallResult(**base, problem=f"no HTTP response: {reply.error}")
        if self.transport == JSONRPC:
            if reply.status == 204 or not reply.body.strip():
                return CallResult(**base, problem=f"HTTP {reply.status} with an empty body")
            try:
                env = reply.json()
            except ValueError:
                return CallResult(**base, problem=f"HTTP {reply.status}: the body is not JSON")
            if not isinstance(env, dict):
                return CallResult(
                    **base, envelope=env, problem="the reply is not a JSON-RPC response object"
                )
            if "error" in env and isinstance(env["error"], dict):
                err = env["error"]
                code = err.get("code")
                return CallResult(
                    **base,
                    envelope=env,
                    error=RemoteError(
                        transport=JSONRPC,
                        code=code if isinstance(code, int) and not isinstance(code, bool) else None,
                        message=str(err.get("message", "")),
                        data=err.get("data"),
                        http_status=reply.status,
                        details=tuple(err["data"]) if isinstance(err.get("data"), list) else (),
                    ),
                )
            if "result" in env:
                return CallResult(**base, envelope=env, result=env["result"], has_result=True)
            return CallResult(
                **base, envelope=env, problem="the JSON-RPC response has neither result nor error"
            )
        # REST
        if 200 <= reply.status < 300:
            if not reply.body.strip():
                return CallResult(**base, result=None, has_result=True)
            try:
                return CallResult(**base, result=reply.json(), has_result=True)
            except ValueError:
                return CallResult(**base, problem=f"HTTP {reply.status}: the body is not JSON")
        return CallResult(**base, error=_rest_error(reply))

    # ------------------------------------------------------------------ decoding

    def decode(self, result: CallResult, tp: Any = None) -> Any:
        """The result decoded in the dialect (fails the check with the JSON path)."""
        if result.error is not None or result.problem is not None or not result.has_result:
            self.fail(f"{result.op}: expected a result, got {result.describe()}")
        spec = METHODS[result.op]
        target = tp if tp is not None else spec.result_type
        if self.transport == JSONRPC and tp is None:
            try:
                return decode_result(spec, result.result, self.version)
            except JSONRPCError as exc:
                self.fail(f"{result.op}: the result is not valid A2A {self.version}: {exc.message}")
        if target is None:
            if result.result in (None, {}):
                return None
            self.fail(
                f"{result.op}: expected an empty result, got {excerpt(codec.dumps(result.result), 200)}"
            )
        try:
            return codec.from_wire(target, result.result, self.dialect)
        except DecodeError as exc:
            self.fail(
                f"{result.op}: the result is not a valid {getattr(target, '__name__', target)} "
                f"in the {self.dialect} dialect: {exc}"
            )

    def expect_result(self, result: CallResult, what: str = "") -> Any:
        if result.error is not None or result.problem is not None:
            self.fail(f"{what or result.op}: expected a result, got {result.describe()}")
        return result.result

    def expect_error(self, result: CallResult, cls: type[JSONRPCError], what: str) -> RemoteError:
        want = describe_error_class(cls, self.transport)
        if result.error is None:
            self.fail(f"{what}: expected {want}, got {result.describe()}")
        if not result.error.is_(cls):
            self.fail(f"{what}: expected {want}, got {result.error.describe()}")
        return result.error

    def expect_any_error(self, result: CallResult, what: str) -> RemoteError:
        if result.error is None:
            self.fail(f"{what}: expected an error, got {result.describe()}")
        return result.error

    # ------------------------------------------------------------------ streaming

    async def stream(
        self,
        op: str,
        params: object,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> StreamSession:
        """Start a streaming operation; read it with the returned session (then close it)."""
        ep = self._endpoint()
        if self.transport == JSONRPC:
            request_id = self.new_id()
            content: bytes | None = codec.dumps(
                self.jsonrpc_body(op, self.encode_params(op, params), id=request_id)
            )
            url = ep.url
            hdrs = {
                "Content-Type": "application/json",
                "Accept": "text/event-stream",
                **self.version_headers(),
            }
            method = "POST"
            query: list[tuple[str, str]] = []
        else:
            method, path, query, body = self._rest_route(op, params)
            content = codec.dumps(body) if body is not None else None
            url = self.rest_url(path)
            hdrs = {
                **self.rest_headers(with_body=content is not None),
                "Accept": "text/event-stream",
            }
            request_id = None
        hdrs = {**self.auth_headers, **hdrs, **(headers or {})}
        request = self.client.build_request(
            method,
            url,
            headers=hdrs,
            content=content,
            params=tuple(query) or None,
            timeout=self.request_timeout,
        )
        started = time.monotonic()
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            return StreamSession(
                self, request, None, started, content, error=repr(exc), request_id=request_id
            )
        session = StreamSession(self, request, response, started, content, request_id=request_id)
        if op == "SubscribeToTask" and self.transport == REST and response.status_code == 405:
            # The proto maps subscribe to GET, the spec text to POST: accept either.
            await session.aclose()
            request = self.client.build_request(
                "GET", url, headers=hdrs, params=tuple(query) or None, timeout=self.request_timeout
            )
            started = time.monotonic()
            try:
                response = await self.client.send(request, stream=True)
            except httpx.HTTPError as exc:
                return StreamSession(self, request, None, started, None, error=repr(exc))
            session = StreamSession(self, request, response, started, None, request_id=request_id)
        return session

    def _parse_stream_event(
        self, index: int, data: str, sse_id: str, request_id: Any
    ) -> StreamEvent:
        event = StreamEvent(index=index, data=data, sse_id=sse_id)
        try:
            value = codec.loads(data)
        except ValueError as exc:
            event.problem = f"data is not JSON ({exc})"
            return event
        event.json = value
        if self.transport == JSONRPC:
            if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
                event.problem = "data is not a JSON-RPC 2.0 response"
                return event
            if "error" in value:
                err = value["error"] if isinstance(value["error"], dict) else {}
                event.error = RemoteError(
                    JSONRPC, err.get("code"), str(err.get("message", "")), err.get("data")
                )
                return event
            if "result" not in value:
                event.problem = "the JSON-RPC response has no result"
                return event
            if value.get("id") != request_id:
                event.problem = (
                    f"the response id {value.get('id')!r} is not the request id {request_id!r}"
                )
            payload = value["result"]
        else:
            if isinstance(value, dict) and "error" in value and len(value) == 1:
                err = value["error"] if isinstance(value["error"], dict) else {}
                event.error = RemoteError(
                    REST,
                    err.get("code"),
                    str(err.get("message", "")),
                    details=tuple(err.get("details") or ()),
                )
                return event
            payload = value
        event.payload = payload
        try:
            event.model = codec.from_wire(m.StreamResponse, payload, self.dialect)
        except DecodeError as exc:
            event.decode_error = str(exc)
        return event

    # ------------------------------------------------------------------ A2A helpers

    def user_message(
        self, text: str, *, task_id: str | None = None, context_id: str | None = None
    ) -> m.Message:
        return m.Message.user(text, task_id=task_id, context_id=context_id)

    def send_request(
        self,
        text: str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        return_immediately: bool | None = None,
        history_length: int | None = None,
        message: m.Message | None = None,
    ) -> m.SendMessageRequest:
        msg = message or self.user_message(text, task_id=task_id, context_id=context_id)
        config = None
        # 0.3 had no blocking default (1.0 blocks unless returnImmediately): say it.
        if return_immediately is not None or history_length is not None or self.version == "0.3":
            config = m.SendMessageConfiguration(
                return_immediately=bool(return_immediately),
                history_length=history_length,
                accepted_output_modes=("text/plain",),
            )
        return m.SendMessageRequest(message=msg, configuration=config)

    async def send(self, text: str, **kwargs: Any) -> CallResult:
        return await self.call("SendMessage", self.send_request(text, **kwargs))

    async def send_for_task(self, text: str, **kwargs: Any) -> tuple[m.Task, CallResult]:
        """Send ``text``; fail unless the answer is a Task."""
        res = await self.send(text, **kwargs)
        value = self.decode(res)
        if not isinstance(value, m.Task):
            self.fail(f"SendMessage {text!r}: expected a Task, got a {type(value).__name__}")
        return value, res

    def require_contract(self) -> None:
        if not self.has_contract:
            self.not_applicable("the card does not advertise the conformance contract skill")

    async def prerequisite(self, key: str, factory: Callable[[], Awaitable[T]]) -> T:
        """A value shared by the checks of this endpoint, made once by ``factory``.

        If making it fails, this check (and every later one that needs it)
        is skipped, naming the failure: the check that tests the same
        behaviour reports it.
        """
        slot: tuple[str, Any, tuple[Exchange, ...]] | None = self.shared.get(key)
        if slot is None:
            saved = self.evidence
            self.evidence = []
            try:
                made = await factory()
                slot = ("ok", made, tuple(self.evidence))
            except (CheckFailed, CheckSkipped, NotApplicable) as exc:
                slot = ("err", exc, tuple(self.evidence))
            except Exception as exc:
                slot = ("err", CheckFailed(f"{type(exc).__name__}: {exc}"), tuple(self.evidence))
            finally:
                self.evidence = saved
            self.shared[key] = slot
        state, value, evidence = slot
        self.evidence.extend(evidence)
        if state == "err":
            if isinstance(value, NotApplicable):
                raise NotApplicable(str(value))
            raise CheckSkipped(f"prerequisite {key!r} failed: {value}")
        return typing.cast(T, value)

    async def completed_task(self) -> m.Task:
        """A task the contract agent completed (``complete``, blocking)."""
        self.require_contract()

        async def make() -> m.Task:
            task, _ = await self.send_for_task("complete")
            if task.status.state is not TaskState.COMPLETED:
                self.fail(f"'complete' gave a task in state {task.status.state.name}")
            return task

        return await self.prerequisite("completed-task", make)

    async def any_task(self) -> m.Task:
        """Some task of this endpoint: the contract's completed task, or whatever
        a plain "hello" produces (skips if the agent answers with a Message)."""
        if self.has_contract:
            return await self.completed_task()

        async def make() -> m.Task:
            res = await self.send("hello")
            value = self.decode(res)
            if not isinstance(value, m.Task):
                self.skip("the agent answers 'hello' with a Message, not a Task")
            return value

        return await self.prerequisite("any-task", make)

    async def slow_task(self) -> m.Task:
        """A fresh ``slow`` task (non-blocking), still working."""
        self.require_contract()
        res = await self.send("slow", return_immediately=True)
        value = self.decode(res)
        if not isinstance(value, m.Task):
            self.fail(f"'slow' (returnImmediately) gave a {type(value).__name__}, not a Task")
        if value.status.state.is_terminal:
            self.fail(f"'slow' (returnImmediately) gave a task already {value.status.state.name}")
        return value

    async def cancel_quietly(self, task_id: str) -> None:
        """Best-effort cleanup: cancel a task, keeping no evidence."""
        saved = self.evidence
        self.evidence = []
        try:
            await self.call("CancelTask", m.CancelTaskRequest(id=task_id))
        except Exception:
            pass
        finally:
            self.evidence = saved


def _rest_error(reply: HttpReply) -> RemoteError:
    try:
        body = reply.json()
    except ValueError:
        body = None
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        details = tuple(err.get("details") or ()) if isinstance(err.get("details"), list) else ()
        reason = None
        for d in details:
            if isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE:
                r = d.get("reason")
                reason = r if isinstance(r, str) else None
                break
        code = err.get("code")
        return RemoteError(
            transport=REST,
            code=code if isinstance(code, int) else None,
            message=str(err.get("message", "")),
            data=err,
            http_status=reply.status,
            reason=reason,
            details=details,
            body_shape_ok=True,
        )
    message = ""
    if isinstance(body, dict):
        message = str(body.get("message") or body.get("detail") or body.get("title") or "")
    return RemoteError(
        transport=REST,
        code=None,
        message=message or excerpt(reply.body, 120),
        data=body,
        http_status=reply.status,
        body_shape_ok=False,
    )


def error_class_for(reason: str | None) -> type[JSONRPCError] | None:
    return error_from_reason(reason) if reason else None


__all__ += ["CARD", "error_class_for"]
