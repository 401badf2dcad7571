"""A task write whose connection is cut at COMMIT: the store finds out whether it
committed (``pg_xact_status`` of the transaction id its first statement read)
instead of failing a write that took effect, and runs one that did not again.

Two deterministic cuts: a TCP proxy that drops the connection right after the
server answered the COMMIT (committed, answer lost), and a deferred trigger that
sleeps at COMMIT while the test terminates the backend (not committed).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2a_models import Message, Task
from a2a_models.server import RequestContext, apply_event
from a2a_models.stores import PostgresTaskStore

from ._pgproxy import PgProxy, pg_proxy
from .test_postgres import _query

COMMIT = b"COMMIT\x00"


@pytest.fixture
async def cutter(pg_dsn: str) -> AsyncIterator[tuple[PgProxy, str]]:
    async with pg_proxy(pg_dsn) as (proxy, dsn):
        yield proxy, dsn


async def _execute(dsn: str, sql: str, *params: object) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql, params or None)


async def _submitted(store: PostgresTaskStore) -> Task:
    task = Task.submitted(Message.user("work"))
    await store.create(task, None, event=task)
    return task


def _working(task: Task) -> tuple[Task, Any]:
    context = RequestContext(message=task.history[0], task_id=task.id, context_id=task.context_id)
    event = context.working("started")
    return apply_event(task, event), event


async def _log(dsn: str, schema: str, task_id: str) -> tuple[int, int, int]:
    """The task row's version and last_seq, and how many events its log holds."""
    rows = await _query(
        dsn,
        f'SELECT version, last_seq FROM "{schema}".a2a_tasks WHERE id = %s',
        task_id,
    )
    store = PostgresTaskStore(dsn, schema=schema)
    try:
        events = await store.events_after(task_id, 0)
    finally:
        await store.aclose()
    return int(rows[0][0]), int(rows[0][1]), len(events)


async def test_a_write_whose_commit_answer_is_lost_stands(
    pg_dsn: str, pg_schema: str, cutter: tuple[PgProxy, str]
) -> None:
    # Before, the store raised the connection error of a write the server had
    # committed: the engine failed a task whose status was in fact stored.
    proxy, dsn = cutter
    store = PostgresTaskStore(dsn, schema=pg_schema)
    try:
        await store.open()
        task = await _submitted(store)
        working, event = _working(task)
        proxy.armed = COMMIT
        assert await store.update(working, 1, event=event) == 2
        assert proxy.cut == 1
        # A creation likewise.
        proxy.armed = COMMIT
        other = await _submitted(store)
        assert proxy.cut == 2
        stored = await store.get(other.id, None)
        assert stored is not None and stored.version == 1
    finally:
        await store.aclose()
    # Written once: not run again after it had committed.
    assert await _log(pg_dsn, pg_schema, task.id) == (2, 2, 2)
    assert await _log(pg_dsn, pg_schema, other.id) == (1, 1, 1)


async def test_a_lease_taken_whose_answer_is_lost_is_taken(
    pg_dsn: str, pg_schema: str, cutter: tuple[PgProxy, str]
) -> None:
    # The first write of a turn on a replica (an autocommit UPDATE). Before, its lost
    # answer failed the task ("could not record the progress"); taking the lease again
    # is harmless (the same worker), so the store does.
    proxy, dsn = cutter
    store = PostgresTaskStore(dsn, schema=pg_schema)
    try:
        task = await _submitted(await store.open())
        proxy.armed = b"lease_epoch = lease_epoch + 1"
        assert await store.acquire_lease(task.id, "w", 15) == 2  # taken twice
        assert proxy.cut == 1
    finally:
        await store.aclose()
    rows = await _query(
        pg_dsn,
        f'SELECT lease_owner, lease_epoch FROM "{pg_schema}".a2a_tasks WHERE id = %s',
        task.id,
    )
    assert rows == [("w", 2)]


@pytest.mark.parametrize("cuts", [1, 2])
async def test_a_write_cut_off_at_commit_before_it_committed_runs_again(
    pg_dsn: str, pg_schema: str, cuts: int
) -> None:
    # pg_terminate_backend while the COMMIT runs a deferred trigger (which sleeps the
    # first ``cuts`` times only: a sequence is not rolled back): the transaction is
    # rolled back. Before, the store raised; now it looks the transaction up (aborted)
    # and runs the write again on another connection. Twice: a server killing every
    # connection takes a while, and the first new one may be killed too.
    name = f"a2a-cut-{uuid.uuid4().hex[:12]}"
    store = PostgresTaskStore(pg_dsn, schema=pg_schema, connect_kwargs={"application_name": name})
    q = f'"{pg_schema}"'
    try:
        await store.open()
        task = await _submitted(store)
        for statement in (
            f"CREATE SEQUENCE {q}.commits",
            f"CREATE FUNCTION {q}.stall() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN IF nextval('{q}.commits') <= {cuts} THEN PERFORM pg_sleep(60); END IF;"
            " RETURN NULL; END $$",
            f"CREATE CONSTRAINT TRIGGER stall AFTER UPDATE ON {q}.a2a_tasks"
            f" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {q}.stall()",
        ):
            await _execute(pg_dsn, statement)
        working, event = _working(task)
        writing = asyncio.ensure_future(store.update(working, 1, event=event))
        async with asyncio.timeout(20):
            killed: list[int] = []
            for _ in range(cuts):
                while not (
                    sleeping := await _query(
                        pg_dsn,
                        "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
                        " AND wait_event = 'PgSleep' AND pid <> ALL(%s)",
                        name,
                        killed,
                    )
                ):
                    await asyncio.sleep(0.02)
                killed.append(sleeping[0][0])
                await _execute(pg_dsn, "SELECT pg_terminate_backend(%s)", killed[-1])
            assert await writing == 2
        # The trigger ran at the cut COMMITs and at the one that went through.
        assert await _query(pg_dsn, f"SELECT last_value FROM {q}.commits") == [(cuts + 1,)]
    finally:
        await store.aclose()
    assert await _log(pg_dsn, pg_schema, task.id) == (2, 2, 2)


async def test_a_pull_cut_off_returns_its_turn_or_leaves_it_queued(
    pg_dsn: str, pg_schema: str, cutter: tuple[PgProxy, str]
) -> None:
    # Before, a pull was one autocommit statement: cut after the server ran it, the
    # turn was deleted and the task leased to the worker, which never learnt of it.
    from a2a_models import SendMessageRequest
    from a2a_models.server import CallContext, Turn
    from a2a_models.stores import PostgresTurnQueue

    proxy, dsn = cutter
    store = PostgresTaskStore(dsn, schema=pg_schema)
    queue = PostgresTurnQueue(store, f"{dsn}&schema={pg_schema}")
    try:
        tasks = [await _submitted(await store.open()) for _ in range(2)]
        for task in tasks:
            await queue.push(
                Turn(task.id, SendMessageRequest(message=task.history[0]), CallContext(), None)
            )
        # The answer to the pull itself lost: rolled back, pulled again.
        proxy.armed = b"FOR UPDATE SKIP LOCKED) RETURNING task_id"
        first = await queue.pull("w", 15)
        # The answer to its COMMIT lost: it committed, so the turn is returned.
        proxy.armed = COMMIT
        second = await queue.pull("w", 15)
        assert proxy.cut == 2
        assert first is not None and second is not None
        assert [first.task_id, second.task_id] == [t.id for t in tasks]
        assert await queue.length() == 0
        assert await queue.pull("w", 15) is None
    finally:
        await queue.aclose()
        await store.aclose()
    rows = await _query(pg_dsn, f'SELECT lease_owner FROM "{pg_schema}".a2a_tasks')
    assert rows == [("w",), ("w",)]


async def test_a_write_refused_on_a_live_connection_is_not_run_again(
    pg_dsn: str, pg_schema: str
) -> None:
    # A statement_timeout (or a deadlock) leaves the connection up: the server said
    # no, and the error reaches the caller as before, after one try.
    import psycopg

    q = f'"{pg_schema}"'
    store = PostgresTaskStore(
        pg_dsn, schema=pg_schema, connect_kwargs={"options": "-c statement_timeout=300"}
    )
    try:
        task = await _submitted(await store.open())
        for statement in (
            f"CREATE SEQUENCE {q}.commits",
            f"CREATE FUNCTION {q}.stall() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN PERFORM nextval('{q}.commits'); PERFORM pg_sleep(5); RETURN NULL; END $$",
            f"CREATE TRIGGER stall AFTER UPDATE ON {q}.a2a_tasks"
            f" FOR EACH ROW EXECUTE FUNCTION {q}.stall()",
        ):
            await _execute(pg_dsn, statement)
        working, event = _working(task)
        with pytest.raises(psycopg.errors.QueryCanceled):
            await store.update(working, 1, event=event)
        assert await _query(pg_dsn, f"SELECT last_value FROM {q}.commits") == [(1,)]
    finally:
        await store.aclose()
    assert await _log(pg_dsn, pg_schema, task.id) == (1, 1, 1)


async def test_claims_and_queued_turns_cut_off_are_neither_lost_nor_doubled(
    pg_dsn: str, pg_schema: str, cutter: tuple[PgProxy, str]
) -> None:
    # Before, each was one autocommit statement: cut after the server ran it, a
    # take-over claim left leases its worker did not know of (renewed, never run),
    # and a turn queued again raised, so the caller queued it a second time.
    from a2a_models import SendMessageRequest
    from a2a_models.server import CallContext, Turn
    from a2a_models.stores import PostgresTurnQueue

    proxy, dsn = cutter
    store = PostgresTaskStore(dsn, schema=pg_schema)
    queue = PostgresTurnQueue(store, f"{dsn}&schema={pg_schema}")
    claimed = []
    try:
        await store.open()
        for armed in (b"lease_expires < now() OR lease_expires IS NULL", COMMIT):
            task = await _submitted(store)
            assert await store.acquire_lease(task.id, "dead", 0.001)
            await asyncio.sleep(0.05)
            proxy.armed = armed
            claimed.append((task.id, await store.claim_expired_leases("w", 15)))
        turn = Turn(task.id, SendMessageRequest(message=task.history[0]), CallContext(), None)
        for armed in (b"INSERT INTO", COMMIT):
            proxy.armed = armed
            await queue.push(turn)
        assert proxy.cut == 4
        assert await queue.length() == 2  # one per push
    finally:
        await queue.aclose()
        await store.aclose()
    assert [found for _, found in claimed] == [[(task_id, "[null,null]")] for task_id, _ in claimed]
