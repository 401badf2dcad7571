"""The HTTP+JSON (REST) binding, I/O-free: one route table and its mappings.

Everything both sides of HTTP+JSON need, with no HTTP library: the route
table (:data:`REST_ROUTES`), matching a request path to a route
(:func:`match_rest_route`), the version rule of each route
(:func:`rest_version`), path/query/body to the operation's params
(:func:`decode_rest_params`) and back (:func:`build_rest_request`), results
(:func:`encode_rest_result`, :func:`decode_rest_result`) and errors
(:func:`rest_error_body`, :func:`rest_error_from_body`). The server base
(``A2AServer.handle_rest``), the HTTP clients and the conformance suite all
use this one table.

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
the answer is ``VersionNotSupportedError`` naming the fix. The ``/v1``
routes take a missing header or ``0.3``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar
from urllib.parse import quote

import attrs

from .. import codec
from .. import models as m
from ..errors import (
    DecodeError,
    InvalidModelError,
    InvalidParamsError,
    JSONRPCError,
    MethodNotFoundError,
    VersionNotSupportedError,
    quote_input,
)
from ._methods import METHODS, MethodSpec
from ._version import V0_3, V1_0, negotiate_version

__all__ = [
    "A2A_MEDIA_TYPE",
    "JSON_MEDIA_TYPE",
    "REST_ROUTES",
    "SSE_MEDIA_TYPE",
    "RestRequest",
    "RestRoute",
    "RestRouteError",
    "build_rest_request",
    "decode_rest_params",
    "decode_rest_result",
    "encode_rest_result",
    "match_rest_route",
    "rest_dialect",
    "rest_error_body",
    "rest_error_from_body",
    "rest_media_type",
    "rest_version",
]

#: JSON-RPC bodies (spec §9.1) and 0.3 HTTP+JSON bodies.
JSON_MEDIA_TYPE: Final = "application/json"
#: 1.0 HTTP+JSON bodies and push notifications (spec §11.1, §14.1).
A2A_MEDIA_TYPE: Final = "application/a2a+json"
#: Streams.
SSE_MEDIA_TYPE: Final = "text/event-stream"

_V03_HTTP: Final = "0.3-http"
T = TypeVar("T")


class Builder(Protocol):
    """Builds an operation's params from (path parameters, query items, JSON body).

    ``parsed=True`` says the body came from :func:`~a2a_models.codec.loads`, so
    its free-form members need no JSON check (see :func:`~a2a_models.codec.from_wire`).
    """

    def __call__(
        self,
        path: Mapping[str, str],
        query: Sequence[tuple[str, str]],
        body: Any,
        /,
        *,
        parsed: bool = False,
    ) -> Any: ...


@attrs.frozen(slots=True)
class RestRoute:
    """One HTTP+JSON route: an operation at a path template, in one A2A version.

    ``operation`` is the 1.0 method name (a key of ``protocol.METHODS``);
    ``path`` is relative to the interface URL, ``{name}`` marking a path
    parameter (one segment).
    """

    operation: str
    methods: tuple[str, ...]
    path: str
    version: str
    build: Builder = attrs.field(repr=False, eq=False)
    pattern: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        parts = re.split(r"\{(\w+)\}", self.path)
        regex = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts)
        )
        object.__setattr__(self, "pattern", re.compile(regex + r"\Z"))

    @property
    def spec(self) -> MethodSpec:
        """The operation's :class:`MethodSpec`."""
        return METHODS[self.operation]

    @property
    def streaming(self) -> bool:
        """Whether the answer is an SSE stream."""
        return self.spec.streaming


class RestRouteError(MethodNotFoundError):
    """No route for a request: ``status`` is 404 (unknown path) or 405 (wrong method).

    ``allowed`` lists the HTTP methods the path takes (for ``Allow``).
    """

    def __init__(self, message: str, *, status: int = 404, allowed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.allowed = allowed

    def to_http_status(self) -> dict[str, Any]:
        """The ``google.rpc.Status`` body, its ``code`` and ``status`` this route error's:
        an unknown path is ``NOT_FOUND`` (google.rpc.Code's 404), not the
        ``UNIMPLEMENTED`` (501) of an unknown method; a wrong method stays
        ``UNIMPLEMENTED`` with 405, as gRPC-gateway answers it."""
        body = super().to_http_status()
        body["error"]["code"] = self.status
        if self.status == 404:
            body["error"]["status"] = "NOT_FOUND"
        return body


@attrs.frozen(slots=True)
class RestRequest:
    """An HTTP+JSON request to send: method, path, query and JSON body.

    ``path`` is relative to the interface URL and includes the ``/v1``
    (0.3) or ``/{tenant}`` (1.0) prefix; ``route_path`` is the same without
    that prefix. ``body`` is a JSON value (``None``: no body).
    """

    method: str
    path: str
    route_path: str
    query: tuple[tuple[str, str], ...] = ()
    body: Any = None

    @property
    def content(self) -> bytes | None:
        """The body as bytes (``None``: no body)."""
        return None if self.body is None else codec.dumps(self.body)


# --------------------------------------------------------------------------- decoding


def _invalid(field: str, problem: str) -> InvalidParamsError:
    return InvalidParamsError.of_field(
        field, f"Invalid request: {field}: {problem}", problem=problem
    )


def _invalid_at(exc: DecodeError) -> InvalidParamsError:
    """The error of a body decoding failed at ``exc.path`` (the body is the root)."""
    field = exc.path[2:] if exc.path.startswith("$.") else exc.path.lstrip("$") or "body"
    return _invalid(field, exc.expected)


def _decode(tp: type[T], wire: Any, dialect: str, parsed: bool) -> T:
    try:
        return codec.from_wire(tp, wire, dialect, parsed=parsed)
    except DecodeError as exc:
        raise _invalid_at(exc) from None


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
            raise _invalid(
                key, f"the body says {quote_input(given)} but the path says {quote_input(value)}"
            )
        wire[key] = value
    return wire


_INT, _BOOL, _STR = "int", "bool", "str"


def _query(query: Sequence[tuple[str, str]], fields: Mapping[str, str]) -> dict[str, Any]:
    """Query parameters (camelCase, snake_case tolerated) as a ProtoJSON object."""
    snake = {_snake(name): name for name in fields}
    out: dict[str, Any] = {}
    for key, value in query:
        name = key if key in fields else snake.get(key)
        if name is None:
            continue
        if name in out:
            # Which one was meant? Taking either would drop the other silently.
            raise _invalid(name, "given more than once")
        kind = fields[name]
        if kind == _BOOL:
            lowered = value.strip().lower()
            if lowered not in ("true", "false"):
                raise _invalid(name, f"expected true or false, got {quote_input(value)}")
            out[name] = lowered == "true"
        elif kind == _INT:
            try:
                out[name] = int(value.strip())
            except ValueError:
                raise _invalid(name, f"expected an integer, got {quote_input(value)}") from None
        else:
            out[name] = value
    return out


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _model(factory: Callable[..., T], **kwargs: Any) -> T:
    try:
        return factory(**kwargs)
    except InvalidModelError as exc:
        raise _invalid(exc.field.rsplit(".", 1)[-1], exc.problem) from None


Path = Mapping[str, str]
Query = Sequence[tuple[str, str]]

# --------------------------------------------------------------------------- 1.0 builders


def _send_v10(path: Path, query: Query, body: Any, *, parsed: bool = False) -> m.SendMessageRequest:
    return _decode(m.SendMessageRequest, _object(body), V1_0, parsed)


def _get_task_v10(path: Path, query: Query, body: Any, *, parsed: bool = False) -> m.GetTaskRequest:
    wire = _query(query, {"historyLength": _INT})
    return _decode(m.GetTaskRequest, _put_path(wire, id=path["id"]), V1_0, parsed)


_LIST_TASKS_QUERY = {
    "contextId": _STR,
    "status": _STR,
    "pageSize": _INT,
    "pageToken": _STR,
    "historyLength": _INT,
    "statusTimestampAfter": _STR,
    "includeArtifacts": _BOOL,
}


def _list_tasks_v10(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.ListTasksRequest:
    return _decode(m.ListTasksRequest, _query(query, _LIST_TASKS_QUERY), V1_0, parsed)


def _cancel_v10(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.CancelTaskRequest:
    return _decode(m.CancelTaskRequest, _put_path(_object(body), id=path["id"]), V1_0, parsed)


def _subscribe_v10(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.SubscribeToTaskRequest:
    return _decode(m.SubscribeToTaskRequest, _put_path(_object(body), id=path["id"]), V1_0, parsed)


def _create_push_v10(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.TaskPushNotificationConfig:
    wire = _put_path(_object(body), taskId=path["taskId"])
    return _decode(m.TaskPushNotificationConfig, wire, V1_0, parsed)


def _get_push_v10(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.GetTaskPushNotificationConfigRequest:
    wire = {"taskId": path["taskId"], "id": path["id"]}
    return _decode(m.GetTaskPushNotificationConfigRequest, wire, V1_0, parsed)


def _list_push_v10(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.ListTaskPushNotificationConfigsRequest:
    wire = _put_path(_query(query, {"pageSize": _INT, "pageToken": _STR}), taskId=path["taskId"])
    return _decode(m.ListTaskPushNotificationConfigsRequest, wire, V1_0, parsed)


def _delete_push_v10(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.DeleteTaskPushNotificationConfigRequest:
    wire = {"taskId": path["taskId"], "id": path["id"]}
    return _decode(m.DeleteTaskPushNotificationConfigRequest, wire, V1_0, parsed)


def _extended_card(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.GetExtendedAgentCardRequest:
    return m.GetExtendedAgentCardRequest()


# --------------------------------------------------------------------------- 0.3 builders


def _history_v03(query: Query) -> dict[str, Any]:
    wire = _query(query, {"historyLength": _INT})
    # Proto3 int32: 0 is "not set" (the SDK reads it the same way).
    return wire if wire.get("historyLength") else {}


def _send_v03(path: Path, query: Query, body: Any, *, parsed: bool = False) -> m.SendMessageRequest:
    return _decode(m.SendMessageRequest, _object(body), _V03_HTTP, parsed)


def _get_task_v03(path: Path, query: Query, body: Any, *, parsed: bool = False) -> m.GetTaskRequest:
    # The query's ProtoJSON names are 1.0's: a refusal names historyLength, not history_length.
    return _decode(m.GetTaskRequest, _put_path(_history_v03(query), id=path["id"]), V1_0, parsed)


def _cancel_v03(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.CancelTaskRequest:
    return _model(m.CancelTaskRequest, id=path["id"])


def _subscribe_v03(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.SubscribeToTaskRequest:
    return _model(m.SubscribeToTaskRequest, id=path["id"])


def _create_push_v03(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.TaskPushNotificationConfig:
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
    config = _decode(m.TaskPushNotificationConfig, wire, _V03_HTTP, parsed)
    task_id = path["id"]
    if config.task_id not in (None, task_id):
        raise _invalid(
            "name",
            f"the body names task {quote_input(config.task_id)} but the path says {quote_input(task_id)}",
        )
    if config.id is None and isinstance(config_id, str) and config_id:
        config = attrs.evolve(config, id=config_id)
    return attrs.evolve(config, task_id=task_id)


def _get_push_v03(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.GetTaskPushNotificationConfigRequest:
    return _model(m.GetTaskPushNotificationConfigRequest, task_id=path["id"], id=path["cfg"])


def _list_push_v03(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.ListTaskPushNotificationConfigsRequest:
    return _model(m.ListTaskPushNotificationConfigsRequest, task_id=path["id"])


def _delete_push_v03(
    path: Path, query: Query, body: Any, *, parsed: bool = False
) -> m.DeleteTaskPushNotificationConfigRequest:
    return _model(m.DeleteTaskPushNotificationConfigRequest, task_id=path["id"], id=path["cfg"])


# --------------------------------------------------------------------------- the table

_POST, _GET, _DELETE, _SUB = ("POST",), ("GET",), ("DELETE",), ("GET", "POST")

# fmt: off
_V10: tuple[tuple[str, tuple[str, ...], str, Builder], ...] = (
    ("SendMessage", _POST, "/message:send", _send_v10),
    ("SendStreamingMessage", _POST, "/message:stream", _send_v10),
    ("CancelTask", _POST, "/tasks/{id}:cancel", _cancel_v10),
    ("SubscribeToTask", _SUB, "/tasks/{id}:subscribe", _subscribe_v10),
    ("GetTaskPushNotificationConfig", _GET,
     "/tasks/{taskId}/pushNotificationConfigs/{id}", _get_push_v10),
    ("DeleteTaskPushNotificationConfig", _DELETE,
     "/tasks/{taskId}/pushNotificationConfigs/{id}", _delete_push_v10),
    ("CreateTaskPushNotificationConfig", _POST,
     "/tasks/{taskId}/pushNotificationConfigs", _create_push_v10),
    ("ListTaskPushNotificationConfigs", _GET,
     "/tasks/{taskId}/pushNotificationConfigs", _list_push_v10),
    ("GetTask", _GET, "/tasks/{id}", _get_task_v10),
    ("ListTasks", _GET, "/tasks", _list_tasks_v10),
    ("GetExtendedAgentCard", _GET, "/extendedAgentCard", _extended_card),
)
_V03: tuple[tuple[str, tuple[str, ...], str, Builder], ...] = (
    ("SendMessage", _POST, "/v1/message:send", _send_v03),
    ("SendStreamingMessage", _POST, "/v1/message:stream", _send_v03),
    ("CancelTask", _POST, "/v1/tasks/{id}:cancel", _cancel_v03),
    ("SubscribeToTask", _SUB, "/v1/tasks/{id}:subscribe", _subscribe_v03),
    ("GetTaskPushNotificationConfig", _GET,
     "/v1/tasks/{id}/pushNotificationConfigs/{cfg}", _get_push_v03),
    ("DeleteTaskPushNotificationConfig", _DELETE,
     "/v1/tasks/{id}/pushNotificationConfigs/{cfg}", _delete_push_v03),
    ("CreateTaskPushNotificationConfig", _POST,
     "/v1/tasks/{id}/pushNotificationConfigs", _create_push_v03),
    ("ListTaskPushNotificationConfigs", _GET,
     "/v1/tasks/{id}/pushNotificationConfigs", _list_push_v03),
    ("GetTask", _GET, "/v1/tasks/{id}", _get_task_v03),
    ("GetExtendedAgentCard", _GET, "/v1/card", _extended_card),
)
# fmt: on

_ROUTES_V03 = tuple(RestRoute(op, meth, path, V0_3, build) for op, meth, path, build in _V03)
_ROUTES_V10 = tuple(RestRoute(op, meth, path, V1_0, build) for op, meth, path, build in _V10)
_ROUTES_TENANT = tuple(
    RestRoute(op, meth, "/{tenant}" + path, V1_0, build) for op, meth, path, build in _V10
)

#: Every route in matching order: 0.3's ``/v1/...`` first (a tenant named
#: ``v1`` is shadowed when 0.3 is served), then 1.0's, then 1.0's under ``/{tenant}``.
REST_ROUTES: tuple[RestRoute, ...] = _ROUTES_V03 + _ROUTES_V10 + _ROUTES_TENANT


def match_rest_route(
    method: str, path: str, *, v03: bool = True
) -> tuple[RestRoute, dict[str, str]]:
    """The route for ``method`` and ``path`` (relative to the interface URL), with its
    path parameters; :class:`RestRouteError` (404 or 405) if there is none.

    As in Starlette's router, the first route whose path and method match
    wins; a path that matches only with another method is a 405. ``HEAD`` is
    ``GET`` without the body (RFC 9110 §9.3.2), except on a stream.
    """
    allowed: list[str] = []
    for route in REST_ROUTES if v03 else _ROUTES_V10 + _ROUTES_TENANT:
        found = route.pattern.match(path)
        if found is None:
            continue
        if method in route.methods:
            return route, found.groupdict()
        if method == "HEAD" and "GET" in route.methods:
            if not route.streaming:
                return route, found.groupdict()
            # Its headers come with the stream; and /tasks/{id} must not take it.
            raise RestRouteError(
                f"HEAD is not served on the stream {quote_input(path)} "
                f"(allowed: {', '.join(route.methods)})",
                status=405,
                allowed=route.methods,
            )
        allowed.extend(m for m in route.methods if m not in allowed)
    if allowed:
        raise RestRouteError(
            f"{quote_input(method)} is not allowed on {quote_input(path)} "
            f"(allowed: {', '.join(allowed)})",
            status=405,
            allowed=tuple(allowed),
        )
    raise RestRouteError(f"no A2A HTTP+JSON route at {quote_input(path)}")


def rest_version(route: RestRoute, requested: str | None, supported: Sequence[str]) -> str:
    """The A2A version of a request to ``route``, or ``VersionNotSupportedError``."""
    version = negotiate_version(requested, supported)
    if version == route.version:
        return version
    if route.version == V1_0:
        why = (
            "a missing A2A-Version means 0.3 (spec §3.6.2)"
            if not (requested or "").strip()
            else f"the request asked for A2A {version}"
        )
        raise VersionNotSupportedError(
            f"{route.path} is an A2A 1.0 HTTP+JSON route but {why}: send 'A2A-Version: 1.0' "
            "(0.3 clients use the /v1/... routes)"
        )
    raise VersionNotSupportedError(
        f"{route.path} is an A2A 0.3 HTTP+JSON route but the request asked for A2A {version}: "
        "send 'A2A-Version: 0.3' or none, or use the 1.0 routes without /v1"
    )


def decode_rest_params(
    route: RestRoute, path_params: Mapping[str, str], query: Query, body: bytes | None
) -> Any:
    """The operation's params from a request to ``route``; ``InvalidParamsError`` if malformed.

    ``body`` is the raw request body (empty or ``None``: no body). It is parsed
    with :func:`~a2a_models.codec.loads`, so decoding skips the free-form JSON check
    (``parsed=True``), as the JSON-RPC path does.
    """
    wire: Any = None
    if body is not None and body.strip():
        try:
            wire = codec.loads(body)
        except DecodeError as exc:  # a member named twice, at its path
            raise _invalid_at(exc) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise _invalid("body", f"not valid JSON ({exc})") from None
    return route.build(path_params, query, wire, parsed=True)


def rest_dialect(version: str) -> str:
    """The codec dialect of HTTP+JSON bodies in ``version`` (``"1.0"`` or ``"0.3-http"``)."""
    return V1_0 if version == V1_0 else _V03_HTTP


def rest_media_type(version: str) -> str:
    """The media type of HTTP+JSON bodies in ``version``."""
    return A2A_MEDIA_TYPE if version == V1_0 else JSON_MEDIA_TYPE


def encode_rest_result(spec: MethodSpec, result: Any, version: str) -> Any:
    """An operation's result (or one stream item) as the JSON value HTTP+JSON sends."""
    if spec.streaming:
        as_type: Any = m.StreamResponse
    elif spec.name == "SendMessage":
        as_type = m.SendMessageResponse
    elif spec.result_type is None:
        return {}
    else:
        as_type = None
    if version == V1_0:
        return codec.to_wire(result, V1_0, as_type=as_type)
    return codec.to_wire(result, _V03_HTTP, as_type=as_type, lossy=True)


def decode_rest_result(spec: MethodSpec, content: bytes, version: str) -> Any:
    """An HTTP+JSON result body (or one stream event's data) as the operation's result.

    Raises :class:`~a2a_models.errors.DecodeError` if it is not one.
    """
    if spec.result_type is None:
        return None
    return codec.decode(spec.result_type, content, rest_dialect(version))


def rest_error_body(error: JSONRPCError, status: int | None = None) -> dict[str, Any]:
    """The ``google.rpc.Status`` body of ``error`` (spec §11.6); ``status`` overrides its code."""
    body = error.to_http_status()
    if status is not None:
        body["error"]["code"] = status
    return body


def rest_error_from_body(content: bytes) -> JSONRPCError | None:
    """The typed error of an HTTP+JSON error body (``None``: not a ``google.rpc.Status``)."""
    if not content:
        return None
    try:
        body = codec.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(body, dict) and isinstance(body.get("error"), dict) and "jsonrpc" not in body:
        return JSONRPCError.from_http_status(body)
    return None


# --------------------------------------------------------------------------- client side


def _segment(value: str) -> str:
    return quote(value, safe="")


def _query_items(wire: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for key, value in wire.items():
        if key == "tenant" or value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            out.append((key, "true" if item is True else "false" if item is False else str(item)))
    return tuple(out)


def build_rest_request(
    spec: MethodSpec,
    params: Any,
    version: str,
    *,
    tenant: str | None = None,
    subscribe_method: str = "POST",
    sdk_compatible: bool = True,
) -> RestRequest:
    """The HTTP+JSON request of one operation (the client side of :data:`REST_ROUTES`).

    1.0 paths go below ``/{tenant}`` when ``params.tenant`` or ``tenant``
    names one; 0.3 paths below ``/v1``. ``SubscribeToTask`` goes as
    ``subscribe_method`` (the spec text says POST, the proto GET).
    ``sdk_compatible=False`` sends a 0.3 push config exactly as 0.3 §7.5
    shows it (``{"config": ...}``), as the conformance suite must; by
    default the body also carries what the official SDK reads.
    """
    if spec.name_for(version) is None:
        raise MethodNotFoundError(f"Method not found: {spec.name} does not exist in A2A {version}")
    v1 = version == V1_0
    dialect = rest_dialect(version)
    tenant = getattr(params, "tenant", None) or tenant
    prefix = "/v1" if not v1 else f"/{_segment(tenant)}" if tenant else ""

    def encoded() -> Any:
        value = params
        if v1 and "tenant" in attrs.fields_dict(type(value)):
            value = attrs.evolve(value, tenant=None)  # it is in the path
        return codec.to_wire(value, dialect, lossy=not v1)

    def request(method: str, path: str, query: Any = (), body: Any = None) -> RestRequest:
        return RestRequest(method, prefix + path, path, tuple(query), body)

    name = spec.name
    if name == "SendMessage":
        return request("POST", "/message:send", body=encoded())
    if name == "SendStreamingMessage":
        return request("POST", "/message:stream", body=encoded())
    if name == "GetTask":
        query = (
            [] if params.history_length is None else [("historyLength", str(params.history_length))]
        )
        return request("GET", f"/tasks/{_segment(params.id)}", query)
    if name == "ListTasks":
        return request("GET", "/tasks", _query_items(encoded()))
    if name == "CancelTask":
        return request("POST", f"/tasks/{_segment(params.id)}:cancel", body=encoded())
    if name == "SubscribeToTask":
        path = f"/tasks/{_segment(params.id)}:subscribe"
        if subscribe_method == "POST":
            return request("POST", path, body=encoded())
        return request("GET", path)
    if name == "CreateTaskPushNotificationConfig":
        if not params.task_id:
            raise ValueError("the push config needs a task_id")
        path = f"/tasks/{_segment(params.task_id)}/pushNotificationConfigs"
        if v1:
            return request("POST", path, body=encoded())
        # 0.3 §7.5 shows the payload {config}; the a2a-sdk reads the whole
        # CreateTaskPushNotificationConfigRequest and needs its parent too. Its 0.3.x
        # servers parse that message strictly (json_format.Parse): a member of
        # another message (the config's own, for the proto's "body: config"
        # reading) makes them answer 500, so the body holds the request's three.
        config = encoded()
        if not sdk_compatible:
            return request("POST", path, body={"config": config})
        body = {"parent": f"tasks/{params.task_id}", "configId": params.id or "", "config": config}
        return request("POST", path, body=body)
    if name in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        if params.id is None:
            raise ValueError("the push config id is required")
        path = f"/tasks/{_segment(params.task_id)}/pushNotificationConfigs/{_segment(params.id)}"
        return request("GET" if name.startswith("Get") else "DELETE", path)
    if name == "ListTaskPushNotificationConfigs":
        query = []
        if params.page_size is not None:
            query.append(("pageSize", str(params.page_size)))
        if params.page_token:
            query.append(("pageToken", params.page_token))
        return request("GET", f"/tasks/{_segment(params.task_id)}/pushNotificationConfigs", query)
    if name == "GetExtendedAgentCard":
        return request("GET", "/extendedAgentCard" if v1 else "/card")
    raise MethodNotFoundError(f"Method not found: no HTTP+JSON route for {name}")
