"""The HTTP+JSON (REST) binding: 1.0 routes (spec §11) and 0.3's ``/v1`` ones.

Each route turns path, query and body into the operation's request model,
calls the server's ``on_*`` method with a :class:`CallContext` (owner from
authentication, tenant from the ``/{tenant}`` prefix) and writes the result
as ProtoJSON: 1.0 for the spec's routes, the 0.3 proto's JSON under ``/v1``.
Errors use the server's error mapping and go out as ``google.rpc.Status``
with the error's HTTP status; streams are SSE of ``StreamResponse`` objects
(a failure after the stream started is an ``event: error`` frame carrying
the same ``google.rpc.Status``).

1.0 routes (proto ``google.api.http``; each also under ``/{tenant}``)::

    POST   /message:send                       SendMessage
    POST   /message:stream                     SendStreamingMessage (SSE)
    GET    /tasks/{id}                         GetTask (?historyLength)
    GET    /tasks                              ListTasks (?contextId&status&pageSize&...)
    POST   /tasks/{id}:cancel                  CancelTask
    GET    /tasks/{id}:subscribe               SubscribeToTask (SSE; POST accepted too)
    POST   /tasks/{taskId}/pushNotificationConfigs        CreateTaskPushNotificationConfig
    GET    /tasks/{taskId}/pushNotificationConfigs/{id}   GetTaskPushNotificationConfig
    GET    /tasks/{taskId}/pushNotificationConfigs        ListTaskPushNotificationConfigs
    DELETE /tasks/{taskId}/pushNotificationConfigs/{id}   DeleteTaskPushNotificationConfig
    GET    /extendedAgentCard                  GetExtendedAgentCard

0.3 routes (0.3 proto; bodies and results in its ProtoJSON, codec dialect
``0.3-http``; ``historyLength=0`` means unset, as in proto3)::

    POST   /v1/message:send                    message/send
    POST   /v1/message:stream                  message/stream (SSE)
    GET    /v1/tasks/{id}                      tasks/get (?historyLength)
    POST   /v1/tasks/{id}:cancel               tasks/cancel
    GET    /v1/tasks/{id}:subscribe            tasks/resubscribe (SSE; POST accepted too)
    POST   /v1/tasks/{id}/pushNotificationConfigs         .../set
    GET    /v1/tasks/{id}/pushNotificationConfigs/{cfg}   .../get
    GET    /v1/tasks/{id}/pushNotificationConfigs         .../list
    DELETE /v1/tasks/{id}/pushNotificationConfigs/{cfg}   .../delete
    GET    /v1/card                            agent/getAuthenticatedExtendedCard

A 1.0 route needs ``A2A-Version: 1.0`` (header or query parameter): a
missing one means 0.3 (spec §3.6.2), which those routes do not speak, so
the answer is VersionNotSupportedError naming the fix. The ``/v1`` routes
take a missing header or ``0.3``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

import attrs
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ... import codec
from ... import models as m
from ...errors import (
    DecodeError,
    InvalidModelError,
    InvalidParamsError,
    JSONRPCError,
    VersionNotSupportedError,
)
from ...protocol import METHODS, V0_3, V1_0, negotiate_version
from ...server import EventStream, error_for, resume_point, stream_items
from ._auth import AuthenticationError, PermissionDeniedError
from ._common import (
    A2A_JSON,
    JSON,
    BodyTooLargeError,
    is_json_media_type,
    json_response,
    read_body,
    service_headers,
    status_body,
    status_error_response,
    too_large,
    unsupported_media,
)
from ._gateway import Gateway, challenges_of
from ._streaming import SSEResponse, sse_frame

__all__ = ["RestBinding"]

log = logging.getLogger("a2a_models.adapters.http")

_BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
_V03_HTTP = "0.3-http"

T = TypeVar("T")
Builder = Callable[[Request, Any], Any]
Encoder = Callable[[Any], Any]


@attrs.frozen(slots=True)
class _Op:
    """One REST operation: how to build its request and encode its result.

    ``name`` is the 1.0 method name (``protocol.METHODS``), which gives the
    server's ``on_*`` handler and whether it streams; ``encode`` is unused
    for streams. Every POST route takes an optional JSON body.
    """

    name: str
    handler: str
    version: str
    build: Builder
    encode: Encoder | None
    streaming: bool


def _op(name: str, version: str, build: Builder, encode: Encoder | None = None) -> _Op:
    spec = METHODS[name]
    return _Op(name, spec.handler, version, build, encode, spec.streaming)


# --------------------------------------------------------------------------- decoding


def _invalid(field: str, problem: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"Invalid request: {field}: {problem}",
        [{"@type": _BAD_REQUEST, "fieldViolations": [{"field": field, "description": problem}]}],
    )


def _decode(tp: type[T], wire: Any, dialect: str) -> T:
    try:
        return codec.from_wire(tp, wire, dialect)
    except DecodeError as exc:
        field = exc.path[2:] if exc.path.startswith("$.") else exc.path.lstrip("$") or "body"
        raise _invalid(field, exc.expected) from None


def _object(body: Any) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise _invalid("body", f"expected a JSON object, got {type(body).__name__}")
    return dict(body)


def _put_path(wire: dict[str, Any], **path: str) -> dict[str, Any]:
    """Path parameters fill their fields; a body that says otherwise is refused."""
    for key, value in path.items():
        given = wire.get(key)
        if given not in (None, "", value):
            raise _invalid(key, f"the body says {given!r} but the path says {value!r}")
        wire[key] = value
    return wire


_INT, _BOOL, _STR = "int", "bool", "str"


def _query(request: Request, fields: Mapping[str, str]) -> dict[str, Any]:
    """Query parameters (camelCase, snake_case tolerated) as a ProtoJSON object."""
    snake = {_snake(name): name for name in fields}
    out: dict[str, Any] = {}
    for key, value in request.query_params.multi_items():
        name = key if key in fields else snake.get(key)
        if name is None or name in out:
            continue
        kind = fields[name]
        if kind == _BOOL:
            lowered = value.strip().lower()
            if lowered not in ("true", "false"):
                raise _invalid(name, f"expected true or false, got {value[:40]!r}")
            out[name] = lowered == "true"
        elif kind == _INT:
            try:
                out[name] = int(value.strip())
            except ValueError:
                raise _invalid(name, f"expected an integer, got {value[:40]!r}") from None
        else:
            out[name] = value
    return out


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _path(request: Request, name: str) -> str:
    value = request.path_params[name]
    assert isinstance(value, str)
    return value


def _model(factory: Callable[..., T], **kwargs: Any) -> T:
    try:
        return factory(**kwargs)
    except InvalidModelError as exc:
        raise _invalid(exc.field.rsplit(".", 1)[-1], exc.problem) from None


# --------------------------------------------------------------------------- 1.0 builders


def _send_v10(request: Request, body: Any) -> m.SendMessageRequest:
    return _decode(m.SendMessageRequest, _object(body), V1_0)


def _get_task_v10(request: Request, body: Any) -> m.GetTaskRequest:
    wire = _query(request, {"historyLength": _INT})
    return _decode(m.GetTaskRequest, _put_path(wire, id=_path(request, "id")), V1_0)


_LIST_TASKS_QUERY = {
    "contextId": _STR,
    "status": _STR,
    "pageSize": _INT,
    "pageToken": _STR,
    "historyLength": _INT,
    "statusTimestampAfter": _STR,
    "includeArtifacts": _BOOL,
}


def _list_tasks_v10(request: Request, body: Any) -> m.ListTasksRequest:
    return _decode(m.ListTasksRequest, _query(request, _LIST_TASKS_QUERY), V1_0)


def _cancel_v10(request: Request, body: Any) -> m.CancelTaskRequest:
    wire = _put_path(_object(body), id=_path(request, "id"))
    return _decode(m.CancelTaskRequest, wire, V1_0)


def _subscribe_v10(request: Request, body: Any) -> m.SubscribeToTaskRequest:
    wire = _put_path(_object(body), id=_path(request, "id"))
    return _decode(m.SubscribeToTaskRequest, wire, V1_0)


def _create_push_v10(request: Request, body: Any) -> m.TaskPushNotificationConfig:
    wire = _put_path(_object(body), taskId=_path(request, "taskId"))
    return _decode(m.TaskPushNotificationConfig, wire, V1_0)


def _get_push_v10(request: Request, body: Any) -> m.GetTaskPushNotificationConfigRequest:
    wire = {"taskId": _path(request, "taskId"), "id": _path(request, "id")}
    return _decode(m.GetTaskPushNotificationConfigRequest, wire, V1_0)


def _list_push_v10(request: Request, body: Any) -> m.ListTaskPushNotificationConfigsRequest:
    wire = _query(request, {"pageSize": _INT, "pageToken": _STR})
    wire = _put_path(wire, taskId=_path(request, "taskId"))
    return _decode(m.ListTaskPushNotificationConfigsRequest, wire, V1_0)


def _delete_push_v10(request: Request, body: Any) -> m.DeleteTaskPushNotificationConfigRequest:
    wire = {"taskId": _path(request, "taskId"), "id": _path(request, "id")}
    return _decode(m.DeleteTaskPushNotificationConfigRequest, wire, V1_0)


def _extended_card(request: Request, body: Any) -> m.GetExtendedAgentCardRequest:
    return m.GetExtendedAgentCardRequest()


def _v10(as_type: Any = None) -> Encoder:
    return lambda result: codec.to_wire(result, V1_0, as_type=as_type)


def _empty(result: Any) -> Any:
    return {}


_POST, _GET, _DELETE = ("POST",), ("GET",), ("DELETE",)

# fmt: off
_V10_OPS: tuple[tuple[str, tuple[str, ...], _Op], ...] = (
    ("/message:send", _POST, _op("SendMessage", V1_0, _send_v10, _v10(m.SendMessageResponse))),
    ("/message:stream", _POST, _op("SendStreamingMessage", V1_0, _send_v10)),
    ("/tasks/{id}:cancel", _POST, _op("CancelTask", V1_0, _cancel_v10, _v10())),
    ("/tasks/{id}:subscribe", ("GET", "POST"), _op("SubscribeToTask", V1_0, _subscribe_v10)),
    ("/tasks/{taskId}/pushNotificationConfigs/{id}", _GET,
     _op("GetTaskPushNotificationConfig", V1_0, _get_push_v10, _v10())),
    ("/tasks/{taskId}/pushNotificationConfigs/{id}", _DELETE,
     _op("DeleteTaskPushNotificationConfig", V1_0, _delete_push_v10, _empty)),
    ("/tasks/{taskId}/pushNotificationConfigs", _POST,
     _op("CreateTaskPushNotificationConfig", V1_0, _create_push_v10, _v10())),
    ("/tasks/{taskId}/pushNotificationConfigs", _GET,
     _op("ListTaskPushNotificationConfigs", V1_0, _list_push_v10, _v10())),
    ("/tasks/{id}", _GET, _op("GetTask", V1_0, _get_task_v10, _v10())),
    ("/tasks", _GET, _op("ListTasks", V1_0, _list_tasks_v10, _v10())),
    ("/extendedAgentCard", _GET, _op("GetExtendedAgentCard", V1_0, _extended_card, _v10())),
)
# fmt: on


# --------------------------------------------------------------------------- 0.3 builders


def _history_v03(request: Request) -> int | None:
    value = _query(request, {"historyLength": _INT}).get("historyLength")
    # Proto3 int32: 0 is "not set" (the SDK reads it the same way).
    return value if value else None


def _send_v03(request: Request, body: Any) -> m.SendMessageRequest:
    return _decode(m.SendMessageRequest, _object(body), _V03_HTTP)


def _get_task_v03(request: Request, body: Any) -> m.GetTaskRequest:
    return _model(m.GetTaskRequest, id=_path(request, "id"), history_length=_history_v03(request))


def _cancel_v03(request: Request, body: Any) -> m.CancelTaskRequest:
    return _model(m.CancelTaskRequest, id=_path(request, "id"))


def _subscribe_v03(request: Request, body: Any) -> m.SubscribeToTaskRequest:
    return _model(m.SubscribeToTaskRequest, id=_path(request, "id"))


def _create_push_v03(request: Request, body: Any) -> m.TaskPushNotificationConfig:
    """Accepts the proto's body (a TaskPushNotificationConfig), the whole
    ``CreateTaskPushNotificationConfigRequest`` (what the SDK sends) or a bare
    ``PushNotificationConfig``."""
    wire = _object(body)
    config_id = None
    if isinstance(wire.get("config"), dict):
        config_id = wire.get("configId") or wire.get("config_id")
        wire = dict(wire["config"])
    if "pushNotificationConfig" not in wire and "url" in wire:
        wire = {"pushNotificationConfig": wire}
    config = _decode(m.TaskPushNotificationConfig, wire, _V03_HTTP)
    task_id = _path(request, "id")
    if config.task_id not in (None, task_id):
        raise _invalid(
            "name", f"the body names task {config.task_id!r} but the path says {task_id!r}"
        )
    if config.id is None and isinstance(config_id, str) and config_id:
        config = attrs.evolve(config, id=config_id)
    return attrs.evolve(config, task_id=task_id)


def _get_push_v03(request: Request, body: Any) -> m.GetTaskPushNotificationConfigRequest:
    return _model(
        m.GetTaskPushNotificationConfigRequest,
        task_id=_path(request, "id"),
        id=_path(request, "cfg"),
    )


def _list_push_v03(request: Request, body: Any) -> m.ListTaskPushNotificationConfigsRequest:
    return _model(m.ListTaskPushNotificationConfigsRequest, task_id=_path(request, "id"))


def _delete_push_v03(request: Request, body: Any) -> m.DeleteTaskPushNotificationConfigRequest:
    return _model(
        m.DeleteTaskPushNotificationConfigRequest,
        task_id=_path(request, "id"),
        id=_path(request, "cfg"),
    )


def _v03(as_type: Any = None) -> Encoder:
    return lambda result: codec.to_wire(result, _V03_HTTP, as_type=as_type, lossy=True)


# fmt: off
_V03_OPS: tuple[tuple[str, tuple[str, ...], _Op], ...] = (
    ("/v1/message:send", _POST, _op("SendMessage", V0_3, _send_v03, _v03(m.SendMessageResponse))),
    ("/v1/message:stream", _POST, _op("SendStreamingMessage", V0_3, _send_v03)),
    ("/v1/tasks/{id}:cancel", _POST, _op("CancelTask", V0_3, _cancel_v03, _v03())),
    ("/v1/tasks/{id}:subscribe", ("GET", "POST"), _op("SubscribeToTask", V0_3, _subscribe_v03)),
    ("/v1/tasks/{id}/pushNotificationConfigs/{cfg}", _GET,
     _op("GetTaskPushNotificationConfig", V0_3, _get_push_v03, _v03())),
    ("/v1/tasks/{id}/pushNotificationConfigs/{cfg}", _DELETE,
     _op("DeleteTaskPushNotificationConfig", V0_3, _delete_push_v03, _empty)),
    ("/v1/tasks/{id}/pushNotificationConfigs", _POST,
     _op("CreateTaskPushNotificationConfig", V0_3, _create_push_v03, _v03())),
    ("/v1/tasks/{id}/pushNotificationConfigs", _GET,
     _op("ListTaskPushNotificationConfigs", V0_3, _list_push_v03, _v03())),
    ("/v1/tasks/{id}", _GET, _op("GetTask", V0_3, _get_task_v03, _v03())),
    ("/v1/card", _GET, _op("GetExtendedAgentCard", V0_3, _extended_card, _v03())),
)
# fmt: on


# --------------------------------------------------------------------------- endpoints


class RestBinding:
    """Builds the REST routes of one app around its :class:`Gateway`."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    def routes(self, prefix: str, *, v03: bool) -> list[BaseRoute]:
        """The 1.0 routes at ``prefix`` and ``prefix/{tenant}``, then the 0.3 ones.

        The 0.3 ``/v1/...`` routes come first, so a tenant named ``v1`` is
        shadowed when they are served.
        """
        out: list[BaseRoute] = []
        if v03:
            for path, methods, op in _V03_OPS:
                out.append(Route(prefix + path, self._endpoint(op), methods=list(methods)))
        for path, methods, op in _V10_OPS:
            out.append(Route(prefix + path, self._endpoint(op), methods=list(methods)))
        for path, methods, op in _V10_OPS:
            out.append(
                Route(prefix + "/{tenant}" + path, self._endpoint(op), methods=list(methods))
            )
        return out

    def _endpoint(self, op: _Op) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return await self.call(op, request)

        endpoint.__name__ = op.handler
        return endpoint

    async def call(self, op: _Op, request: Request) -> Response:
        gateway = self.gateway
        server = gateway.target
        media = A2A_JSON if op.version == V1_0 else JSON
        reply_headers: dict[str, str] = {}
        try:
            headers = service_headers(request)
            owner = await gateway.owner(request, headers)
            body: Any = None
            if request.method == "POST":
                content_type = request.headers.get("content-type")
                if not is_json_media_type(content_type):
                    return status_error_response(
                        unsupported_media(content_type, media), status=415, media_type=media
                    )
                raw = await read_body(request, gateway.max_body_bytes)
                if raw.strip():
                    try:
                        body = codec.loads(raw)
                    except (ValueError, UnicodeDecodeError) as exc:
                        raise _invalid("body", f"not valid JSON ({exc})") from None
            version = self._version(op, headers, request.url.path)
            reply_headers = server.response_headers(headers, version)
            call = server.call_context(headers, version, owner)
            tenant = request.path_params.get("tenant")
            if tenant:
                call = attrs.evolve(call, tenant=tenant)
            params = op.build(request, body)
            if op.streaming:
                if op.handler == "on_subscribe_to_task":
                    after = resume_point(headers.get("last-event-id"))
                    stream = await server.on_subscribe_to_task(params, call, after_seq=after)
                else:
                    stream = await getattr(server, op.handler)(params, call)
                return SSEResponse(
                    self._frames(op, stream),
                    headers=reply_headers,
                    registry=gateway.streams,
                    keepalive=gateway.sse_keepalive,
                )
            result = await getattr(server, op.handler)(params, call)
            assert op.encode is not None
            return json_response(op.encode(result), media_type=media, headers=reply_headers)
        except (AuthenticationError, PermissionDeniedError) as exc:
            response = status_error_response(exc, media_type=media)
            for challenge in challenges_of(exc):
                response.headers.append("WWW-Authenticate", challenge)
            return response
        except BodyTooLargeError as exc:
            return status_error_response(too_large(exc.limit), status=413, media_type=media)
        except Exception as exc:
            error = error_for(exc, op.name)
            return status_error_response(error, media_type=media, headers=reply_headers)

    def _version(self, op: _Op, headers: Mapping[str, str], path: str) -> str:
        requested = headers.get("a2a-version")
        version = negotiate_version(requested, self.gateway.target.supported_versions)
        if version == op.version:
            return version
        if op.version == V1_0:
            why = (
                "a missing A2A-Version means 0.3 (spec §3.6.2)"
                if not (requested or "").strip()
                else f"the request asked for A2A {version}"
            )
            raise VersionNotSupportedError(
                f"{path} is an A2A 1.0 HTTP+JSON route but {why}: send 'A2A-Version: 1.0' "
                "(0.3 clients use the /v1/... routes)"
            )
        raise VersionNotSupportedError(
            f"{path} is an A2A 0.3 HTTP+JSON route but the request asked for A2A {version}: "
            "send 'A2A-Version: 0.3' or none, or use the 1.0 routes without /v1"
        )

    async def _frames(self, op: _Op, stream: EventStream) -> AsyncIterator[bytes]:
        v03 = op.version == V0_3
        dialect = _V03_HTTP if v03 else V1_0
        items = stream_items(stream, METHODS[op.name], op.version)
        try:
            async for seq, item in items:
                try:
                    wire = codec.to_wire(item, dialect, as_type=m.StreamResponse, lossy=v03)
                except Exception as exc:
                    yield _error_frame(error_for(exc, op.name))
                    return
                yield sse_frame(codec.dumps(wire), id=str(seq) if seq else None)
        except Exception as exc:
            yield _error_frame(error_for(exc, op.name))
        finally:
            await items.aclose()


def _error_frame(error: JSONRPCError) -> bytes:
    return sse_frame(codec.dumps(status_body(error)), event="error")
