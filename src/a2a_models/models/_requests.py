"""Request and response parameter types of every A2A operation (spec §3.1, §5).

Names follow 1.0. The 0.3 params map onto them: ``MessageSendParams`` →
:class:`SendMessageRequest`, ``TaskQueryParams`` → :class:`GetTaskRequest`,
``TaskIdParams`` → :class:`CancelTaskRequest` / :class:`SubscribeToTaskRequest`,
and so on (see ``a2a_models.protocol.METHODS``).
"""

from __future__ import annotations

from datetime import datetime

import attrs

from .._state import TaskState
from ._base import ALWAYS_EMIT, JSONObject, to_tuple
from ._push import TaskPushNotificationConfig
from ._task import Message, Task
from .rules import (
    any_str,
    boolean,
    instance_of,
    int32,
    non_negative_optional_int32,
    optional_bool,
    optional_datetime,
    optional_instance_of,
    optional_json_object,
    optional_str,
    required_str,
    str_tuple,
    tuple_of,
)

__all__ = [
    "CancelTaskRequest",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SubscribeToTaskRequest",
]


def _tenant() -> str | None:
    return attrs.field(default=None, validator=optional_str)  # type: ignore[no-any-return]


def _metadata() -> JSONObject | None:
    return attrs.field(  # type: ignore[no-any-return]
        default=None, validator=optional_json_object, hash=False
    )


@attrs.frozen(slots=True, kw_only=True)
class SendMessageConfiguration:
    """Options of a send: output modes, push config, history length, blocking.

    1.0 blocks by default (``return_immediately=False``); 0.3's ``blocking``
    flag is its negation (absent: blocking in 0.3 JSON-RPC, non-blocking in a
    0.3 HTTP+JSON configuration, whose proto3 ``bool`` has no presence).
    """

    accepted_output_modes: tuple[str, ...] = attrs.field(
        default=(), converter=to_tuple, validator=str_tuple
    )
    task_push_notification_config: TaskPushNotificationConfig | None = attrs.field(
        default=None,
        validator=optional_instance_of(TaskPushNotificationConfig, "TaskPushNotificationConfig"),
    )
    history_length: int | None = attrs.field(default=None, validator=non_negative_optional_int32)
    return_immediately: bool = attrs.field(default=False, validator=boolean)


@attrs.frozen(slots=True, kw_only=True)
class SendMessageRequest:
    """Params of ``SendMessage`` / ``SendStreamingMessage`` (0.3: ``MessageSendParams``)."""

    message: Message = attrs.field(validator=instance_of(Message, "a Message"))
    configuration: SendMessageConfiguration | None = attrs.field(
        default=None,
        validator=optional_instance_of(SendMessageConfiguration, "SendMessageConfiguration"),
    )
    metadata: JSONObject | None = _metadata()
    tenant: str | None = _tenant()


@attrs.frozen(slots=True, kw_only=True)
class GetTaskRequest:
    """Params of ``GetTask`` (0.3: ``TaskQueryParams``; ``metadata`` is 0.3 only)."""

    id: str = attrs.field(validator=required_str)
    history_length: int | None = attrs.field(default=None, validator=non_negative_optional_int32)
    tenant: str | None = _tenant()
    metadata: JSONObject | None = _metadata()


@attrs.frozen(slots=True, kw_only=True)
class ListTasksRequest:
    """Params of ``ListTasks`` (1.0 only): filters and cursor pagination."""

    context_id: str | None = attrs.field(default=None, validator=optional_str)
    status: TaskState | None = attrs.field(
        default=None, validator=optional_instance_of(TaskState, "a TaskState")
    )
    page_size: int | None = attrs.field(default=None, validator=non_negative_optional_int32)
    page_token: str | None = attrs.field(default=None, validator=optional_str)
    history_length: int | None = attrs.field(default=None, validator=non_negative_optional_int32)
    status_timestamp_after: datetime | None = attrs.field(default=None, validator=optional_datetime)
    include_artifacts: bool | None = attrs.field(default=None, validator=optional_bool)
    tenant: str | None = _tenant()


@attrs.frozen(slots=True, kw_only=True)
class ListTasksResponse:
    """Result of ``ListTasks``. ``next_page_token`` is ``""`` on the last page."""

    tasks: tuple[Task, ...] = attrs.field(
        default=(), converter=to_tuple, validator=tuple_of(Task, "Task"), metadata=ALWAYS_EMIT
    )
    next_page_token: str = attrs.field(default="", validator=any_str, metadata=ALWAYS_EMIT)
    page_size: int = attrs.field(default=0, validator=int32, metadata=ALWAYS_EMIT)
    total_size: int = attrs.field(default=0, validator=int32, metadata=ALWAYS_EMIT)


@attrs.frozen(slots=True, kw_only=True)
class CancelTaskRequest:
    """Params of ``CancelTask`` (0.3: ``TaskIdParams``)."""

    id: str = attrs.field(validator=required_str)
    metadata: JSONObject | None = _metadata()
    tenant: str | None = _tenant()


@attrs.frozen(slots=True, kw_only=True)
class SubscribeToTaskRequest:
    """Params of ``SubscribeToTask`` (0.3: ``tasks/resubscribe`` with ``TaskIdParams``)."""

    id: str = attrs.field(validator=required_str)
    tenant: str | None = _tenant()
    metadata: JSONObject | None = _metadata()


@attrs.frozen(slots=True, kw_only=True)
class GetTaskPushNotificationConfigRequest:
    """Params of ``GetTaskPushNotificationConfig``.

    0.3 names them ``id`` (the task) and ``pushNotificationConfigId``, the
    latter optional; ``id`` is ``None`` here when a 0.3 client omitted it.
    """

    task_id: str = attrs.field(validator=required_str)
    id: str | None = attrs.field(default=None, validator=optional_str)
    tenant: str | None = _tenant()
    metadata: JSONObject | None = _metadata()


@attrs.frozen(slots=True, kw_only=True)
class DeleteTaskPushNotificationConfigRequest:
    """Params of ``DeleteTaskPushNotificationConfig``."""

    task_id: str = attrs.field(validator=required_str)
    id: str = attrs.field(validator=required_str)
    tenant: str | None = _tenant()
    metadata: JSONObject | None = _metadata()


@attrs.frozen(slots=True, kw_only=True)
class ListTaskPushNotificationConfigsRequest:
    """Params of ``ListTaskPushNotificationConfigs``."""

    task_id: str = attrs.field(validator=required_str)
    page_size: int | None = attrs.field(default=None, validator=non_negative_optional_int32)
    page_token: str | None = attrs.field(default=None, validator=optional_str)
    tenant: str | None = _tenant()
    metadata: JSONObject | None = _metadata()


@attrs.frozen(slots=True, kw_only=True)
class ListTaskPushNotificationConfigsResponse:
    """Result of ``ListTaskPushNotificationConfigs`` (0.3: a bare array)."""

    configs: tuple[TaskPushNotificationConfig, ...] = attrs.field(
        default=(),
        converter=to_tuple,
        validator=tuple_of(TaskPushNotificationConfig, "TaskPushNotificationConfig"),
    )
    next_page_token: str | None = attrs.field(default=None, validator=optional_str)


@attrs.frozen(slots=True, kw_only=True)
class GetExtendedAgentCardRequest:
    """Params of ``GetExtendedAgentCard``."""

    tenant: str | None = _tenant()
