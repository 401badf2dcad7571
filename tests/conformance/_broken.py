"""Deliberately broken servers (mutants), generated from a table.

Each mutant is the project's own HTTP server (``adapters.http.create_app`` over
``AgentServer(ConformanceAgent())``) with ONE injected fault, either in the
engine (an ``AgentServer`` subclass) or on the wire (an ASGI middleware that
rewrites one kind of request or response). Each names the check(s) that must
catch it, and the (version, transport) whose suite run shows it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
from starlette.applications import Starlette

from a2a_models import TaskState
from a2a_models import models as m
from a2a_models.conformance import ConformanceAgent, conformance_card
from a2a_models.errors import InternalError, InvalidParamsError, TaskNotFoundError
from a2a_models.models import ProtocolBinding
from a2a_models.server import AgentServer, CallContext, EventStream

from ._servers import dual_card_json, engine_app

ASGIApp = Callable[..., Awaitable[None]]

# ------------------------------------------------------------------ the legacy engine base


def _card(url: str) -> m.AgentCard:
    return conformance_card(url, bindings=(ProtocolBinding.JSONRPC,))


def good(url: str, server_cls: type[AgentServer] = AgentServer, **kw: Any) -> Starlette:
    """Our engine behind the minimal JSON-RPC transport of ``_servers.engine_app``."""
    card = _card(url)
    return engine_app(server_cls(ConformanceAgent(), card), dual_card_json(card), **kw)


def project(url: str, server_cls: type[AgentServer] = AgentServer) -> Any:
    """The project's HTTP server (every version and binding) over ``server_cls``."""
    from a2a_models.adapters.http import create_app

    return create_app(server_cls(ConformanceAgent(), conformance_card(url)))


#: The bearer token the secured mutants accept (the suite sends it with --auth-header).
TOKEN = "conformance-test-token"
AUTH_HEADERS = {"Authorization": f"Bearer {TOKEN}"}
#: A second identity's token (the owner-isolation checks).
PEER_TOKEN = "conformance-peer-token"
PEER_HEADERS = {"Authorization": f"Bearer {PEER_TOKEN}"}


class _Anonymous:
    """An authenticator that lets every request through (authentication not enforced)."""

    async def authenticate(self, request: Any) -> None:
        return None


def _one_identity() -> Any:
    from a2a_models.adapters.http import BearerTokenAuthenticator

    return BearerTokenAuthenticator({TOKEN: "tester", PEER_TOKEN: "tester"})


EXTENSION = "https://a2a-models.example/ext/conformance/v1"


def with_extension(url: str) -> Any:
    """The project's HTTP server with a card that marks an extension required."""
    from a2a_models.adapters.http import create_app

    card = conformance_card(url)
    caps = attrs.evolve(
        card.capabilities,
        extensions=(m.AgentExtension(uri=EXTENSION, description="conformance", required=True),),
    )
    return create_app(AgentServer(ConformanceAgent(), attrs.evolve(card, capabilities=caps)))


def _name_the_extension(req: Req) -> Req:
    return attrs.evolve(
        req, headers={**req.headers, "a2a-extensions": EXTENSION, "x-a2a-extensions": EXTENSION}
    )


def secured(url: str, authenticator: Any = None) -> Any:
    """The project's HTTP server with a card that requires a bearer token."""
    from a2a_models.adapters.http import BearerTokenAuthenticator, create_app

    card = attrs.evolve(
        conformance_card(url),
        security_schemes={"bearer": m.HTTPAuthSecurityScheme(scheme="Bearer")},
        security_requirements=(m.SecurityRequirement(schemes={"bearer": ()}),),
    )
    auth = (
        authenticator
        if authenticator is not None
        else BearerTokenAuthenticator({TOKEN: "tester", PEER_TOKEN: "someone-else"})
    )
    return create_app(AgentServer(ConformanceAgent(), card), authenticator=auth)


# ------------------------------------------------------------------ engine faults


def _is_terminal_status(item: Any) -> bool:
    return isinstance(item, m.TaskStatusUpdateEvent) and item.status.state.is_terminal


class _Stream:
    """An EventStream-like async iterator that closes its source."""

    def __init__(self, gen: AsyncIterator[Any], inner: Any) -> None:
        self._gen = gen
        self._inner = inner

    def __aiter__(self) -> _Stream:
        return self

    async def __anext__(self) -> Any:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        await self._gen.aclose()  # type: ignore[attr-defined]
        await self._inner.aclose()


class _WrongNotFoundCode(AgentServer):
    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task:
        try:
            return await super().on_cancel_task(request, call)
        except TaskNotFoundError:
            raise InternalError("no such task") from None


class _GetNotFoundAsInvalidParams(AgentServer):
    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        try:
            return await super().on_get_task(request, call)
        except TaskNotFoundError:
            raise InvalidParamsError("no such task") from None


class _AfterTerminal(AgentServer):
    """SendStreamingMessage: one more status update after the terminal one."""

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream:
        inner = await super().on_send_streaming_message(request, call)

        async def events() -> AsyncIterator[Any]:
            async for seq, item in inner:
                yield seq, item
                if _is_terminal_status(item):
                    extra = attrs.evolve(item, status=m.TaskStatus.now(TaskState.WORKING))
                    yield seq + 1, extra
                    return

        return _Stream(events(), inner)


class _NeverCloses(AgentServer):
    """SendStreamingMessage: the stream stays open after the terminal event."""

    async def on_send_streaming_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> EventStream:
        inner = await super().on_send_streaming_message(request, call)

        async def events() -> AsyncIterator[Any]:
            async for seq, item in inner:
                yield seq, item
                if _is_terminal_status(item):
                    await asyncio.sleep(30)
                    return

        return _Stream(events(), inner)


class _CancelKeepsWorking(AgentServer):
    """CancelTask answers with the task as it was (still working)."""

    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task:
        before = await super().on_get_task(m.GetTaskRequest(id=request.id), call)
        if before.status.state.is_terminal:
            return await super().on_cancel_task(request, call)
        await super().on_cancel_task(request, call)
        return before


class _CancelTerminalSucceeds(AgentServer):
    """CancelTask of a terminal task returns the task instead of TaskNotCancelableError."""

    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task:
        task = await super().on_get_task(m.GetTaskRequest(id=request.id), call)
        if task.status.state.is_terminal:
            return task
        return await super().on_cancel_task(request, call)


class _HistoryLengthIgnored(AgentServer):
    async def on_get_task(self, request: m.GetTaskRequest, call: CallContext) -> m.Task:
        return await super().on_get_task(attrs.evolve(request, history_length=None), call)


class _ListFiltersIgnored(AgentServer):
    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse:
        return await super().on_list_tasks(
            attrs.evolve(request, context_id=None, status=None), call
        )


class _ListArtifactsAlways(AgentServer):
    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse:
        return await super().on_list_tasks(attrs.evolve(request, include_artifacts=True), call)


class _ListPageTokenReused(AgentServer):
    """ListTasks ignores the page token: every page is the first one."""

    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse:
        return await super().on_list_tasks(attrs.evolve(request, page_token=None), call)


class _ListOldestFirst(AgentServer):
    async def on_list_tasks(
        self, request: m.ListTasksRequest, call: CallContext
    ) -> m.ListTasksResponse:
        res = await super().on_list_tasks(request, call)
        return attrs.evolve(res, tasks=tuple(reversed(res.tasks)))


class _PushNotPersisted(AgentServer):
    """Create answers with the config but stores nothing."""

    async def on_create_task_push_notification_config(
        self, config: m.TaskPushNotificationConfig, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        await super().on_get_task(m.GetTaskRequest(id=config.task_id), call)
        return attrs.evolve(config, id=config.id or "never-stored")


class _PushDeleteNotIdempotent(AgentServer):
    async def on_delete_task_push_notification_config(
        self, request: m.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> None:
        await super().on_get_task_push_notification_config(
            m.GetTaskPushNotificationConfigRequest(task_id=request.task_id, id=request.id), call
        )
        await super().on_delete_task_push_notification_config(request, call)


class _PushUnknownTaskAccepted(AgentServer):
    async def on_create_task_push_notification_config(
        self, config: m.TaskPushNotificationConfig, call: CallContext
    ) -> m.TaskPushNotificationConfig:
        try:
            return await super().on_create_task_push_notification_config(config, call)
        except TaskNotFoundError:
            return attrs.evolve(config, id="c-unknown")


class _SubscribeUnknownAsInternal(AgentServer):
    async def on_subscribe_to_task(
        self, request: m.SubscribeToTaskRequest, call: CallContext, *, after_seq: int | None = None
    ) -> EventStream:
        try:
            return await super().on_subscribe_to_task(request, call, after_seq=after_seq)
        except TaskNotFoundError:
            raise InternalError("no such task") from None


class _SendUnknownTaskStartsNew(AgentServer):
    """A message naming an unknown taskId starts a new task instead of failing."""

    async def on_send_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> m.Task | m.Message:
        msg = request.message
        if msg.task_id:
            try:
                await super().on_get_task(m.GetTaskRequest(id=msg.task_id), call)
            except TaskNotFoundError:
                request = attrs.evolve(request, message=attrs.evolve(msg, task_id=None))
        return await super().on_send_message(request, call)


class _BlockingReturnsEarly(AgentServer):
    """A blocking SendMessage returns at once, like returnImmediately."""

    async def on_send_message(
        self, request: m.SendMessageRequest, call: CallContext
    ) -> m.Task | m.Message:
        res = await super().on_send_message(request, call)
        cfg = request.configuration
        blocking = cfg is None or not cfg.return_immediately
        if blocking and isinstance(res, m.Task) and res.status.state is TaskState.COMPLETED:
            # the snapshot taken while the agent was still working
            return attrs.evolve(res, status=m.TaskStatus.now(TaskState.WORKING), artifacts=())
        return res


# ------------------------------------------------------------------ wire faults


@attrs.frozen
class Req:
    """What a wire fault sees of the request."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    @property
    def rpc(self) -> dict[str, Any]:
        try:
            value = json.loads(self.body) if self.body else None
        except (ValueError, RecursionError):
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def rpc_method(self) -> str:
        return str(self.rpc.get("method", ""))

    @property
    def is_jsonrpc(self) -> bool:
        return self.method == "POST" and self.rpc.get("jsonrpc") == "2.0"


ReqFix = Callable[[Req], Req]
RespFix = Callable[[Req, int, dict[str, str], bytes], tuple[int, dict[str, str], bytes]]
FrameFix = Callable[[Req, dict[str, Any], bytes], list[bytes]]


def wire(
    app: Any,
    *,
    request: ReqFix | None = None,
    response: RespFix | None = None,
    frame: FrameFix | None = None,
) -> ASGIApp:
    """``app`` with one request rewrite, non-stream response rewrite or SSE frame rewrite."""

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        chunks = []
        while True:
            msg = await receive()
            chunks.append(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        req = Req(
            scope["method"],
            scope["path"],
            scope.get("query_string", b"").decode(),
            headers,
            b"".join(chunks),
        )
        if request is not None:
            req = request(req)
            scope = {
                **scope,
                "path": req.path,
                "query_string": req.query.encode(),
                "headers": [
                    (k.encode(), v.encode())
                    for k, v in req.headers.items()
                    if k != "content-length"
                ]
                + [(b"content-length", str(len(req.body)).encode())],
            }
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": req.body, "more_body": False}
            return await receive()

        start: dict[str, Any] = {}
        body: list[bytes] = []
        state: dict[str, Any] = {"buf": b""}

        async def capture(msg: dict[str, Any]) -> None:
            if msg["type"] == "http.response.start":
                start.update(msg)
                hdrs = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in msg["headers"]}
                state["sse"] = hdrs.get("content-type", "").startswith("text/event-stream")
                if state["sse"]:
                    await send(msg)
                return
            if msg["type"] != "http.response.body":
                await send(msg)
                return
            if state["sse"]:
                if frame is None:
                    await send(msg)
                    return
                state["buf"] += msg.get("body", b"")
                out = []
                while b"\n\n" in state["buf"]:
                    one, state["buf"] = state["buf"].split(b"\n\n", 1)
                    out += [f + b"\n\n" for f in frame(req, state, one)]
                if out or not msg.get("more_body"):
                    await send(
                        {
                            "type": "http.response.body",
                            "body": b"".join(out),
                            "more_body": msg.get("more_body", False),
                        }
                    )
                return
            body.append(msg.get("body", b""))
            if msg.get("more_body"):
                return
            status = start["status"]
            hdrs = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in start["headers"]}
            content = b"".join(body)
            if response is not None:
                status, hdrs, content = response(req, status, hdrs, content)
            hdrs["content-length"] = str(len(content))
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(k.encode(), v.encode()) for k, v in hdrs.items()],
                }
            )
            await send({"type": "http.response.body", "body": content, "more_body": False})

        await app(scope, replay, capture)

    return middleware


def _json_fix(pred: Callable[[Req], bool], fix: Callable[[Any], Any]) -> RespFix:
    def response(
        req: Req, status: int, hdrs: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if not pred(req) or not body:
            return status, hdrs, body
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            return status, hdrs, body
        return status, hdrs, json.dumps(fix(value)).encode()

    return response


def _rpc(method: str) -> Callable[[Req], bool]:
    return lambda req: req.is_jsonrpc and req.rpc_method == method


def _result(fn: Callable[[dict[str, Any]], Any]) -> Callable[[Any], Any]:
    def fix(env: Any) -> Any:
        if isinstance(env, dict) and isinstance(env.get("result"), dict):
            return {**env, "result": fn(env["result"])}
        return env

    return fix


def _error(fn: Callable[[dict[str, Any]], Any]) -> Callable[[Any], Any]:
    def fix(env: Any) -> Any:
        if isinstance(env, dict) and isinstance(env.get("error"), dict):
            return {**env, "error": fn(env["error"])}
        return env

    return fix


def _card_fix(fn: Callable[[dict[str, Any]], Any]) -> RespFix:
    return _json_fix(lambda req: req.path.endswith("agent-card.json"), fn)


def _without(d: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


def _set_header(pred: Callable[[Req], bool], name: str, value: str | None) -> RespFix:
    def response(
        req: Req, status: int, hdrs: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if pred(req):
            hdrs = {k: v for k, v in hdrs.items() if k != name}
            if value is not None:
                hdrs[name] = value
        return status, hdrs, body

    return response


def _frame_json(fn: Callable[[dict[str, Any], Any], Any | None]) -> FrameFix:
    """Rewrite (or drop, when ``fn`` returns None) each SSE event's JSON data."""

    def frame(req: Req, state: dict[str, Any], raw: bytes) -> list[bytes]:
        lines = raw.split(b"\n")
        data = [ln[5:].lstrip() for ln in lines if ln.startswith(b"data:")]
        if not data:
            return [raw]
        value = fn(state, json.loads(b"\n".join(data)))
        if value is None:
            return []
        others = [ln for ln in lines if not ln.startswith(b"data:")]
        return [b"\n".join([*others, b"data: " + json.dumps(value).encode()])]

    return frame


def _member(env: Any) -> tuple[str, Any]:
    res = env.get("result", env) if isinstance(env, dict) else {}
    for key in ("task", "message", "statusUpdate", "artifactUpdate"):
        if isinstance(res, dict) and key in res:
            return key, res[key]
    return "", None


def _drop_first_task(state: dict[str, Any], env: Any) -> Any | None:
    key, _ = _member(env)
    if key == "task" and not state.get("seen"):
        state["seen"] = True
        return None
    state["seen"] = True
    return env


def _drop_terminal(state: dict[str, Any], env: Any) -> Any | None:
    key, value = _member(env)
    if key == "statusUpdate" and value["status"]["state"] in (
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
    ):
        return None
    return env


def _swap_status_steps(state: dict[str, Any], env: Any) -> Any | None:
    """Swap the texts of the first two working updates (events arrive out of order)."""
    key, value = _member(env)
    if key != "statusUpdate" or value["status"].get("message") is None:
        return env
    n = state["n"] = state.get("n", 0) + 1
    parts = value["status"]["message"]["parts"]
    if n == 1:
        parts[0]["text"] = parts[0]["text"].replace("step 1", "step 2")
    elif n == 2:
        parts[0]["text"] = parts[0]["text"].replace("step 2", "step 1")
    return env


def _chunks_no_append(state: dict[str, Any], env: Any) -> Any | None:
    key, value = _member(env)
    if key == "artifactUpdate":
        value.pop("append", None)
    return env


def _event_ids_repeat(req: Req, state: dict[str, Any], raw: bytes) -> list[bytes]:
    lines = [b"id: 1" if ln.startswith(b"id:") else ln for ln in raw.split(b"\n")]
    return [b"\n".join(lines)]


def _stream_wrong_request_id(state: dict[str, Any], env: Any) -> Any | None:
    if isinstance(env, dict) and "id" in env:
        env["id"] = "not-the-request-id"
    return env


def _strip_context_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_context_ids(v) for k, v in value.items() if k != "contextId"}
    if isinstance(value, list):
        return [_strip_context_ids(v) for v in value]
    return value


def _offset_timestamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                v.replace("Z", "+00:00")
                if k == "timestamp" and isinstance(v, str)
                else _offset_timestamps(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_offset_timestamps(v) for v in value]
    return value


def _snake_status(value: Any) -> Any:
    if isinstance(value, dict) and "contextId" in value:
        value = {**value, "context_id": value["contextId"]}
        del value["contextId"]
    return value


def _lowercase_state(value: Any) -> Any:
    """``TASK_STATE_COMPLETED`` → ``completed`` (the 0.3 name, in a 1.0 answer)."""
    status = value.get("status") if isinstance(value, dict) else None
    if isinstance(status, dict) and isinstance(status.get("state"), str):
        state = status["state"].removeprefix("TASK_STATE_").lower().replace("_", "-")
        return {**value, "status": {**status, "state": state}}
    return value


def _with_vendor_fields(value: Any) -> Any:
    """Unknown members in the result and in its status: allowed (§5.7: ignore them)."""
    if not isinstance(value, dict):
        return value
    out = {**value, "vendorExtension": {"build": 7, "tags": ["x"]}}
    if isinstance(value.get("status"), dict):
        out["status"] = {**value["status"], "vendorNote": "extra"}
    return out


def _version(value: str) -> ReqFix:
    return lambda req: attrs.evolve(req, headers={**req.headers, "a2a-version": value})


def _foreign_context_dropped(req: Req) -> Req:
    """A message naming a task loses a contextId the suite made up (so it is served)."""
    rpc = req.rpc
    message = (
        (rpc.get("params") or {}).get("message") if isinstance(rpc.get("params"), dict) else None
    )
    if not isinstance(message, dict) or not str(message.get("contextId", "")).startswith("other-"):
        return req
    del message["contextId"]
    body = json.dumps(rpc).encode()
    headers = {**req.headers, "content-length": str(len(body))}
    return attrs.evolve(req, body=body, headers=headers)


def _version_header_dropped(req: Req) -> Req:
    """A2A-Version 9.9 is served as 1.0 (the server ignores unsupported versions)."""
    if req.headers.get("a2a-version") not in ("1.0", "0.3", "", None) and not req.headers[
        "a2a-version"
    ].startswith("1.0"):
        return attrs.evolve(req, headers={**req.headers, "a2a-version": "1.0"})
    return req


def _patch_rejected(req: Req) -> Req:
    if req.headers.get("a2a-version", "").count(".") >= 2:
        return attrs.evolve(req, headers={**req.headers, "a2a-version": "9.9"})
    return req


def _query_version_ignored(req: Req) -> Req:
    if "A2A-Version=" in req.query and "a2a-version" not in req.headers:
        return attrs.evolve(
            req, query="&".join(p for p in req.query.split("&") if not p.startswith("A2A-Version="))
        )
    return req


def _unknown_fields_rejected(
    req: Req, status: int, hdrs: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    if b"a2aConformanceUnknownField" in req.body and req.is_jsonrpc:
        env = {
            "jsonrpc": "2.0",
            "id": req.rpc.get("id"),
            "error": {"code": -32602, "message": "unknown field"},
        }
        return 200, hdrs, json.dumps(env).encode()
    return status, hdrs, body


def _notification_answered(
    req: Req, status: int, hdrs: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    if req.is_jsonrpc and "id" not in req.rpc and not body:
        env = {"jsonrpc": "2.0", "id": None, "result": {}}
        return 200, {**hdrs, "content-type": "application/json"}, json.dumps(env).encode()
    return status, hdrs, body


def _malformed_500(
    req: Req, status: int, hdrs: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    try:
        json.loads(req.body)
    except (ValueError, RecursionError):
        if req.method == "POST" and req.path in ("/", ""):
            return 500, hdrs, body
    return status, hdrs, body


def _auth_required_no_message(value: Any) -> Any:
    status = value.get("status") if isinstance(value, dict) else None
    if isinstance(status, dict) and status.get("state") == "TASK_STATE_AUTH_REQUIRED":
        return {**value, "status": _without(status, "message")}
    return value


def _rest_json_type(
    req: Req, status: int, hdrs: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    if (
        not req.is_jsonrpc
        and "agent-card" not in req.path
        and hdrs.get("content-type", "").startswith("application/a2a+json")
    ):
        hdrs = {**hdrs, "content-type": "application/json"}
    return status, hdrs, body


def _rest_error_500(
    req: Req, status: int, hdrs: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    if not req.is_jsonrpc and status == 404:
        return 500, hdrs, body
    return status, hdrs, body


def _rest_error_no_details(
    req: Req, status: int, hdrs: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    if not req.is_jsonrpc and status >= 400 and body:
        value = json.loads(body)
        if isinstance(value.get("error"), dict):
            value["error"].pop("details", None)
            return status, hdrs, json.dumps(value).encode()
    return status, hdrs, body


def _error_reason(body: bytes) -> str | None:
    """The ErrorInfo reason of a google.rpc.Status body, if any."""
    try:
        error = json.loads(body).get("error") or {}
    except (ValueError, AttributeError):
        return None
    for detail in error.get("details") or ():
        if isinstance(detail, dict) and "reason" in detail:
            return str(detail["reason"])
    return None


#: The statuses the a2a-sdk 0.3.x REST server gives where 1.0's table says 400.
_SDK03_STATUS = {"TASK_NOT_CANCELABLE": 409, "UNSUPPORTED_OPERATION": 422}


def _rest03_errors(
    shape: Callable[[int, str | None, str], tuple[int, dict[str, str], bytes]],
    *,
    version: str = "0.3",
) -> RespFix:
    """Rewrite every HTTP+JSON error answer (a google.rpc.Status) of ``version`` (0.3: under
    ``/v1/``) with ``shape(status, reason, message)``."""

    def response(
        req: Req, status: int, hdrs: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if req.is_jsonrpc or req.path.startswith("/v1/") != (version == "0.3") or status < 400:
            return status, hdrs, body
        reason = _error_reason(body)
        message = str((json.loads(body).get("error") or {}).get("message", "")) if body else ""
        new_status, new_hdrs, new_body = shape(status, reason, message)
        return new_status, {**hdrs, **new_hdrs}, new_body

    return response


def _sdk03_shape(
    status: int, reason: str | None, message: str
) -> tuple[int, dict[str, str], bytes]:
    """As the a2a-sdk 0.3.x answers: ``{"message": ...}``, 409/422 for two errors."""
    body = json.dumps({"message": message}).encode()
    return _SDK03_STATUS.get(reason or "", status), {"content-type": "application/json"}, body


def _shape_when(
    want: str, shape: Callable[[int, str | None, str], tuple[int, dict[str, str], bytes]]
) -> Callable[[int, str | None, str], tuple[int, dict[str, str], bytes]]:
    """``shape`` for the errors of reason ``want``; the others as the SDK answers them."""

    def pick(status: int, reason: str | None, message: str) -> tuple[int, dict[str, str], bytes]:
        return (shape if reason == want else _sdk03_shape)(status, reason, message)

    return pick


def _task_route_gone(
    req: Req, status: int, hdrs: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    """GET /v1/tasks/{id} has no route: it gets the generic 404 every unknown path gets (as
    a FastAPI app answers); the other errors are as the a2a-sdk 0.3.x answers them."""
    parts = req.path.split("/")
    task_get = req.method == "GET" and len(parts) == 4 and parts[2] == "tasks"
    if (task_get and ":" not in parts[3]) or (
        status == 404 and _error_reason(body) in (None, "METHOD_NOT_FOUND")
    ):
        return 404, {**hdrs, "content-type": "application/json"}, b'{"detail":"Not Found"}'
    return _rest03_errors(_sdk03_shape)(req, status, hdrs, body)


def _final_false(state: dict[str, Any], env: Any) -> Any:
    res = env.get("result") if isinstance(env, dict) else None
    if isinstance(res, dict) and res.get("kind") == "status-update":
        res["final"] = False
    return env


#: Is a stream request of this text (the contract command)?
def _stream_of(req: Req) -> bool:
    return req.rpc_method in ("SendStreamingMessage", "message/stream") or req.path.endswith(
        "message:stream"
    )


def _frames_when(pred: Callable[[Req], bool], fix: FrameFix) -> FrameFix:
    return lambda req, state, raw: fix(req, state, raw) if pred(req) else [raw]


# ------------------------------------------------------------------ the table


@attrs.frozen
class Mutant:
    fault: str
    expect: frozenset[str]
    version: str = "1.0"
    transport: str = "jsonrpc"
    server: type[AgentServer] = AgentServer
    request: ReqFix | None = None
    response: RespFix | None = None
    frame: FrameFix | None = None
    factory: Callable[[str], Any] | None = None
    #: the unbroken server it varies: a key of :data:`BASES` ("secured": the suite runs
    #: with :data:`AUTH_HEADERS` and :data:`PEER_HEADERS`)
    base: str = "project"

    @property
    def combo(self) -> tuple[str, str, str]:
        return self.version, self.transport, self.base

    def app(self, url: str) -> Any:
        if self.factory is not None:
            return self.factory(url)
        base = BASES[self.base](url) if self.base != "project" else project(url, self.server)
        if self.request is None and self.response is None and self.frame is None:
            return base
        return wire(base, request=self.request, response=self.response, frame=self.frame)


def _m(fault: str, *expect: str, **kw: Any) -> Mutant:
    return Mutant(fault=fault, expect=frozenset(expect), **kw)


#: The unbroken servers the mutants vary.
BASES: dict[str, Callable[[str], Any]] = {
    "project": project,
    "secured": secured,
    "extension": with_extension,
}

R10 = {"version": "1.0", "transport": "rest"}
#: The checks that decode a GetTask answer (get.task owns the Task's shape).
_READS_TASK = (
    "get.task",
    "get.history-length",
    "get.history-zero",
    "cancel.running",
    "lifecycle.ids-stable",
    "lifecycle.artifacts-assembled",
    "lifecycle.terminal-is-final",
    "lifecycle.history",
)
_ADVISORY_03 = ("get.history-zero", "cancel.running", "lifecycle.history")
J03 = {"version": "0.3", "transport": "jsonrpc"}
R03 = {"version": "0.3", "transport": "rest"}

MUTANTS: dict[str, Mutant] = {
    # ---- error codes
    "cancel-unknown-internal-error": _m(
        "CancelTask of an unknown id answers InternalError",
        "cancel.unknown-task",
        server=_WrongNotFoundCode,
    ),
    "get-unknown-invalid-params": _m(
        "GetTask of an unknown id answers InvalidParams",
        "get.unknown-task",
        "jsonrpc.error-data",
        "jsonrpc.error-info",
        server=_GetNotFoundAsInvalidParams,
    ),
    "subscribe-unknown-internal-error": _m(
        "SubscribeToTask of an unknown id answers InternalError",
        "subscribe.unknown-task",
        server=_SubscribeUnknownAsInternal,
    ),
    "send-unknown-task-starts-new": _m(
        "a message naming an unknown taskId starts a new task",
        "send.unknown-task",
        server=_SendUnknownTaskStartsNew,
    ),
    "push-unknown-task-accepted": _m(
        "a push config for an unknown task is accepted",
        "push.unknown-task",
        server=_PushUnknownTaskAccepted,
    ),
    "method-not-found-wrong-code": _m(
        "an unknown method gets -32600 instead of -32601",
        "jsonrpc.method-not-found",
        response=_json_fix(
            lambda r: r.rpc_method.startswith("a2a.conformance"),
            _error(lambda e: {**e, "code": -32600}),
        ),
    ),
    "parse-error-wrong-code": _m(
        "invalid JSON gets -32600 instead of -32700",
        "jsonrpc.parse-error",
        response=_json_fix(
            lambda r: not r.rpc and r.method == "POST",
            _error(lambda e: {**e, "code": -32600} if e.get("code") == -32700 else e),
        ),
    ),
    "error-data-without-type": _m(
        "error data objects lose their @type",
        "jsonrpc.error-data",
        "jsonrpc.error-info",
        response=_json_fix(
            lambda r: r.is_jsonrpc,
            _error(
                lambda e: {
                    **e,
                    "data": [
                        _without(d, "@type") for d in e.get("data") or [] if isinstance(d, dict)
                    ],
                }
            ),
        ),
    ),
    "error-info-missing": _m(
        "A2A errors carry no google.rpc.ErrorInfo",
        "jsonrpc.error-info",
        response=_json_fix(
            lambda r: r.is_jsonrpc,
            _error(
                lambda e: {
                    **e,
                    "data": [
                        d
                        for d in e.get("data") or []
                        if not str(d.get("@type", "")).endswith("ErrorInfo")
                    ],
                }
            ),
        ),
    ),
    "id-not-echoed": _m(
        "integer request ids come back as strings",
        "jsonrpc.id-echo",
        response=_json_fix(
            lambda r: isinstance(r.rpc.get("id"), int),
            lambda env: {**env, "id": str(env.get("id"))},
        ),
    ),
    "notification-answered": _m(
        "a notification gets a response", "jsonrpc.notification", response=_notification_answered
    ),
    "jsonrpc-wrong-content-type": _m(
        "JSON-RPC responses are text/plain",
        "jsonrpc.content-type",
        response=_set_header(lambda r: r.is_jsonrpc, "content-type", "text/plain"),
    ),
    "malformed-json-500": _m(
        "a malformed body gets HTTP 500", "robustness.malformed-bodies", response=_malformed_500
    ),
    "unknown-fields-rejected": _m(
        "unknown request fields are refused with InvalidParams",
        "robustness.unknown-fields",
        response=_unknown_fields_rejected,
    ),
    # ---- task lifecycle
    "cancel-keeps-working": _m(
        "CancelTask answers with the task still WORKING",
        "cancel.running",
        server=_CancelKeepsWorking,
    ),
    "cancel-terminal-succeeds": _m(
        "CancelTask of a completed task succeeds", "cancel.terminal", server=_CancelTerminalSucceeds
    ),
    "blocking-returns-early": _m(
        "a blocking SendMessage returns before the task is done",
        "send.blocking",
        "send.multi-turn",
        server=_BlockingReturnsEarly,
    ),
    "history-length-ignored": _m(
        "GetTask ignores historyLength",
        "get.history-length",
        "get.history-zero",
        server=_HistoryLengthIgnored,
    ),
    "context-id-missing": _m(
        "SendMessage answers carry no contextId",
        "send.context-id",
        "get.task",
        response=_json_fix(
            _rpc("SendMessage"),
            _result(lambda res: {k: _strip_context_ids(v) for k, v in res.items()}),
        ),
    ),
    "auth-required-without-message": _m(
        "an AUTH_REQUIRED status carries no message",
        "send.auth-required-message",
        response=_json_fix(
            _rpc("SendMessage"),
            _result(lambda res: {k: _auth_required_no_message(v) for k, v in res.items()}),
        ),
    ),
    # ---- listing
    "page-token-reused": _m(
        "ListTasks ignores the page token", "list.pagination", server=_ListPageTokenReused
    ),
    "list-oldest-first": _m("ListTasks sorts oldest first", "list.sorted", server=_ListOldestFirst),
    "list-artifacts-always": _m(
        "ListTasks includes artifacts without includeArtifacts",
        "list.artifacts",
        server=_ListArtifactsAlways,
    ),
    "list-filters-ignored": _m(
        "ListTasks ignores contextId and status filters",
        "list.filters",
        "list.pagination",
        server=_ListFiltersIgnored,
    ),
    "list-no-next-page-token": _m(
        "ListTasks omits an empty nextPageToken",
        "list.pagination",
        response=_json_fix(
            _rpc("ListTasks"),
            _result(
                lambda res: res if res.get("nextPageToken") else _without(res, "nextPageToken")
            ),
        ),
    ),
    # ---- streaming
    "event-after-terminal": _m(
        "a status update follows the terminal one",
        "stream.no-event-after-terminal",
        server=_AfterTerminal,
    ),
    "stream-never-closes": _m(
        "the stream stays open after the terminal event",
        "stream.closes-after-terminal",
        server=_NeverCloses,
    ),
    "stream-missing-terminal": _m(
        "the terminal status update is never sent",
        "stream.order",
        frame=_frames_when(_stream_of, _frame_json(_drop_terminal)),
    ),
    "stream-without-task-first": _m(
        "the stream does not start with the Task",
        "stream.first-event",
        "stream.order",
        "stream.incremental",
        frame=_frames_when(_stream_of, _frame_json(_drop_first_task)),
    ),
    "stream-reordered": _m(
        "working updates arrive out of order",
        "stream.order",
        frame=_frames_when(_stream_of, _frame_json(_swap_status_steps)),
    ),
    "chunks-without-append": _m(
        "artifact chunks after the first lack append",
        "stream.artifact-chunks",
        frame=_frames_when(_stream_of, _frame_json(_chunks_no_append)),
    ),
    "sse-event-ids-not-increasing": _m(
        "every SSE event has id 1",
        "stream.event-ids",
        frame=_frames_when(_stream_of, _event_ids_repeat),
    ),
    "v03-sse-event-ids-not-increasing": _m(
        "every 0.3 SSE event has id 1 (no fault: 0.3 defines no resumption from an event "
        "id, an advisory notes 1.0's)",
        **J03,
        frame=_frames_when(_stream_of, _event_ids_repeat),
    ),
    "stream-wrong-response-id": _m(
        "stream events carry another JSON-RPC id",
        "stream.framing",
        frame=_frames_when(_stream_of, _frame_json(_stream_wrong_request_id)),
    ),
    # ---- push configs
    "push-config-not-persisted": _m(
        "push configs are acknowledged but not stored", "push.crud", server=_PushNotPersisted
    ),
    "push-delete-not-idempotent": _m(
        "deleting a deleted push config fails",
        "push.delete-idempotent",
        server=_PushDeleteNotIdempotent,
    ),
    "context-mismatch-served": _m(
        "a message whose contextId is not its task's is served",
        "send.context-mismatch",
        request=_foreign_context_dropped,
    ),
    "v03-context-mismatch-served": _m(
        "0.3: a message whose contextId is not its task's is served (no fault: 0.3 states "
        "no rule, an advisory notes 1.0's)",
        **J03,
        request=_foreign_context_dropped,
    ),
    "v03-push-delete-not-idempotent": _m(
        "0.3: deleting a deleted push config fails (no fault: 0.3 §7.8 says nothing of a "
        "second delete, an advisory notes 1.0's idempotency)",
        **J03,
        server=_PushDeleteNotIdempotent,
    ),
    # ---- versions
    "unsupported-version-served": _m(
        "an unsupported A2A-Version is served as 1.0",
        "version.unsupported",
        request=_version_header_dropped,
    ),
    "patch-version-rejected": _m(
        "A2A-Version 1.0.1 is refused", "version.patch-ignored", request=_patch_rejected
    ),
    "query-version-ignored": _m(
        "the A2A-Version query parameter is ignored",
        "version.query-parameter",
        request=_query_version_ignored,
    ),
    # ---- wire format
    "timestamps-with-offset": _m(
        "timestamps end +00:00 instead of Z",
        "wire.timestamps",
        response=_json_fix(_rpc("GetTask"), _result(_offset_timestamps)),
    ),
    "snake-case-field": _m(
        "GetTask answers context_id",
        "wire.json-names",
        response=_json_fix(_rpc("GetTask"), _result(_snake_status)),
    ),
    # every check that reads a task back with GetTask fails on these, naming the JSON path
    "state-name-lowercase": _m(
        "GetTask answers the 0.3 state name 'completed' in 1.0",
        "wire.json-names",
        *_READS_TASK,
        response=_json_fix(_rpc("GetTask"), _result(_lowercase_state)),
    ),
    "task-without-id": _m(
        "GetTask answers a Task without its REQUIRED id",
        *_READS_TASK,
        response=_json_fix(_rpc("GetTask"), _result(lambda t: _without(t, "id"))),
    ),
    # not a fault: a server adding members of its own must NOT fail anything
    "extra-fields-tolerated": _m(
        "GetTask and SendMessage answers carry unknown members (allowed, §5.7)",
        response=_json_fix(
            lambda req: req.is_jsonrpc and req.rpc_method in ("GetTask", "SendMessage"),
            _result(_with_vendor_fields),
        ),
    ),
    # ---- HTTP+JSON
    "rest-json-content-type": _m(
        "1.0 HTTP+JSON answers application/json",
        "rest.content-type",
        response=_rest_json_type,
        **R10,
    ),
    "rest-not-found-500": _m(
        "HTTP+JSON TaskNotFound answers HTTP 500",
        "rest.error-format",
        "rest.error-info",
        "card.interfaces-reachable",
        "get.unknown-task",
        "cancel.unknown-task",
        "push.unknown-task",
        "send.unknown-task",
        "subscribe.unknown-task",
        response=_rest_error_500,
        **R10,
    ),
    "rest-error-without-details": _m(
        "HTTP+JSON errors have no details",
        "rest.error-info",
        response=_rest_error_no_details,
        **R10,
    ),
    # ---- 0.3
    "v03-final-flag-missing": _m(
        "0.3 terminal status-update lacks final=true",
        "stream.final-flag",
        frame=_frames_when(lambda r: r.rpc_method == "message/stream", _frame_json(_final_false)),
        **J03,
    ),
    # ---- 0.3 HTTP+JSON errors: 0.3 §3.2.3 fixes no status per error type and no body
    "v03-rest-sdk03-errors": _m(
        "0.3 HTTP+JSON errors as the a2a-sdk 0.3.x answers: {message} bodies, 409 for "
        "TaskNotCancelable, 422 for UnsupportedOperation (no fault: 0.3 fixes neither)",
        **R03,
        response=_rest03_errors(_sdk03_shape),
    ),
    "rest-sdk03-style-errors": _m(
        "1.0 HTTP+JSON errors as {message} bodies: 1.0 still asks for google.rpc.Status "
        "(§11.6), so the 0.3 leniency must not reach it",
        "card.interfaces-reachable",
        "version.header",
        "rest.error-format",
        "rest.error-info",
        "version.patch-ignored",
        "version.query-parameter",
        "send.terminal-task",
        "cancel.terminal",
        "subscribe.terminal-task",
        "capability.extended-card-not-claimed",
        **R10,
        response=_rest03_errors(_sdk03_shape, version="1.0"),
    ),
    "v03-rest-get-route-missing": _m(
        "0.3 GET /v1/tasks/{id} has no route: the server's generic 404 (errors SDK-style)",
        "card.interfaces-reachable",
        "version.missing-header",
        "get.unknown-task",
        "rest.error-status",
        "rest.content-type-json",
        "wire.json-names",
        # get.history-zero is n/a over 0.3 HTTP+JSON; cancel.running and lifecycle.history
        # are advisories on 0.3 (§7.4 "success is not guaranteed", §7.3 "optionally history")
        *(c for c in _READS_TASK if c not in _ADVISORY_03),
        **R03,
        response=_task_route_gone,
    ),
    "v03-rest-not-cancelable-500": _m(
        "0.3 CancelTask of a completed task answers HTTP 500 (a server error for the "
        "client's; errors SDK-style)",
        "cancel.terminal",
        **R03,
        response=_rest03_errors(
            _shape_when(
                "TASK_NOT_CANCELABLE",
                lambda s, r, msg: (500, {}, json.dumps({"message": msg}).encode()),
            )
        ),
    ),
    "v03-rest-not-found-not-json": _m(
        "0.3 TaskNotFound answers a text/plain body (0.3 §3.2.3: errors are JSON)",
        "get.unknown-task",
        "rest.error-status",
        "send.unknown-task",
        "cancel.unknown-task",
        "push.unknown-task",
        **R03,
        response=_rest03_errors(
            _shape_when(
                "TASK_NOT_FOUND",
                lambda s, r, msg: (404, {"content-type": "text/plain"}, msg.encode()),
            )
        ),
    ),
    # ---- authentication (a card that requires a bearer token)
    "auth-not-enforced": _m(
        "requests without credentials are served",
        "auth.credentials-required",
        "auth.challenge",
        "auth.owner-isolation",
        "auth.not-found-indistinguishable",
        base="secured",
        factory=lambda url: secured(url, _Anonymous()),
    ),
    "auth-no-challenge": _m(
        "a 401 answer has no WWW-Authenticate header",
        "auth.challenge",
        base="secured",
        response=_set_header(lambda r: True, "www-authenticate", None),
    ),
    "owner-isolation-broken": _m(
        "both tokens map to one identity, so tasks are shared",
        "auth.owner-isolation",
        "auth.not-found-indistinguishable",
        base="secured",
        factory=lambda url: secured(url, _one_identity()),
    ),
    "v03-owner-isolation-broken": _m(
        "0.3: both tokens map to one identity, so tasks are shared (no fault: 0.3 §4.6 "
        "leaves authorization to the server's policies, 'MAY be enforced'; owner isolation "
        "and the not-found answer are advisories)",
        **J03,
        base="secured",
        factory=lambda url: secured(url, _one_identity()),
    ),
    # ---- extensions (a card that marks one required)
    "required-extension-not-enforced": _m(
        "requests that do not name the required extension are served",
        "capability.required-extension",
        base="extension",
        factory=lambda url: wire(with_extension(url), request=_name_the_extension),
    ),
    "v03-required-extension-not-enforced": _m(
        "0.3 requests that do not name the required extension are served (no fault: 0.3 "
        "has no ExtensionSupportRequiredError and binds the client, an advisory notes 1.0's)",
        **J03,
        base="extension",
        factory=lambda url: wire(with_extension(url), request=_name_the_extension),
    ),
    # ---- agent card
    "card-missing-description": _m(
        "the card has no description",
        "card.valid",
        response=_card_fix(lambda c: _without(c, "description")),
    ),
    "card-no-cache-headers": _m(
        "the card is served without Cache-Control or ETag",
        "card.caching",
        response=lambda r, s, h, b: (
            s,
            {k: v for k, v in h.items() if k not in ("cache-control", "etag")}
            if r.path.endswith("agent-card.json")
            else h,
            b,
        ),
    ),
    "v03-card-no-cache-headers": _m(
        "the 0.3 card is served without Cache-Control or ETag (no fault: 0.3 asks for "
        "neither, an advisory notes 1.0's SHOULD)",
        **J03,
        response=lambda r, s, h, b: (
            s,
            {k: v for k, v in h.items() if k not in ("cache-control", "etag")}
            if r.path.endswith("agent-card.json")
            else h,
            b,
        ),
    ),
    "card-wrong-content-type": _m(
        "the card is served as text/html",
        "card.content-type",
        response=_set_header(
            lambda r: r.path.endswith("agent-card.json"), "content-type", "text/html"
        ),
    ),
    "v03-card-wrong-content-type": _m(
        "the 0.3 card is served as text/html (no fault: 0.3 names no media type for the "
        "card, an advisory notes 1.0's)",
        **J03,
        response=_set_header(
            lambda r: r.path.endswith("agent-card.json"), "content-type", "text/html"
        ),
    ),
    "card-patch-protocol-version": _m(
        "card interfaces declare protocolVersion 1.0.1",
        "card.protocol-version-format",
        response=_card_fix(
            lambda c: {
                **c,
                "supportedInterfaces": [
                    {**i, "protocolVersion": "1.0.1"} if i.get("protocolVersion") == "1.0" else i
                    for i in c.get("supportedInterfaces", [])
                ],
            }
        ),
    ),
    "card-relative-interface-url": _m(
        "a declared interface URL is relative",
        "card.interfaces",
        response=_card_fix(
            lambda c: {
                **c,
                "supportedInterfaces": [
                    *c.get("supportedInterfaces", []),
                    {"url": "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                ],
            }
        ),
    ),
}

#: The five mutants of the minimal JSON-RPC engine transport (kept: they exercise that base too).
BROKEN: dict[str, tuple[Callable[[str], Starlette], set[str]]] = {
    "wrong-task-not-found-code": (
        lambda url: good(url, _WrongNotFoundCode),
        {"cancel.unknown-task"},
    ),
    "500-on-malformed-json": (
        lambda url: good(url, malformed_status=500),
        {"robustness.malformed-bodies"},
    ),
}
