"""Push notifications owed across crashes: the SQL stores' bookkeeping.

A status event marks the task's configs owed it (``owed_seq``) in the
transaction that logs it, claimed by the writing process for
``push_claim_ttl``; ``claim_owed_pushes`` hands out what is owed and no one
claims, by a partial index (its cost does not grow with the configs stored);
``push_delivered`` ends it. Migration 11 adds the columns: rows of an older
database start owed nothing, and an older version refuses the database.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from a2a_models import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.server import InMemoryTaskStore, PushNotificationSender, TaskStore
from a2a_models.server._push import PushDispatcher
from a2a_models.stores import (
    PostgresTaskStore,
    SchemaVersionError,
    SQLiteTaskStore,
    _migrations,
)
from a2a_models.stores._common import encode_event

from ._support import old_push_config


def _task(task_id: str, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=task_id, context_id="ctx", status=TaskStatus(state=state))


def _status(task_id: str, state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id=task_id, context_id="ctx", status=TaskStatus(state=state))


async def _write(store: TaskStore, task_id: str, event: StreamResponse) -> int:
    """Log ``event`` on the task (its snapshot: the status it carries); its seq."""
    stored = await store.get(task_id, None)
    assert stored is not None
    task = stored.task
    if isinstance(event, TaskStatusUpdateEvent):
        task = _task(task_id, event.status.state)
    await store.update(task, stored.version, event=event)
    return stored.last_seq + 1


async def _configs(store: TaskStore, task_id: str, *ids: str) -> None:
    for config_id in ids:
        url = f"https://hooks.example/{config_id}"
        await store.set_push_config(task_id, TaskPushNotificationConfig(id=config_id, url=url))


@pytest.fixture(params=["sqlite", "postgres"])
async def two(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    """Two handles on one database (two processes)."""
    if request.param == "sqlite":
        a: Any = SQLiteTaskStore(tmp_path / "owed.db")
        b: Any = SQLiteTaskStore(tmp_path / "owed.db")
    else:
        dsn, schema = request.getfixturevalue("pg_dsn"), request.getfixturevalue("pg_schema")
        a, b = PostgresTaskStore(dsn, schema=schema), PostgresTaskStore(dsn, schema=schema)
    try:
        yield await a.open(), await b.open()
    finally:
        await a.aclose()
        await b.aclose()


async def test_a_status_is_owed_from_its_commit_until_its_delivery_ends(
    two: tuple[Any, Any],
) -> None:
    a, b = two
    await a.create(_task("t"), None, event=_task("t"))
    await a.create(_task("bare"), None, event=_task("bare"))
    await _configs(a, "t", "c1", "c2")
    assert await b.claim_owed_pushes(30, 10) == []  # configs start owed nothing

    a.push_claim_ttl = 30.0
    assert await _write(a, "t", _status("t", TaskState.WORKING)) == 2
    assert await b.claim_owed_pushes(30, 10) == []  # the writer's to deliver for 30 s
    artifact = TaskArtifactUpdateEvent(
        task_id="t",
        context_id="ctx",
        artifact=Artifact(artifact_id="a", parts=(TextPart(text="x"),)),
    )
    assert await _write(a, "t", artifact) == 3  # no status: owes nothing more
    assert await _write(a, "bare", _status("bare", TaskState.COMPLETED)) == 2  # no config

    a.push_claim_ttl = 0.0  # the writer died at once: its claim lapses now
    assert await _write(a, "t", _status("t", TaskState.COMPLETED)) == 4
    # The latest status only (2 is coalesced into 4); ttl 0: claimable again at once.
    assert sorted(await b.claim_owed_pushes(0, 10)) == [("t", "c1", 4), ("t", "c2", 4)]
    assert len(await b.claim_owed_pushes(0, 1)) == 1  # bounded
    await b.push_delivered("t", "c1", 4)
    await b.push_delivered("t", "c2", 2)  # an older delivery ending late: 4 still owed
    await b.push_delivered("t", "c1", 3)  # never moves back
    assert await a.claim_owed_pushes(30, 10) == [("t", "c2", 4)]
    assert await b.claim_owed_pushes(30, 10) == []  # a claimed it for 30 s
    await a.push_delivered("t", "c2", 4)
    await asyncio.sleep(0.01)
    assert await a.claim_owed_pushes(0, 10) == []
    await a.delete_push_config("t", "c2")
    assert await b.claim_owed_pushes(0, 10) == []


# --- the dispatcher --------------------------------------------------------------------


class _Hook(PushNotificationSender):
    """Fails while ``down``; records what it delivered."""

    def __init__(self) -> None:
        self.down = True
        self.sent: list[StreamResponse] = []

    async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
        if self.down:
            raise ConnectionError("503")
        self.sent.append(item)


async def test_a_failed_delivery_stays_owed_and_resume_sends_the_latest_status(
    tmp_path: Path,
) -> None:
    store = SQLiteTaskStore(tmp_path / "resume.db")
    await store.create(_task("t"), None, event=_task("t"))
    await _configs(store, "t", "c1")
    hook = _Hook()
    push = PushDispatcher(hook, store)
    store.push_claim_ttl = 0.0
    for state in (TaskState.WORKING, TaskState.COMPLETED):
        event = _status("t", state)
        push.dispatch("t", event, await _write(store, "t", event))
    await push.idle()
    assert hook.sent == []
    hook.down = False
    assert await push.resume(30) == 1
    await push.idle()
    assert [getattr(s, "status", None) for s in hook.sent] == [
        _status("t", TaskState.COMPLETED).status
    ]
    assert await push.resume(0) == 0  # delivered: owed nothing
    await store.aclose()
    assert PushDispatcher(hook, InMemoryTaskStore()).durable is False
    assert await PushDispatcher(hook, InMemoryTaskStore()).resume(30) == 0


# --- cost: the owed event only ----------------------------------------------------------


def _artifact(task_id: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id="ctx",
        artifact=Artifact(artifact_id="a", parts=(TextPart(text="x"),)),
    )


async def _log_after(store: Any, task_id: str, count: int, pg_dsn: str | None) -> None:
    """``count`` artifact events logged after the task's last one."""
    if pg_dsn is None or count <= 100:
        for _ in range(count):
            await store.append_event(task_id, _artifact(task_id))
        return
    import psycopg

    # 10,000 appends one by one take seconds of PostgreSQL: rows of one event each (the
    # form of a log from before chunks, which the store reads as it reads chunks).
    q = f'"{store.schema}"'
    data = encode_event(_artifact(task_id))
    with psycopg.connect(pg_dsn) as conn:
        key, last = conn.execute(
            f"SELECT key, last_seq FROM {q}.a2a_tasks WHERE id = %s", (task_id,)
        ).fetchone()
        conn.execute(
            f"INSERT INTO {q}.a2a_task_events (task_key, seq, event)"
            " SELECT %s, s, %s FROM generate_series(%s::bigint, %s::bigint) s",
            (key, data, last + 1, last + count),
        )
        conn.execute(
            f"UPDATE {q}.a2a_tasks SET last_seq = %s, version = version + 1 WHERE id = %s",
            (last + count, task_id),
        )


async def _events_read_by_resume(
    store: Any, later: int, monkeypatch: pytest.MonkeyPatch, pg_dsn: str | None
) -> int:
    """Events the resume of a task's owed status reads, with ``later`` events after it."""
    task_id = f"t{later}"
    await store.create(_task(task_id), None, event=_task(task_id))
    await _configs(store, task_id, "c1")
    store.push_claim_ttl = 0.0
    seq = await _write(store, task_id, _status(task_id, TaskState.INPUT_REQUIRED))
    await _log_after(store, task_id, later, pg_dsn)
    module = sys.modules[type(store).__module__]
    read = [0]
    expand = module.expand_events

    def counting(rows: Any, *args: Any) -> Any:
        rows = list(rows)
        read[0] += len(rows)
        return expand(rows, *args)

    hook = _Hook()
    hook.down = False
    push = PushDispatcher(hook, store)
    with monkeypatch.context() as patch:
        patch.setattr(module, "expand_events", counting)
        assert await push.resume(30) == 1
        await push.idle()
    assert [getattr(item, "status", None) for item in hook.sent] == [
        _status(task_id, TaskState.INPUT_REQUIRED).status
    ]
    assert seq == 2
    return read[0]


async def test_resume_reads_the_owed_event_only_however_many_follow(
    two: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    store = two[0]
    dsn = request.getfixturevalue("pg_dsn") if isinstance(store, PostgresTaskStore) else None
    few = await _events_read_by_resume(store, 10, monkeypatch, dsn)
    many = await _events_read_by_resume(store, 10_000, monkeypatch, dsn)
    # It read the log from the owed event to its end: 11 and 10,001 events.
    assert (few, many) == (1, 1)


async def test_event_at_reads_one_event_from_every_store(tmp_path: Path) -> None:
    class Older(InMemoryTaskStore):  # a store written before event_at: the default
        reads = 0
        event_at = TaskStore.event_at

        async def events_after(self, task_id: str, seq: int) -> list[Any]:
            Older.reads += 1
            return await super().events_after(task_id, seq)

    for store in (InMemoryTaskStore(), Older()):
        await store.create(_task("t"), None, event=_task("t"))
        for _ in range(3):
            await store.append_event("t", _artifact("t"))
        assert await store.event_at("t", 1) == _task("t")
        assert await store.event_at("t", 4) == _artifact("t")
        for absent in (0, 5, -1):
            assert await store.event_at("t", absent) is None
        assert await store.event_at("nope", 1) is None
    assert Older.reads == 6
    async with SQLiteTaskStore(tmp_path / "one.db") as sqlite_store:
        await sqlite_store.create(_task("t"), None, event=_task("t"))
        await sqlite_store.append_event("t", _artifact("t"))
        assert await sqlite_store.event_at("t", 2) == _artifact("t")
        assert await sqlite_store.event_at("t", 3) is None


# --- cost: the owed rows only ----------------------------------------------------------


def _fill_sqlite(path: Path, n: int) -> None:
    """``n`` configs owed nothing (delivered) and 3 owed, on task ``t``."""
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO a2a_push_configs (task_id, config_id, position, config, owed_seq,"
            " delivered_seq) VALUES ('t', ?, ?, ?, 5, 5)",
            [(f"done{i}", 10 + i, json.dumps({"url": "https://h.example/"})) for i in range(n)],
        )
        db.execute("UPDATE a2a_push_configs SET owed_seq = 6 WHERE config_id IN ('c1', 'c2', 'c3')")


async def _claim_steps(path: Path, n: int) -> int:
    """SQLite VM steps of one claim over ``n`` delivered configs and 3 owed."""
    async with SQLiteTaskStore(path) as store:
        await store.create(_task("t"), None, event=_task("t"))
        await _configs(store, "t", "c1", "c2", "c3")
    _fill_sqlite(path, n)
    async with SQLiteTaskStore(path) as store:
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0

        await store._run(lambda db: db.set_progress_handler(count, 1))
        claimed = await store.claim_owed_pushes(30, 100)
        await store._run(lambda db: db.set_progress_handler(None, 1))
    assert sorted(claimed) == [("t", "c1", 6), ("t", "c2", 6), ("t", "c3", 6)]
    return steps[0]


async def test_sqlite_resume_reads_the_owed_rows_only(tmp_path: Path) -> None:
    few = await _claim_steps(tmp_path / "few.db", 10)
    many = await _claim_steps(tmp_path / "many.db", 10_000)
    # A pass over the configs costs at least one step per row: 10,000 more.
    assert many <= few + 50, (few, many)


def _plan_rows(node: dict[str, Any]) -> Iterator[int]:
    yield int(node.get("Actual Rows", 0)) + int(node.get("Rows Removed by Filter", 0))
    for child in node.get("Plans", []):
        yield from _plan_rows(child)


async def test_postgres_resume_reads_the_owed_rows_only(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await store.create(_task("t"), None, event=_task("t"))
        await _configs(store, "t", "c1", "c2", "c3")
        statement = store._claim_owed
    q = f'"{pg_schema}"'
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(
            f"INSERT INTO {q}.a2a_push_configs (task_id, config_id, config, owed_seq,"
            " delivered_seq) SELECT 't', 'done' || i, '{}'::jsonb, 5, 5"
            " FROM generate_series(1, 10000) i"
        )
        conn.execute(f"UPDATE {q}.a2a_push_configs SET owed_seq = 6 WHERE config_id LIKE 'c_'")
        conn.execute(f"ANALYZE {q}.a2a_push_configs")
        row = conn.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) "
            + statement.replace("%s", "30", 1).replace("%s", "100")
        ).fetchone()
        conn.rollback()
    assert row is not None
    plan = row[0][0]["Plan"]
    # A scan of the table would read (or filter out) the 10,000 delivered rows.
    assert max(_plan_rows(plan)) <= 10, json.dumps(plan)[:2000]
    assert "a2a_push_owed" in json.dumps(plan)


# --- migration 11 ---------------------------------------------------------------------


async def test_sqlite_upgrade_to_11_owes_nothing_old_and_version_10_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v10.db"
    ten = _migrations.MIGRATIONS[:10]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        async with SQLiteTaskStore(path) as store:
            done = _task("t", TaskState.COMPLETED)
            await store.create(done, None, event=done)
        old_push_config(path, "t", "c1", "https://hooks.example/c1")
    async with SQLiteTaskStore(path) as store:
        store.push_claim_ttl = 0.0
        assert await store.claim_owed_pushes(0, 10) == []  # an upgrade sends nothing old
        await _write(store, "t", Message.agent("late"))
        await store.create(_task("u"), None, event=_task("u"))
        await _configs(store, "u", "c1")
        await _write(store, "u", _status("u", TaskState.COMPLETED))
        assert await store.claim_owed_pushes(0, 10) == [("u", "c1", 2)]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        old = SQLiteTaskStore(path)
        with pytest.raises(SchemaVersionError, match=r"at version \d+, newer .* \(10\)"):
            await old.get("t", None)
        await old.aclose()


async def test_postgres_upgrade_to_11_owes_nothing_old_and_version_10_refuses_it(
    pg_dsn: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ten = _migrations.MIGRATIONS[:10]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
            done = _task("t", TaskState.COMPLETED)
            await store.create(done, None, event=done)
        old_push_config((pg_dsn, pg_schema), "t", "c1", "https://hooks.example/c1")
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        store.push_claim_ttl = 0.0
        assert await store.claim_owed_pushes(0, 10) == []
        await store.create(_task("u"), None, event=_task("u"))
        await _configs(store, "u", "c1")
        await _write(store, "u", _status("u", TaskState.COMPLETED))
        assert await store.claim_owed_pushes(0, 10) == [("u", "c1", 2)]
    with monkeypatch.context() as patch:
        patch.setattr(_migrations, "MIGRATIONS", ten)
        old = PostgresTaskStore(pg_dsn, schema=pg_schema)
        with pytest.raises(SchemaVersionError, match=r"at version \d+, newer .* \(10\)"):
            await old.open()
        await old.aclose()


# --- one rule: which events carry a status ---------------------------------------------


def test_owed_events_are_the_status_events_of_the_one_rule() -> None:
    import ast
    import types

    from a2a_models.client._resume import _ends_stream
    from a2a_models.models import state_of
    from a2a_models.stores._sqlstore import TaskWrite

    items: list[StreamResponse] = [
        _task("t", TaskState.COMPLETED),
        _status("t", TaskState.INPUT_REQUIRED),
        _artifact("t"),
        Message.agent("hi"),
    ]
    assert [state_of(item) for item in items] == [
        TaskState.COMPLETED,
        TaskState.INPUT_REQUIRED,
        None,
        None,
    ]
    for item in items:
        owed = TaskWrite.owed.fget(types.SimpleNamespace(event=item))  # type: ignore[attr-defined]
        assert owed is (state_of(item) is not None)
    assert _ends_stream(_artifact("t"), False) is False
    # Stores, server and client import the rule; none spells it out again.
    root = Path(__file__).resolve().parents[2] / "src" / "a2a_models"
    twins = [
        f"{path.relative_to(root)}:{node.name}"
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
        and node.name in ("state_of", "_state")
        and "TaskStatusUpdateEvent" in ast.unparse(node)
    ]
    assert twins == ["models/_events.py:state_of"]
