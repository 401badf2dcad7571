"""The state of one run: one execution of the agent for one turn of one task.

The engine's operations and a :class:`~a2a_models.server.TaskExecutor`
share it: the operations wait on its events (``started``, ``settled``,
``done``) and coordinate cancels through it; the executor drives the agent
and sets them.
"""

from __future__ import annotations

import asyncio

from .._outages import DatabaseTimeout, database_failure
from ..errors import A2AError, InternalError
from ..models import Message, Task
from ._agent import RequestContext
from ._lifecycle import replace_task
from ._store import StoredTask, TaskStoreUnavailableError

__all__ = ["AgentRun", "RunAborted", "RunFinished", "unrecorded"]


class RunFinished(A2AError):
    """The task reached a terminal state before our write (e.g. it was canceled)."""

    def __init__(self, task: Task) -> None:
        self.task = task
        super().__init__(task.status.state.name)


class RunAborted(A2AError):
    """The run cannot go on (its task could not be created); ``run.error`` says why."""


def unrecorded(exc: BaseException) -> InternalError:
    """What the caller of a run is told when its task could not be written (``exc``:
    the store's error; its text, which may name hosts, stays in the server's log).
    A database that is down or did not answer is :class:`TaskStoreUnavailableError`
    (HTTP+JSON 503, gRPC ``UNAVAILABLE``): retrying later may work."""
    if isinstance(exc, DatabaseTimeout):
        return TaskStoreUnavailableError(f"the server could not record the task: {exc}")
    what = f"the server could not record the task ({type(exc).__name__})"
    return TaskStoreUnavailableError(what) if database_failure(exc) else InternalError(what)


class AgentRun:
    """One execution of the agent for one turn of one task.

    ``runner`` is whatever the executor uses to run it (in process: the
    asyncio task); the operations never touch it.
    """

    def __init__(
        self,
        context: RequestContext,
        owner: str | None,
        tenant: str | None,
        *,
        created: bool,
        first: tuple[int, Task] | None = None,
    ) -> None:
        self.context = context
        self.owner = owner
        self.tenant = tenant
        #: The task exists in the store.
        self.created = created
        #: For a run that starts its task with a client's message: the message's
        #: ``started_key``, which the task is created with (``None``: none).
        self.started_by: bytes | None = None
        #: For a continued task: the snapshot its streams start with.
        self.first = first
        self.direct: Message | None = None
        self.error: A2AError | None = None
        self.closed_artifacts: frozenset[str] = frozenset()
        #: The task as this run last wrote (or first read) it, without its history:
        #: the writer applies the next event to it instead of reading the store
        #: (see :meth:`~a2a_models.server.TaskWriter.commit`).
        self.written: StoredTask | None = None
        #: The epoch of the task's lease this run holds (its fencing token: every
        #: write names it, see :class:`~a2a_models.server.LeaseLostError`); ``None``:
        #: no lease, or a store that does not fence, and the writes are not fenced.
        self.lease: int | None = None
        #: The write that ends the run's turn (a terminal or interrupted state) gives
        #: its lease up in the same transaction (set by the executor that took it).
        self.release_at_end = False
        #: That write is under way or done: the lease is the run's no longer.
        self.released = False
        #: For a run that created its task: the task's history before the messages
        #: of ``written`` (``None``: not known), so that the run's answer is built
        #: without reading the task back (see :meth:`whole`).
        self.history: tuple[Message, ...] | None = None
        #: The run's own write ended its turn (its ``written`` is the task as it ended).
        self.ended = False
        #: The task exists (or the agent replied directly, or creation failed).
        self.started = asyncio.Event()
        #: A terminal or interrupted state, a direct reply, or the run ended.
        self.settled = asyncio.Event()
        self.done = asyncio.Event()
        #: A cancel is between ``Agent.cancel`` and its outcome; events wait.
        self.canceling = False
        self.canceled = False
        self.cancel_decided = asyncio.Event()
        self.cancel_decided.set()
        #: The runner waits in :meth:`proceed` (not inside the agent).
        self.at_gate = False
        self.runner: asyncio.Task[None] | None = None
        if created:
            self.started.set()

    @property
    def task_id(self) -> str:
        return self.context.task_id

    @property
    def context_id(self) -> str:
        return self.context.context_id

    def whole(self) -> Task | None:
        """The task as the run's own write ended the turn, history and all; ``None`` when
        the run does not know it all (it did not create the task, or it read it again)."""
        if not self.ended or self.history is None or self.written is None:
            return None
        return replace_task(self.written.task, history=self.history)

    async def proceed(self) -> bool:
        """Wait out a cancel in progress; False if the task got canceled."""
        if self.canceling:
            self.at_gate = True
            try:
                await self.cancel_decided.wait()
            finally:
                self.at_gate = False
        return not self.canceled
