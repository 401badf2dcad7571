"""Fenced writes: a run that held a task's lease cannot write once the lease was taken
again (issue #10, "no task runs twice at once").

Store level (SQLite and PostgreSQL): every acquisition of a lease (acquire, claim,
pull, queueing a turn) gives a new epoch; ``update(..., lease=epoch)`` with an
older epoch raises :class:`LeaseLostError` and writes nothing (row, history rows,
artifact rows, event log). Engine level: a :class:`LeasingExecutor` whose renewal
stalls has its task taken over by another; its run's next write is refused and the
run stops, so the task's log holds none of its events after the take-over.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2a_models import Message, SendMessageConfiguration, SendMessageRequest, Task, TaskState
from a2a_models.server import (
    Agent,
    AgentEvent,
    CallContext,
    InMemoryEventBroker,
    LeaseLostError,
    LeasingExecutor,
    RequestContext,
    RequestHandler,
    TaskStore,
    TaskWriter,
    Turn,
    apply_event,
    fast_id,
)
from a2a_models.stores import PostgresTaskStore, PostgresTurnQueue, SQLiteTaskStore

from ._support import make_card
from .conftest import PG_DSN


@pytest.fixture(params=["sqlite", "postgres"])
async def sql_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "sqlite":
        store: Any = SQLiteTaskStore(tmp_path / "fencing.db")
    else:
        store = PostgresTaskStore(PG_DSN, schema=request.getfixturevalue("pg_schema"))
    try:
        yield await store.open()
    finally:
        await store.aclose()


async def _working(store: TaskStore) -> Task:
    task = Task.submitted(Message.user("work"))
    await store.create(task, None, event=task)
    context = RequestContext(message=task.history[0], task_id=task.id, context_id=task.context_id)
    event = context.working("started")
    working = apply_event(task, event)
    await store.update(working, 1, event=event)
    return working


async def _state(store: Any, task_id: str) -> tuple[Any, ...]:
    """Everything a write could change: the row, its history and artifacts, its log,
    read by a store of its own (no cached history or artifacts)."""
    if isinstance(store, SQLiteTaskStore):
        fresh: Any = SQLiteTaskStore(store.path)
    else:
        fresh = PostgresTaskStore(PG_DSN, schema=store.schema)
    async with fresh:
        stored = await fresh.get(task_id, None)
        assert stored is not None
        events = await fresh.events_after(task_id, 0)
    return stored.version, stored.last_seq, stored.task, events


def _late_write(task: Task) -> tuple[Task, Any]:
    """A write a stalled run would make: a status with a message, and an artifact."""
    context = RequestContext(message=task.history[0], task_id=task.id, context_id=task.context_id)
    event = context.artifact("late", name="late")
    status = context.status(TaskState.WORKING, "late step")
    return apply_event(apply_event(task, event), status), status


async def test_a_write_whose_lease_was_taken_over_raises_and_writes_nothing(
    sql_store: Any,
) -> None:
    task = await _working(sql_store)
    mine = await sql_store.acquire_lease(task.id, "stalled", 0.05)
    assert isinstance(mine, int) and not isinstance(mine, bool)
    changed, event = _late_write(task)
    # While the lease is ours the fenced write goes through.
    await sql_store.update(changed, 2, event=event, lease=mine)
    task = changed
    await asyncio.sleep(0.2)  # the lease lapses; another worker takes the task over
    assert [t for t, _ in await sql_store.claim_expired_leases("other", 30.0)] == [task.id]
    before = await _state(sql_store, task.id)
    changed, event = _late_write(task)
    with pytest.raises(LeaseLostError) as caught:
        await sql_store.update(changed, 3, event=event, lease=mine)
    assert caught.value.task_id == task.id and caught.value.lease == mine
    assert await _state(sql_store, task.id) == before
    # The same refusal when the version is stale too (the lease is checked first).
    with pytest.raises(LeaseLostError):
        await sql_store.update(changed, 2, event=event, lease=mine)
    assert await _state(sql_store, task.id) == before
    # Writes that are no leased run's (a follow-up, a cancel) are not fenced.
    await sql_store.update(changed, 3, event=event)
    assert (await _state(sql_store, task.id))[0] == 4


async def test_each_acquisition_is_a_new_token_even_by_the_same_worker(sql_store: Any) -> None:
    task = await _working(sql_store)
    first = await sql_store.acquire_lease(task.id, "w", 30.0)
    assert await sql_store.acquire_lease(task.id, "other", 30.0) is None  # held by w
    second = await sql_store.acquire_lease(task.id, "w", 30.0)
    assert second > first
    changed, event = _late_write(task)
    with pytest.raises(LeaseLostError):
        await sql_store.update(changed, 2, event=event, lease=first)
    await sql_store.update(changed, 2, event=event, lease=second)
    # The old acquisition cannot release the new one either.
    await sql_store.release_lease(task.id, "w", first)
    assert await sql_store.acquire_lease(task.id, "other", 30.0) is None
    await sql_store.release_lease(task.id, "w", second)
    # Released: its run may still record how it ended, until someone takes the lease.
    task, (changed, event) = changed, _late_write(changed)
    await sql_store.update(changed, 3, event=event, lease=second)
    third = await sql_store.acquire_lease(task.id, "other", 30.0)
    assert third is not None and third > second
    task, (changed, event) = changed, _late_write(changed)
    with pytest.raises(LeaseLostError):
        await sql_store.update(changed, 4, event=event, lease=second)


async def test_queueing_and_pulling_a_turn_take_the_lease_again(
    pg_dsn: str, pg_schema: str
) -> None:
    store = await PostgresTaskStore(pg_dsn, schema=pg_schema).open()
    queue = PostgresTurnQueue(store, f"{pg_dsn}?schema={pg_schema}")
    try:
        task = await _working(store)
        running = await store.acquire_lease(task.id, "w", 30.0)
        message = Message.user("more", task_id=task.id)
        await queue.push(Turn(task.id, SendMessageRequest(message=message), CallContext(), None))
        changed, event = _late_write(task)
        with pytest.raises(LeaseLostError):  # queued: the lease is the queue's
            await store.update(changed, 2, event=event, lease=running)
        turn = await queue.pull("w", 30.0)
        assert turn is not None and turn.lease is not None and turn.lease > running + 1
        await store.update(changed, 2, event=event, lease=turn.lease)
    finally:
        await queue.aclose()
        await store.aclose()


async def test_the_in_memory_store_ignores_the_lease() -> None:
    from a2a_models.server import InMemoryTaskStore

    store = InMemoryTaskStore()
    task = await _working(store)
    changed, event = _late_write(task)
    assert await store.update(changed, 2, event=event, lease=7) == 3


# --- the engine: a stalled run is stopped at its next write ----------------------------------

TTL = 0.6


class Pid(Agent):
    """Emits ``step i by NAME`` every 50 ms, 60 times, then completes (restartable)."""

    restartable = True

    def __init__(self, name: str) -> None:
        self.name = name

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        for i in range(60):
            yield context.working(f"step {i} by {self.name}")
            await asyncio.sleep(0.05)
        yield context.complete(f"done by {self.name}")


class Stalled(LeasingExecutor):
    """A :class:`LeasingExecutor` whose lease upkeep never runs (its renewal is stalled)."""

    async def check(self) -> int:
        return 0


def _text(event: Any) -> str:
    status = getattr(event, "status", None)
    return status.message.text if status is not None and status.message else ""


async def test_a_stalled_run_is_stopped_at_its_first_write_after_the_take_over(
    sql_store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    broker = InMemoryEventBroker()
    stalled = RequestHandler(
        Pid("A"),
        make_card(),
        store=sql_store,
        broker=broker,
        executor=lambda agent, writer: Stalled(agent, writer, worker_id="A", ttl=TTL),
    )
    other = LeasingExecutor(
        Pid("B"), TaskWriter(sql_store, broker, None, fast_id), worker_id="B", ttl=TTL
    )
    caplog.set_level(logging.WARNING, logger="a2a_models.server")
    try:
        task = await stalled.on_send_message(
            SendMessageRequest(
                message=Message.user("go"),
                configuration=SendMessageConfiguration(return_immediately=True),
            ),
            CallContext(),
        )
        assert isinstance(task, Task)
        await other.open()  # B takes the task over within TTL + TTL / 3 and runs it again
        rerun_leases: set[int | None] = set()
        async with asyncio.timeout(20):
            while (await sql_store.get(task.id, None)).task.status.state is not (
                TaskState.COMPLETED
            ):
                if (run := other.running(task.id)) is not None:
                    rerun_leases.add(run.lease)
                await asyncio.sleep(0.05)
        # The taken-over turn's run holds a lease of its own: its writes are fenced too.
        assert len(rerun_leases) == 1 and isinstance(rerun_leases.pop(), int)
        await asyncio.sleep(0.2)
        log = [event for _, event in await sql_store.events_after(task.id, 0)]
        texts = [_text(event) for event in log]
        first_b = next(i for i, text in enumerate(texts) if text.endswith("by B"))
        assert first_b > 1, texts  # A ran first
        assert not [t for t in texts[first_b:] if t.endswith("by A")], texts
        assert texts[-1] == "done by B"
        assert stalled.executor.active_runs() == 0  # A's run stopped
        assert "lost the lease on task" in caplog.text
    finally:
        await other.aclose()
        await stalled.aclose()


class _Unfenced(SQLiteTaskStore):
    """A store written before fencing: its ``update`` takes no ``lease``."""

    async def update(  # type: ignore[override]
        self, task: Task, expected_version: int, *, event: Any = None, history_offset: int = 0
    ) -> int:
        return await super().update(
            task, expected_version, event=event, history_offset=history_offset
        )


async def test_a_store_whose_update_takes_no_lease_runs_unfenced(tmp_path: Path) -> None:
    store = await _Unfenced(tmp_path / "old.db").open()
    handler = RequestHandler(
        Pid("A"),
        make_card(),
        store=store,
        executor=lambda agent, writer: LeasingExecutor(agent, writer, worker_id="A", ttl=5),
    )
    try:
        assert not handler.executor.fenced  # type: ignore[attr-defined]
        task = await asyncio.wait_for(
            handler.on_send_message(SendMessageRequest(message=Message.user("go")), CallContext()),
            20,
        )
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    finally:
        await handler.aclose()
        await store.aclose()


@pytest.mark.parametrize("ttl", [0.0, -1.0, float("nan"), float("inf")])
async def test_the_lease_ttl_must_be_a_positive_finite_number(sql_store: Any, ttl: float) -> None:
    writer = TaskWriter(sql_store, InMemoryEventBroker(), None, fast_id)
    with pytest.raises(ValueError, match="the lease ttl must be a positive number of seconds"):
        LeasingExecutor(Pid("A"), writer, ttl=ttl)


class _CountingRenewals(SQLiteTaskStore):
    renewals = 0

    async def renew_leases(self, worker: str, ttl: float) -> set[str]:
        self.renewals += 1
        return await super().renew_leases(worker, ttl)


async def test_a_keeper_holding_no_lease_renews_nothing(tmp_path: Path) -> None:
    # Before, every keeper round ran the renewal statement, also in an idle
    # process (an idle `a2a-models worker`: 6 of its 21 statements in 30 s).
    # Now it stops once a renewal found no lease, until something took one.
    store = _CountingRenewals(tmp_path / "renewals.db")
    await store.open()
    executor = LeasingExecutor(
        Pid("A"), TaskWriter(store, InMemoryEventBroker(), None, fast_id), worker_id="A", ttl=TTL
    )
    try:
        task = await _working(store)
        for _ in range(3):
            await executor.check()
        assert store.renewals == 1  # the first looks (a worker id may outlive a process)

        async def nothing() -> None:
            return None

        await executor.taking(nothing, lambda turn: turn is not None)  # an empty pull
        await executor.check()
        assert store.renewals == 1

        epoch = await executor.taking(lambda: store.acquire_lease(task.id, "A", TTL))
        assert epoch
        await executor.check()
        assert store.renewals == 2  # renewed (and found) the lease taken
        await store.release_lease(task.id, "A")
        await executor.check()
        await executor.check()
        assert store.renewals == 3  # found none: stops again

        # A lease being taken while a renewal runs: the renewal may miss it, so the
        # next round renews again.
        release = asyncio.Event()

        async def slow_acquire() -> int | None:
            await release.wait()
            return await store.acquire_lease(task.id, "A", TTL)

        taking = asyncio.ensure_future(executor.taking(slow_acquire))
        await asyncio.sleep(0)
        checking = asyncio.ensure_future(executor.check())
        await asyncio.sleep(0.05)
        release.set()
        await checking
        assert await taking
        await executor.check()
        assert store.renewals == 5
        assert await store.renew_leases("A", TTL) == {task.id}
    finally:
        await executor.aclose()
        await store.aclose()
