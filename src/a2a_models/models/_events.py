"""Streaming events and the response unions (``StreamResponse``, ``SendMessageResponse``)."""

from __future__ import annotations

from typing import TypeAlias

import attrs

from .._state import TaskState
from ._base import JSONObject
from ._task import Artifact, Message, Task, TaskStatus
from .rules import boolean, instance_of, optional_json_object, required_str

__all__ = [
    "SendMessageResponse",
    "StreamResponse",
    "TaskArtifactUpdateEvent",
    "TaskStatusUpdateEvent",
    "state_of",
]


@attrs.frozen(slots=True, kw_only=True)
class TaskStatusUpdateEvent:
    """A task changed status (spec §4.2.1).

    ``final`` exists only in 0.3, where it marks the last event of a stream;
    1.0 signals the end by closing the stream, so 1.0 encoding omits it.
    """

    task_id: str = attrs.field(validator=required_str)
    context_id: str = attrs.field(validator=required_str)
    status: TaskStatus = attrs.field(validator=instance_of(TaskStatus, "a TaskStatus"))
    metadata: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, hash=False
    )
    final: bool = attrs.field(default=False, validator=boolean)


@attrs.frozen(slots=True, kw_only=True)
class TaskArtifactUpdateEvent:
    """An artifact (or a chunk of one) was produced (spec §4.2.2).

    ``append`` adds the parts to the artifact with the same id sent earlier;
    ``last_chunk`` marks the artifact's final chunk.
    """

    task_id: str = attrs.field(validator=required_str)
    context_id: str = attrs.field(validator=required_str)
    artifact: Artifact = attrs.field(validator=instance_of(Artifact, "an Artifact"))
    append: bool = attrs.field(default=False, validator=boolean)
    last_chunk: bool = attrs.field(default=False, validator=boolean)
    metadata: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, hash=False
    )


#: One item of a stream (and a push-notification body): 1.0 wraps it as
#: ``{"task"|"message"|"statusUpdate"|"artifactUpdate": ...}``, 0.3 tags it with ``kind``.
StreamResponse: TypeAlias = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
#: The result of ``SendMessage``: a task or a direct message.
SendMessageResponse: TypeAlias = Task | Message


def state_of(item: object) -> TaskState | None:
    """The task state a stream item sets (a ``Task`` or a status update), else ``None``.

    The one rule of what counts as a task's status: a stream ends at it, a push
    config is owed it, a client's resumed stream stops at it.
    """
    if isinstance(item, Task | TaskStatusUpdateEvent):
        return item.status.state
    return None
