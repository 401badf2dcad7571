"""What users implement (:class:`Agent`) and what they receive (:class:`RequestContext`).

An agent turns one request into a sequence of events::

    class Echo(Agent):
        async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
            yield context.status(TaskState.WORKING)
            yield context.artifact(context.message.text)
            yield context.complete()

The engine owns ids, storage, streaming and push notifications; the agent
only says what happened.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Iterable
from typing import ClassVar, TypeAlias

import attrs

from .._state import TaskState
from ..models import (
    Artifact,
    JSONObject,
    Message,
    Part,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
    new_id,
    utc_now,
)

__all__ = ["Agent", "AgentEvent", "CallContext", "RequestContext"]

#: What :meth:`Agent.execute` yields.
AgentEvent: TypeAlias = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
_PartsLike: TypeAlias = Iterable[Part] | Part | str


def _uris(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


@attrs.frozen(slots=True, kw_only=True)
class CallContext:
    """Who is calling and how: filled in by the transport for every request.

    ``owner`` is the authenticated identity; tasks are visible only to the
    owner (and tenant) that created them. ``None`` is the anonymous caller,
    so a server without authentication shares its tasks among all callers.
    """

    owner: str | None = None
    #: Tenant from the transport (e.g. the REST path prefix); a request's own
    #: ``tenant`` field must agree with it when both are set.
    tenant: str | None = None
    #: Extension URIs the client asked for (the ``A2A-Extensions`` service parameter).
    extensions: frozenset[str] = attrs.field(default=frozenset(), converter=_uris)
    #: Protocol version of the request (``"1.0"`` or ``"0.3"``).
    version: str = "1.0"
    #: The caller's W3C trace context (``traceparent``/``tracestate`` headers or
    #: gRPC metadata, lowercased names), for :mod:`a2a_models.observability`.
    trace: tuple[tuple[str, str], ...] = ()


class RequestContext:
    """Everything an agent needs about one request, plus builders for its events.

    The builders fill in the task id, context id and timestamps. A context
    is created by the engine; agents read it and call its helpers.
    """

    __slots__ = (
        "_last_artifact_id",
        "_task_metadata",
        "call",
        "cancel_requested",
        "configuration",
        "context_id",
        "message",
        "metadata",
        "task",
        "task_id",
    )

    def __init__(
        self,
        *,
        message: Message,
        task_id: str,
        context_id: str,
        task: Task | None = None,
        configuration: SendMessageConfiguration | None = None,
        metadata: JSONObject | None = None,
        call: CallContext | None = None,
    ) -> None:
        #: The client's message this execution answers.
        self.message = message
        #: The task the events belong to (assigned by the engine; for a new
        #: task it exists only once the agent yields its first task event).
        self.task_id = task_id
        self.context_id = context_id
        #: The task as it was when this turn started; ``None`` for a new task.
        self.task = task
        self.configuration = configuration
        #: The request's ``metadata``.
        self.metadata = metadata
        self.call = call if call is not None else CallContext()
        #: Set by the engine just before it calls :meth:`Agent.cancel`.
        self.cancel_requested = False
        self._last_artifact_id: str | None = None
        self._task_metadata: JSONObject | None = None

    def __repr__(self) -> str:
        return (
            f"RequestContext(task_id={self.task_id!r}, context_id={self.context_id!r}, "
            f"continuing={self.task is not None})"
        )

    @property
    def owner(self) -> str | None:
        """The caller's identity (``call.owner``)."""
        return self.call.owner

    @property
    def requested_extensions(self) -> frozenset[str]:
        """Extension URIs the client asked for."""
        return self.call.extensions

    @property
    def is_continuation(self) -> bool:
        """True when this message continues an existing (interrupted) task."""
        return self.task is not None

    def update_task_metadata(self, updates: JSONObject) -> None:
        """Merge ``updates`` into the task's ``metadata`` with the next task event yielded.

        Top-level keys replace the task's. The engine stores the merged
        metadata together with that event (in every store), so ``GetTask``,
        ``ListTasks`` and the ``SendMessage`` result show it. Updates pending
        when the turn ends without a task (a direct reply) are dropped.
        """
        if self._task_metadata is None:
            self._task_metadata = {}
        self._task_metadata.update(updates)

    def take_task_metadata(self) -> JSONObject | None:
        """The metadata updates pending since the last call (for the engine)."""
        pending, self._task_metadata = self._task_metadata, None
        return pending

    # -- builders ------------------------------------------------------------------------

    def agent_message(self, *parts: Part | str, metadata: JSONObject | None = None) -> Message:
        """An agent message belonging to this task."""
        return Message.agent(
            *parts, task_id=self.task_id, context_id=self.context_id, metadata=metadata
        )

    def reply(self, *parts: Part | str, metadata: JSONObject | None = None) -> Message:
        """A direct reply: yield it as the *only* event to answer without a task."""
        return Message.agent(*parts, context_id=self.context_id, metadata=metadata)

    def status(
        self,
        state: TaskState,
        text: str | None = None,
        *,
        message: Message | None = None,
        metadata: JSONObject | None = None,
    ) -> TaskStatusUpdateEvent:
        """A status update to ``state``, with ``text`` (or ``message``) as its message."""
        if text is not None and message is not None:
            raise ValueError("give text or message, not both")
        if text is not None:
            message = self.agent_message(text)
        return TaskStatusUpdateEvent(
            task_id=self.task_id,
            context_id=self.context_id,
            status=TaskStatus(state=state, message=message, timestamp=utc_now()),
            metadata=metadata,
        )

    def working(self, text: str | None = None) -> TaskStatusUpdateEvent:
        """Status ``WORKING``."""
        return self.status(TaskState.WORKING, text)

    def complete(self, text: str | None = None) -> TaskStatusUpdateEvent:
        """Status ``COMPLETED`` (terminal)."""
        return self.status(TaskState.COMPLETED, text)

    def fail(self, text: str) -> TaskStatusUpdateEvent:
        """Status ``FAILED`` (terminal), saying why."""
        return self.status(TaskState.FAILED, text)

    def reject(self, text: str) -> TaskStatusUpdateEvent:
        """Status ``REJECTED`` (terminal), saying why."""
        return self.status(TaskState.REJECTED, text)

    def ask(self, text: str) -> TaskStatusUpdateEvent:
        """Status ``INPUT_REQUIRED``: the question for the client."""
        return self.status(TaskState.INPUT_REQUIRED, text)

    def require_auth(self, text: str) -> TaskStatusUpdateEvent:
        """Status ``AUTH_REQUIRED``, saying what is needed (spec §7.6.1)."""
        return self.status(TaskState.AUTH_REQUIRED, text)

    def artifact(
        self,
        parts: _PartsLike,
        *,
        append: bool = False,
        last_chunk: bool = False,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        metadata: JSONObject | None = None,
    ) -> TaskArtifactUpdateEvent:
        """An artifact, or one chunk of it.

        Without ``artifact_id``, a new artifact gets a fresh id and
        ``append=True`` continues the artifact this context built last.
        """
        if artifact_id is None:
            if append:
                if self._last_artifact_id is None:
                    raise ValueError("append=True needs an artifact_id or an earlier artifact")
                artifact_id = self._last_artifact_id
            else:
                artifact_id = new_id()
        self._last_artifact_id = artifact_id
        return TaskArtifactUpdateEvent(
            task_id=self.task_id,
            context_id=self.context_id,
            artifact=Artifact(
                parts=parts,
                artifact_id=artifact_id,
                name=name,
                description=description,
                metadata=metadata,
            ),
            append=append,
            last_chunk=last_chunk,
        )


class Agent(abc.ABC):
    """The agent behind a server: implement :meth:`execute` (and maybe :meth:`cancel`).

    One call of :meth:`execute` handles one turn. It yields either

    * a single :class:`~a2a_models.Message` (a direct reply, no task is
      created; anything it would yield afterwards is never asked for), or
    * task events: :class:`~a2a_models.TaskStatusUpdateEvent`,
      :class:`~a2a_models.TaskArtifactUpdateEvent`, agent
      :class:`~a2a_models.Message` s (kept in the history) or a whole
      :class:`~a2a_models.Task` snapshot. The first one creates the task.

    The turn ends at a terminal state (completed, failed, canceled,
    rejected) or an interrupted one (input-required, auth-required): the
    engine then stops iterating. The client's answer to an interrupted task
    starts a new turn, with ``context.task`` set. Ending the turn without
    either fails the task, as does raising an exception (the client sees a
    generic status message; the exception is logged).
    """

    #: Whether a turn may safely run again from its start after the process
    #: running it died (no side effects that must not happen twice). With a
    #: store that keeps leases, such a turn is re-run by the worker that takes
    #: the task over; otherwise the task is failed (see ``LeasingExecutor``).
    restartable: ClassVar[bool] = False

    @abc.abstractmethod
    def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        """Handle ``context.message``; write it as ``async def`` with ``yield``."""

    async def cancel(self, context: RequestContext) -> None:  # noqa: B027
        """Stop the work of ``context.task_id``; the engine then marks the task canceled.

        Raise :class:`~a2a_models.errors.TaskNotCancelableError` to refuse.
        Events the agent yields from now on are discarded. The default does
        nothing (the engine still stops iterating :meth:`execute`).
        """
