"""Applying events to tasks: pure functions, no I/O, no clock.

Everything that decides how a task changes when an agent (or the engine)
produces an event lives here. Which state may follow which comes from
:data:`a2a_models.TRANSITIONS`; this module adds the rules for artifacts,
history and snapshots. Violations raise
:class:`~a2a_models.errors.InvalidAgentResponseError`: a well-behaved
agent never triggers one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias

import attrs

from .._state import TaskState
from ..errors import InvalidAgentResponseError, quote_input
from ..models import (
    Artifact,
    JSONObject,
    Message,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    state_of,
)

__all__ = [
    "Event",
    "append_history",
    "apply_event",
    "closes_stream",
    "extend_history",
    "join_artifact_updates",
    "merge_metadata",
    "merge_text_parts",
    "replace_task",
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
        raise _invalid(task, f"{what} is for task {quote_input(task_id)}")
    if context_id is not None and task.context_id is not None and context_id != task.context_id:
        raise _invalid(
            task,
            f"{what} has contextId {quote_input(context_id)}, the task has {task.context_id!r}",
        )


def _check_transition(task: Task, new: TaskState) -> None:
    old = task.status.state
    if not old.can_transition_to(new):
        raise _invalid(task, f"illegal transition {old.name} -> {new.name}")


#: Histories at least this long keep their message ids in :data:`_HISTORY_IDS`.
_TRACKED_HISTORY = 32
#: How many histories are tracked at once (the most recently extended ones).
_MAX_TRACKED = 4096
#: How many message ids all tracked histories hold at most, together (a set of
#: ids costs about 100 bytes per message besides the messages themselves).
_MAX_TRACKED_IDS = 400_000
#: ``id(history) -> (history, its message ids)``, for the latest history of
#: each task that is being extended: appending a message then costs O(1)
#: instead of a pass over the whole history. The entry holds the tuple
#: itself, so the id cannot be reused while the entry exists, and an entry
#: serves exactly that tuple object (a store that hands out copies simply
#: misses, which costs the pass; a store that extends a history it handed
#: out uses :func:`extend_history`, which carries the ids along).
_HISTORY_IDS: dict[int, tuple[tuple[Message, ...], set[str]]] = {}
#: The number of ids in :data:`_HISTORY_IDS` (kept up to date approximately
#: when threads race: it only decides when to drop entries).
_tracked_ids = 0


def _ids_of(history: tuple[Message, ...]) -> set[str]:
    """The message ids of ``history``, in a set the caller may now change."""
    entry = _untrack(history)
    if entry is not None:
        return entry
    return {m.message_id for m in history}


def _untrack(history: tuple[Message, ...]) -> set[str] | None:
    """The tracked ids of ``history`` (now no longer tracked), if it is tracked."""
    global _tracked_ids
    entry = _HISTORY_IDS.pop(id(history), None)
    if entry is None:
        return None
    _tracked_ids -= len(entry[1])
    return entry[1] if entry[0] is history else None


def _track(history: tuple[Message, ...], ids: set[str]) -> None:
    global _tracked_ids
    if len(history) < _TRACKED_HISTORY or len(ids) > _MAX_TRACKED_IDS:
        return
    while _HISTORY_IDS and (
        len(_HISTORY_IDS) >= _MAX_TRACKED or _tracked_ids + len(ids) > _MAX_TRACKED_IDS
    ):
        # Drop the least recently extended (another thread may be at it too).
        try:
            _tracked_ids -= len(_HISTORY_IDS.pop(next(iter(_HISTORY_IDS)))[1])
        except (KeyError, RuntimeError, StopIteration):
            break
    _HISTORY_IDS[id(history)] = (history, ids)
    _tracked_ids += len(ids)


def extend_history(
    history: tuple[Message, ...], messages: Sequence[Message]
) -> tuple[Message, ...]:
    """``(*history, *messages)``, for a store extending a history it handed out.

    ``messages`` are not in ``history`` (a store's history rows have distinct
    ids). If the engine keeps the message ids of ``history`` (it does for the
    histories it extends), it keeps them for the result too, so the engine's
    next append to the result does not go over the whole history again.
    """
    if not messages:
        return history
    out = history + tuple(messages)
    ids = _untrack(history)
    if ids is not None:
        ids.update(m.message_id for m in messages)
        _track(out, ids)
    return out


def append_history(
    history: tuple[Message, ...], messages: Iterable[Message]
) -> tuple[Message, ...]:
    """``history`` and then ``messages``, but a message whose id it has already (a store
    does not add it twice)."""
    seen = _ids_of(history)
    added = []
    for message in messages:
        if message.message_id not in seen:
            seen.add(message.message_id)
            added.append(message)
    # (A tuple's + copies its items once, ``(*history, *added)`` twice.)
    out = history + tuple(added) if added else history
    _track(out, seen)
    return out


def _can_build_tasks() -> bool:
    # Task is a frozen, slotted attrs class of exactly these fields, with no
    # hooks: a copy with some of them replaced can be put together directly.
    names = tuple(a.name for a in attrs.fields(Task))
    return (
        names == ("id", "status", "context_id", "artifacts", "history", "metadata")
        and set(getattr(Task, "__slots__", ())) <= {*names, "__weakref__"}
        and not hasattr(Task, "__attrs_post_init__")
        and not hasattr(Task, "__attrs_pre_init__")
    )


_BUILD_TASKS = _can_build_tasks()
_set = object.__setattr__


def replace_task(
    task: Task,
    *,
    status: TaskStatus | None = None,
    artifacts: tuple[Artifact, ...] | None = None,
    history: tuple[Message, ...] | None = None,
    metadata: JSONObject | None = None,
) -> Task:
    """``attrs.evolve(task, ...)`` without validating the unchanged fields again.

    ``attrs.evolve`` runs every validator, so each update would check each
    message of the history (O(n) per event, O(n^2) per task). Here only the
    new values are checked, and the history and artifacts only for being
    tuples: their items must be models validated when they were made (the
    task's and an event's, an artifact merged by ``attrs.evolve``, what a
    store decoded), which a tuple of them built afresh need not repeat.
    """
    if not _BUILD_TASKS:  # pragma: no cover (a changed Task model)
        return attrs.evolve(
            task,
            status=task.status if status is None else status,
            artifacts=task.artifacts if artifacts is None else artifacts,
            history=task.history if history is None else history,
            metadata=task.metadata if metadata is None else metadata,
        )
    fields = attrs.fields(Task)
    if status is None:
        status = task.status
    else:
        _check(fields.status, task, status)
    if artifacts is None:
        artifacts = task.artifacts
    elif type(artifacts) is not tuple:  # pragma: no cover (built here as a tuple)
        _check(fields.artifacts, task, artifacts)
    if history is None:
        history = task.history
    elif type(history) is not tuple:  # pragma: no cover (built here as a tuple)
        _check(fields.history, task, history)
    new = object.__new__(Task)
    _set(new, "id", task.id)
    _set(new, "status", status)
    _set(new, "context_id", task.context_id)
    _set(new, "artifacts", artifacts)
    _set(new, "history", history)
    if metadata is None:
        metadata = task.metadata
    else:
        _check(fields.metadata, task, metadata)
    _set(new, "metadata", metadata)
    return new


def _check(field: attrs.Attribute[Any], task: Task, value: object) -> None:
    if field.validator is not None:
        field.validator(task, field, value)


def _own(task: Task, message: Message) -> Message:
    # Messages stored in a task carry its ids.
    if message.task_id == task.id and message.context_id == task.context_id:
        return message
    return attrs.evolve(
        message,
        task_id=task.id,
        context_id=message.context_id if message.context_id is not None else task.context_id,
    )


def merge_metadata(task: Task, updates: JSONObject | None) -> Task:
    """``task`` with ``updates`` merged into its ``metadata`` (top-level keys replace)."""
    if not updates:
        return task
    return replace_task(task, metadata={**(task.metadata or {}), **updates})


def apply_event(task: Task, event: Event) -> Task:
    """The task after ``event``; raises ``InvalidAgentResponseError`` if not allowed.

    * :class:`TaskStatusUpdateEvent`: the new status, if the transition table
      allows it; its message (if any) is appended to the history.
    * :class:`TaskArtifactUpdateEvent`: ``append=False`` adds the artifact or
      replaces the one with the same id; ``append=True`` adds its parts to the
      existing artifact (which must exist); a given name, description or
      metadata updates the artifact's. When such an append is the artifact's
      ``last_chunk``, adjacent text parts are joined (:func:`merge_text_parts`).
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
            history = append_history(history, [_own(task, message)])
        return replace_task(task, status=event.status, history=history)
    if isinstance(event, TaskArtifactUpdateEvent):
        _check_ids(task, event.task_id, event.context_id, "artifact update")
        return replace_task(task, artifacts=_merge_artifact(task, event))
    if isinstance(event, Message):
        _check_ids(task, event.task_id, event.context_id, "message")
        return replace_task(task, history=append_history(task.history, [_own(task, event)]))
    if isinstance(event, Task):
        if event.id != task.id:
            raise _invalid(task, f"a snapshot of task {event.id!r} cannot replace it")
        _check_ids(task, None, event.context_id, "task snapshot")
        _check_transition(task, event.status.state)
        if task.context_id is not None and event.context_id != task.context_id:
            event = attrs.evolve(event, context_id=task.context_id)
        return replace_task(
            event, history=append_history(task.history, (_own(task, m) for m in event.history))
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
    merged = _appended(task.artifacts[index], event)
    return (*task.artifacts[:index], merged, *task.artifacts[index + 1 :])


def _appended(old: Artifact, event: TaskArtifactUpdateEvent) -> Artifact:
    """``old`` with the chunk ``event`` appends to it (an append to ``old``'s id)."""
    new = event.artifact
    head = attrs.evolve(
        old,
        parts=new.parts,
        name=new.name if new.name is not None else old.name,
        description=new.description if new.description is not None else old.description,
        metadata={**(old.metadata or {}), **new.metadata} if new.metadata else old.metadata,
        extensions=(*old.extensions, *(e for e in new.extensions if e not in old.extensions)),
    )
    if event.last_chunk:
        return attrs.evolve(head, parts=merge_text_parts((*old.parts, *new.parts)))
    return head.after_parts_of(old)  # checks only the chunk's parts


def join_artifact_updates(
    first: TaskArtifactUpdateEvent, then: TaskArtifactUpdateEvent
) -> TaskArtifactUpdateEvent | None:
    """One update saying what ``first`` and then ``then`` say, when ``then`` appends a
    chunk to ``first``'s artifact (``None`` otherwise): applied to a task, it leaves what
    the two leave. For a push notification's queue, where chunks not sent yet go as one."""
    if (
        not then.append
        or first.last_chunk
        or then.artifact.artifact_id != first.artifact.artifact_id
        or then.task_id != first.task_id
    ):
        return None
    metadata = {**first.metadata, **then.metadata} if first.metadata and then.metadata else None
    return attrs.evolve(
        first,
        artifact=_appended(first.artifact, then),
        last_chunk=then.last_chunk,
        metadata=metadata or first.metadata or then.metadata,
    )


def merge_text_parts(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """``parts`` with each run of adjacent text parts of the same kind joined into one.

    Applied when a streamed artifact's last chunk arrives (``append`` and
    ``last_chunk``): a task stores ``"The answer is 42."`` as one part, not
    one part per streamed piece. Parts merge only when their media type,
    filename and metadata are equal; streams still carry every chunk as sent.
    """
    if len(parts) < 2:
        return parts
    out: list[Part] = []
    head: TextPart | None = None  # the first part of the current run of text parts
    run: list[str] = []
    for part in parts:
        if head is not None:
            if (
                type(part) is TextPart
                and part.media_type == head.media_type
                and part.filename == head.filename
                and part.metadata == head.metadata
            ):
                run.append(part.text)
                continue
            if len(run) > 1:
                out[-1] = attrs.evolve(head, text="".join(run))
            head, run = None, []
        out.append(part)
        if type(part) is TextPart:
            head, run = part, [part.text]
    if head is not None and len(run) > 1:
        out[-1] = attrs.evolve(head, text="".join(run))
    return parts if len(out) == len(parts) else tuple(out)


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
        return replace_task(task, history=())
    return replace_task(task, history=task.history[-history_length:])


def without_artifacts(task: Task) -> Task:
    """``task`` without its artifacts (ListTasks without ``includeArtifacts``, §3.1.4)."""
    return replace_task(task, artifacts=()) if task.artifacts else task
