"""The turn queue in PostgreSQL, in one process: a :class:`FrontEndHandler` queues turns
with their task, :class:`PostgresTurnQueue` hands each to one puller with the task's
lease, a :class:`Worker` runs them, and a database of the previous schema migrates
forward (see tests/http/test_workers.py for the same with real processes)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from a2a_models import (
    CancelTaskRequest,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a_models.server import (
    ActiveTaskLimitError,
    Agent,
    AgentEvent,
    FrontEndHandler,
    RequestContext,
    Worker,
)
from a2a_models.stores import PostgresEventBroker, PostgresTaskStore, PostgresTurnQueue, _migrations

from ._support import make_card

NOW = SendMessageConfiguration(return_immediately=True)


def _url(dsn: str, schema: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}"


async def _rows(dsn: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(sql, params or None)
        return await cursor.fetchall() if cursor.description else []


@pytest.fixture
def channel() -> Iterator[str]:
    yield f"a2a_queue_{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def front(
    pg_dsn: str, pg_schema: str, channel: str
) -> AsyncIterator[tuple[FrontEndHandler, PostgresTurnQueue]]:
    store = PostgresTaskStore(pg_dsn, schema=pg_schema, max_active_tasks_per_owner=60)
    broker = PostgresEventBroker(pg_dsn, channel=channel)
    handler = FrontEndHandler(make_card(), store=store, broker=broker)
    queue = PostgresTurnQueue(store, _url(pg_dsn, pg_schema))
    try:
        yield handler, queue
    finally:
        await handler.aclose()
        await queue.aclose()
        await broker.aclose()
        await store.aclose()


async def _queue(handler: FrontEndHandler, text: str, owner: Any = None) -> Task:
    from a2a_models.server import CallContext

    task = await handler.on_send_message(
        SendMessageRequest(message=Message.user(text), configuration=NOW), CallContext(owner=owner)
    )
    assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
    return task


async def test_a_turn_is_queued_with_its_task_and_taken_once_with_the_lease(
    front: tuple[FrontEndHandler, PostgresTurnQueue], pg_dsn: str, pg_schema: str
) -> None:
    handler, queue = front
    tasks = [await _queue(handler, f"job {i}") for i in range(50)]
    assert await queue.length() == 50

    async def puller(name: str) -> list[str]:
        got = []
        while (turn := await queue.pull(name, 30.0)) is not None:
            assert turn.request.message.text.startswith("job ")
            got.append(turn.task_id)
        return got

    names = [f"w{i}" for i in range(5)]
    taken = await asyncio.gather(*(puller(name) for name in names))
    flat = [task_id for got in taken for task_id in got]
    assert sorted(flat) == sorted(t.id for t in tasks)  # each turn exactly once
    owners = dict(await _rows(pg_dsn, f'SELECT id, lease_owner FROM "{pg_schema}".a2a_tasks'))
    for name, got in zip(names, taken, strict=True):
        assert all(owners[task_id] == name for task_id in got)
    assert await queue.length() == 0


async def test_no_turn_without_its_task_and_a_queued_task_is_not_orphaned(
    front: tuple[FrontEndHandler, PostgresTurnQueue], pg_dsn: str, pg_schema: str
) -> None:
    handler, queue = front
    for i in range(60):
        await _queue(handler, f"job {i}", owner="alice")
    with pytest.raises(ActiveTaskLimitError):
        await _queue(handler, "one too many", owner="alice")
    # The refused task's turn was rolled back with it.
    assert await queue.length() == 60
    # Waiting longer than any lease time is not a dead worker: nothing is taken over.
    await _rows(
        pg_dsn, f"UPDATE \"{pg_schema}\".a2a_tasks SET updated_at = now() - interval '1 hour'"
    )
    assert await handler.store.claim_expired_leases("w", 1.0) == []  # type: ignore[attr-defined]


class Steps(Agent):
    """``N DELAY``: N working updates DELAY apart, then completed; ``ask``: input-required."""

    restartable = False

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.ran.append(context.task_id)
        if context.message.text == "ask":
            yield context.ask("more?")
            return
        steps, delay = context.message.text.split()
        for i in range(int(steps)):
            yield context.working(f"step {i}")
            await asyncio.sleep(float(delay))
        yield context.complete("done")


class RestartableSteps(Steps):
    restartable = True


async def _worker(
    agent: Agent, pg_dsn: str, pg_schema: str, channel: str
) -> tuple[Worker, list[Any]]:
    store = PostgresTaskStore(pg_dsn, schema=pg_schema)
    broker = PostgresEventBroker(pg_dsn, channel=channel)
    queue = PostgresTurnQueue(store, _url(pg_dsn, pg_schema))
    return Worker(agent, store, broker, queue, concurrency=4, ttl=5.0, poll=0.2), [
        queue,
        broker,
        store,
    ]


@contextlib.asynccontextmanager
async def _running_worker(
    agent: Agent, pg_dsn: str, pg_schema: str, channel: str
) -> AsyncIterator[None]:
    """A worker running ``agent`` on the queue while the block runs; stopped after it."""
    worker, closers = await _worker(agent, pg_dsn, pg_schema, channel)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop, grace=5))
    try:
        yield
    finally:
        stop.set()
        await running
        for closer in closers:
            await closer.aclose()


async def test_a_worker_runs_turns_and_follow_ups_and_blocking_sends_wait_for_it(
    front: tuple[FrontEndHandler, PostgresTurnQueue], pg_dsn: str, pg_schema: str, channel: str
) -> None:
    handler, _ = front
    agent = Steps()
    async with _running_worker(agent, pg_dsn, pg_schema, channel):
        async with asyncio.timeout(30):
            done = await handler.on_send_message(SendMessageRequest(message=Message.user("2 0")))
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
            asked = await handler.on_send_message(SendMessageRequest(message=Message.user("ask")))
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            follow = Message.user("1 0", task_id=asked.id, context_id=asked.context_id)
            again = await handler.on_send_message(SendMessageRequest(message=follow))
            assert isinstance(again, Task) and again.status.state is TaskState.COMPLETED
            assert [m.text for m in again.history][-3:] == ["1 0", "step 0", "done"]
        assert agent.ran == [done.id, asked.id, asked.id]


async def test_a_follow_up_the_worker_answers_before_the_front_end_reads_it_back_is_answered(
    front: tuple[FrontEndHandler, PostgresTurnQueue],
    pg_dsn: str,
    pg_schema: str,
    channel: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The front end reads the task back after accepting a follow-up (queued with it): a
    worker may have run the turn by then, so the task read is already the worker's answer.
    The blocking send returns it and the front end follows the task no more. Before, it
    waited for events after that answer, which never came (found by a soak: 52 of
    ~1,750 follow-ups): the SendMessage hung, and a run, a broker subscription and an
    asyncio task stayed for as long as the task waited for input."""
    handler, _ = front
    agent = Steps()
    async with _running_worker(agent, pg_dsn, pg_schema, channel):
        async with asyncio.timeout(30):
            asked = await handler.on_send_message(SendMessageRequest(message=Message.user("ask")))
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            read_back = handler._get

            async def after_the_worker(*args: Any, **kwargs: Any) -> Any:
                if kwargs.get("history_length") is None:
                    # The read back of the accepted follow-up: the worker answers first.
                    while len(agent.ran) < 2 or (
                        (
                            await handler.store.get(asked.id, None, history_length=0)
                        ).task.status.state  # type: ignore[union-attr]
                        is not TaskState.INPUT_REQUIRED
                    ):
                        await asyncio.sleep(0.02)
                    monkeypatch.setattr(handler, "_get", read_back)
                return await read_back(*args, **kwargs)

            monkeypatch.setattr(handler, "_get", after_the_worker)
            follow = Message.user("ask", task_id=asked.id, context_id=asked.context_id)
        async with asyncio.timeout(10):
            again = await handler.on_send_message(SendMessageRequest(message=follow))
        assert isinstance(again, Task) and again.status.state is TaskState.INPUT_REQUIRED
        assert agent.ran == [asked.id, asked.id]
        assert handler.active_runs() == 0
        assert handler.broker.subscriber_count(asked.id) == 0  # type: ignore[attr-defined]


async def test_stopping_a_worker_hands_a_restartable_turn_to_another(
    front: tuple[FrontEndHandler, PostgresTurnQueue], pg_dsn: str, pg_schema: str, channel: str
) -> None:
    handler, queue = front
    first_agent, second_agent = RestartableSteps(), RestartableSteps()
    first, closers = await _worker(first_agent, pg_dsn, pg_schema, channel)
    stop_first = asyncio.Event()
    running = asyncio.create_task(first.run(stop_first, grace=0.2))
    task = await _queue(handler, "50 0.1")
    async with asyncio.timeout(20):
        while not first_agent.ran:
            await asyncio.sleep(0.02)
        stop_first.set()
        await running  # grace over: the turn goes back to the queue, the lease is released
    assert await queue.length() == 1
    lease = await _rows(
        pg_dsn,
        f'SELECT lease_owner FROM "{pg_schema}".a2a_tasks WHERE id = %s',
        task.id,
    )
    assert lease == [("queue",)]
    second, more = await _worker(second_agent, pg_dsn, pg_schema, channel)
    stop_second = asyncio.Event()
    running = asyncio.create_task(second.run(stop_second, grace=5))
    try:
        async with asyncio.timeout(30):
            while not second_agent.ran:
                await asyncio.sleep(0.02)
        assert second_agent.ran == [task.id]
        # The handed-over turn is watched for cancels like any pulled one: a cancel
        # on the front end stops it at once (its 50 steps would take 5 s).
        canceled = await handler.on_cancel_task(CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        async with asyncio.timeout(2):
            while second.executor.active_runs():
                await asyncio.sleep(0.02)
    finally:
        stop_second.set()
        await running
        for closer in [*closers, *more]:
            await closer.aclose()


async def test_a_database_of_the_previous_schema_migrates_forward(
    pg_dsn: str, pg_schema: str, channel: str
) -> None:
    # Written by the version before the queue (latest migration 5): a task waits for input.
    import psycopg

    from a2a_models.server import apply_event

    from ._schema6 import create_schema, whole, write_task

    task = Task.submitted(Message.user("hello"))
    asked = apply_event(task, _ask(task))
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        write_task(conn, create_schema(conn, pg_schema, 5), asked, [whole(task), whole(_ask(task))])
    versions = await _rows(pg_dsn, f'SELECT version FROM "{pg_schema}".a2a_schema_migrations')
    assert sorted(v for (v,) in versions) == [1, 2, 3, 4, 5]

    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await store.open()
        versions = await _rows(pg_dsn, f'SELECT version FROM "{pg_schema}".a2a_schema_migrations')
        assert sorted(v for (v,) in versions) == [m.version for m in _migrations.MIGRATIONS]
        broker = PostgresEventBroker(pg_dsn, channel=channel)
        handler = FrontEndHandler(make_card(), store=store, broker=broker)
        queue = PostgresTurnQueue(store, _url(pg_dsn, pg_schema))
        try:
            follow = Message.user("more", task_id=task.id, context_id=task.context_id)
            accepted = await handler.on_send_message(
                SendMessageRequest(message=follow, configuration=NOW)
            )
            assert isinstance(accepted, Task) and accepted.status.state is TaskState.WORKING
            turn = await queue.pull("w", 30.0)
            assert turn is not None and turn.task_id == task.id
            assert turn.request.message.text == "more" and not turn.is_new
            assert [m.text for m in accepted.history] == ["hello", "more?", "more"]
        finally:
            await handler.aclose()
            await queue.aclose()
            await broker.aclose()


def _ask(task: Task) -> Any:
    from a2a_models import TaskStatus, TaskStatusUpdateEvent, utc_now

    return TaskStatusUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        status=TaskStatus(
            state=TaskState.INPUT_REQUIRED,
            message=Message.agent("more?", task_id=task.id, context_id=task.context_id),
            timestamp=utc_now(),
        ),
    )


class _GoneStore(PostgresTaskStore):
    """Fails task reads and lease releases while ``down`` (the database gone for them)."""

    down = False

    def _check(self) -> None:
        if self.down:
            import psycopg

            raise psycopg.OperationalError("the database is gone")

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return await super().get(*args, **kwargs)

    async def release_lease(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        await super().release_lease(*args, **kwargs)


class _GoneQueue(PostgresTurnQueue):
    async def push(self, *args: Any, **kwargs: Any) -> Any:
        self.store._check()  # type: ignore[attr-defined]
        return await super().push(*args, **kwargs)


async def test_a_turn_that_could_not_be_queued_again_is_taken_over_once_the_store_is_back(
    front: tuple[FrontEndHandler, PostgresTurnQueue],
    pg_dsn: str,
    pg_schema: str,
    channel: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A pulled turn cannot start (the store is down) nor go back to the queue for
    # longer than that is tried. The pull gave this worker the task's lease and the
    # worker renews all of its leases: kept, the task stayed submitted for ever.
    from a2a_models.server import STOPPED_MESSAGE, _execution

    monkeypatch.setattr(_execution, "_FAIL_RETRY_FIRST", 0.01)
    monkeypatch.setattr(_execution, "_FAIL_RETRY_FOR", 0.3)
    handler, _ = front
    store = _GoneStore(pg_dsn, schema=pg_schema)
    broker = PostgresEventBroker(pg_dsn, channel=channel)
    queue = _GoneQueue(store, _url(pg_dsn, pg_schema))
    agent = Steps()
    worker = Worker(agent, store, broker, queue, concurrency=4, ttl=1.0, poll=0.2)
    store.down = True
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop, grace=5))
    try:
        task = await _queue(handler, "1 0")
        async with asyncio.timeout(30):
            while f"gave up trying to queue the turn of task {task.id}" not in caplog.text:
                await asyncio.sleep(0.02)
            store.down = False
            while True:
                stored = await handler.store.get(task.id, None)
                assert stored is not None
                if stored.task.status.state is not TaskState.SUBMITTED:
                    break
                await asyncio.sleep(0.05)
        assert stored.task.status.state is TaskState.FAILED
        assert stored.task.status.message is not None
        assert stored.task.status.message.text == STOPPED_MESSAGE
        assert agent.ran == []
    finally:
        stop.set()
        await running
        for closer in (queue, broker, store):
            await closer.aclose()


async def test_a_blocking_send_waits_through_a_refused_connection(
    front: tuple[FrontEndHandler, PostgresTurnQueue],
    pg_dsn: str,
    pg_schema: str,
    channel: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A front end that cannot follow its task for a moment (its broker's connection
    refused: PostgreSQL at max_connections, found with 8 front ends + 8 workers) keeps
    waiting for the worker's answer. Before, the blocking SendMessage answered the
    task as it was then (submitted), without an error."""
    import psycopg

    handler, _ = front
    broker = handler.broker
    subscribe = broker.subscribe
    refused: list[str] = []

    async def refuse_once(task_id: str) -> Any:
        if not refused:
            refused.append(task_id)
            raise psycopg.OperationalError("FATAL: sorry, too many clients already")
        return await subscribe(task_id)

    monkeypatch.setattr(broker, "subscribe", refuse_once)
    async with _running_worker(Steps(), pg_dsn, pg_schema, channel):
        async with asyncio.timeout(30):
            done = await handler.on_send_message(SendMessageRequest(message=Message.user("2 0")))
    assert refused == [done.id]
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
