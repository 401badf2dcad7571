"""Task execution: how the agent runs, behind the :class:`TaskExecutor` interface.

The engine's operations accept a turn (they create or continue the task's
:class:`AgentRun`) and hand it to an executor; they wait on the run's events
and never on how it runs. :class:`InProcessExecutor`, the default, runs the
agent in an eager asyncio task of this process: each event the agent
yields is applied to the stored task through the :class:`TaskWriter`
(optimistic concurrency with retries), logged, published and, for state
changes, handed to push delivery. An executor that runs agents in worker
processes implements the same interface.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeAlias, runtime_checkable

import attrs

from .._closing import aclose_if_closable
from .._outages import log_failure, one_line, traceback_of
from .._state import TaskState
from ..errors import A2AError, InvalidAgentResponseError
from ..models import Message, Task, TaskStatusUpdateEvent, state_of, utc_now
from ._agent import Agent, AgentEvent
from ._eager import start_eager_task
from ._lifecycle import merge_metadata, track_chunks
from ._operations import engine_observer
from ._run import AgentRun, RunAborted, RunFinished, unrecorded
from ._store import DuplicateMessageError, LeaseLostError, StoredTask
from ._writer import TaskWriter, written

__all__ = ["ExecutorFactory", "InProcessExecutor", "TaskExecutor"]

log = logging.getLogger("a2a_models.server")

#: Seconds before a write the store refused is tried again, doubling up to the most;
#: and for how long it is tried (:func:`keep_trying`).
_FAIL_RETRY_FIRST = 0.25
_FAIL_RETRY_MAX = 10.0
_FAIL_RETRY_FOR = 300.0

#: The status message of a task failed because the store would not take its progress.
UNRECORDED_TEXT = "The server could not record the task's progress."


def log_refused_creation(run: AgentRun, exc: A2AError) -> None:
    """Log the store's refusal to create ``run``'s task: a retried first message (the
    caller gets the task it started) is news, anything else a warning."""
    if isinstance(exc, DuplicateMessageError):
        log.info("not creating task %s: %s", run.task_id, exc)
    else:
        log.warning("could not create task %s: %s", run.task_id, exc)


async def keep_trying(what: str, attempt: Callable[[], Awaitable[None]]) -> bool:
    """Await ``attempt()`` until it raises nothing, backing off from a quarter of a
    second to every 10 s, for 5 minutes at most (a store back within minutes: a
    restart, a failover); ``False`` when given up. ``what`` (``mark task X failed``)
    names it in the log: the first failure (with its traceback, unless
    :func:`~a2a_models._outages.traceback_of` says none), the success after
    failures, giving up."""
    loop = asyncio.get_running_loop()
    delay, attempts, give_up = _FAIL_RETRY_FIRST, 0, loop.time() + _FAIL_RETRY_FOR
    while True:
        try:
            await attempt()
        except Exception as exc:
            attempts += 1
            reason = one_line(exc)
            if loop.time() + delay > give_up:
                log.error("gave up trying to %s after %d attempts (%s)", what, attempts, reason)
                return False
            if attempts == 1:
                log.error(
                    "could not %s (%s); trying again", what, reason, exc_info=traceback_of(exc)
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, _FAIL_RETRY_MAX)
        else:
            if attempts:
                log.warning("%s: done after %d attempts", what, attempts + 1)
            return True


class _RecordingFailed(Exception):
    """Applying an agent's event failed in the store or the engine (``__cause__``):
    not the agent's fault."""


@runtime_checkable
class TaskExecutor(Protocol):
    """Runs the agent for the turns the engine accepts.

    ``start`` gets an :class:`AgentRun` whose task
    the engine may or may not have created yet (``run.created``); the
    executor runs ``agent.execute(run.context)``, records each event with the
    :class:`TaskWriter`, and sets ``run.started`` (the task exists, or a
    direct reply / error is set), ``run.settled`` (terminal, interrupted or
    over) and ``run.done`` (finished) as the run goes. While
    ``run.canceling``, it must wait (``await run.proceed()``) before
    recording an event, and discard the rest once ``run.canceled``.
    """

    def start(self, run: AgentRun) -> None:
        """Begin executing ``run`` (returns at once)."""

    def running(self, task_id: str) -> AgentRun | None:
        """The run in progress here for ``task_id``, if any."""

    def stop(self, run: AgentRun) -> None:
        """Stop the agent of a run whose task was just canceled."""

    def active_runs(self) -> int:
        """How many runs are in progress."""

    async def idle(self) -> None:
        """Wait until no run is in progress."""

    async def aclose(self) -> None:
        """Stop every run; a task cut short is marked failed."""


#: Builds the engine's executor from its agent and writer (``InProcessExecutor`` fits).
ExecutorFactory: TypeAlias = Callable[[Agent, TaskWriter], TaskExecutor]


class RunTable:
    """What every executor keeps: its agent, its writer and its runs in progress by task id."""

    def __init__(self, agent: Agent, writer: TaskWriter) -> None:
        self.agent = agent
        self.writer = writer
        self._runs: dict[str, AgentRun] = {}
        # Runs a stop cut short: aclose lets their waiters go (_end) only once it has
        # marked their tasks failed, so a blocking SendMessage answers the failed task.
        self._held: set[AgentRun] = set()

    def active_runs(self) -> int:
        return len(self._runs)

    async def idle(self) -> None:
        while self._runs:
            await asyncio.gather(
                *(r.done.wait() for r in list(self._runs.values())), return_exceptions=True
            )

    def _end(self, run: AgentRun) -> None:
        """The run is over: whoever waits on it is let go."""
        run.started.set()
        run.settled.set()
        run.done.set()
        if self._runs.get(run.task_id) is run:
            del self._runs[run.task_id]

    async def _cancel_runners(self, *, hold: bool = False) -> list[AgentRun]:
        """Cancel every run's asyncio task and wait for them; the runs there were
        (``hold``: still running for their waiters, until the caller ends them)."""
        runs = list(self._runs.values())
        if hold:
            self._held.update(runs)
        runners = [r.runner for r in runs if r.runner is not None]
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)
        return runs


class InProcessExecutor(RunTable):
    """Runs each turn in an eager asyncio task of this process (the default executor)."""

    def start(self, run: AgentRun) -> None:
        self._runs[run.task_id] = run
        # Eager: an agent that needs no I/O for its first event (a direct
        # reply, say) has settled the run when this returns.
        run.runner = start_eager_task(self._execute(run), name=f"a2a-run-{run.task_id}")

    def running(self, task_id: str) -> AgentRun | None:
        return self._runs.get(task_id)

    def stop(self, run: AgentRun) -> None:
        if run.runner is not None and not run.at_gate:
            # Stuck inside the agent: stop it. At the gate, the runner
            # wakes up, discards what it holds and closes the agent itself.
            run.runner.cancel()

    async def aclose(self) -> None:
        runs = await self._cancel_runners(hold=True)
        try:
            for run in runs:
                await self._fail_cut_short(run)
        finally:
            for run in runs:
                self._held.discard(run)
                self._end(run)

    async def _fail_cut_short(self, run: AgentRun) -> None:
        if not run.created or run.canceled:
            return
        try:
            stored = await self.writer.store.get(run.task_id, run.owner, run.tenant)
            if stored is None or not stored.task.status.state.is_active:
                return  # finished, or waiting for its client: nothing was cut short
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_failed(run), 5.0)
        except Exception as exc:
            # The store is gone too: stop anyway. (An SQL store's lease on the
            # task lapses, and a replica that is still up takes it over.)
            log_failure(log, f"could not mark task {run.task_id} failed while stopping", exc)

    async def _execute(self, run: AgentRun) -> None:
        try:
            observer = engine_observer()
            if observer is None:
                await self._drive(run)
            else:
                await observer.turn(run, lambda: self._drive(run))
        except asyncio.CancelledError:
            log.debug("run of task %s stopped", run.task_id)
            raise
        except RunAborted:
            pass
        except LeaseLostError:
            # Another worker took the task over (this one stalled past its lease):
            # its run is the task's now. Stop here, writing nothing more.
            log.warning(
                "lost the lease on task %s to another worker; stopping its run", run.task_id
            )
        except RunFinished as finished:
            log.warning(
                "task %s is already %s; discarding the rest of the agent's events",
                run.task_id,
                finished.task.status.state.name,
            )
        except InvalidAgentResponseError as exc:
            log.warning("agent response for task %s rejected: %s", run.task_id, exc.message)
            await self._fail(run, f"The agent produced an invalid response: {exc.message}")
        except _RecordingFailed as failed:
            # The store (or the engine), not the agent: the caller is told so.
            cause = failed.__cause__
            log_failure(log, f"could not record the progress of task {run.task_id}", cause)
            if not run.created and cause is not None:
                run.error = unrecorded(cause)
            await self._fail(run, UNRECORDED_TEXT)
        except Exception:
            log.exception("agent failed on task %s", run.task_id)
            await self._fail(run, "The agent failed with an internal error.")
        finally:
            if run not in self._held:
                self._end(run)

    async def _drive(self, run: AgentRun) -> None:
        events = self.agent.execute(run.context)
        try:
            async for event in events:
                if (run.canceling or run.canceled) and not await run.proceed():
                    log.warning(
                        "task %s was canceled; discarding the agent's %s",
                        run.task_id,
                        type(event).__name__,
                    )
                    return
                try:
                    over = await self._on_event(run, event)
                except A2AError:
                    raise
                except Exception as exc:
                    raise _RecordingFailed from exc
                if over:
                    return
        finally:
            try:
                await aclose_if_closable(events)
            except Exception:
                log.warning(
                    "closing the agent's events of task %s failed", run.task_id, exc_info=True
                )
        # The agent stopped without a terminal or interrupted state.
        if not await run.proceed():
            return
        if not run.created:
            raise InvalidAgentResponseError("the agent produced no response")
        raise InvalidAgentResponseError(
            "the agent ended its turn without a terminal or interrupted state"
        )

    async def _on_event(self, run: AgentRun, event: AgentEvent) -> bool:
        """Apply one agent event; True when the turn is over."""
        metadata = run.context.take_task_metadata()
        if not run.created:
            if isinstance(event, Message):
                run.direct = self._direct_reply(run, event)
                run.started.set()
                run.settled.set()
                return True
            if isinstance(event, Task):
                task = await self._create(run, merge_metadata(event, metadata))
                return self._settles(run, task.status.state)
            await self._create(run, None)
        event = self._stamp(event)
        run.closed_artifacts = track_chunks(run.closed_artifacts, event)
        await self.writer.commit(
            run.task_id,
            run.owner,
            run.tenant,
            event,
            logged=not isinstance(event, Message),
            metadata=metadata,
            run=run,
        )
        state = state_of(event)
        return state is not None and self._settles(run, state)

    @staticmethod
    def _settles(run: AgentRun, state: TaskState) -> bool:
        if state.is_terminal or state.is_interrupted:
            run.settled.set()
            return True
        return False

    @staticmethod
    def _stamp(event: AgentEvent) -> AgentEvent:
        # Status timestamps order ListTasks: never store a status without one.
        if isinstance(event, TaskStatusUpdateEvent) and event.status.timestamp is None:
            return attrs.evolve(event, status=attrs.evolve(event.status, timestamp=utc_now()))
        if isinstance(event, Task):
            return InProcessExecutor._stamp_task(event)
        return event

    @staticmethod
    def _stamp_task(task: Task) -> Task:
        if task.status.timestamp is None:
            return attrs.evolve(task, status=attrs.evolve(task.status, timestamp=utc_now()))
        return task

    @staticmethod
    def _direct_reply(run: AgentRun, message: Message) -> Message:
        if message.context_id is not None and message.context_id != run.context_id:
            raise InvalidAgentResponseError(
                f"direct reply has contextId {message.context_id!r}, "
                f"the request's is {run.context_id!r}"
            )
        if message.task_id is not None and message.task_id != run.task_id:
            raise InvalidAgentResponseError("a direct reply must not reference a task")
        if message.context_id == run.context_id and message.task_id is None:
            return message
        # No task exists for a direct reply; it carries the context (§3.4.1).
        return attrs.evolve(message, context_id=run.context_id, task_id=None)

    async def _create(self, run: AgentRun, snapshot: Task | None) -> Task:
        message = run.context.message
        if snapshot is None:
            task = Task.submitted(message, task_id=run.task_id, context_id=run.context_id)
        else:
            if snapshot.id != run.task_id:
                raise InvalidAgentResponseError(
                    f"the agent's task has id {snapshot.id!r}, the engine assigned "
                    f"{run.task_id!r} (use context.task_id)"
                )
            if snapshot.context_id not in (None, run.context_id):
                raise InvalidAgentResponseError(
                    f"the agent's task has contextId {snapshot.context_id!r}, "
                    f"the request's is {run.context_id!r}"
                )
            if snapshot.status.state is TaskState.UNSPECIFIED:
                raise InvalidAgentResponseError("the agent's task has no state")
            task = self._stamp_task(attrs.evolve(snapshot, context_id=run.context_id))
            if all(m.message_id != message.message_id for m in task.history):
                # The client's message starts the history of its task.
                own = attrs.evolve(message, task_id=task.id, context_id=run.context_id)
                task = attrs.evolve(task, history=(own, *task.history))
        try:
            stored = await self._insert(run, task)
            run.created = True
            run.written = written(stored)
            run.history = stored.task.history
            await self.writer.register_request_push(run)
        except A2AError as exc:
            log_refused_creation(run, exc)
            run.error = exc
            raise RunAborted from exc
        await self.writer.created(task)
        run.started.set()
        return task

    async def _insert(self, run: AgentRun, task: Task) -> StoredTask:
        """Store the new task of ``run`` (its event 1: the task)."""
        return await self.writer.store.create(
            task, run.owner, run.tenant, event=task, **self.writer.started_by(run)
        )

    async def _stop_failed(self, run: AgentRun) -> None:
        event = run.context.status(TaskState.FAILED, "The server stopped before the task finished.")
        try:
            await self.writer.commit(run.task_id, run.owner, run.tenant, event, run=run)
        except (RunAborted, RunFinished, LeaseLostError):
            pass

    async def _fail(self, run: AgentRun, text: str) -> None:
        """Move the run's task to failed with ``text`` as the status message.

        A store that cannot take the write is tried again (:func:`keep_trying`;
        cancelled when the executor stops): a task left working would keep its
        subscribers waiting for an end that never comes.
        """

        async def attempt() -> None:
            try:
                if run.error is not None or run.direct is not None:
                    return
                if not await run.proceed():
                    return
                if not run.created:
                    await self._create(run, None)
                event = run.context.status(TaskState.FAILED, text)
                await self.writer.commit(run.task_id, run.owner, run.tenant, event, run=run)
                run.settled.set()
            except (RunAborted, RunFinished):
                pass
            except LeaseLostError:
                log.warning(
                    "lost the lease on task %s to another worker; not failing it", run.task_id
                )

        await keep_trying(f"mark task {run.task_id} failed", attempt)
