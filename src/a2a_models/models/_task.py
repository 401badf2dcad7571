"""Messages, tasks, artifacts and task statuses."""

from __future__ import annotations

import copy
import enum
import weakref
from collections.abc import Iterable
from datetime import datetime

import attrs

from .._state import TaskState
from ._base import JSONObject, new_id, to_tuple, utc_now
from ._parts import Part
from .rules import (
    fail,
    instance_of,
    optional_datetime,
    optional_instance_of,
    optional_json_object,
    optional_str,
    required_str,
    str_tuple,
    tuple_of,
)

__all__ = ["Artifact", "Message", "Role", "Task", "TaskStatus"]


class Role(enum.Enum):
    """Who sent a message. Values are the 1.0 wire names."""

    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


def _parts(items: Iterable[Part] | str | Part) -> tuple[Part, ...]:
    # Convenience: Message.user("hi") and Artifact(parts=Part.text(..)) read naturally.
    if isinstance(items, str):
        return (Part.text(items),)
    if isinstance(items, Part):
        return (items,)
    parts = to_tuple(items)  # a non-sequence is left for the validator to name
    if type(parts) is tuple and any(type(p) is str for p in parts):
        return tuple(Part.text(p) if type(p) is str else p for p in parts)
    return parts


_parts_validator = tuple_of(Part, "Part", non_empty=True)


@attrs.frozen(slots=True, kw_only=True)
class Message:
    """One turn of communication between a client and an agent (spec §4.1.4)."""

    role: Role = attrs.field(validator=instance_of(Role, "a Role"))
    parts: tuple[Part, ...] = attrs.field(converter=_parts, validator=_parts_validator)
    message_id: str = attrs.field(factory=new_id, validator=required_str)
    context_id: str | None = attrs.field(default=None, validator=optional_str)
    task_id: str | None = attrs.field(default=None, validator=optional_str)
    metadata: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, hash=False
    )
    extensions: tuple[str, ...] = attrs.field(default=(), converter=to_tuple, validator=str_tuple)
    reference_task_ids: tuple[str, ...] = attrs.field(
        default=(), converter=to_tuple, validator=str_tuple
    )

    @classmethod
    def user(
        cls,
        *parts: Part | str,
        context_id: str | None = None,
        task_id: str | None = None,
        metadata: JSONObject | None = None,
    ) -> Message:
        """A user message; strings become text parts. The id is a fresh UUID4."""
        return cls(
            role=Role.USER,
            parts=[Part.text(p) if isinstance(p, str) else p for p in parts],
            context_id=context_id,
            task_id=task_id,
            metadata=metadata,
        )

    @classmethod
    def agent(
        cls,
        *parts: Part | str,
        context_id: str | None = None,
        task_id: str | None = None,
        metadata: JSONObject | None = None,
    ) -> Message:
        """An agent message; strings become text parts. The id is a fresh UUID4."""
        return cls(
            role=Role.AGENT,
            parts=[Part.text(p) if isinstance(p, str) else p for p in parts],
            context_id=context_id,
            task_id=task_id,
            metadata=metadata,
        )

    @property
    def text(self) -> str:
        """The concatenated text of all text parts (handy in agents and tests)."""
        from ._parts import TextPart

        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


@attrs.frozen(slots=True, kw_only=True)
class Artifact:
    """An output produced by a task (spec §4.1.6)."""

    parts: tuple[Part, ...] = attrs.field(converter=_parts, validator=_parts_validator)
    artifact_id: str = attrs.field(factory=new_id, validator=required_str)
    name: str | None = attrs.field(default=None, validator=optional_str)
    description: str | None = attrs.field(default=None, validator=optional_str)
    metadata: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, hash=False
    )
    extensions: tuple[str, ...] = attrs.field(default=(), converter=to_tuple, validator=str_tuple)

    def after_parts_of(self, earlier: Artifact) -> Artifact:
        """This artifact with the parts of ``earlier`` before its own.

        The parts are not checked again (each artifact's were when it was
        made): appending a chunk to an artifact streamed in many chunks then
        costs the chunk, not every part the artifact holds. The result knows
        what it was made from (see :meth:`parts_added_to`).
        """
        joined = copy.copy(self)
        object.__setattr__(joined, "parts", earlier.parts + self.parts)
        key = id(joined)

        def forget(ref: weakref.ref[Artifact]) -> None:
            entry = _JOINED.get(key)
            if entry is not None and entry[0] is ref:
                del _JOINED[key]

        _JOINED[key] = (weakref.ref(joined, forget), weakref.ref(earlier))
        return joined

    def parts_added_to(self, earlier: Artifact) -> tuple[Part, ...] | None:
        """The parts this artifact adds after those of ``earlier`` if it was made from
        ``earlier`` by :meth:`after_parts_of`; ``None`` if that is not known.

        Known without a pass over the parts: a store writing an artifact
        streamed in many chunks learns what one append added in constant time.
        """
        entry = _JOINED.get(id(self))
        if entry is None or entry[0]() is not self or entry[1]() is not earlier:
            return None
        return self.parts[len(earlier.parts) :]


#: ``id(artifact) -> (the artifact, the earlier one)`` as weak references, for each
#: artifact :meth:`Artifact.after_parts_of` made, while it lives (its entry goes with it).
_JOINED: dict[int, tuple[weakref.ref[Artifact], weakref.ref[Artifact]]] = {}


@attrs.frozen(slots=True, kw_only=True)
class TaskStatus:
    """A task's state, with an optional agent message and the time it was set."""

    state: TaskState = attrs.field(validator=instance_of(TaskState, "a TaskState"))
    message: Message | None = attrs.field(
        default=None, validator=optional_instance_of(Message, "a Message")
    )
    timestamp: datetime | None = attrs.field(default=None, validator=optional_datetime)

    @classmethod
    def now(cls, state: TaskState, message: Message | None = None) -> TaskStatus:
        """A status stamped with the current UTC time."""
        return cls(state=state, message=message, timestamp=utc_now())


@attrs.frozen(slots=True, kw_only=True)
class Task:
    """The stateful unit of work an agent performs (spec §4.1.1)."""

    id: str = attrs.field(validator=required_str)
    status: TaskStatus = attrs.field(validator=instance_of(TaskStatus, "a TaskStatus"))
    context_id: str | None = attrs.field(default=None, validator=optional_str)
    artifacts: tuple[Artifact, ...] = attrs.field(
        default=(), converter=to_tuple, validator=tuple_of(Artifact, "Artifact")
    )
    history: tuple[Message, ...] = attrs.field(
        default=(), converter=to_tuple, validator=tuple_of(Message, "Message")
    )
    metadata: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, hash=False
    )

    @classmethod
    def submitted(
        cls,
        message: Message | None = None,
        *,
        context_id: str | None = None,
        task_id: str | None = None,
        metadata: JSONObject | None = None,
    ) -> Task:
        """A new task in the submitted state, with fresh ids and a timestamp.

        ``message`` (the request that created the task) starts the history;
        its ``task_id``/``context_id`` are filled in to match the task.
        """
        tid = task_id or new_id()
        cid = context_id or (message.context_id if message else None) or new_id()
        history: tuple[Message, ...] = ()
        if message is not None:
            history = (attrs.evolve(message, task_id=tid, context_id=cid),)
        return cls(
            id=tid,
            context_id=cid,
            status=TaskStatus.now(TaskState.SUBMITTED),
            history=history,
            metadata=metadata,
        )

    @property
    def state(self) -> TaskState:
        """Shortcut for ``task.status.state``."""
        return self.status.state

    def with_status(self, status: TaskStatus | TaskState, message: Message | None = None) -> Task:
        """A copy in a new status (a bare state is stamped with the current time).

        Raises :class:`~a2a_models.errors.InvalidModelError` if the transition
        table forbids the move.
        """
        if isinstance(status, TaskState):
            status = TaskStatus.now(status, message)
        if not self.status.state.can_transition_to(status.state):
            fail(
                self,
                attrs.fields(Task).status,
                f"illegal transition {self.status.state.name} -> {status.state.name}",
            )
        return attrs.evolve(self, status=status)

    def add_artifact(self, artifact: Artifact) -> Task:
        """A copy with ``artifact`` added, replacing one with the same id."""
        kept = tuple(a for a in self.artifacts if a.artifact_id != artifact.artifact_id)
        return attrs.evolve(self, artifacts=(*kept, artifact))

    def add_message(self, message: Message) -> Task:
        """A copy with ``message`` appended to the history."""
        return attrs.evolve(self, history=(*self.history, message))

    def artifact(self, artifact_id: str) -> Artifact | None:
        """The artifact with ``artifact_id``, if any."""
        for a in self.artifacts:
            if a.artifact_id == artifact_id:
                return a
        return None
