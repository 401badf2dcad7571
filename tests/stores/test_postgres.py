"""PostgresTaskStore: migrations under concurrency, jsonb storage, pools, connection loss."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from a2a_models import (
    InvalidParamsError,
    Message,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from a2a_models.server import ConcurrentModificationError
from a2a_models.stores import Migration, PostgresTaskStore, SchemaVersionError, _migrations
from a2a_models.stores._eventlog import unpack

pytestmark = pytest.mark.usefixtures("pg_dsn")


def _task(task_id: str, state: TaskState = TaskState.WORKING, **kwargs: Any) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state), **kwargs)


async def _query(dsn: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(sql, params or None)
        return await cursor.fetchall()


# --- migrations -------------------------------------------------------------------------------


async def test_a_fresh_schema_gets_tables_indexes_and_column_types(
    pg_dsn: str, pg_schema: str
) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema):
        pass
    tables = {
        row[0]
        for row in await _query(
            pg_dsn, "SELECT tablename FROM pg_tables WHERE schemaname = %s", pg_schema
        )
    }
    assert tables == {
        "a2a_schema_migrations",
        "a2a_tasks",
        "a2a_task_events",
        "a2a_push_configs",
        "a2a_task_counts",
        "a2a_task_messages",
        "a2a_task_artifacts",
        "a2a_turns",
    }
    indexes = {
        row[0]
        for row in await _query(
            pg_dsn, "SELECT indexname FROM pg_indexes WHERE schemaname = %s", pg_schema
        )
    }
    assert {
        "a2a_tasks_list",
        "a2a_tasks_context",
        "a2a_tasks_state",
        "a2a_tasks_context_state",
        "a2a_tasks_terminal",
        "a2a_tasks_started_by",
    } <= indexes
    types = dict(
        await _query(
            pg_dsn,
            "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = %s AND data_type IN ('jsonb', 'bytea')",
            pg_schema,
        )
    )
    assert types == {
        "a2a_tasks.task": "bytea",
        "a2a_tasks.started_by": "bytea",
        "a2a_task_events.event": "bytea",
        "a2a_push_configs.config": "jsonb",
        "a2a_push_configs.config_raw": "bytea",
        "a2a_task_messages.message": "bytea",
        "a2a_task_artifacts.artifact": "bytea",
        "a2a_turns.turn": "bytea",
    }
    applied = await _query(
        pg_dsn, f'SELECT version, name FROM "{pg_schema}".a2a_schema_migrations ORDER BY version'
    )
    assert applied == [(m.version, m.name) for m in _migrations.MIGRATIONS]


async def test_replicas_starting_together_migrate_once(pg_dsn: str, pg_schema: str) -> None:
    stores = [PostgresTaskStore(pg_dsn, schema=pg_schema) for _ in range(6)]
    try:
        await asyncio.gather(*(s.open() for s in stores))
        await stores[0].create(_task("t1"), None)
        assert all([await s.get("t1", None) is not None for s in stores])
    finally:
        for s in stores:
            await s.aclose()
    rows = await _query(
        pg_dsn, f'SELECT version FROM "{pg_schema}".a2a_schema_migrations ORDER BY 1'
    )
    assert rows == [(m.version,) for m in _migrations.MIGRATIONS]


async def test_reopening_does_not_rerun_migrations(pg_dsn: str, pg_schema: str) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await store.create(_task("t1"), None)
    table = f'"{pg_schema}".a2a_schema_migrations'
    before = await _query(pg_dsn, f"SELECT * FROM {table}")
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        assert await store.get("t1", None) is not None
    assert await _query(pg_dsn, f"SELECT * FROM {table}") == before


async def test_a_new_migration_is_applied_once(
    pg_dsn: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await store.create(_task("t1"), None)
    nxt = len(_migrations.MIGRATIONS) + 1
    v2 = Migration(
        nxt,
        "add a note column",
        ("ALTER TABLE a2a_tasks ADD COLUMN note TEXT",),
        ("ALTER TABLE {schema}.a2a_tasks ADD COLUMN note text",),
    )
    monkeypatch.setattr(_migrations, "MIGRATIONS", (*_migrations.MIGRATIONS, v2))
    stores = [PostgresTaskStore(pg_dsn, schema=pg_schema) for _ in range(3)]
    await asyncio.gather(*(s.open() for s in stores))
    for s in stores:
        await s.aclose()
    rows = await _query(
        pg_dsn, f'SELECT version FROM "{pg_schema}".a2a_schema_migrations ORDER BY 1'
    )
    assert rows == [(v,) for v in range(1, nxt + 1)]


async def test_a_schema_from_a_newer_version_is_refused(pg_dsn: str, pg_schema: str) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema):
        pass
    await _query(
        pg_dsn,
        f"INSERT INTO \"{pg_schema}\".a2a_schema_migrations (version, name) VALUES (99, 'x')"
        " RETURNING version",
    )
    store = PostgresTaskStore(pg_dsn, schema=pg_schema)
    with pytest.raises(SchemaVersionError, match="version 99"):
        await store.open()
    await store.aclose()


async def test_a_server_older_than_13_is_refused_before_anything_is_written(
    pg_dsn: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writes read pg_current_xact_id() (13+): on 12 every write would fail with
    # "function pg_current_xact_id() does not exist". Here the floor is raised above
    # the real server instead.
    monkeypatch.setattr(_migrations, "POSTGRES_MIN_VERSION", 990000)
    store = PostgresTaskStore(pg_dsn, schema=pg_schema)
    with pytest.raises(
        SchemaVersionError, match=r"needs PostgreSQL 13 or later; this server is 1\d\."
    ):
        await store.open()
    await store.aclose()
    rows = await _query(pg_dsn, f"SELECT count(*) FROM pg_namespace WHERE nspname = '{pg_schema}'")
    assert rows == [(0,)]


@pytest.mark.parametrize(
    ("number", "shown"), [(120017, "12.17"), (90624, "9.6.24"), (130000, None), (150020, None)]
)
def test_the_oldest_postgresql_server_is_13(number: int, shown: str | None) -> None:
    if shown is None:
        _migrations.check_postgres_version(number)
    else:
        with pytest.raises(SchemaVersionError, match=f"this server is {shown}$"):
            _migrations.check_postgres_version(number)


def test_schema_names_are_plain_identifiers() -> None:
    with pytest.raises(ValueError, match="schema"):
        PostgresTaskStore("postgresql://x/y", schema='a"; DROP TABLE x; --')


# --- stored JSON ----------------------------------------------------------------------------


async def test_snapshots_and_events_are_stored_as_their_exact_bytes(
    pg_dsn: str, pg_schema: str
) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await store.create(_task("plain", metadata={"n": 1.5}), None, event=_task("plain"))
        odd = _task("odd", metadata={"nul": "a\x00b", "f": 1e20})
        await store.create(odd, None, event=Message.agent("x\x00y"))
        got = await store.get("odd", None)
        assert got is not None and got.task == odd
    rows = await _query(pg_dsn, f'SELECT id, task FROM "{pg_schema}".a2a_tasks ORDER BY id')
    # What jsonb could not hold (NUL, 1e+20 written so) is kept exactly.
    assert [row[0] for row in rows] == ["odd", "plain"]
    assert b'"nul":"a\\u0000b"' in bytes(rows[0][1]) and b'"f":1e+20' in bytes(rows[0][1])
    events = await _query(
        pg_dsn,
        f'SELECT t.id, e.event FROM "{pg_schema}".a2a_task_events e'
        f' JOIN "{pg_schema}".a2a_tasks t ON t.key = e.task_key ORDER BY 1',
    )
    assert [row[0] for row in events] == ["odd", "plain"]
    (form,) = unpack(bytes(events[0][1]))
    assert b"x\\u0000y" in form


async def test_ids_postgres_cannot_hold(pg_dsn: str, pg_schema: str) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        with pytest.raises(InvalidParamsError):
            await store.create(_task("a\x00b"), None)
        assert await store.get("a\x00b", None) is None
        assert await store.events_after("a\x00b", 0) == []
        assert await store.get_push_config("a\x00b", "x") is None
        assert (await store.list(None, context_id="\x00")).tasks == []


# --- pools and connections ------------------------------------------------------------------


async def test_a_psycopg_pool_can_be_passed(pg_dsn: str, pg_schema: str) -> None:
    psycopg_pool = pytest.importorskip("psycopg_pool")
    pool = psycopg_pool.AsyncConnectionPool(pg_dsn, min_size=1, max_size=4, open=False)
    await pool.open()
    try:
        store = PostgresTaskStore(pool, schema=pg_schema)
        await store.create(_task("t1"), "alice", event=_task("t1"))
        results = await asyncio.gather(
            store.update(_task("t1", TaskState.COMPLETED), 1, event=Message.agent("a")),
            store.update(_task("t1", TaskState.FAILED), 1, event=Message.agent("b")),
            return_exceptions=True,
        )
        assert sorted(type(r).__name__ for r in results) == ["ConcurrentModificationError", "int"]
        await store.set_push_config("t1", TaskPushNotificationConfig(url="http://h", id="p"))
        with pytest.raises(ConcurrentModificationError):
            await store.create(_task("t1"), None)
        stored = await store.get("t1", "alice")
        assert stored is not None and (stored.version, stored.last_seq) == (2, 2)
        assert len(await store.list_push_configs("t1")) == 1
        await store.aclose()
        assert not pool.closed  # not the store's to close
    finally:
        await pool.close()


async def _kill_connections(dsn: str, application_name: str) -> int:
    rows = await _query(
        dsn,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
        application_name,
    )
    return len(rows)


async def test_reads_recover_from_a_lost_connection(pg_dsn: str, pg_schema: str) -> None:
    name = f"{pg_schema} reads"
    async with PostgresTaskStore(
        pg_dsn, schema=pg_schema, max_connections=1, connect_kwargs={"application_name": name}
    ) as store:
        await store.create(_task("t1"), None)
        assert await _kill_connections(pg_dsn, name) == 1
        await asyncio.sleep(0.05)
        assert await store.get("t1", None) is not None  # retried on a fresh connection
        await store.update(_task("t1", TaskState.COMPLETED), 1)


@pytest.mark.parametrize("check_idle_after", [0.0, 30.0])
async def test_a_closed_idle_connection_is_not_used_for_a_write(
    pg_dsn: str, pg_schema: str, check_idle_after: float
) -> None:
    # Noticed without a round trip (the server's FATAL message is waiting on
    # the socket), or by the ping of a connection idle for long.
    name = f"{pg_schema} writes"
    async with PostgresTaskStore(
        pg_dsn,
        schema=pg_schema,
        max_connections=2,
        check_idle_after=check_idle_after,
        connect_kwargs={"application_name": name},
    ) as store:
        await asyncio.gather(*(store.create(_task(f"t{i}"), None) for i in range(2)))
        assert await _kill_connections(pg_dsn, name) == 2
        await asyncio.sleep(0.05)
        assert await store.update(_task("t1", TaskState.COMPLETED), 1) == 2
        assert await store.append_event("t0", Message.agent("x")) == 1


async def test_delete_terminal_older_than(pg_dsn: str, pg_schema: str) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await store.create(_task("done", TaskState.COMPLETED), None, event=_task("done"))
        await store.set_push_config("done", TaskPushNotificationConfig(url="http://h", id="p"))
        await store.create(_task("active"), None)
        await store.create(_task("later"), None)
        await store.update(_task("later", TaskState.CANCELED), 1)
        await store.update(_task("later", TaskState.CANCELED), 2)  # terminal_at stays the first
        assert await store.delete_terminal_older_than(3600) == 0
        assert await store.delete_terminal_older_than(0) == 2
        assert await store.get("done", None) is None
        assert await store.events_after("done", 0) == []
        assert await store.get_push_config("done", "p") is None
        assert [t.id for t in (await store.list(None)).tasks] == ["active"]
