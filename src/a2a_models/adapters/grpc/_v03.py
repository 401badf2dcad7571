"""A2A 0.3's gRPC service ``a2a.v1.A2AService``: its messages <-> the operations' models.

0.3's HTTP+JSON binding is the HTTP transcoding of this same proto (its
``google.api.http`` annotations): a REST body is the ProtoJSON of the request
message, a path variable one of its resource names (``tasks/{id}``). So the
codec's ``0.3-http`` dialect already knows every 0.3 message, and this module
only moves between the two forms:

* a request: its ProtoJSON (``json_format.MessageToDict``), then the resource
  names become the path parameters of the operation's 0.3 route in
  ``protocol.REST_ROUTES``, whose builder makes the params (the same checks and
  errors as over REST);
* a result: ``protocol.encode_rest_result``, then the message of that ProtoJSON
  (``json_format.ParseDict``).

The client side goes the other way (:func:`request_message`, :func:`result_of`).
With the compiled accelerator built, a result's bytes are written straight from
its ProtoJSON (:mod:`._pbjson`) when nothing in it is unusual.
Both ProtoJSON steps run through :mod:`._protojson`'s generated functions,
some 15x faster than ``json_format``'s reflection; for what they do not take on
(an unknown member, a value of another type, a number JSON cannot carry)
``json_format`` decides, and words the error, as before.

Numbers: 0.3 has no ``double`` field; every float in the ProtoJSON of these
messages is a ``google.protobuf.Struct`` number. As in the 1.0 binding, an
integral one comes back as ``int`` and an integer a double cannot hold
exactly raises :class:`~a2a_models.errors.EncodeError` rather than changing.
proto3 cannot tell an enum at 0 from an absent one: a ``TASK_STATE_UNSPECIFIED``
state or ``ROLE_UNSPECIFIED`` role reads as missing, as over 0.3 REST.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs
from google.protobuf import empty_pb2, json_format

from ... import codec
from ...codec.facts import Loss
from ...errors import EncodeError, InvalidParamsError, quote_input
from ...protocol import (
    METHODS,
    REST_ROUTES,
    V0_3,
    MethodSpec,
    RestRoute,
    decode_rest_result,
    encode_rest_result,
)
from ._convert import _MAX_EXACT, _exact, _number, _pbwire
from ._pb import a2a_v03_pb2 as pb
from ._protojson import ProtoJSON

__all__ = ["BY_OPERATION", "RPCS", "SERVICE_NAME_V03", "Rpc03", "request_message", "result_of"]

#: The fully qualified name of 0.3's gRPC service.
SERVICE_NAME_V03: Final = "a2a.v1.A2AService"

Where = tuple[dict[str, str], tuple[tuple[str, str], ...], Any]

_TASK = re.compile(r"tasks/([^/]+)")
_PARENT = re.compile(r"tasks?/([^/]+)(?:/pushNotificationConfigs)?")
_CONFIG = re.compile(r"tasks/([^/]+)/pushNotificationConfigs/([^/]+)")


def _bad_name(field: str, value: Any, expected: str) -> InvalidParamsError:
    problem = f"expected {expected}, got {quote_input(value)}"
    return InvalidParamsError.of_field(
        field, f"Invalid request: {field}: {problem}", problem=problem
    )


def _task_of(request: Mapping[str, Any], field: str = "name") -> str:
    value = request.get(field, "")
    # The 0.3 proto names CreateTaskPushNotificationConfig's parent
    # task/{id}/pushNotificationConfigs; the SDKs send tasks/{id}: both are read.
    found = (_PARENT if field == "parent" else _TASK).fullmatch(value)
    if found is None:
        raise _bad_name(field, value, "tasks/{id}")
    return found.group(1)


def _config_of(request: Mapping[str, Any]) -> dict[str, str]:
    value = request.get("name", "")
    found = _CONFIG.fullmatch(value)
    if found is None:
        raise _bad_name("name", value, "tasks/{id}/pushNotificationConfigs/{config_id}")
    return {"id": found.group(1), "cfg": found.group(2)}


# Each RPC's request as its 0.3 REST route's (path parameters, query, body).


def _send(d: dict[str, Any]) -> Where:
    return {}, (), d


def _get_task(d: dict[str, Any]) -> Where:
    history = d.get("historyLength")
    return {"id": _task_of(d)}, (("historyLength", str(history)),) if history else (), None


def _by_name(d: dict[str, Any]) -> Where:
    return {"id": _task_of(d)}, (), None


def _create_push(d: dict[str, Any]) -> Where:
    # The route's builder reads the whole CreateTaskPushNotificationConfigRequest.
    return {"id": _task_of(d, "parent")}, (), d


def _push_by_name(d: dict[str, Any]) -> Where:
    return _config_of(d), (), None


def _list_push(d: dict[str, Any]) -> Where:
    return {"id": _task_of(d, "parent")}, (), None


def _card(d: dict[str, Any]) -> Where:
    return {}, (), None


# The client side: the operation's params as the request's ProtoJSON.


def _task_name(task_id: str) -> str:
    if "/" in task_id:
        raise ValueError(f"a task id containing '/' has no 0.3 resource name: {task_id!r}")
    return f"tasks/{task_id}"


def _config_name(task_id: str, config_id: str | None) -> str:
    if not config_id or "/" in config_id:
        raise ValueError(f"a push config id must be non-empty and without '/': {config_id!r}")
    return f"{_task_name(task_id)}/pushNotificationConfigs/{config_id}"


def _wire(params: Any) -> Any:
    return codec.to_wire(params, "0.3-http", lossy=True)


def _send_message(p: Any) -> dict[str, Any]:
    wire: dict[str, Any] = _wire(p)
    # proto3 cannot tell an absent bool from false, and the a2a-sdk's 0.3 gRPC server
    # reads that false as non-blocking (it answered 'submitted'): 1.0's default, waiting
    # for the result, is said explicitly.
    configuration = wire.setdefault("configuration", {})
    configuration.setdefault("blocking", True)
    return wire


def _get_task_message(p: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": _task_name(p.id)}
    if p.history_length:
        out["historyLength"] = p.history_length
    return out


def _by_name_message(p: Any) -> dict[str, Any]:
    return {"name": _task_name(p.id)}


def _create_push_message(p: Any) -> dict[str, Any]:
    if not p.task_id:
        raise ValueError("the push config needs a task_id")
    # What the a2a-sdk's 0.3 servers read: the parent, the id and the config (named).
    return {"parent": _task_name(p.task_id), "configId": p.id or "", "config": _wire(p)}


def _push_by_name_message(p: Any) -> dict[str, Any]:
    return {"name": _config_name(p.task_id, p.id)}


def _list_push_message(p: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"parent": _task_name(p.task_id)}
    if p.page_size:
        out["pageSize"] = p.page_size
    if p.page_token:
        out["pageToken"] = p.page_token
    return out


def _card_message(p: Any) -> dict[str, Any]:
    return {}


@attrs.frozen(slots=True)
class Rpc03:
    """One RPC of ``a2a.v1.A2AService``: the operation it is, its message classes, and
    its request's place in the 0.3 REST route (``where``) and back (``message``)."""

    name: str
    operation: str
    request: Any = attrs.field(repr=False)
    response: Any = attrs.field(repr=False)
    where: Callable[[dict[str, Any]], Where] = attrs.field(repr=False)
    message: Callable[[Any], dict[str, Any]] = attrs.field(repr=False)

    @property
    def spec(self) -> MethodSpec:
        """The operation's :class:`MethodSpec`."""
        return METHODS[self.operation]

    @property
    def route(self) -> RestRoute:
        """The operation's 0.3 HTTP+JSON route."""
        return _ROUTES[self.operation]

    def decode_request(self, raw: bytes) -> Any:
        """The operation's params from the request's bytes (``InvalidParamsError`` if malformed)."""
        try:
            wire = _to_json(self.request.FromString(raw))
        except Exception as exc:  # protobuf's DecodeError, or a message json_format refuses
            raise InvalidParamsError(
                f"{self.name}: the request is not a valid a2a.v1.{self.request.__name__} ({exc})"
            ) from None
        path, query, body = self.where(wire)
        return self.route.build(path, query, body, parsed=True)

    def encode_result(self, result: Any) -> bytes:
        """A result (or one stream item) as the response message's bytes."""
        if self.response is empty_pb2.Empty:
            return b""
        return _serialize(encode_rest_result(self.spec, result, V0_3), self.response)


def request_message(rpc: Rpc03, params: Any) -> Any:
    """The request message of ``rpc`` for the operation's ``params`` (the client side)."""
    return _from_json(rpc.message(params), rpc.request)


def result_of(rpc: Rpc03, message: Any) -> Any:
    """The operation's result (or one stream item) from a response message.

    Raises :class:`~a2a_models.errors.DecodeError` if it is not one.
    """
    if rpc.response is empty_pb2.Empty:
        return None
    return decode_rest_result(rpc.spec, codec.dumps(_to_json(message)), V0_3)


_PROTOJSON: Final = ProtoJSON(pb.DESCRIPTOR)


def _to_json(message: Any) -> Any:
    """The ProtoJSON of a 0.3 message, integral Struct numbers as ``int``."""
    try:
        return _PROTOJSON.to_dict(message)
    except Exception:  # what the generated function leaves to json_format (see _protojson)
        return _from_doubles(json_format.MessageToDict(message))


def _from_json(wire: Any, cls: Any) -> Any:
    """The 0.3 message ``cls`` of its ProtoJSON ``wire``."""
    try:
        return _PROTOJSON.from_dict(wire, cls)
    except Exception:  # json_format decides (and words the error); Struct numbers first
        _check_doubles(wire, "$")
        return json_format.ParseDict(wire, cls())


# The compiled writer (``_pbjson``, with the accelerator built): ProtoJSON -> bytes
# without the message; it gives up (None) on anything unusual, and the message then
# is filled and serialized as above.
_DUMPS: Final[dict[Any, Callable[[Any], bytes | None]]] = {}
if _pbwire is not None and hasattr(_pbwire, "JsonPlan"):
    from ._pbjson import JsonPlans

    _DUMPS.update(
        (getattr(pb, desc.name), dumps)
        for desc, dumps in JsonPlans(pb.DESCRIPTOR, _pbwire).dumps.items()
    )


def _serialize(wire: Any, cls: Any) -> bytes:
    """The bytes of the 0.3 message ``cls`` of its ProtoJSON ``wire``."""
    dumps = _DUMPS.get(cls)
    if dumps is not None:
        data = dumps(wire)
        if data is not None:
            return data
    return _from_json(wire, cls).SerializeToString()  # type: ignore[no-any-return]


def _from_doubles(value: Any) -> Any:
    """Integral Struct numbers as ``int`` (JSON has one number type), in place."""
    if value.__class__ is dict:
        for key, item in value.items():
            c = item.__class__
            if c is float:
                value[key] = _number(item)
            elif c is dict or c is list:
                _from_doubles(item)
    elif value.__class__ is list:
        for i, item in enumerate(value):
            c = item.__class__
            if c is float:
                value[i] = _number(item)
            elif c is dict or c is list:
                _from_doubles(item)
    return value


def _check_doubles(value: Any, path: str) -> None:
    """An ``EncodeError`` for an integer a Struct number (a double) cannot hold exactly."""
    c = value.__class__
    if c is dict:
        for key, item in value.items():
            _check_doubles(item, f"{path}.{key}")
    elif c is list:
        for i, item in enumerate(value):
            _check_doubles(item, f"{path}[{i}]")
    elif c is int and not -_MAX_EXACT <= value <= _MAX_EXACT:
        try:
            _exact(value)  # the 1.0 conversion's rule and wording
        except Loss as exc:
            raise EncodeError(path, exc.problem) from None


_ROUTES: Final = {r.operation: r for r in REST_ROUTES if r.version == V0_3}

#: Every RPC of ``a2a.v1.A2AService``, in the proto's order.
RPCS: Final = tuple(
    Rpc03(name, op, request, response, where, message)
    for name, op, request, response, where, message in (
        (
            "SendMessage",
            "SendMessage",
            pb.SendMessageRequest,
            pb.SendMessageResponse,
            _send,
            _send_message,
        ),
        (
            "SendStreamingMessage",
            "SendStreamingMessage",
            pb.SendMessageRequest,
            pb.StreamResponse,
            _send,
            _send_message,
        ),
        ("GetTask", "GetTask", pb.GetTaskRequest, pb.Task, _get_task, _get_task_message),
        ("CancelTask", "CancelTask", pb.CancelTaskRequest, pb.Task, _by_name, _by_name_message),
        (
            "TaskSubscription",
            "SubscribeToTask",
            pb.TaskSubscriptionRequest,
            pb.StreamResponse,
            _by_name,
            _by_name_message,
        ),
        (
            "CreateTaskPushNotificationConfig",
            "CreateTaskPushNotificationConfig",
            pb.CreateTaskPushNotificationConfigRequest,
            pb.TaskPushNotificationConfig,
            _create_push,
            _create_push_message,
        ),
        (
            "GetTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            pb.GetTaskPushNotificationConfigRequest,
            pb.TaskPushNotificationConfig,
            _push_by_name,
            _push_by_name_message,
        ),
        (
            "ListTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            pb.ListTaskPushNotificationConfigRequest,
            pb.ListTaskPushNotificationConfigResponse,
            _list_push,
            _list_push_message,
        ),
        (
            "GetAgentCard",
            "GetExtendedAgentCard",
            pb.GetAgentCardRequest,
            pb.AgentCard,
            _card,
            _card_message,
        ),
        (
            "DeleteTaskPushNotificationConfig",
            "DeleteTaskPushNotificationConfig",
            pb.DeleteTaskPushNotificationConfigRequest,
            empty_pb2.Empty,
            _push_by_name,
            _push_by_name_message,
        ),
    )
)

#: The RPCs by operation (``METHODS`` key): what a client calls.
BY_OPERATION: Final[Mapping[str, Rpc03]] = {rpc.operation: rpc for rpc in RPCS}
