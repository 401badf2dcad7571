"""gRPC binding checks (spec §10: service, metadata, status codes and ErrorInfo, streaming)
and binding-equivalence checks (the same operation gives the same result on every binding).

They run on the card's ``GRPC`` 1.0 interfaces (transport ``grpc``) and need the
``grpc`` extra; without it they are skipped, naming it. Requests are built
with :mod:`a2a_models.adapters.grpc` and sent as raw bytes so that what the
server answers is seen exactly: status code, message, ``grpc-status-details-bin``
and the initial metadata. Each exchange is kept as evidence (method ``GRPC``).
"""

from __future__ import annotations

import time
from typing import Any

import attrs

from ... import models as m
from ..._state import TaskState
from ...errors import (
    InvalidParamsError,
    TaskNotFoundError,
    VersionNotSupportedError,
)
from .._context import CheckContext
from .._registry import GRPC, JSONRPC, REST, Exchange, Level, Requirement, check

MUST, SHOULD = Level.MUST, Level.SHOULD
_UNKNOWN = "a2a-conformance-no-such-task"
ERROR_DOMAIN = "a2a-protocol.org"
V10 = ("1.0",)
ON_GRPC = (GRPC,)


@attrs.define
class RpcReply:
    """What one gRPC call gave: the status, its details, and the response message(s)."""

    code: str
    message: str
    details: list[dict[str, Any]]
    initial: dict[str, str]
    items: list[bytes]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.code == "OK"

    def error_info(self) -> dict[str, Any] | None:
        for d in self.details:
            if d.get("@type", "").endswith("google.rpc.ErrorInfo"):
                return d
        return None

    def describe(self) -> str:
        info = self.error_info()
        reason = f" reason={info.get('reason')}" if info else ""
        return f"gRPC {self.code}{reason} {self.message!r}"


def _grpc(ctx: CheckContext) -> Any:
    try:
        import grpc
        import grpc.aio
    except ImportError:
        ctx.skip("the gRPC checks need the grpc extra: pip install 'a2a-models[grpc]'")
    return grpc


async def rpc(
    ctx: CheckContext,
    method: str,
    request: Any,
    *,
    metadata: dict[str, str] | None = None,
    stream: bool = False,
    raw: bytes | None = None,
    limit: int = 50,
) -> RpcReply:
    """One call of ``lf.a2a.v1.A2AService/<method>`` on this endpoint, recorded as evidence."""
    grpc = _grpc(ctx)
    from google.protobuf import json_format
    from google.rpc import error_details_pb2, status_pb2  # noqa: F401  (registers ErrorInfo)

    from ...adapters.grpc import SERVICE_NAME, grpc_target, to_proto

    endpoint = ctx._endpoint()
    target, tls = grpc_target(endpoint.url)
    md = {"a2a-version": "1.0"} if metadata is None else dict(metadata)
    md.update({k.lower(): v for k, v in ctx.auth_headers.items()})
    body = raw if raw is not None else to_proto(request).SerializeToString()
    channel = (
        grpc.aio.secure_channel(target, grpc.ssl_channel_credentials())
        if tls
        else grpc.aio.insecure_channel(target)
    )
    path = f"/{SERVICE_NAME}/{method}"
    started = time.monotonic()
    items: list[bytes] = []
    initial: dict[str, str] = {}
    code, message, error = "OK", "", None
    trailers: Any = ()
    try:
        async with channel:
            if stream:
                call = channel.unary_stream(path)(
                    body, metadata=tuple(md.items()), timeout=ctx.request_timeout
                )
                try:
                    async for item in call:
                        items.append(item)
                        if len(items) >= limit:
                            call.cancel()
                            break
                except grpc.aio.AioRpcError:
                    pass
                status_code = await call.code()
                code = status_code.name if status_code is not None else "OK"
                message = await call.details() or ""
                trailers = await call.trailing_metadata() or ()
            else:
                call = channel.unary_unary(path)(
                    body, metadata=tuple(md.items()), timeout=ctx.request_timeout
                )
                try:
                    items.append(await call)
                except grpc.aio.AioRpcError as exc:
                    code, message = exc.code().name, exc.details() or ""
                    trailers = exc.trailing_metadata() or ()
            with_initial = await call.initial_metadata()
            initial = {k: v for k, v in (with_initial or ()) if isinstance(v, str)}
    except Exception as exc:  # no connection, TLS failure...
        error = f"{type(exc).__name__}: {exc}"
        code = "UNAVAILABLE"
    details: list[dict[str, Any]] = []
    for key, value in trailers:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            try:
                status = status_pb2.Status.FromString(value)
                details = [json_format.MessageToDict(d) for d in status.details]
            except Exception as exc:
                details = [{"@type": "unreadable", "error": str(exc)}]
    reply = RpcReply(code, message, details, initial, items, error)
    ctx.evidence.append(
        Exchange(
            method="GRPC",
            url=f"{endpoint.url}{path}",
            request_headers=tuple(md.items()),
            request_body=f"{len(body)} bytes of {type(request).__name__ if request is not None else 'raw'}",
            status=None,
            response_headers=tuple(initial.items()),
            response_body=f"{reply.describe()}; {len(items)} message(s); details={details}"[:1200],
            error=error,
            elapsed=time.monotonic() - started,
        )
    )
    if error is not None:
        ctx.skip(f"{method}: no gRPC connection to {endpoint.url}: {error}")
    return reply


def _decode(ctx: CheckContext, tp: Any, data: bytes, what: str) -> Any:
    from ...adapters.grpc import from_proto, proto_class

    try:
        return from_proto(tp, proto_class(tp).FromString(data))
    except Exception as exc:
        ctx.fail(f"{what}: not a valid {getattr(tp, '__name__', 'message')}: {exc}")


def _expect_a2a_error(ctx: CheckContext, reply: RpcReply, cls: Any, what: str) -> None:
    ctx.expect(not reply.ok, f"{what}: succeeded, expected {cls.__name__}")
    ctx.expect(
        reply.code == cls.grpc_status,
        f"{what}: {reply.describe()}, expected status {cls.grpc_status} (§5.4)",
    )


# --------------------------------------------------------------------------- service


_PROBES: tuple[tuple[str, Any, bool], ...] = (
    ("SendMessage", None, False),
    ("SendStreamingMessage", None, True),
    ("GetTask", m.GetTaskRequest(id=_UNKNOWN), False),
    ("ListTasks", m.ListTasksRequest(page_size=1), False),
    ("CancelTask", m.CancelTaskRequest(id=_UNKNOWN), False),
    ("SubscribeToTask", m.SubscribeToTaskRequest(id=_UNKNOWN), True),
    (
        "CreateTaskPushNotificationConfig",
        m.TaskPushNotificationConfig(task_id=_UNKNOWN, url="https://example.com/a2a-hook"),
        False,
    ),
    (
        "GetTaskPushNotificationConfig",
        m.GetTaskPushNotificationConfigRequest(task_id=_UNKNOWN, id="x"),
        False,
    ),
    (
        "ListTaskPushNotificationConfigs",
        m.ListTaskPushNotificationConfigsRequest(task_id=_UNKNOWN),
        False,
    ),
    (
        "DeleteTaskPushNotificationConfig",
        m.DeleteTaskPushNotificationConfigRequest(task_id=_UNKNOWN, id="x"),
        False,
    ),
    ("GetExtendedAgentCard", m.GetExtendedAgentCardRequest(), False),
)


@check(
    "grpc.service-methods",
    "§10.1, §10.3",
    MUST,
    "Every A2AService RPC is implemented (no bare UNIMPLEMENTED)",
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_service_methods(ctx: CheckContext) -> str | None:
    missing = []
    for method, request, stream in _PROBES:
        if request is None:
            request = ctx.send_request("hello")
        reply = await rpc(ctx, method, request, stream=stream, limit=1)
        info = reply.error_info()
        # An A2A error (UnsupportedOperation, PushNotificationNotSupported) is an answer.
        if reply.code == "UNIMPLEMENTED" and (info is None or info.get("domain") != ERROR_DOMAIN):
            missing.append(method)
    ctx.expect(not missing, f"not implemented: {', '.join(missing)}")
    return f"{len(_PROBES)} methods answer"


# --------------------------------------------------------------------------- metadata


@check(
    "grpc.metadata-version",
    "§10.2, §3.6.2",
    MUST,
    "The a2a-version metadata is read: an unsupported version gets VERSION_NOT_SUPPORTED",
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_metadata_version(ctx: CheckContext) -> str | None:
    ok = await rpc(ctx, "GetTask", m.GetTaskRequest(id=_UNKNOWN))
    ctx.expect(
        ok.code != VersionNotSupportedError.grpc_status
        or (ok.error_info() or {}).get("reason") != "VERSION_NOT_SUPPORTED",
        f"a2a-version: 1.0 was refused: {ok.describe()}",
    )
    bad = await rpc(ctx, "GetTask", m.GetTaskRequest(id=_UNKNOWN), metadata={"a2a-version": "9.9"})
    _expect_a2a_error(ctx, bad, VersionNotSupportedError, "a2a-version: 9.9")
    info = bad.error_info()
    ctx.expect(
        info is not None and info.get("reason") == "VERSION_NOT_SUPPORTED",
        f"a2a-version: 9.9: {bad.describe()}, expected ErrorInfo VERSION_NOT_SUPPORTED",
    )
    return None


@check(
    "grpc.metadata-extensions",
    "§10.2, §3.2.6",
    SHOULD,
    "Requested a2a-extensions the agent supports are activated in the response metadata",
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_metadata_extensions(ctx: CheckContext) -> str | None:
    caps = ctx.card.get("capabilities") or {}
    uris = [e.get("uri") for e in caps.get("extensions") or () if isinstance(e, dict)]
    uris = [u for u in uris if isinstance(u, str) and u]
    if not uris:
        ctx.not_applicable("the card declares no extensions")
    unknown = "https://example.com/a2a-conformance/unknown-extension/v1"
    reply = await rpc(
        ctx,
        "SendMessage",
        ctx.send_request("hello"),
        metadata={"a2a-version": "1.0", "a2a-extensions": f"{uris[0]},{unknown}"},
    )
    ctx.expect(reply.ok, f"SendMessage with a2a-extensions: {reply.describe()}")
    echoed = reply.initial.get("a2a-extensions", "")
    active = {u.strip() for u in echoed.split(",") if u.strip()}
    ctx.expect(
        uris[0] in active,
        f"a2a-extensions in the response metadata: {echoed!r}, expected it to list {uris[0]}",
    )
    ctx.expect(
        unknown not in active, f"an extension the card does not offer was activated: {echoed!r}"
    )
    return None


# --------------------------------------------------------------------------- errors


@check(
    "grpc.error-status",
    "§10.6, §5.4",
    MUST,
    "A2A errors use the mapped gRPC status (TaskNotFound -> NOT_FOUND)",
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_error_status(ctx: CheckContext) -> str | None:
    reply = await rpc(ctx, "GetTask", m.GetTaskRequest(id=_UNKNOWN))
    _expect_a2a_error(ctx, reply, TaskNotFoundError, "GetTask of an unknown task")
    return None


@check(
    "grpc.error-info",
    "§10.6",
    MUST,
    "A2A errors carry google.rpc.ErrorInfo (reason, domain a2a-protocol.org) in status.details",
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_error_info(ctx: CheckContext) -> str | None:
    reply = await rpc(ctx, "GetTask", m.GetTaskRequest(id=_UNKNOWN))
    ctx.expect(not reply.ok, "GetTask of an unknown task succeeded")
    info = reply.error_info()
    ctx.expect(info is not None, f"no google.rpc.ErrorInfo in the status details: {reply.details}")
    assert info is not None
    ctx.expect(
        info.get("reason") == "TASK_NOT_FOUND",
        f"ErrorInfo.reason {info.get('reason')!r}, expected 'TASK_NOT_FOUND'",
    )
    ctx.expect(
        info.get("domain") == ERROR_DOMAIN,
        f"ErrorInfo.domain {info.get('domain')!r}, expected {ERROR_DOMAIN!r}",
    )
    return None


@check(
    "grpc.invalid-argument",
    "§10.6, §5.4",
    MUST,
    "Invalid parameters (a GetTask without its REQUIRED id) get INVALID_ARGUMENT",
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_invalid_argument(ctx: CheckContext) -> str | None:
    from ...adapters.grpc import pb

    reply = await rpc(ctx, "GetTask", None, raw=pb.GetTaskRequest().SerializeToString())
    _expect_a2a_error(ctx, reply, InvalidParamsError, "GetTask without an id")
    return None


# --------------------------------------------------------------------------- streaming


@check(
    "grpc.streaming",
    "§10.7, §3.1.2",
    MUST,
    "SendStreamingMessage streams StreamResponse messages, one payload each, ending with OK",
    requires=(Requirement.STREAMING,),
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_streaming(ctx: CheckContext) -> str | None:
    text = "stream 3" if ctx.has_contract else "hello"
    reply = await rpc(ctx, "SendStreamingMessage", ctx.send_request(text), stream=True)
    ctx.expect(reply.ok, f"the stream ended with {reply.describe()}, expected OK")
    ctx.expect(reply.items, "the stream had no messages")
    items = [
        _decode(ctx, m.StreamResponse, data, f"stream message #{i}")
        for i, data in enumerate(reply.items)
    ]
    first = items[0]
    ctx.expect(
        isinstance(first, m.Task | m.Message),
        f"the first message is a {type(first).__name__}, expected a Task or a Message",
    )
    if isinstance(first, m.Message):
        ctx.expect(len(items) == 1, "a Message answer must be the stream's only item")
    else:
        last = items[-1]
        state = last.status.state if isinstance(last, m.Task | m.TaskStatusUpdateEvent) else None
        ctx.expect(
            state is None
            or state.is_terminal
            or state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED),
            f"the stream closed with the task still {state.name if state else '?'}",
        )
    return f"{len(items)} messages"


@check(
    "grpc.subscribe-unknown",
    "§10.7, §3.1.6",
    MUST,
    "SubscribeToTask of an unknown task ends the stream with NOT_FOUND",
    requires=(Requirement.STREAMING,),
    versions=V10,
    transports=ON_GRPC,
)
async def grpc_subscribe_unknown(ctx: CheckContext) -> str | None:
    reply = await rpc(ctx, "SubscribeToTask", m.SubscribeToTaskRequest(id=_UNKNOWN), stream=True)
    ctx.expect(not reply.items, f"{len(reply.items)} messages for an unknown task")
    _expect_a2a_error(ctx, reply, TaskNotFoundError, "SubscribeToTask of an unknown task")
    return None


# --------------------------------------------------------------------------- equivalence


def _normal(task: m.Task) -> m.Task:
    # Timestamps keep their precision on every binding; only the history order is free.
    return task


@check(
    "binding.equivalence",
    "§3.1, §5.1",
    MUST,
    "A task made over gRPC reads the same over every other 1.0 binding the card lists",
    versions=V10,
    transports=ON_GRPC,
)
async def binding_equivalence(ctx: CheckContext) -> str | None:
    reply = await rpc(
        ctx, "SendMessage", ctx.send_request("complete" if ctx.has_contract else "hello")
    )
    ctx.expect(reply.ok, f"SendMessage: {reply.describe()}")
    made = _decode(ctx, m.SendMessageResponse, reply.items[0], "SendMessageResponse")
    if not isinstance(made, m.Task):
        ctx.skip("the agent answers with a Message, not a Task: nothing to read back")
    got = await rpc(ctx, "GetTask", m.GetTaskRequest(id=made.id))
    ctx.expect(got.ok, f"GetTask over gRPC: {got.describe()}")
    over_grpc = _decode(ctx, m.Task, got.items[0], "Task")
    others = [e for t in (JSONRPC, REST) if (e := ctx.target.endpoint("1.0", t)) is not None]
    if not others:
        ctx.not_applicable("the card lists no other 1.0 binding")
    compared = []
    for endpoint in others:
        transport = endpoint.transport
        other = ctx.on_endpoint(endpoint)
        try:
            res = await other.call("GetTask", m.GetTaskRequest(id=made.id))
            value = other.decode(res, m.Task)
        finally:
            ctx.evidence.extend(other.evidence)
        ctx.expect(isinstance(value, m.Task), f"GetTask over {transport}: not a Task")
        ctx.expect(
            _normal(value) == _normal(over_grpc),
            f"GetTask over {transport} differs from gRPC: {value!r} != {over_grpc!r}",
        )
        compared.append(transport)
    return f"gRPC = {' = '.join(compared)}"
