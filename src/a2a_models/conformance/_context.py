"""What a check gets: the HTTP client, the target, and protocol helpers that keep evidence.

:meth:`CheckContext.call` performs one A2A operation over the endpoint's
transport (a JSON-RPC envelope, or the REST route of the version) and
returns a :class:`CallResult` that hides the transport: a raw ``result``
or a :class:`RemoteError`. :meth:`CheckContext.stream` does the same for
the streaming operations and returns a :class:`StreamSession`. Every HTTP
exchange is appended to :attr:`CheckContext.evidence`. What came back is read in ``_replies``, streams
in ``_stream``.
"""

from __future__ import annotations

import contextlib
import itertools
import time
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, NoReturn, TypeVar
from urllib.parse import quote, urlsplit

import attrs
import httpx

from .. import codec
from .. import models as m
from .._state import TaskState
from ..errors import DecodeError, JSONRPCError
from ..protocol import METHODS, REST_ROUTES, build_rest_request, decode_result
from ._catalogue import requirement
from ._registry import (
    JSONRPC,
    REST,
    CheckFailed,
    CheckSkipped,
    Exchange,
    NotApplicable,
    Requirement,
)
from ._replies import (
    CallResult,
    HttpReply,
    RemoteError,
    StreamEvent,
    describe_error_class,
    rest_error,
    wire_dialect,
)
from ._stream import StreamSession
from ._target import Endpoint, Target, excerpt, fetch, record

__all__ = [
    "ERROR_FORMAT_03",
    "NO_SUCH_ROUTE",
    "ROUTE_MISSING",
    "STATUS_CODES_03",
    "WEBHOOK",
    "CheckContext",
]

T = TypeVar("T")
_UNSET: Any = object()
_IDS = itertools.count(1)
#: The webhook the push config checks register by default: nothing listens there.
WEBHOOK = "http://127.0.0.1:9/a2a-conformance-webhook"
#: A path under the HTTP+JSON base that no A2A server has (``CheckContext.judge_route``).
NO_SUCH_ROUTE = "/a2a-conformance-no-such-route"
ROUTE_MISSING = "no A2A route (the same answer as for a path no A2A server has, or HTTP 405)"
#: The 0.3 sentences on HTTP+JSON errors (catalogue ids): the only rules 0.3 states.
STATUS_CODES_03 = "v0.3-3.2.3-6"
ERROR_FORMAT_03 = "v0.3-3.2.3-9"


def _route_answer(reply: HttpReply) -> tuple[int | None, str, bytes]:
    """What identifies a server's generic answer: status, media type, and the body with the
    request's own path left out (generic pages often echo it)."""
    path = urlsplit(reply.exchange.url).path
    return reply.status, reply.media_type, reply.body.replace(path.encode(), b"{path}")


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
        webhook_url: str = WEBHOOK,
    ) -> None:
        self.client = client
        #: The URL push config checks register (``--webhook-url``).
        self.webhook_url = webhook_url
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
        #: Notes a passing check reports besides its own: what 1.0 would judge otherwise
        #: where the endpoint's version states no rule (see :meth:`advise`).
        self.advisories: list[str] = []

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

    def advise(self, note: str) -> None:
        """Report ``note`` with the verdict, failing nothing: where the endpoint's version
        states no rule, what the server did differs from the rule of a later version."""
        if note not in self.advisories:
            self.advisories.append(note)

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
        return wire_dialect(self.version, self.transport)

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
        wait = timeout if timeout is not None else self.request_timeout
        try:
            response, body, cut = await fetch(self.client, request, timeout=wait)
        except httpx.HTTPError as exc:
            ex = record(
                request, error=f"{type(exc).__name__}: {exc}", started=started, request_body=content
            )
            self.evidence.append(ex)
            return HttpReply(ex, error=f"{type(exc).__name__}: {exc}")
        ex = record(
            request,
            status=response.status_code,
            response_headers=response.headers,
            body=body,
            error=cut,
            started=started,
            request_body=content,
        )
        self.evidence.append(ex)
        if cut is not None:  # no complete response: every check reads it as none
            return HttpReply(ex, error=f"HTTP {response.status_code}: {cut}", incomplete=True)
        return HttpReply(
            ex, response.status_code, {k.lower(): v for k, v in response.headers.items()}, body
        )

    # ------------------------------------------------------------------ operations

    def _endpoint(self) -> Endpoint:
        if self.endpoint is None:
            self.skip("this check needs an endpoint")
        return self.endpoint

    def on_endpoint(self, endpoint: Endpoint) -> CheckContext:
        """A fresh context for another endpoint of the target, with these credentials and timeouts."""
        return CheckContext(
            client=self.client,
            target=self.target,
            version=endpoint.version,
            transport=endpoint.transport,
            endpoint=endpoint,
            auth_headers=self.auth_headers,
            shared={},
            request_timeout=self.request_timeout,
            stream_grace=self.stream_grace,
            webhook_url=self.webhook_url,
        )

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
        url = self.rest_url(path)
        reply = await self.request(
            method, url, headers=hdrs, content=rest_content, params=query or None
        )
        return await self.judge_route(self._interpret(op, reply, None), method, hdrs)

    async def judge_route(
        self, result: CallResult, method: str, headers: Mapping[str, str]
    ) -> CallResult:
        """``result`` with its HTTP+JSON error marked ``route_missing`` when the route is not
        there: a 405 (HTTP's own "no such method for this resource", RFC 9110 §15.5.6), or a
        404 that is the very answer the server gives for a path no A2A server has. Any other
        404 is an answer of the route (an A2A error such as TaskNotFound), whatever its body:
        0.3 fixes no error body, so its errors cannot be told by their shape (0.3 §3.2.3)."""
        err = result.error
        if err is None or err.transport != REST or err.body_shape_ok:
            return result
        if err.http_status == 405:
            return attrs.evolve(result, error=attrs.evolve(err, route_missing=True))
        if err.http_status != 404:
            return result
        generic = await self._generic_answer(method, headers)
        if generic is None or _route_answer(result.http) != generic:
            return result
        return attrs.evolve(result, error=attrs.evolve(err, route_missing=True))

    async def _generic_answer(
        self, method: str, headers: Mapping[str, str]
    ) -> tuple[int | None, str, bytes] | None:
        """What the server answers ``method`` on a path under the HTTP+JSON base that no A2A
        server has (asked once per endpoint and method); ``None`` without an HTTP answer."""
        key = f"generic-answer:{method}"
        if key not in self.shared:
            framing = ("content-length", "host", "transfer-encoding")
            reply = await self.request(
                method,
                self.rest_url(NO_SUCH_ROUTE),
                headers={k: v for k, v in headers.items() if k.lower() not in framing},
                content=b"{}" if method in ("POST", "PUT", "PATCH") else None,
            )
            self.shared[key] = _route_answer(reply) if reply.status is not None else None
        answer: tuple[int | None, str, bytes] | None = self.shared[key]
        return answer

    def _interpret(self, op: str, reply: HttpReply, request_id: Any) -> CallResult:
        base: dict[str, Any] = dict(
            op=op, version=self.version, transport=self.transport, http=reply
        )
        if reply.status is None:
            what = "an incomplete HTTP response" if reply.incomplete else "no HTTP response"
            return CallResult(**base, problem=f"{what}: {reply.error}")
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
                **base,
                envelope=env,
                problem="the JSON-RPC response has neither result nor error (JSON-RPC 2.0 §5: "
                "exactly one of them is REQUIRED)",
            )
        # REST
        if 200 <= reply.status < 300:
            if not reply.body.strip():
                return CallResult(**base, result=None, has_result=True)
            try:
                return CallResult(**base, result=reply.json(), has_result=True)
            except ValueError:
                return CallResult(**base, problem=f"HTTP {reply.status}: the body is not JSON")
        return CallResult(**base, error=rest_error(reply, self.version))

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

    def expect_error(
        self, result: CallResult, cls: type[JSONRPCError], what: str, *, named: bool = True
    ) -> RemoteError:
        """The error ``cls``, judged by the endpoint's version (``RemoteError.may_be``).

        Over 0.3 HTTP+JSON that is an error status of ``cls``'s class with a JSON body from
        a route that exists (0.3 §3.2.3 names no status per error type and no body shape);
        a status other than 1.0's for ``cls`` is an advisory, not a failure. ``named=False``:
        the version's text names no error type here (only "an error"), so any error passes
        and one that cannot be ``cls`` is an advisory."""
        want = describe_error_class(cls, self.transport, self.version)
        err = result.error
        if err is None:
            self.fail(
                f"{what}: expected {'an error' if not named else want}, got {result.describe()}"
            )
        if err.route_missing:
            self.fail(f"{what}: expected {want}, got {err.describe()}: {ROUTE_MISSING}")
        if err.transport == REST and err.version == "0.3":
            try:
                result.http.json()
            except ValueError:
                self.fail(
                    f"{what}: the error body is not JSON ({excerpt(result.http.body, 120)!r}): "
                    f"0.3 §3.2.3: {requirement(ERROR_FORMAT_03).sentence!r}"
                )
        if not err.may_be(cls):
            if named:
                self.fail(f"{what}: expected {want}, got {err.describe()}")
            self.advise(
                f"advisory: {what}: {err.describe()}, where 1.0 says "
                f"{describe_error_class(cls, self.transport)}; {self.version} names no error type"
            )
        elif err.transport == REST and err.version == "0.3" and err.http_status != cls.http_status:
            self.advise(
                f"advisory: {what}: HTTP {err.http_status} where 1.0 (§5.4) maps "
                f"{cls.__name__} to {cls.http_status}; 0.3 names no status per error "
                f"type (0.3 §3.2.3: {requirement(STATUS_CODES_03).sentence!r})"
            )
        return err

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
                    version=self.version,
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

    @contextlib.asynccontextmanager
    async def working_task(self) -> AsyncIterator[m.Task]:
        """A fresh :meth:`slow_task`, canceled quietly when the block ends."""
        task = await self.slow_task()
        try:
            yield task
        finally:
            await self.cancel_quietly(task.id)

    async def read_task(self, task_id: str, *, history_length: int | None = None) -> m.Task:
        """GetTask ``task_id``, decoded (fails the check unless the answer is a valid Task)."""
        res = await self.call(
            "GetTask", m.GetTaskRequest(id=task_id, history_length=history_length)
        )
        task: m.Task = self.decode(res)
        return task

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
