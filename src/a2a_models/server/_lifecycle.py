"""Applying events to tasks: pure functions, no I/O, no clock.

Everything that decides how a task changes when an agent (or the engine)
produces an event lives here. Which state may follow which comes from
:data:`a2a_models.TRANSITIONS`; this module adds the rules for artifacts,
history and snapshots. Violations raise
:class:`~a2a_models.errors.InvalidAgentResponseError`: a well-behaved
agent never triggers one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

import attrs

from .._state import TaskState
from ..errors import InvalidAgentResponseError
from ..models import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)

__all__ = [
    "Event",
    "apply_event",
    "closes_stream",
    "track_chunks",
    "trim_history",
    "without_artifacts",
]

#: Anything that can change a task: the items of a stream.
Event: TypeAlias = StreamResponse


def _invalid(task: Task, problem: str) -> InvalidAgentResponseError:
    return InvalidAgentResponseError(
        f"task {task.id}: {problem}", {"taskId": task.id, "state": task.status.state.value}
    )


def _check_ids(task: Task, task_id: str | None, context_id: str | None, what: str) -> None:
    if task_id is not None and task_id != task.id:
        raise _invalid(task, f"{what} is for task {task_id!r}")
    if context_id is not None and task.context_id is not None and context_id != task.context_id:
        raise _invalid(
            task, f"{what} has contextId {context_id!r}, the task has {task.context_id!r}"
        )


def _check_transition(task: Task, new: TaskState) -> None:
    old = task.status.state
    if not old.can_transition_to(new):
        raise _invalid(task, f"illegal transition {old.name} -> {new.name}")


def _append_history(
    history: tuple[Message, ...], messages: Iterable[Message]
) -> tuple[Message, ...]:
    # A message already in the history (same id) is not added twice.
    seen = {m.message_id for m in history}
    added = []
    for message in messages:
        if message.message_id not in seen:
            seen.add(message.message_id)
            added.append(message)
    return (*history, *added) if added else history


def _own(task: Task, message: Message) -> Message:
    # Messages stored in a task carry its ids.
    if message.task_id == task.id and message.context_id == task.context_id:
        return message
    return attrs.evolve(
        message,
        task_id=task.id,
        context_id=message.context_id if message.context_id is not None else task.context_id,
    )


def apply_event(task: Task, event: Event) -> Task:
    """The task after ``event``; raises ``InvalidAgentResponseError`` if not allowed.

    * :class:`TaskStatusUpdateEvent`: the new status, if the transition table
      allows it; its message (if any) is appended to the history.
    * :class:`TaskArtifactUpdateEvent`: ``append=False`` adds the artifact or
      replaces the one with the same id; ``append=True`` adds its parts to the
      existing artifact (which must exist); a given name, description or
      metadata updates the artifact's.
    * :class:`Message`: appended to the history.
    * :class:`Task`: a new snapshot of the same task (status, artifacts,
      metadata). History never shrinks: messages of the snapshot that the
      task lacks are appended.

    Nothing is accepted once the task is in a terminal state.
    """
    if task.status.state.is_terminal:
        raise _invalid(
            task,
            f"the task is already {task.status.state.name}; "
            f"no {type(event).__name__} is accepted after a terminal state",
        )
    if isinstance(event, TaskStatusUpdateEvent):
        _check_ids(task, event.task_id, event.context_id, "status update")
        _check_transition(task, event.status.state)
        history = task.history
        if event.status.message is not None:
            message = event.status.message
            _check_ids(task, message.task_id, message.context_id, "status message")
            history = _append_history(history, [_own(task, message)])
        return attrs.evolve(task, status=event.status, history=history)
    if isinstance(event, TaskArtifactUpdateEvent):
        _check_ids(task, event.task_id, event.context_id, "artifact update")
        return attrs.evolve(task, artifacts=_merge_artifact(task, event))
    if isinstance(event, Message):
        _check_ids(task, event.task_id, event.context_id, "message")
        return attrs.evolve(task, history=_append_history(task.history, [_own(task, event)]))
    if isinstance(event, Task):
        if event.id != task.id:
            raise _invalid(task, f"a snapshot of task {event.id!r} cannot replace it")
        _check_ids(task, None, event.context_id, "task snapshot")
        _check_transition(task, event.status.state)
        return attrs.evolve(
            event,
            context_id=task.context_id if task.context_id is not None else event.context_id,
            history=_append_history(task.history, (_own(task, m) for m in event.history)),
        )
    raise _invalid(task, f"{type(event).__name__} is not a task event")


def _merge_artifact(task: Task, event: TaskArtifactUpdateEvent) -> tuple[Artifact, ...]:
    new = event.artifact
    index = next(
        (i for i, a in enumerate(task.artifacts) if a.artifact_id == new.artifact_id), None
    )
    if not event.append:
        if index is None:
            return (*task.artifacts, new)
        return (*task.artifacts[:index], new, *task.artifacts[index + 1 :])
    if index is None:
        raise _invalid(
            task, f"append to artifact {new.artifact_id!r}, which the task does not have"
        )
    old = task.artifacts[index]
    merged = attrs.evolve(
        old,
        parts=(*old.parts, *new.parts),
        name=new.name if new.name is not None else old.name,
        description=new.description if new.description is not None else old.description,
        metadata={**(old.metadata or {}), **new.metadata} if new.metadata else old.metadata,
        extensions=(*old.extensions, *(e for e in new.extensions if e not in old.extensions)),
    )
    return (*task.artifacts[:index], merged, *task.artifacts[index + 1 :])


def track_chunks(closed: frozenset[str], event: Event) -> frozenset[str]:
    """The artifact ids whose last chunk was sent, after ``event``.

    Appending to an artifact after its ``last_chunk`` raises
    ``InvalidAgentResponseError``; sending it whole again (``append=False``)
    starts it over.
    """
    if not isinstance(event, TaskArtifactUpdateEvent):
        return closed
    artifact_id = event.artifact.artifact_id
    if event.append and artifact_id in closed:
        raise InvalidAgentResponseError(
            f"task {event.task_id}: append to artifact {artifact_id!r} after its last chunk",
            {"taskId": event.task_id, "artifactId": artifact_id},
        )
    if event.last_chunk:
        return closed | {artifact_id}
    return closed - {artifact_id} if artifact_id in closed else closed


def state_of(event: Event) -> TaskState | None:
    """The task state an event sets, if it sets one."""
    if isinstance(event, TaskStatusUpdateEvent):
        return event.status.state
    if isinstance(event, Task):
        return event.status.state
    return None


def closes_stream(event: Event, *, on_interrupted: bool) -> bool:
    """Whether a task stream ends after delivering ``event``.

    It does at a terminal state (spec §3.1.2, §3.1.6) and, when
    ``on_interrupted``, at input-required/auth-required (§11.7; a
    ``SendStreamingMessage`` turn is over once the agent needs the client).
    """
    state = state_of(event)
    if state is None:
        return False
    return state.is_terminal or (on_interrupted and state.is_interrupted)


def trim_history(task: Task, history_length: int | None) -> Task:
    """``task`` with at most ``history_length`` most recent messages (spec §3.2.4).

    ``None`` keeps all of them and ``0`` none.
    """
    if history_length is None or len(task.history) <= history_length:
        return task
    if history_length == 0:
        return attrs.evolve(task, history=())
    return attrs.evolve(task, history=task.history[-history_length:])


def without_artifacts(task: Task) -> Task:
    """``task`` without its artifacts (ListTasks without ``includeArtifacts``, §3.1.4)."""
    return attrs.evolve(task, artifacts=()) if task.artifacts else task
