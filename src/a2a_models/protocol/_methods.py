"""The A2A method tables (spec §3, §9.4) and per-method params/result codecs.

Each operation is one :class:`MethodSpec` with its 1.0 and 0.3 JSON-RPC
names. Decoding and encoding pick the codec dialect from the version:
``"1.0"`` → ProtoJSON, ``"0.3"`` → the 0.3 JSON-RPC (``kind``-tagged) form.

Result shapes differ between versions (spec NOTES §2.5, §2.6):

========================================  ===========================  ===================
method                                    1.0 ``result``               0.3 ``result``
========================================  ===========================  ===================
SendMessage                               ``{"task"|"message": ..}``   bare, ``kind``-tagged
SendStreamingMessage, SubscribeToTask     ``{"task"|"message"|         bare, ``kind``-tagged
                                          "statusUpdate"|...: ..}``
ListTaskPushNotificationConfigs           ``{"configs": [..], ..}``    a bare array
DeleteTaskPushNotificationConfig          ``{}``                       ``null``
========================================  ===========================  ===================

Encoding for a 0.3 peer is lossy by default: what 0.3 cannot express (a
``tenant``, a push-config list's ``nextPageToken``, ...)
is dropped rather than refused, because the peer could not read it anyway.
Pass ``lossy=False`` to get an :class:`~a2a_models.errors.EncodeError` instead.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Final

import attrs

from .. import codec
from .. import models as m
from ..errors import (
    DecodeError,
    InvalidAgentResponseError,
    InvalidParamsError,
    MethodNotFoundError,
    quote_input,
)
from ._jsonrpc import Request, RequestId, encode_message
from ._version import V0_3, V1_0, normalize_version

__all__ = [
    "METHODS",
    "MethodSpec",
    "build_request",
    "decode_params",
    "decode_result",
    "encode_request",
    "encode_result",
    "method_for",
]


@attrs.frozen(slots=True, kw_only=True)
class MethodSpec:
    """One A2A operation and how it travels over JSON-RPC.

    ``result_type`` is a model class, a union alias (``SendMessageResponse``,
    ``StreamResponse``), or ``None`` for an empty result. For a streaming
    method it is the type of each stream item. ``params_required`` is false
    when every params field is optional, so an absent ``params`` is accepted.
    """

    name: str
    legacy_name: str | None
    params_type: type[Any]
    result_type: Any
    handler: str
    streaming: bool = False
    params_required: bool = True

    def name_for(self, version: str) -> str | None:
        """The JSON-RPC method name in ``version`` (``None``: absent from it)."""
        return self.name if normalize_version(version) == V1_0 else self.legacy_name


def _spec(
    name: str,
    legacy_name: str | None,
    params_type: type[Any],
    result_type: Any,
    handler: str,
    *,
    streaming: bool = False,
    params_required: bool = True,
) -> MethodSpec:
    return MethodSpec(
        name=name,
        legacy_name=legacy_name,
        params_type=params_type,
        result_type=result_type,
        handler=handler,
        streaming=streaming,
        params_required=params_required,
    )


_ALL: Final[tuple[MethodSpec, ...]] = (
    _spec(
        "SendMessage",
        "message/send",
        m.SendMessageRequest,
        m.SendMessageResponse,
        "on_send_message",
    ),
    _spec(
        "SendStreamingMessage",
        "message/stream",
        m.SendMessageRequest,
        m.StreamResponse,
        "on_send_streaming_message",
        streaming=True,
    ),
    _spec("GetTask", "tasks/get", m.GetTaskRequest, m.Task, "on_get_task"),
    _spec(
        "ListTasks",
        None,
        m.ListTasksRequest,
        m.ListTasksResponse,
        "on_list_tasks",
        params_required=False,
    ),
    _spec("CancelTask", "tasks/cancel", m.CancelTaskRequest, m.Task, "on_cancel_task"),
    _spec(
        "SubscribeToTask",
        "tasks/resubscribe",
        m.SubscribeToTaskRequest,
        m.StreamResponse,
        "on_subscribe_to_task",
        streaming=True,
    ),
    _spec(
        "CreateTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/set",
        m.TaskPushNotificationConfig,
        m.TaskPushNotificationConfig,
        "on_create_task_push_notification_config",
    ),
    _spec(
        "GetTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/get",
        m.GetTaskPushNotificationConfigRequest,
        m.TaskPushNotificationConfig,
        "on_get_task_push_notification_config",
    ),
    _spec(
        "ListTaskPushNotificationConfigs",
        "tasks/pushNotificationConfig/list",
        m.ListTaskPushNotificationConfigsRequest,
        m.ListTaskPushNotificationConfigsResponse,
        "on_list_task_push_notification_configs",
    ),
    _spec(
        "DeleteTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/delete",
        m.DeleteTaskPushNotificationConfigRequest,
        None,
        "on_delete_task_push_notification_config",
    ),
    _spec(
        "GetExtendedAgentCard",
        "agent/getAuthenticatedExtendedCard",
        m.GetExtendedAgentCardRequest,
        m.AgentCard,
        "on_get_extended_agent_card",
        params_required=False,
    ),
)

#: Every operation, keyed by its 1.0 method name, in spec order.
METHODS: Final[Mapping[str, MethodSpec]] = types.MappingProxyType({s.name: s for s in _ALL})
_BY_V1_0: Final = METHODS
_BY_V0_3: Final[Mapping[str, MethodSpec]] = types.MappingProxyType(
    {s.legacy_name: s for s in _ALL if s.legacy_name is not None}
)
_FOLDED: Final = {
    V1_0: {name.casefold(): name for name in _BY_V1_0},
    V0_3: {name.casefold(): name for name in _BY_V0_3},
}


def method_for(name: str, version: str) -> MethodSpec:
    """The operation called ``name`` in ``version`` ("1.0" or "0.3").

    Raises :class:`MethodNotFoundError` naming the method, with a hint when
    ``name`` belongs to the other version (a 1.0 client that forgot the
    ``A2A-Version`` header is served as 0.3) or differs only in case.
    """
    v = normalize_version(version)
    table = _BY_V1_0 if v == V1_0 else _BY_V0_3
    spec = table.get(name)
    if spec is not None:
        return spec
    message = f"Method not found: {quote_input(name)} is not an A2A {v} method"
    if v == V0_3 and name in _BY_V1_0:
        other = _BY_V1_0[name]
        if other.legacy_name is not None:
            message += (
                f"; it is the A2A 1.0 name of 0.3's {other.legacy_name!r}. Send the header "
                "'A2A-Version: 1.0' to use 1.0 methods (a missing header means 0.3)"
            )
        else:
            message += (
                "; it exists only in A2A 1.0. Send the header 'A2A-Version: 1.0' to use it "
                "(a missing header means 0.3)"
            )
    elif v == V1_0 and name in _BY_V0_3:
        message += (
            f"; it is the A2A 0.3 name of 1.0's {_BY_V0_3[name].name!r}. Use the 1.0 name, "
            "or send 'A2A-Version: 0.3' to use 0.3 methods"
        )
    elif name.casefold() in _FOLDED[v]:
        message += f"; did you mean {_FOLDED[v][name.casefold()]!r}? (names are case-sensitive)"
    raise MethodNotFoundError(message)


def _require_name(spec: MethodSpec, version: str) -> str:
    name = spec.name_for(version)
    if name is None:
        raise MethodNotFoundError(f"Method not found: {spec.name} does not exist in A2A {version}")
    return name


def _dialect(version: str) -> codec.Dialect:
    return codec.Dialect.V1_0 if version == V1_0 else codec.Dialect.V0_3


def _lossy(version: str, lossy: bool | None) -> bool:
    return version == V0_3 if lossy is None else lossy


def _rooted(path: str, root: str) -> str:
    """``$.message.parts[0]`` → ``params.message.parts[0]``."""
    return root + path[1:] if path.startswith("$") else f"{root}.{path}"


def _invalid_params(path: str, expected: str, version: str) -> InvalidParamsError:
    where = _rooted(path, "params")
    message = f"Invalid parameters: {where}: {expected}"
    if version != V1_0:
        return InvalidParamsError(message)
    field = where[len("params.") :] if where.startswith("params.") else where[len("params") :]
    return InvalidParamsError.of_field(field, message, problem=expected)


def decode_params(
    spec: MethodSpec, params: object, version: str, *, strict: bool = False, parsed: bool = False
) -> Any:
    """Decode a request's ``params`` into ``spec.params_type``.

    Uses the 1.0 (ProtoJSON) or 0.3 codec dialect. ``params`` of ``None``
    means the member was absent: accepted only when ``spec.params_required``
    is false. 0.3's ``agent/getAuthenticatedExtendedCard`` takes no params;
    an absent or object ``params`` is tolerated. Every problem raises
    :class:`InvalidParamsError` whose message names the JSON path
    (``params.message.parts[0]: expected ...``); for 1.0 its ``data`` also
    carries a ``google.rpc.BadRequest`` field violation. ``strict`` rejects
    unknown members; ``parsed=True``: ``params`` came from ``codec.loads``
    (see :func:`~a2a_models.codec.from_wire`).
    """
    v = normalize_version(version)
    _require_name(spec, v)
    if params is None:
        if spec.params_required:
            raise _invalid_params("$", f"required for method {spec.name_for(v)}", v)
        params = {}
    if not isinstance(params, dict):
        kind = "an array" if isinstance(params, list) else type(params).__name__
        raise _invalid_params("$", f"expected an object (by-name parameters), got {kind}", v)
    if v == V0_3 and spec.params_type is m.GetExtendedAgentCardRequest:
        return m.GetExtendedAgentCardRequest()
    try:
        return codec.from_wire(spec.params_type, params, _dialect(v), strict=strict, parsed=parsed)
    except DecodeError as exc:
        raise _invalid_params(exc.path, exc.expected, v) from None


def _check_result(spec: MethodSpec, result: object) -> None:
    expected = spec.result_type
    if expected is None:
        ok = result is None
        label = "None"
    else:
        allowed: tuple[type[Any], ...] = (
            (expected,) if isinstance(expected, type) else typing.get_args(expected)
        )
        ok = isinstance(result, allowed)
        label = " | ".join(t.__name__ for t in allowed)
    if not ok:
        raise TypeError(
            f"{spec.handler} must return {label} for {spec.name}, got {type(result).__name__}"
        )


def encode_result(
    spec: MethodSpec, result: object, version: str, *, lossy: bool | None = None
) -> Any:
    """The JSON-RPC ``result`` value (or, for streams, one item's) for ``version``.

    1.0: SendMessage → ``{"task"|"message": ...}``; stream items →
    StreamResponse wrappers; delete → ``{}``. 0.3: bare ``kind``-tagged
    objects; the push-config list is a bare array; delete → ``None``.
    ``lossy`` defaults to true for 0.3 (see the module docstring). Raises
    :class:`TypeError` if ``result`` is not of ``spec.result_type`` and
    :class:`~a2a_models.errors.EncodeError` if it cannot be expressed.
    """
    v = normalize_version(version)
    _require_name(spec, v)
    _check_result(spec, result)
    if spec.result_type is None:
        return {} if v == V1_0 else None
    dialect, is_lossy = _dialect(v), _lossy(v, lossy)
    return codec.to_wire(result, dialect, as_type=spec.result_type, lossy=is_lossy)


def decode_result(
    spec: MethodSpec, result: object, version: str, *, strict: bool = False, parsed: bool = False
) -> Any:
    """Decode a ``result`` received from a peer (client side): the inverse of
    :func:`encode_result`. Stream items decode to one ``StreamResponse``
    member; delete gives ``None`` (``{}`` and ``null`` are both accepted);
    a 0.3 push-config array becomes a ``ListTaskPushNotificationConfigsResponse``.
    Invalid input raises :class:`InvalidAgentResponseError` naming the path;
    ``parsed=True``: ``result`` came from ``codec.loads``.
    """
    v = normalize_version(version)
    _require_name(spec, v)
    if spec.result_type is None:
        if result is None or result == {}:
            return None
        raise InvalidAgentResponseError(
            f"Invalid agent response: result: expected {{}} or null for {spec.name_for(v)}"
        )
    dialect = _dialect(v)
    try:
        return codec.from_wire(spec.result_type, result, dialect, strict=strict, parsed=parsed)
    except DecodeError as exc:
        raise InvalidAgentResponseError(
            f"Invalid agent response: {_rooted(exc.path, 'result')}: {exc.expected}"
        ) from None


def build_request(
    spec: MethodSpec,
    params: object,
    version: str,
    id: RequestId,
    *,
    lossy: bool | None = None,
) -> Request:
    """The :class:`Request` envelope calling ``spec`` with ``params`` (a model).

    Uses the method name and params dialect of ``version``; 0.3's
    ``agent/getAuthenticatedExtendedCard`` is sent without ``params``.
    Raises :class:`MethodNotFoundError` if the method does not exist in
    ``version`` (ListTasks in 0.3) and :class:`TypeError` for a params
    object of the wrong type.
    """
    v = normalize_version(version)
    name = _require_name(spec, v)
    if not isinstance(params, spec.params_type):
        raise TypeError(
            f"{spec.name} takes {spec.params_type.__name__} params, got {type(params).__name__}"
        )
    if v == V0_3 and spec.params_type is m.GetExtendedAgentCardRequest:
        return Request(name, None, id)
    wire = codec.to_wire(params, _dialect(v), lossy=_lossy(v, lossy))
    return Request(name, wire, id)


def encode_request(
    spec: MethodSpec,
    params: object,
    version: str,
    id: RequestId,
    *,
    lossy: bool | None = None,
) -> bytes:
    """The JSON bytes of :func:`build_request` (client side)."""
    return encode_message(build_request(spec, params, version, id, lossy=lossy))
