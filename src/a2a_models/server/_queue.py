"""Agents run by separate worker processes: front ends enqueue turns, workers pull them.

The engine's operations do not care where the agent runs (see
:class:`~a2a_models.server.TaskExecutor`). Here the agent runs in another
process:

* a front end serves the A2A operations with a :class:`FrontEndHandler`.
  Its executor (:class:`QueueExecutor`) runs no agent code: a new turn
  creates the task (``submitted``) and a :class:`Turn` in one store
  transaction; a follow-up message is accepted and its turn queued the same
  way. Callers wait on the task's events, which arrive through the broker
  from whichever worker runs the turn.
* a :class:`Worker` pulls turns from a :class:`TurnQueue`, taking the task's
  lease in the same transaction, and runs the agent with a
  :class:`WorkerExecutor` (a :class:`~a2a_models.server.LeasingExecutor`):
  events go through the store and the broker as in one process, leases are
  renewed, tasks of a worker that died are taken over (failed, or re-run
  when the agent is ``restartable``), and a cancel made on any front end
  stops the agent.

The store writes the pending turn in the transaction of the task write that
makes it (see :func:`pending_turn`), so a task is never acknowledged without
its turn queued. :class:`~a2a_models.stores.PostgresTaskStore` does (with
``a2a_models.stores.PostgresTurnQueue``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

import attrs

from .. import codec
from .._outages import FailureStreak, log_failure
from .._state import TaskState
from ..errors import A2AError
from ..models import (
    AgentCard,
    Message,
    SendMessageRequest,
    Task,
    TaskStatus,
    TaskStatusUpdateEvent,
    utc_now,
)
from ._agent import Agent, AgentEvent, CallContext, RequestContext
from ._execution import RunTable, keep_trying, log_refused_creation
from ._handler import Repeat, RequestHandler
from ._ids import fast_id
from ._leases import LeasingExecutor
from ._operations import engine_observer
from ._push import PushDispatcher, PushNotificationSender
from ._run import AgentRun, unrecorded
from ._store import TaskStore
from ._streams import BrokerSubscription, EventBroker, task_event_stream
from ._writer import TaskWriter, written

__all__ = [
    "FrontEndHandler",
    "QueueExecutor",
    "QueuedAgent",
    "Turn",
    "TurnQueue",
    "Worker",
    "WorkerExecutor",
    "pending_turn",
]

log = logging.getLogger("a2a_models.server")

_RUNNING = (TaskState.SUBMITTED, TaskState.WORKING)


@attrs.frozen(slots=True)
class Turn:
    """One turn for a worker: the request that started it, who sent it, for which task.

    ``lease``: set by :meth:`TurnQueue.pull`, the epoch of the task's lease the
    pull took (the run's fencing token; ``None``: a queue that gives none, the
    run's writes are not fenced). Not part of the stored turn.
    """

    task_id: str
    request: SendMessageRequest
    call: CallContext
    tenant: str | None
    lease: int | None = attrs.field(default=None, eq=False, kw_only=True)

    def to_json(self) -> bytes:
        """The turn as JSON bytes (the request in the 1.0 wire form)."""
        return codec.dumps(
            {
                "request": codec.to_wire(self.request),
                "owner": self.call.owner,
                "tenant": self.tenant,
                "callTenant": self.call.tenant,
                "extensions": sorted(self.call.extensions),
                "version": self.call.version,
                "trace": [list(pair) for pair in self.call.trace],
            }
        )

    @classmethod
    def from_json(cls, task_id: str, data: bytes) -> Turn:
        """The turn :meth:`to_json` wrote for ``task_id``."""
        value = codec.loads(data)
        call = CallContext(
            owner=value["owner"],
            tenant=value["callTenant"],
            extensions=value["extensions"],
            version=value["version"],
            trace=tuple((name, text) for name, text in value["trace"]),
        )
        request = codec.from_wire(SendMessageRequest, value["request"], parsed=True)
        return cls(task_id, request, call, value["tenant"])

    @property
    def is_new(self) -> bool:
        """The turn starts its task (no follow-up of an interrupted one)."""
        return not self.request.message.task_id


def _carried(call: CallContext) -> CallContext:
    """``call`` as a queued turn keeps it: with the trace context of the request queuing
    it (its server span, when traced), not only the caller's, so that the worker's spans
    join the request's trace even when the caller sent no ``traceparent``."""
    observer = engine_observer()
    return call if observer is None else observer.carried_trace(call)


_pending: contextvars.ContextVar[Turn | None] = contextvars.ContextVar(
    "a2a_pending_turn", default=None
)


def pending_turn(task_id: str) -> Turn | None:
    """The turn to enqueue with the write of ``task_id`` now in progress (for store authors).

    A store that supports queued turns calls this inside the transaction
    that creates or updates a task, and stores the turn in that transaction.
    """
    turn = _pending.get()
    return turn if turn is not None and turn.task_id == task_id else None


@contextlib.contextmanager
def _enqueuing(turn: Turn) -> Iterator[None]:
    token = _pending.set(turn)
    try:
        yield
    finally:
        _pending.reset(token)


class TurnQueue(Protocol):
    """Where workers get their turns (``a2a_models.stores.PostgresTurnQueue``)."""

    async def pull(self, worker: str, ttl: float) -> Turn | None:
        """Take the oldest turn nobody else is taking, and its task's lease for ``ttl`` s
        (its epoch in ``Turn.lease``, if the queue's store fences writes)."""

    async def push(self, turn: Turn) -> None:
        """Queue ``turn`` again (a worker stopping gives back a turn it cut short)."""

    async def wait(self, timeout: float) -> None:
        """Return when a turn may have been queued, or after ``timeout`` seconds."""

    async def aclose(self) -> None:
        """Release the queue's connections."""


# --- the front end ----------------------------------------------------------------------


class QueuedAgent(Agent):
    """Stands for an agent that runs in worker processes: a front end never runs it."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        raise RuntimeError("a front end runs no agent: its turns go to workers")
        yield  # pragma: no cover

    async def cancel(self, context: RequestContext) -> None:
        # The worker running the turn sees the canceled state and stops its agent.
        return None


class QueueExecutor(RunTable):
    """The front end's :class:`~a2a_models.server.TaskExecutor`: queues turns, runs nothing.

    A new turn's task is created ``submitted`` with its turn queued in the same
    store transaction. Each run then follows the task's events (from the
    broker, filled from the store's log) until the turn settles, so a blocking
    ``SendMessage`` answers when the worker is done.
    """

    def start(self, run: AgentRun) -> None:
        self._runs[run.task_id] = run
        run.runner = asyncio.create_task(self._follow(run), name=f"a2a-follow-{run.task_id}")

    def running(self, task_id: str) -> AgentRun | None:
        # No agent runs here: a cancel goes straight to the store, which the
        # worker running the turn hears of through the broker.
        return None

    def stop(self, run: AgentRun) -> None:
        return None

    async def aclose(self) -> None:
        # The turns go on in the workers; only the waiting stops.
        await self._cancel_runners()

    async def _follow(self, run: AgentRun) -> None:
        try:
            # A follow-up's task was read back after its turn was queued: a worker may
            # have answered already, so the read may be the answer (an interrupted or
            # terminal state at the worker's seq). It is the stream's first item, which
            # ends the stream then: waiting only for events after it would wait for
            # ever, and the caller's SendMessage with it.
            first = run.first if run.created else None
            created = await self._create(run) if not run.created else (run.first or (0, None))[0]
            if created is None:
                return
            seq = created
            store, broker = self.writer.store, self.writer.broker

            async def follow() -> None:
                # Resumed after the last event seen: a store or broker that failed
                # (a connection refused at max_connections, a restart) does not end
                # the wait while the worker goes on with the turn.
                nonlocal seq, first
                events = task_event_stream(
                    store,
                    broker,
                    run.task_id,
                    after_seq=seq,
                    first=first,
                    close_on_interrupted=True,
                )
                async for item_seq, _ in events:
                    seq, first = item_seq, None  # ends at a terminal or interrupted state

            await keep_trying(f"follow task {run.task_id}", follow)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log_failure(log, f"following task {run.task_id} failed", exc)
        finally:
            self._end(run)

    async def _create(self, run: AgentRun) -> int | None:
        message = run.context.message
        task = Task.submitted(message, task_id=run.task_id, context_id=run.context_id)
        call = run.context.call
        request = SendMessageRequest(
            message=message,
            configuration=run.context.configuration,
            metadata=run.context.metadata,
            tenant=run.tenant,
        )
        try:
            with _enqueuing(Turn(run.task_id, request, _carried(call), run.tenant)):
                await self.writer.store.create(
                    task, run.owner, run.tenant, event=task, **self.writer.started_by(run)
                )
            run.created = True
            await self.writer.register_request_push(run)
        except A2AError as exc:
            log_refused_creation(run, exc)
            run.error = exc
            return None
        except Exception as exc:
            log_failure(log, f"could not record the new task {run.task_id}", exc)
            run.error = unrecorded(exc)
            return None
        await self.writer.created(task)
        run.started.set()
        return 1


class FrontEndHandler(RequestHandler):
    """A :class:`~a2a_models.server.RequestHandler` whose turns run in worker processes.

    Takes the arguments of ``RequestHandler`` but no agent. ``store`` must
    queue turns (a PostgreSQL store) and ``broker`` must reach the workers
    (a ``PostgresEventBroker``).
    """

    def __init__(self, card: AgentCard, **kwargs: Any) -> None:
        kwargs.setdefault("executor", QueueExecutor)
        super().__init__(QueuedAgent(), card, **kwargs)

    async def _continue(
        self, request: SendMessageRequest, call: CallContext, tenant: str | None
    ) -> AgentRun | Repeat:
        # The follow-up's turn is queued in the transaction that accepts it (a repeated
        # message is refused in that transaction, which queues nothing then).
        task_id = request.message.task_id
        assert task_id is not None
        with _enqueuing(Turn(task_id, request, _carried(call), tenant)):
            return await super()._continue(request, call, tenant)


# --- workers ----------------------------------------------------------------------------


class WorkerExecutor(LeasingExecutor):
    """The executor of a :class:`Worker`: a :class:`~a2a_models.server.LeasingExecutor`
    that also stops a run whose task was canceled elsewhere, and records a direct reply
    (the task already exists) as the completed status."""

    def __init__(self, agent: Agent, writer: TaskWriter, **kwargs: Any) -> None:
        super().__init__(agent, writer, **kwargs)
        #: Runs that started a new task and have recorded nothing yet.
        self._fresh: set[str] = set()
        #: Pulled turns: the pull took their task's lease already.
        self._pulled: set[str] = set()
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._runners: set[asyncio.Task[None]] = set()
        self._subscriptions: dict[str, BrokerSubscription] = {}

    def start_turn(self, run: AgentRun, subscription: BrokerSubscription, *, new: bool) -> None:
        """Run a pulled turn whose task's lease the pull took (``new``: it starts its task).

        ``subscription`` (to the task's events, opened before the task was read)
        tells the run of a cancel.
        """
        if new:
            self._fresh.add(run.task_id)
        self._pulled.add(run.task_id)
        self._start_watched(run, subscription, recheck=False)

    async def _run_again(self, run: AgentRun) -> None:
        # A taken-over turn is watched like a pulled one. Its task was read before
        # this subscription: the watcher reads its state once more, so a cancel
        # made in between is not missed.
        subscription = await self.writer.broker.subscribe(run.task_id)
        self._start_watched(run, subscription, recheck=True)

    def _start_watched(
        self, run: AgentRun, subscription: BrokerSubscription, *, recheck: bool
    ) -> None:
        watcher = self._watch_cancel(run, subscription, recheck=recheck)
        self._watchers[run.task_id] = asyncio.create_task(watcher, name=f"a2a-cancel-{run.task_id}")
        self._subscriptions[run.task_id] = subscription
        self.start(run)

    def start(self, run: AgentRun) -> None:
        super().start(run)
        runner = run.runner
        if runner is not None and not runner.done():
            # Tracked to the end: a run leaves ``_runs`` before its lease is released.
            self._runners.add(runner)
            runner.add_done_callback(self._runners.discard)

    async def aclose(self) -> None:
        await super().aclose()
        await asyncio.gather(*self._runners, return_exceptions=True)
        for task_id in list(self._watchers):
            await self._stop_watching(task_id)

    async def _acquire(self, run: AgentRun) -> bool:
        if run.task_id in self._pulled:
            self._pulled.discard(run.task_id)
            return True
        return await super()._acquire(run)

    async def _execute(self, run: AgentRun) -> None:
        try:
            await super()._execute(run)
        finally:
            self._fresh.discard(run.task_id)
            await self._stop_watching(run.task_id)

    async def _stop_watching(self, task_id: str) -> None:
        watcher = self._watchers.pop(task_id, None)
        subscription = self._subscriptions.pop(task_id, None)
        if subscription is not None:
            # Closing ends a wait in ``next()``; a cancel alone may be lost there
            # (asyncio.wait_for of Python 3.11 can swallow it).
            await subscription.aclose()
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher

    async def _on_event(self, run: AgentRun, event: AgentEvent) -> bool:
        if run.task_id in self._fresh:
            self._fresh.discard(run.task_id)
            if isinstance(event, Message):
                # A direct reply: the front end made the task already; it completes with it.
                reply = attrs.evolve(event, task_id=run.task_id, context_id=run.context_id)
                event = TaskStatusUpdateEvent(
                    task_id=run.task_id,
                    context_id=run.context_id,
                    status=TaskStatus(
                        state=TaskState.COMPLETED, message=reply, timestamp=utc_now()
                    ),
                )
        return await super()._on_event(run, event)

    async def _watch_cancel(
        self, run: AgentRun, subscription: BrokerSubscription, *, recheck: bool
    ) -> None:
        """Stop the run when its task is canceled (by a front end, through the store).

        ``recheck``: the task was read before ``subscription`` was opened; read
        its state again first."""
        try:
            canceled = recheck and await self._canceled(run)
            while not canceled:
                try:
                    _, event = await subscription.next()
                except RuntimeError:
                    return  # the broker is closing
                canceled = _is_cancel(event) or (event is None and await self._canceled(run))
        finally:
            await subscription.aclose()
        log.info("task %s was canceled; stopping its agent", run.task_id)
        run.canceled = True
        run.context.cancel_requested = True
        try:
            await self.agent.cancel(run.context)
        except Exception:
            log.warning("the agent's cancel of task %s failed", run.task_id, exc_info=True)
        if run.runner is not None and not run.done.is_set():
            run.runner.cancel()

    async def _canceled(self, run: AgentRun) -> bool:
        stored = await self.writer.store.get(run.task_id, run.owner, run.tenant, history_length=0)
        return stored is None or stored.task.status.state is TaskState.CANCELED


def _is_cancel(event: Any) -> bool:
    return isinstance(event, TaskStatusUpdateEvent) and event.status.state is TaskState.CANCELED


class Worker:
    """Pulls turns from ``queue`` and runs ``agent`` on them, ``concurrency`` at a time.

    ``store`` and ``broker`` are those of the front ends (the same database).
    ``ttl`` is the lease time (see :class:`~a2a_models.server.LeasingExecutor`);
    ``recheck`` bounds how long an idle worker waits for a wake-up (the queue's
    ``NOTIFY``) before looking at the queue again anyway, and ``poll`` how long
    it waits after a failed pull. Call :meth:`run` until ``stop`` is set.
    """

    def __init__(
        self,
        agent: Agent,
        store: TaskStore,
        broker: EventBroker,
        queue: TurnQueue,
        *,
        concurrency: int = 16,
        ttl: float = 15.0,
        poll: float = 1.0,
        recheck: float = 10.0,
        push_sender: PushNotificationSender | None = None,
        worker_id: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        push = PushDispatcher(push_sender, store) if push_sender is not None else None
        self.writer = TaskWriter(store, broker, push, fast_id)
        self.executor = WorkerExecutor(agent, self.writer, worker_id=worker_id, ttl=ttl)
        self.agent = agent
        self.queue = queue
        self.concurrency = concurrency
        self.poll = poll
        self.recheck = recheck
        #: Turns this worker started (pulled ones; taken-over ones are in ``executor.recovered``).
        self.started = 0
        self._turns: dict[str, Turn] = {}
        self._waiters: set[asyncio.Task[None]] = set()
        #: Turns being queued again (see ``_queue_again``).
        self._requeues: set[asyncio.Task[None]] = set()
        self._slot = asyncio.Event()

    @property
    def worker_id(self) -> str:
        """This worker's name in the leases it holds."""
        return self.executor.worker_id

    async def run(self, stop: asyncio.Event, *, grace: float = 30.0) -> None:
        """Pull and run turns until ``stop`` is set, then stop (see :meth:`drain`)."""
        await self.executor.open()
        pulls = FailureStreak(log, "pulling a turn")
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                if self.executor.active_runs() >= self.concurrency:
                    self._slot.clear()
                    await _first(stopping, self._slot.wait())
                    continue
                try:
                    turn = await self.executor.taking(
                        lambda: self.queue.pull(self.worker_id, self.executor.ttl),
                        lambda turn: turn is not None,
                    )
                except Exception as exc:
                    pulls.failed(exc, self.poll)
                    await _first(stopping, asyncio.sleep(self.poll))
                    continue
                pulls.succeeded()
                if turn is None:
                    # Woken by the queue's NOTIFY; looking again anyway now and then finds
                    # a turn that woke nobody (one a pull locked, then rolled back).
                    await _first(stopping, self.queue.wait(self.recheck))
                    continue
                try:
                    await self._start(turn)
                except Exception as exc:
                    log_failure(
                        log,
                        f"starting the turn of task {turn.task_id} failed; queueing it again",
                        exc,
                    )
                    self._queue_again(turn)
        finally:
            stopping.cancel()
            await self.drain(grace)

    def _queue_again(self, turn: Turn) -> None:
        """Give back a turn that never reached the agent, for any worker to take.

        Its lease is this worker's, and this worker renews all of its leases:
        kept, it would never lapse, and the task would wait for ever. Queued
        again (which makes the lease the queue's), it runs once the store
        takes the write (:func:`keep_trying`: the store is likely what failed).
        Given up, the lease is released (when the store allows): the task is
        then taken over like one whose worker died.
        """

        async def requeue() -> None:
            queued = await keep_trying(
                f"queue the turn of task {turn.task_id} again", lambda: self.queue.push(turn)
            )
            if not queued:
                await self.executor.release_lease(turn.task_id, self._epoch(turn))

        requeuing = asyncio.create_task(requeue(), name=f"a2a-requeue-{turn.task_id}")
        self._requeues.add(requeuing)
        requeuing.add_done_callback(self._requeues.discard)

    def _epoch(self, turn: Turn) -> int | None:
        """The lease epoch of a pulled turn, for a store that fences writes."""
        return turn.lease if self.executor.fenced else None

    async def _start(self, turn: Turn) -> None:
        owner, tenant = turn.call.owner, turn.tenant
        # Subscribed before reading: a cancel after the read is heard of.
        subscription = await self.writer.broker.subscribe(turn.task_id)
        try:
            # A new task's agent gets no task (as in one process): no history to read.
            stored = await self.writer.store.get(
                turn.task_id, owner, tenant, history_length=0 if turn.is_new else None
            )
        except BaseException:
            await subscription.aclose()
            raise
        if stored is None or stored.task.status.state not in _RUNNING:
            # Canceled (or deleted) before any worker got to it.
            await subscription.aclose()
            await self.executor.release_lease(turn.task_id, self._epoch(turn))
            return
        task = stored.task
        context_id = task.context_id or task.id
        message = attrs.evolve(turn.request.message, task_id=task.id, context_id=context_id)
        context = RequestContext(
            message=message,
            task_id=task.id,
            context_id=context_id,
            task=None if turn.is_new else task,
            configuration=turn.request.configuration,
            metadata=turn.request.metadata,
            call=turn.call,
        )
        run = AgentRun(context, owner, tenant, created=True, first=(stored.last_seq, task))
        run.written = written(stored)
        run.lease = self._epoch(turn)
        run.release_at_end = run.lease is not None and self.executor.releases_in_write
        self.started += 1
        self._turns[task.id] = turn
        self.executor.start_turn(run, subscription, new=turn.is_new)
        waiter = asyncio.create_task(self._finished(run))
        self._waiters.add(waiter)
        waiter.add_done_callback(self._waiters.discard)

    async def _finished(self, run: AgentRun) -> None:
        await run.done.wait()
        if self._turns.get(run.task_id) is not None:
            del self._turns[run.task_id]
        self._slot.set()

    async def drain(self, grace: float) -> None:
        """Stop: let the running turns finish for up to ``grace`` seconds, then give back
        the rest (queued again for another worker if the agent is ``restartable``,
        otherwise failed), and release the worker's resources."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.executor.idle(), grace)
        # A turn not queued again by now: its lease lapses once this worker is gone,
        # and another worker takes the task over.
        for requeuing in list(self._requeues):
            requeuing.cancel()
        await asyncio.gather(*self._requeues, return_exceptions=True)
        if getattr(self.agent, "restartable", False):
            for task_id in list(self._turns):
                turn = self._turns.get(task_id)
                run = self.executor.running(task_id)
                if turn is None or run is None or run.runner is None:
                    continue
                run.runner.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await run.runner
                try:
                    await self.queue.push(turn)
                except Exception as exc:
                    log_failure(log, f"could not queue the turn of task {task_id} again", exc)
                else:
                    log.warning("stopping: the turn of task %s goes to another worker", task_id)
        await self.executor.aclose()
        if self.writer.push is not None:
            await self.writer.push.aclose()


async def _first(stopping: asyncio.Task[Any], other: Any) -> None:
    """Wait for ``other`` (a coroutine) or until ``stopping`` finishes, whichever is first."""
    waiter = asyncio.ensure_future(other)
    try:
        await asyncio.wait((stopping, waiter), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not waiter.done():
            waiter.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await waiter
