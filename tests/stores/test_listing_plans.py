"""Every ListTasks filter combination reads through an index holding all its filters.

A listing whose plan walks an index on fewer columns than it filters by (or the
whole table) and drops the rows that do not match costs more the more tasks are
stored: ListTasks by context and status read every task in that status, of every
context, until migration 14 added ``a2a_tasks_context_state`` (SQLite: 41x the
pages at 50k tasks as at 1k). These tests look at the plans of the statements the
stores run, for every combination of the context, status and timestamp filters,
first page and later ones, so such growth cannot come back silently.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from a2a_models import Task, TaskState, TaskStatus
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore, _migrations
from a2a_models.stores._common import ListSQL, encode_head, scope_key, task_columns

T0 = datetime(2025, 6, 1, tzinfo=UTC)
STATES = (TaskState.WORKING, TaskState.COMPLETED, TaskState.INPUT_REQUIRED, TaskState.FAILED)
CONTEXTS = 7  # prime to the 4 states: every context has tasks in every state

#: (context filter, status filter, timestamp filter, a later page)
COMBINATIONS = list(itertools.product((False, True), repeat=4))


def _ids(combo: tuple[bool, bool, bool, bool]) -> str:
    names = ("context", "status", "timestamp", "page2")
    return "+".join(n for n, on in zip(names, combo, strict=True) if on) or "plain"


def _task(i: int) -> Task:
    return Task(
        id=f"task-{i:06d}",
        context_id=f"ctx-{i % CONTEXTS}",
        status=TaskStatus(state=STATES[i % len(STATES)], timestamp=T0 + timedelta(seconds=i)),
    )


def _filters(context: bool, status: bool, timestamp: bool) -> dict[str, Any]:
    return {
        "context_id": "ctx-3" if context else None,
        "status": TaskState.INPUT_REQUIRED if status else None,
        "status_timestamp_after": T0 + timedelta(seconds=40) if timestamp else None,
    }


def _needed(filters: dict[str, Any]) -> list[str]:
    """The columns an index must be searched by (besides ``scope``)."""
    return [
        column
        for column, key in (("context_id", "context_id"), ("state", "status"))
        if filters[key] is not None
    ]


def test_a_migration_adds_the_context_state_index_to_both_databases() -> None:
    migration = next(m for m in _migrations.MIGRATIONS if "a2a_tasks_context_state" in str(m))
    assert any("(scope, context_id, state, status_key DESC" in s for s in migration.sqlite)
    assert any("(scope, context_id, state, status_key DESC" in s for s in migration.postgres)


# --- SQLite -------------------------------------------------------------------------------------


async def _sqlite_store(path: Path, count: int) -> SQLiteTaskStore:
    store = await SQLiteTaskStore(path).open()
    for i in range(count):
        await store.create(_task(i), None)
    return store


async def _sqlite_statements(
    store: SQLiteTaskStore, filters: dict[str, Any], page2: bool
) -> list[str]:
    """The statements reading ``a2a_tasks`` that ``store.list`` runs (parameters inlined)."""
    token = None
    if page2:
        first = await store.list(None, page_size=3, **filters)
        token = first.next_page_token
        assert token
    seen: list[str] = []
    await store._run(lambda db: db.set_trace_callback(seen.append))
    try:
        page = await store.list(None, page_size=3, page_token=token, **filters)
    finally:
        await store._run(lambda db: db.set_trace_callback(None))
    assert page.tasks and page.total_size >= len(page.tasks)
    return [s for s in seen if re.search(r"\bFROM a2a_tasks\b", s)]


@pytest.mark.parametrize("combo", COMBINATIONS, ids=_ids)
async def test_sqlite_listing_plans_search_an_index_with_every_filter(
    tmp_path: Path, combo: tuple[bool, bool, bool, bool]
) -> None:
    context, status, timestamp, page2 = combo
    filters = _filters(context, status, timestamp)
    store = await _sqlite_store(tmp_path / "plans.db", 200)
    try:
        statements = await _sqlite_statements(store, filters, page2)
        assert statements, "the listing read no a2a_tasks statement"
        db = sqlite3.connect(store.path)
        try:
            for statement in statements:
                plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + statement)]
                touching = [line for line in plan if re.search(r"\ba2a_tasks\b", line)]
                assert touching, plan
                for line in touching:
                    # SEARCH (an index range), never SCAN (every row of the table or index).
                    assert line.startswith("SEARCH a2a_tasks USING"), (statement, plan)
                    found = re.search(r"\((.*)\)$", line)
                    assert found, line
                    for column in _needed(filters):
                        assert f"{column}=?" in found[1], (line, statement)
                # In the index's order: no sort of every match.
                assert not any("TEMP B-TREE" in line for line in plan), plan
        finally:
            db.close()
    finally:
        await store.aclose()


async def test_sqlite_context_and_status_uses_the_new_index(tmp_path: Path) -> None:
    store = await _sqlite_store(tmp_path / "cs.db", 50)
    try:
        filters = _filters(True, True, False)
        (statement, *_) = await _sqlite_statements(store, filters, False)
        db = sqlite3.connect(store.path)
        plan = " ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + statement))
        db.close()
        assert "a2a_tasks_context_state (scope=? AND context_id=? AND state=?)" in plan
    finally:
        await store.aclose()


# --- PostgreSQL ---------------------------------------------------------------------------------


async def _seed_postgres(store: PostgresTaskStore, count: int) -> None:
    """``count`` tasks in one COPY (counting triggers off, counted after), then ANALYZE,
    so the planner chooses by realistic statistics."""
    scope = scope_key(None, None)
    async with store._pool.connection() as conn:
        async with conn.transaction():
            await conn.execute("SET LOCAL session_replication_role = replica")
            async with conn.cursor() as cur:
                async with cur.copy(
                    f"COPY {store._tasks} (id, scope, context_id, state, status_key, version,"
                    " last_seq, task, history_count, artifact_count) FROM STDIN"
                ) as copy:
                    for i in range(count):
                        task = _task(i)
                        ctx, state, key, _ = task_columns(task)
                        await copy.write_row(
                            (task.id, scope, ctx, state, key, 1, 0, encode_head(task), 0, 0)
                        )
            for statement in _migrations.POSTGRES_RECOUNT:
                await conn.execute(statement.replace("{schema}", store._q))
        await conn.execute(f"ANALYZE {store._tasks}")
        await conn.execute(f"ANALYZE {store._counts}")


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    out = [plan]
    for child in plan.get("Plans", ()):
        out += _nodes(child)
    return out


async def test_postgres_listing_plans_search_an_index_with_every_filter(
    pg_dsn: str, pg_schema: str
) -> None:
    store = await PostgresTaskStore(pg_dsn, schema=pg_schema).open()
    try:
        await _seed_postgres(store, 20_000)
        for combo in COMBINATIONS:
            await _check_postgres_plans(store, combo)
    finally:
        await store.aclose()


async def _check_postgres_plans(
    store: PostgresTaskStore, combo: tuple[bool, bool, bool, bool]
) -> None:
    context, status, timestamp, page2 = combo
    filters = _filters(context, status, timestamp)
    token = None
    if page2:
        token = (await store.list(None, page_size=3, **filters)).next_page_token
        assert token
    query = ListSQL("%s", None, None, **filters, page_size=3, page_token=token, nul=store.NUL)
    statements = [
        store._page_statement(query),
        query.count(store._tasks, store._counts, _migrations.CONTEXT_COUNTED),
    ]
    async with store._pool.connection() as conn:
        for seqscan in ("on", "off"):
            # on: the planner's own choice on realistic statistics; off: an index with
            # every filter exists for every scan, whatever the statistics say.
            await conn.execute(f"SET enable_seqscan = {seqscan}")
            for page, (sql, params) in zip((True, False), statements, strict=True):
                cursor = await conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
                row = await cursor.fetchone()
                assert row is not None
                nodes = [n for top in row[0] for n in _nodes(top["Plan"])]
                on_tasks = [n for n in nodes if n.get("Relation Name") == "a2a_tasks"]
                assert on_tasks or not page, nodes  # a count may read counter rows only
                for node in on_tasks:
                    _check_node(node, filters, seqscan == "on", _ids(combo))
        await conn.execute("RESET enable_seqscan")


#: The most rows a bounded count's sequential scan may read (as ``bench/stores.py``).
SCAN_LIMIT = 2 * (ListSQL.COUNT_BOUND + 1)


def _check_node(node: dict[str, Any], filters: dict[str, Any], seqscan: bool, combo: str) -> None:
    kind = node["Node Type"]
    if kind == "Seq Scan":
        # The planner may scan the table for a count under a LIMIT (the timestamp
        # filter's probes) when matches are frequent: it stops at the limit; and for
        # the last resort (not run here) that counts every match when both sides of
        # the timestamp have more than COUNT_BOUND. Never with seqscans off (so an
        # index exists), never reading more than the bound.
        assert seqscan, (combo, node)
        read = node["Actual Rows"] * node["Actual Loops"] + node.get("Rows Removed by Filter", 0)
        assert read <= SCAN_LIMIT, (combo, node)
        return
    assert kind in ("Index Scan", "Index Only Scan", "Bitmap Heap Scan"), (combo, node)
    cond = node.get("Index Cond") or node.get("Recheck Cond") or ""
    for column in _needed(filters):
        assert column in cond, (combo, node)
    dropped = node.get("Filter", "")
    assert "context_id" not in dropped and "state" not in dropped, (combo, node)
