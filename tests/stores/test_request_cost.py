"""What one SendMessage costs the store: calls, transactions, commits (counted, not timed).

``a2a-models serve`` runs on SQLite by default, with a :class:`LeasingExecutor` and a
push dispatcher. A task-creating SendMessage whose agent sends one ``working`` update
and then completes used to cost 8 store calls and 5 fsync'd commits (create, take
the lease, two updates, release the lease), two reads of the push configs and a
read of the task for the answer. Now: the lease is taken in the transaction that
creates the task (``create_leased``), given up in the one that writes the turn's last
state (``update(release_lease=True)``), the answer is the task as the run wrote it,
and the push configs are not read when the write's transaction found none
(``no_push_configs_at``). Counted on SQLite (its statements, through the
connection's trace callback: every ``BEGIN IMMEDIATE`` is one commit fsynced at
``synchronous=FULL``) and on PostgreSQL (its transactions and statements).

A first message retried with its ``messageId`` (no ``taskId``) costs reads only in
the process that ran it (SQLite 8 statements, no commit; PostgreSQL 3 transactions,
4 statements), and one commit (the refused create) in another (SQLite 11 statements);
before, each retry made a second task: 34 statements and 3 commits, as a new task
still costs.
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2a_models import Message, SendMessageRequest, Task, TaskPushNotificationConfig, TaskState
from a2a_models.adapters.http import WebhookPushSender
from a2a_models.server import (
    Agent,
    AgentEvent,
    CallContext,
    InMemoryTaskStore,
    LeasingExecutor,
    RequestContext,
    RequestHandler,
    TaskStore,
)
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore

from ._support import make_card
from .conftest import PG_DSN

_METHODS = (
    "get",
    "create",
    "create_leased",
    "update",
    "events_after",
    "list_push_targets",
    "list_push_configs",
    "acquire_lease",
    "release_lease",
    "find_message",
)


class _Echo(Agent):
    """``bench/bench_echo_agent.py``'s ``stream 1``: one working update, then completed;
    ``turn``: asks for the next message (input-required)."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        if context.message.text.startswith("turn"):
            yield context.ask("got it")
            return
        yield context.working("step 1")
        yield context.complete()


def _count_calls(store: TaskStore, calls: Counter[str]) -> None:
    for name in _METHODS:
        method = getattr(store, name, None)
        if method is None:
            continue

        def counted(method: Callable[..., Any] = method, name: str = name) -> Any:
            @functools.wraps(method)
            async def call(*args: Any, **kwargs: Any) -> Any:
                calls[name] += 1
                return await method(*args, **kwargs)

            return call

        setattr(store, name, counted())


class _Counted:
    """A store, its engine (as ``serve`` builds it) and what one request costs."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.calls: Counter[str] = Counter()
        self.sql: Counter[str] = Counter()
        #: Every statement (SQLite, see _trace_sqlite's ``total``).
        self.total: Counter[str] = Counter()
        _count_calls(store, self.calls)
        leasing: dict[str, Any] = {}
        if not isinstance(store, InMemoryTaskStore):  # as serve does for a store with leases
            leasing["executor"] = lambda a, w: LeasingExecutor(a, w, ttl=15.0)
        self.handler = RequestHandler(
            _Echo(), make_card(), store=store, push_sender=WebhookPushSender(), **leasing
        )

    async def send(
        self,
        text: str,
        task_id: str | None = None,
        *,
        stream: bool = False,
        message_id: str | None = None,
    ) -> Any:
        message = Message.user(text, task_id=task_id)
        if message_id is not None:
            message = attrs.evolve(message, message_id=message_id)
        request = SendMessageRequest(message=message)
        if not stream:
            return await self.handler.on_send_message(request, CallContext())
        events = await self.handler.on_send_streaming_message(request, CallContext())
        async with events as items:
            return [item async for item in items]

    async def cost(
        self,
        text: str,
        task_id: str | None = None,
        *,
        stream: bool = False,
        message_id: str | None = None,
    ) -> Any:
        """Send, let the run and the push dispatcher finish, and count from a clean slate."""
        await self.settle()
        self.calls.clear()
        self.sql.clear()
        self.total.clear()
        answer = await self.send(text, task_id, stream=stream, message_id=message_id)
        await self.settle()
        return answer

    async def settle(self) -> None:
        await self.handler.executor.idle()
        for _ in range(20):  # the dispatcher's lanes run as tasks of their own
            await asyncio.sleep(0)
        await asyncio.sleep(0.05)


def _trace_sqlite(
    store: SQLiteTaskStore, sql: Counter[str], total: Counter[str] | None = None
) -> None:
    def trace(statement: str) -> None:
        words = statement.split()
        if total is not None:
            total["statements"] += 1
        if words[:2] == ["BEGIN", "IMMEDIATE"]:
            sql["write transactions"] += 1
        elif words[:1] == ["BEGIN"]:
            sql["read transactions"] += 1
        elif "a2a_push_configs" in statement and words[:1] == ["SELECT"]:
            sql["push config reads"] += 1

    store._call(lambda db: db.set_trace_callback(trace))


@pytest.fixture
async def sqlite(tmp_path: Path) -> AsyncIterator[_Counted]:
    store = await SQLiteTaskStore(tmp_path / "cost.db").open()
    counted = _Counted(store)
    _trace_sqlite(store, counted.sql, counted.total)
    await counted.send("warm up")
    try:
        yield counted
    finally:
        await counted.handler.aclose()
        await store.aclose()


@pytest.fixture
async def postgres(pg_schema: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[_Counted]:
    import psycopg

    store = await PostgresTaskStore(PG_DSN, schema=pg_schema).open()
    counted = _Counted(store)
    write, run = store._write, store._run

    async def counted_write(fn: Any) -> Any:
        counted.sql["transactions"] += 1
        return await write(fn)

    async def counted_run(fn: Any, **kwargs: Any) -> Any:
        counted.sql["transactions"] += 1
        return await run(fn, **kwargs)

    monkeypatch.setattr(store, "_write", counted_write)
    monkeypatch.setattr(store, "_run", counted_run)
    execute = psycopg.AsyncConnection.execute

    async def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counted.sql["statements"] += 1
        return await execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncConnection, "execute", counted_execute)
    await counted.send("warm up")
    try:
        yield counted
    finally:
        await counted.handler.aclose()
        await store.aclose()


async def _lease_of(store: SQLiteTaskStore, task_id: str) -> tuple[Any, ...]:
    def read(db: Any) -> tuple[Any, ...]:
        row: tuple[Any, ...] = db.execute(
            "SELECT lease_owner, lease_expires, lease_epoch FROM a2a_tasks WHERE id = ?",
            (task_id,),
        ).fetchone()
        return row

    return await store._run(read)


async def test_a_task_creating_send_costs_three_commits_on_sqlite(sqlite: _Counted) -> None:
    task = await sqlite.cost("stream 1")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    # Before: create, acquire_lease, update x2, release_lease, list_push_targets x2, get.
    assert sqlite.calls == {"create_leased": 1, "update": 2}
    # Before: 5 write transactions (5 fsyncs), 1 read transaction, 2 push config reads.
    assert sqlite.sql == {"write transactions": 3}
    # The answer is the task as the run wrote it: history (the user's message and the
    # agent's 'step 1') as a read of the store gives it.
    stored = await sqlite.store.get(task.id, None)
    assert stored is not None and stored.task == task
    assert [m.text for m in task.history] == ["stream 1", "step 1"]
    assert isinstance(sqlite.store, SQLiteTaskStore)
    owner, expires, epoch = await _lease_of(sqlite.store, task.id)
    assert (owner, expires, epoch) == (None, None, 1)  # taken once, given up by the last write


async def test_a_streaming_send_costs_three_commits_on_sqlite(sqlite: _Counted) -> None:
    items = await sqlite.cost("stream 1", stream=True)
    assert [type(item[1]).__name__ for item in items] == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    # The stream's catch-up read of the log is its own (it starts after the task exists).
    assert sqlite.calls == {"create_leased": 1, "update": 2, "events_after": 1}
    assert sqlite.sql == {"write transactions": 3, "read transactions": 1}


async def test_a_continued_task_costs_three_commits_on_sqlite(sqlite: _Counted) -> None:
    first = await sqlite.send("turn 1")
    assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
    task = await sqlite.cost("turn 2", first.id)
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    assert [m.text for m in task.history] == ["turn 1", "got it", "turn 2", "got it"]
    # Reads: the task (no history), the accepted turn for the agent, the answer.
    # Before: 4 gets (the run's first write read the task again) and a release_lease.
    assert sqlite.calls == {"get": 3, "update": 2, "acquire_lease": 1}
    # Accepting the message, taking the lease, the agent's answer (which releases it).
    assert sqlite.sql == {"write transactions": 3, "read transactions": 3}


async def test_a_task_creating_send_costs_three_transactions_on_postgres(
    postgres: _Counted,
) -> None:
    task = await postgres.cost("stream 1")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert postgres.calls == {"create_leased": 1, "update": 2}
    # Before: 9 transactions (3 writes, 6 single statements) and 15 statements.
    assert postgres.sql == {"transactions": 3, "statements": 8}


async def test_the_in_memory_store_answers_without_reading_the_task_back() -> None:
    counted = _Counted(InMemoryTaskStore())
    await counted.send("warm up")
    task = await counted.cost("stream 1")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert counted.calls["get"] == 0
    assert counted.calls["create"] == 1 and counted.calls["update"] == 2
    await counted.handler.aclose()


# --- what the push dispatcher may skip, and what it may not -------------------------------


def _config(task_id: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(id="c", task_id=task_id, url="https://hook.example/a2a")


async def _status(store: TaskStore, task_id: str, state: TaskState) -> int:
    stored = await store.get(task_id, None, history_length=0)
    assert stored is not None
    context = RequestContext(
        message=Message.user("x", task_id=task_id),
        task_id=task_id,
        context_id=stored.task.context_id or task_id,
    )
    event = context.status(state)
    from a2a_models.server import apply_event

    await store.update(apply_event(stored.task, event), stored.version, event=event)
    return stored.last_seq + 1


@pytest.fixture(params=["sqlite", "postgres"])
async def replicas(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Any, Any]]:
    """Two store instances on one database: two processes."""
    if request.param == "sqlite":
        pair: list[Any] = [SQLiteTaskStore(tmp_path / "pair.db") for _ in range(2)]
    else:
        schema = request.getfixturevalue("pg_schema")
        pair = [PostgresTaskStore(PG_DSN, schema=schema) for _ in range(2)]
    try:
        yield await pair[0].open(), await pair[1].open()
    finally:
        for store in pair:
            await store.aclose()


async def test_a_config_created_by_another_process_is_seen_by_the_next_status(
    replicas: tuple[Any, Any],
) -> None:
    here, there = replicas
    here.push_claim_ttl = 0.0  # what it owes is claimable at once
    task = Task.submitted(Message.user("go"))
    await here.create(task, None, event=task)
    assert here.no_push_configs_at(task.id, 1)  # a new task has none
    working = await _status(here, task.id, TaskState.WORKING)
    assert here.no_push_configs_at(task.id, working)
    await there.set_push_config(task.id, _config(task.id))  # another process
    # The write that logs the next status finds it (and owes it that status): no skip.
    done = await _status(here, task.id, TaskState.COMPLETED)
    assert not here.no_push_configs_at(task.id, done)
    assert not here.no_push_configs_at(task.id, 1)
    assert await here.claim_owed_pushes(0.0, 10) == [(task.id, "c", done)]
    # Never known for a seq the store did not log.
    assert not there.no_push_configs_at(task.id, 1)


async def test_a_config_created_here_ends_the_span_at_once(replicas: tuple[Any, Any]) -> None:
    here, _ = replicas
    task = Task.submitted(Message.user("go"))
    await here.create(task, None, event=task)
    await here.set_push_config(task.id, _config(task.id))
    # The task's own request config: its event 1 is read for (and sent to) it.
    assert not here.no_push_configs_at(task.id, 1)


async def test_the_base_store_knows_of_no_pushless_event() -> None:
    assert not InMemoryTaskStore().no_push_configs_at("t", 1)


class _Audited(SQLiteTaskStore):
    """A store whose ``create`` does more (an audit, say): ``create_leased`` calls it."""

    created: list[str]

    async def create(self, task: Task, *args: Any, **kwargs: Any) -> Any:
        self.created = [*getattr(self, "created", []), task.id]
        return await super().create(task, *args, **kwargs)


async def test_a_subclass_create_is_not_bypassed(tmp_path: Path) -> None:
    store = await _Audited(tmp_path / "audited.db").open()
    try:
        task = Task.submitted(Message.user("go"))
        stored, epoch = await store.create_leased(task, None, event=task, worker="w", ttl=15.0)
        assert store.created == [task.id] and stored.version == 1
        # No lease taken with it: the executor takes it once it knows the task exists.
        assert epoch is None and await _lease_of(store, task.id) == (None, None, 0)
    finally:
        await store.aclose()


class _FailingInsert(SQLiteTaskStore):
    """The transaction that creates a task (and takes its lease) fails."""

    async def _insert_task(self, new: Any) -> Any:
        raise OSError("disk I/O error")


class _FailingRelease(SQLiteTaskStore):
    """The turn's last write (the one that gives the lease up) fails once."""

    failed = 0

    async def update(self, task: Task, *args: Any, **kwargs: Any) -> int:
        if kwargs.get("release_lease") and not self.failed:
            self.failed += 1
            raise OSError("disk I/O error")
        return await super().update(task, *args, **kwargs)


async def test_a_failed_create_leaves_no_task_and_no_lease(tmp_path: Path) -> None:
    store = await _FailingInsert(tmp_path / "insert.db").open()
    counted = _Counted(store)
    try:
        with pytest.raises(Exception, match="could not record the task"):
            await counted.send("stream 1")
        await counted.settle()
        assert counted.calls == {"create_leased": 1}
        page = await store.list(None)
        assert not page.tasks
    finally:
        await counted.handler.aclose()
        await store.aclose()


async def test_a_failed_last_write_still_fails_the_task_and_gives_the_lease_up(
    tmp_path: Path,
) -> None:
    store = await _FailingRelease(tmp_path / "release.db").open()
    counted = _Counted(store)
    try:
        task = await counted.send("stream 1")
        await counted.settle()
        assert isinstance(task, Task) and task.status.state is TaskState.FAILED
        # The failed status is the turn's last write now: it gives the lease up.
        assert counted.calls["release_lease"] == 0
        assert await _lease_of(store, task.id) == (None, None, 1)
        stored = await store.get(task.id, None)
        assert stored is not None and stored.task == task
    finally:
        await counted.handler.aclose()
        await store.aclose()


# --- a retried first message (same messageId, no taskId) ----------------------------------


async def test_a_retried_first_message_costs_no_commit_on_sqlite(
    sqlite: _Counted, tmp_path: Path
) -> None:
    task = await sqlite.cost("stream 1", message_id="m-cost")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    # A new task costs what it did before the retries were looked for (34, 3).
    assert sqlite.total == {"statements": 34}
    assert sqlite.sql == {"write transactions": 3}
    # Retried in this process: the task is known here; reads only, no agent, no create.
    # Before: 34 statements and 3 commits (a second task, the agent run again).
    again = await sqlite.cost("stream 1", message_id="m-cost")
    assert isinstance(again, Task) and again.id == task.id
    assert sqlite.calls == {"find_message": 1, "get": 2}
    assert sqlite.total == {"statements": 8} and sqlite.sql == {"read transactions": 2}
    # Retried on another process: its create is refused in the transaction that looks
    # for the id. Before: 34 statements, 3 commits.
    store = await SQLiteTaskStore(tmp_path / "cost.db").open()
    other = _Counted(store)
    _trace_sqlite(store, other.sql, other.total)
    try:
        await other.send("warm up")
        elsewhere = await other.cost("stream 1", message_id="m-cost")
        assert isinstance(elsewhere, Task) and elsewhere.id == task.id
        assert other.calls == {"create_leased": 1, "find_message": 1, "get": 2}
        assert other.total == {"statements": 11}
        assert other.sql == {"write transactions": 1, "read transactions": 2}
    finally:
        await other.handler.aclose()
        await store.aclose()


async def test_a_retried_first_message_costs_no_write_on_postgres(postgres: _Counted) -> None:
    task = await postgres.cost("stream 1", message_id="m-cost")
    assert isinstance(task, Task)
    assert postgres.sql == {"transactions": 3, "statements": 8}  # as before
    again = await postgres.cost("stream 1", message_id="m-cost")
    assert isinstance(again, Task) and again.id == task.id
    # Before: 3 transactions, 8 statements (a second task).
    assert postgres.calls == {"find_message": 1, "get": 2}
    assert postgres.sql == {"transactions": 3, "statements": 4}
