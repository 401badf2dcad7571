"""Crash recovery: a running turn belongs to a worker through a lease it renews.

:class:`LeasingExecutor` runs agents in this process like
:class:`~a2a_models.server.InProcessExecutor`, and also

* takes a lease on a task when its turn starts (in the store, shared by every
  process on the same database; a new task's in the transaction that creates it,
  when the store has ``create_leased``) and gives it up when the turn settles: in
  the transaction of the turn's last write when the store's ``update`` takes
  ``release_lease``, else with a release of its own (a release the store refuses
  is tried again every round until it passes: a lease of this worker's left
  behind would be renewed, and its task never taken over);
* renews its leases every ``ttl / 3`` seconds; a run whose lease another
  worker took over (this process stalled past ``ttl``) is stopped;
* fences every write of a run with its lease: each acquisition of a task's
  lease (``acquire_lease``, ``claim_expired_leases``, a worker's pull, queueing
  a turn) increases the task's lease epoch, the run keeps the epoch of its own
  acquisition (``AgentRun.lease``) and ``TaskStore.update`` refuses a write
  whose epoch is no longer the task's, in the transaction that checks the
  version (:class:`~a2a_models.server.LeaseLostError`). The run stops at that
  write, with nothing written or published: from the moment of a take-over
  the stalled run's events never reach the task, whatever its renewal does;
* sends the push notifications owed whose claim lapsed (:meth:`PushDispatcher.resume`),
  the latest status of a task finished by a worker that died before delivering it;
* takes over the tasks whose worker is gone (lease lapsed, or submitted /
  working with no lease for ``ttl``): the task is failed with the status
  message :data:`STOPPED_MESSAGE`, or its turn is run again when the agent
  says ``restartable = True``. Subscribers (through the broker, on any
  replica) and push webhooks receive that event like any other.

A process restarted on the same database recovers its own tasks the same way
(its new worker id is a new worker). The store needs ``acquire_lease``,
``renew_leases``, ``release_lease`` and ``claim_expired_leases`` (the SQL stores).

Why an epoch per acquisition and not the worker id as the fencing token: a
worker can take a task's lease again while a stalled run of its own on that
task is still alive (a follow-up turn of the task reaches the same replica, or
the same worker pulls it, before the old run notices); with the worker id the
old run's writes would pass. The epoch also lets a run write after it released
its lease (the "failed" of a shutdown) as long as nobody took the lease since.
A store whose ``acquire_lease`` returns a plain ``bool`` (no epoch), or whose
``update`` takes no ``lease`` argument, still works: its runs' writes are not
fenced, and a stalled run is stopped only by its renewal (within ``ttl / 3``
of waking up), as before fencing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .._outages import log_failure, repeat_forever
from .._state import TaskState
from ..models import Role
from ._agent import Agent, CallContext, RequestContext
from ._execution import UNRECORDED_TEXT, InProcessExecutor
from ._run import AgentRun, RunAborted, RunFinished
from ._store import accepts_keyword
from ._writer import TaskWriter, written

__all__ = ["STOPPED_MESSAGE", "LeasingExecutor", "supports_leases"]

log = logging.getLogger("a2a_models.server")

T = TypeVar("T")

#: The status message of a task failed because its worker stopped.
STOPPED_MESSAGE = "the agent process stopped while working on this task"
_RUNNING = (TaskState.SUBMITTED, TaskState.WORKING)
_LEASE_METHODS = ("acquire_lease", "renew_leases", "release_lease", "claim_expired_leases")


def supports_leases(store: Any) -> bool:
    """Whether ``store`` keeps leases (the SQL stores do; the in-memory one needs none)."""
    return all(callable(getattr(store, name, None)) for name in _LEASE_METHODS)


class LeasingExecutor(InProcessExecutor):
    """An :class:`InProcessExecutor` whose runs hold renewed leases, and that takes
    over the running tasks of workers that died (see the module documentation).

    ``worker_id`` names this process's worker (default: host, pid and a random
    suffix); ``ttl`` is the lease time in seconds: a task of a dead worker is
    taken over within about ``ttl`` plus one check interval (``ttl / 3``).
    """

    def __init__(
        self,
        agent: Agent,
        writer: TaskWriter,
        *,
        worker_id: str | None = None,
        ttl: float = 15.0,
    ) -> None:
        if not supports_leases(writer.store):
            raise TypeError(f"{writer.store!r} keeps no leases")
        if not 0 < ttl < math.inf:  # NaN too
            raise ValueError(f"the lease ttl must be a positive number of seconds, not {ttl!r}")
        super().__init__(agent, writer)
        self.worker_id = worker_id or f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.ttl = ttl
        self.interval = ttl / 3
        self.recovered = 0
        self._store: Any = writer.store
        if hasattr(self._store, "push_claim_ttl"):
            # A status logged here is this process's to deliver for one TTL, as a lease.
            self._store.push_claim_ttl = ttl
        #: The store's ``update`` takes ``lease``: runs write fenced (see the module doc).
        self.fenced = accepts_keyword(writer.store.update, "lease")
        #: A fenced run's turn-ending write gives its lease up (no release of its own).
        self.releases_in_write = self.fenced and accepts_keyword(
            writer.store.update, "release_lease"
        )
        #: The store creates a task with its lease taken, in one transaction.
        self.creates_leased = callable(getattr(self._store, "create_leased", None))
        #: ... and takes the key of the message that starts it (``started_by``).
        self.creates_leased_once = self.creates_leased and accepts_keyword(
            getattr(self._store, "create_leased", None) or (lambda: None), "started_by"
        )
        self._keeper: asyncio.Task[None] | None = None
        #: Tasks whose lease this worker took (a run not in here has none yet).
        self._leased: set[str] = set()
        #: Leases whose release the store refused, by task id (their epoch, if known).
        #: The keeper renews every lease of this worker: one left unreleased would
        #: never lapse, and its task (still working, if the store failed long enough
        #: that marking it failed was given up) would never be taken over.
        self._unreleased: dict[str, int | None] = {}
        #: Calls that may take leases (see :meth:`taking`): how many ran, how many run now.
        self._taken = 0
        self._taking = 0
        #: ``_taken`` when a renewal last found no lease of this worker (``None``: never).
        self._none_held_at: int | None = None

    # -- the keeper ----------------------------------------------------------------------

    async def open(self) -> None:
        """Start renewing leases and taking over lapsed ones (also done by the first run)."""
        self._ensure_keeper()

    def _ensure_keeper(self) -> None:
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep(), name="a2a-lease-keeper")

    async def _keep(self) -> None:
        await repeat_forever(self.check, self.interval, log, "lease upkeep")

    async def check(self) -> int:
        """One round: renew this worker's leases, stop runs that lost theirs, take over
        lapsed ones. Returns how many tasks were taken over."""
        # Only leases taken before the renewal: one taken while it ran is not in ``held``.
        leased = {task_id: self._runs.get(task_id) for task_id in self._leased}
        held = await self._renew()
        for task_id, run in list(self._runs.items()):
            lost = (
                leased.get(task_id) is run
                and task_id in self._leased
                and task_id not in held
                and not run.released  # given up by its last write (see TaskWriter.commit)
            )
            if lost and run.runner is not None:
                log.warning(
                    "lost the lease on task %s to another worker; stopping its run", task_id
                )
                run.runner.cancel()
        await self._release_owed()
        claimed = await self.taking(
            lambda: self._store.claim_expired_leases(self.worker_id, self.ttl)
        )
        for task_id, scope in claimed:
            try:
                await self._take_over(task_id, scope)
            except Exception as exc:
                log_failure(log, f"taking over task {task_id} failed", exc)
        if self.writer.push is not None:
            # Notifications owed by a process that died (or never delivered): the
            # owed rows only, by their index.
            try:
                await self.writer.push.resume(self.ttl)
            except Exception as exc:
                log_failure(log, "resuming owed push notifications failed", exc)
        return len(claimed)

    async def taking(
        self, acquire: Callable[[], Awaitable[T]], took: Callable[[T], bool] = bool
    ) -> T:
        """``await acquire()``, a call that may take leases for this worker (``took``:
        whether its result says it did, e.g. a worker's pull).

        An idle process holds no lease, and its keeper stops renewing once a
        renewal found none, until a call through here took one.
        """
        self._taking += 1
        try:
            result = await acquire()
        except BaseException:
            self._taken += 1  # it may have taken one before it failed
            raise
        finally:
            self._taking -= 1
        if took(result):
            self._taken += 1
        return result

    async def _renew(self) -> set[str]:
        """Renew this worker's leases; nothing when it holds none."""
        if (
            self._none_held_at == self._taken
            and not self._taking
            and not (self._leased or self._runs or self._unreleased)
        ):
            return set()
        taken, taking = self._taken, self._taking
        held: set[str] = await self._store.renew_leases(self.worker_id, self.ttl)
        # None held, and no lease taken (or being taken) since the renewal began: an
        # acquisition committed after the renewal's snapshot would have been missed.
        if not held and not taking and not self._taking and taken == self._taken:
            self._none_held_at = taken
        return held

    async def release_lease(self, task_id: str, epoch: int | None = None) -> None:
        """Give up this worker's lease on a task (``epoch``: only that acquisition's).

        A release the store refuses is not lost: the keeper tries it again every
        round until the store takes it, so the lease lapses as it should.
        """
        try:
            await self._release_now(task_id, epoch)
        except Exception as exc:
            log_failure(log, f"could not release the lease on task {task_id}; will try again", exc)
            self._unreleased[task_id] = epoch

    async def _release_now(self, task_id: str, epoch: int | None) -> None:
        if epoch is None:
            await self._store.release_lease(task_id, self.worker_id)
        else:  # not a lease taken again since (by this worker, for a newer run)
            await self._store.release_lease(task_id, self.worker_id, epoch)

    async def _release_owed(self) -> None:
        """Release the leases the store refused to release before (raises while it still
        refuses: the keeper's failure streak logs it)."""
        for task_id, epoch in list(self._unreleased.items()):
            if epoch is None and (task_id in self._leased or task_id in self._runs):
                # Held again by a run of this worker, which releases it when it ends
                # (without an epoch, releasing now would take that run's lease).
                del self._unreleased[task_id]
                continue
            await self._release_now(task_id, epoch)
            if self._unreleased.get(task_id, -1) == epoch:
                del self._unreleased[task_id]
                log.warning("released the lease on task %s at last", task_id)

    async def _take_over(self, task_id: str, scope: str) -> None:
        owner, tenant = json.loads(scope)
        if task_id in self._runs:
            return  # our own run (its lease was just renewed by a slow round)
        stored = await self.writer.store.get(task_id, owner, tenant)
        if stored is None or stored.task.status.state not in _RUNNING:
            await self.release_lease(task_id)
            return
        self.recovered += 1
        task = stored.task
        context_id = task.context_id or task.id
        message = next((m for m in reversed(task.history) if m.role is Role.USER), None)
        if getattr(self.agent, "restartable", False) and message is not None:
            log.warning("task %s lost its worker; running its turn again", task_id)
            context = RequestContext(
                message=message,
                task_id=task.id,
                context_id=context_id,
                task=task,
                call=CallContext(owner=owner, tenant=tenant),
            )
            run = AgentRun(context, owner, tenant, created=True, first=(stored.last_seq, task))
            run.written = written(stored)
            await self._run_again(run)
            return
        log.warning("task %s lost its worker; marking it failed", task_id)
        context = RequestContext(
            message=message or _placeholder(task.id),
            task_id=task.id,
            context_id=context_id,
            task=task,
        )
        event = context.status(TaskState.FAILED, STOPPED_MESSAGE)
        with contextlib.suppress(RunFinished, RunAborted):
            await self.writer.commit(task_id, owner, tenant, event)
        await self.release_lease(task_id)

    async def _run_again(self, run: AgentRun) -> None:
        """Start the run of a taken-over turn (a worker also watches it for cancels)."""
        self.start(run)

    # -- runs ----------------------------------------------------------------------------

    def start(self, run: AgentRun) -> None:
        self._ensure_keeper()
        super().start(run)

    async def _execute(self, run: AgentRun) -> None:
        if run.created:
            try:
                acquired = await self._acquire(run)
            except Exception as exc:
                # The store failed: the turn cannot start, and its task (already
                # working, with the caller's message) would be left so for ever.
                log_failure(log, f"could not take the lease on task {run.task_id}", exc)
                try:
                    await self._fail(run, UNRECORDED_TEXT)
                finally:
                    self._end(run)
                return
            if not acquired:
                # Another live worker runs this task's turn: never run it twice at once.
                log.warning(
                    "task %s is running on another worker; not starting it here", run.task_id
                )
                self._end(run)
                return
            self._leased.add(run.task_id)
        try:
            await super()._execute(run)
        finally:
            if run.task_id in self._leased:
                self._leased.discard(run.task_id)
                if not run.released:
                    await self.release_lease(run.task_id, run.lease)

    def _leases(self, run: AgentRun, taken: object) -> bool:
        """Record the lease acquisition ``taken`` (an epoch, ``True``, or nothing) as the
        run's: its writes are fenced with its epoch from then on."""
        run.lease = _epoch(taken) if self.fenced else None
        run.release_at_end = run.lease is not None and self.releases_in_write
        return bool(taken)

    async def _acquire(self, run: AgentRun) -> bool:
        """Take the lease of a run's task (False: another live worker holds it)."""
        taken = await self.taking(
            lambda: self._store.acquire_lease(run.task_id, self.worker_id, self.ttl)
        )
        return self._leases(run, taken)

    async def _insert(self, run: AgentRun, task: Any) -> Any:
        if not self.creates_leased:
            return await super()._insert(run, task)
        # The lease in the transaction that creates the task: this process runs it now.
        started = self.writer.started_by(run) if self.creates_leased_once else {}
        stored, epoch = await self.taking(
            lambda: self._store.create_leased(
                task,
                run.owner,
                run.tenant,
                event=task,
                worker=self.worker_id,
                ttl=self.ttl,
                **started,
            )
        )
        if epoch is not None and self._leases(run, epoch):
            self._leased.add(run.task_id)
        return stored

    async def _create(self, run: AgentRun, snapshot: Any) -> Any:
        task = await super()._create(run, snapshot)
        # Not taken with the task: taken now that the run knows its task exists (a
        # store that fails here fails the task, which is not left submitted).
        if run.task_id not in self._leased and await self._acquire(run):
            self._leased.add(run.task_id)
        return task

    async def aclose(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
        await super().aclose()


def _epoch(taken: object) -> int | None:
    """The lease epoch ``acquire_lease`` returned (``None``: a store that gives none)."""
    return taken if isinstance(taken, int) and not isinstance(taken, bool) else None


def _placeholder(task_id: str) -> Any:
    from ..models import Message

    return Message.user("", task_id=task_id)
