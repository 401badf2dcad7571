"""Artifacts as rows and an event log without copies (migration 5).

A logged event that repeats a history message or an artifact refers to its
row; every event still reads back exactly as it was logged, from any resume
point, after appends and replacements of the artifact it referred to, and
databases of the previous schema read as before and move forward on write.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from a2a_models import (
    Artifact,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.models import StreamResponse
from a2a_models.server import TaskStore, apply_event
from a2a_models.server._store import status_key
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore, _migrations
from a2a_models.stores._common import encode_event, encode_message, encode_task, scope_key

from ._support import commit

T0 = datetime(2025, 6, 1, tzinfo=UTC)


def _message(text: str, task_id: str, message_id: str, *, agent: bool = True) -> Message:
    made = (Message.agent if agent else Message.user)(text, task_id=task_id, context_id="ctx")
    return attrs.evolve(made, message_id=message_id)


def _first(task_id: str) -> Task:
    return Task(
        id=task_id,
        context_id="ctx",
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=T0),
        history=(_message("please", task_id, "u1", agent=False),),
    )


def _status(task_id: str, state: TaskState, text: str | None, second: int) -> TaskStatusUpdateEvent:
    message = None if text is None else _message(text, task_id, f"s{second}")
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id="ctx",
        status=TaskStatus(state=state, timestamp=T0 + timedelta(seconds=second), message=message),
    )


def _chunk(
    task_id: str, artifact_id: str, text: str, *, append: bool = False, last: bool = False
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id="ctx",
        artifact=Artifact(parts=[TextPart(text=text)], artifact_id=artifact_id, name="n"),
        append=append,
        last_chunk=last,
    )


async def _run(store: TaskStore, task_id: str, events: list[StreamResponse]) -> Task:
    first = _first(task_id)
    await store.create(first, None, event=first)
    expected = first
    for event in events:
        await commit(store, task_id, event)
        expected = apply_event(expected, event)
    return expected


def _conversation(task_id: str) -> list[StreamResponse]:
    return [
        _status(task_id, TaskState.WORKING, "on it", 1),
        _chunk(task_id, "a", "one "),
        _chunk(task_id, "b", "whole artifact"),
        _chunk(task_id, "a", "two ", append=True),
        _message("a plain message event", task_id, "m1"),
        _chunk(task_id, "b", "replaced artifact"),
        _chunk(task_id, "a", "three", append=True, last=True),
        _chunk(task_id, "c", "single shot"),
        _status(task_id, TaskState.COMPLETED, "done", 2),
    ]


async def test_every_event_reads_back_exactly_from_every_resume_point(store: TaskStore) -> None:
    events = _conversation("t1")
    expected = await _run(store, "t1", events)
    got = await store.get("t1", None)
    assert got is not None and got.task == expected
    assert got.task.artifacts[0].parts == (TextPart(text="one two three"),)
    logged = [(1, _first("t1")), *((i + 2, e) for i, e in enumerate(events))]
    for after in range(len(logged) + 1):
        assert await store.events_after("t1", after) == logged[after:]
    page = await store.list(None)
    assert page.tasks == [expected]


async def test_a_task_created_with_artifacts_and_duplicate_ids_round_trips(
    store: TaskStore,
) -> None:
    twins = (
        Artifact(parts=[TextPart(text="x")], artifact_id="same"),
        Artifact(parts=[TextPart(text="y")], artifact_id="same"),
    )
    task = attrs.evolve(_first("t2"), artifacts=twins)
    await store.create(task, None, event=task)
    event = _chunk("t2", "same", "z")
    await commit(store, "t2", event)
    got = await store.get("t2", None)
    assert got is not None
    assert [a.parts[0] for a in got.task.artifacts] == [TextPart(text="z"), TextPart(text="y")]
    assert await store.events_after("t2", 0) == [(1, task), (2, event)]


async def test_messages_whose_content_repeats_the_task_ids_round_trip(store: TaskStore) -> None:
    """A history row leaves out the message's own ids only where that is unambiguous."""
    tricky = [
        attrs.evolve(
            _message("x", "t5", f"k{i}"),
            metadata={"a": 1, "contextId": "ctx", "taskId": "t5"} if i else {"n": {"taskId": "t5"}},
        )
        for i in range(2)
    ]
    other = attrs.evolve(_message("y", "t5", "k2"), context_id="elsewhere")
    task = attrs.evolve(_first("t5"), history=(*_first("t5").history, *tricky, other))
    await store.create(task, None, event=task)
    event = _status("t5", TaskState.WORKING, "and one more", 4)
    await commit(store, "t5", event)
    expected = apply_event(task, event)
    got = await store.get("t5", None)
    assert got is not None and got.task == expected
    tail = await store.get("t5", None, history_length=3)
    assert tail is not None and tail.task.history == expected.history[-3:]
    assert (await store.list(None)).tasks == [expected]
    assert await store.events_after("t5", 0) == [(1, task), (2, event)]


def _occurrences(path: Path, needle: str) -> int:
    db = sqlite3.connect(path)
    try:
        found = 0
        for table, column in [
            ("a2a_tasks", "task"),
            ("a2a_task_messages", "message"),
            ("a2a_task_events", "event"),
            ("a2a_task_artifacts", "artifact"),
        ]:
            for (text,) in db.execute(f"SELECT {column} FROM {table}"):
                found += text.count(needle)
        return found
    finally:
        db.close()


async def test_sqlite_stores_each_message_and_artifact_once(tmp_path: Path) -> None:
    path = tmp_path / "once.db"
    async with SQLiteTaskStore(path) as store:
        await _run(
            store,
            "t3",
            [
                _status("t3", TaskState.WORKING, "the working message", 1),
                _chunk("t3", "art", "the artifact text"),
                _status("t3", TaskState.COMPLETED, None, 2),
            ],
        )
        assert len(await store.events_after("t3", 0)) == 4
    for needle in ("please", "the working message", "the artifact text"):
        assert _occurrences(path, needle) == 1, needle
    # The task's ids are not repeated in its events either.
    db = sqlite3.connect(path)
    events = [row[0] for row in db.execute("SELECT event FROM a2a_task_events")]
    rows = [row[0] for row in db.execute("SELECT message FROM a2a_task_messages")]
    (head,) = db.execute("SELECT task FROM a2a_tasks").fetchone()
    db.close()
    assert not any('"t3"' in text for text in [*events, *rows, head])
    assert '"ctx"' not in head


async def test_sqlite_writes_only_the_changed_artifact_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.db"
    async with SQLiteTaskStore(path) as store:
        await _run(store, "t4", [_chunk("t4", f"a{i}", f"artifact {i}") for i in range(5)])
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE written (pos INTEGER, piece INTEGER, op TEXT)")
        for op in ("INSERT", "UPDATE"):
            db.execute(
                f"CREATE TRIGGER count_{op} AFTER {op} ON a2a_task_artifacts"
                f" BEGIN INSERT INTO written VALUES (NEW.pos, NEW.piece, '{op}'); END"
            )
        db.commit()
        await commit(store, "t4", _chunk("t4", "a2", " more", append=True))
        await commit(store, "t4", _status("t4", TaskState.WORKING, "status only", 3))
        # The append adds a piece holding its part; piece 0 only loses its ref_seq
        # (the event that referred to it holds its artifact now).
        assert db.execute("SELECT * FROM written").fetchall() == [
            (2, 1, "INSERT"),
            (2, 0, "UPDATE"),
        ]
        db.execute("DELETE FROM written")
        db.commit()
        await commit(store, "t4", _chunk("t4", "a2", " and more", append=True))
        assert db.execute("SELECT * FROM written").fetchall() == [(2, 1, "UPDATE")]
        db.close()
        got = await store.get("t4", None)
        assert got is not None
        assert got.task.artifacts[2].parts == (
            TextPart(text="artifact 2"),
            TextPart(text=" more"),
            TextPart(text=" and more"),
        )


async def test_postgres_writes_only_the_changed_artifact_row(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await _run(store, "t4", [_chunk("t4", f"a{i}", f"artifact {i}") for i in range(5)])
        query = (
            f'SELECT pos, piece, xmin::text FROM "{pg_schema}".a2a_task_artifacts'
            " ORDER BY pos, piece"
        )
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            before = conn.execute(query).fetchall()
            await commit(store, "t4", _chunk("t4", "a2", " more", append=True))
            await commit(store, "t4", _status("t4", TaskState.WORKING, "status only", 3))
            after = conn.execute(query).fetchall()
            head = conn.execute(f'SELECT task FROM "{pg_schema}".a2a_tasks').fetchone()
        # The snapshot leaves out the ids its row's columns hold.
        assert head is not None and set(json.loads(bytes(head[0]))) == {"$", "status"}
        got = await store.get("t4", None)
        assert got is not None and (got.task.id, got.task.context_id) == ("t4", "ctx")
        # The append adds a piece holding its part; piece 0 only loses its ref_seq.
        assert [(pos, piece) for pos, piece, _ in after] == [
            (0, 0),
            (1, 0),
            (2, 0),
            (2, 1),
            (3, 0),
            (4, 0),
        ]
        assert [row in before for row in after] == [True, True, False, False, True, True]


# --- migration 5: databases written by schema 4 --------------------------------------------------


def _v4_task(task_id: str) -> tuple[Task, list[StreamResponse]]:
    """A task as schema 4 stored it: history as rows, artifacts in the snapshot, whole events."""
    first = _first(task_id)
    events: list[StreamResponse] = [
        first,
        _status(task_id, TaskState.WORKING, "working", 1),
        _chunk(task_id, "a", "first "),
        _chunk(task_id, "a", "second", append=True),
        _chunk(task_id, "b", "other"),
    ]
    task = first
    for event in events[1:]:
        task = apply_event(task, event)
    return task, events


def _v4_rows(task: Task, events: list[StreamResponse]) -> tuple[tuple[object, ...], ...]:
    head = attrs.evolve(task, history=())
    row = (
        task.id,
        scope_key(None, None),
        "ctx",
        task.status.state.value,
        status_key(task),
        len(events),
        len(events),
        encode_task(head).decode(),
        len(task.history),
    )
    messages = tuple(
        (task.id, i, m.message_id, encode_message(m).decode()) for i, m in enumerate(task.history)
    )
    logged = tuple((task.id, i + 1, encode_event(e).decode()) for i, e in enumerate(events))
    return row, messages, logged


async def _check_v4(store: TaskStore, task: Task, events: list[StreamResponse]) -> None:
    got = await store.get(task.id, None)
    assert got is not None and got.task == task
    assert await store.events_after(task.id, 0) == list(enumerate(events, start=1))
    # The next write moves the artifacts to rows; old and new events read exactly.
    more = [_chunk(task.id, "a", "replaced"), _chunk(task.id, "c", "new")]
    for event in more:
        await commit(store, task.id, event)
        task = apply_event(task, event)
    got = await store.get(task.id, None)
    assert got is not None and got.task == task
    logged = list(enumerate([*events, *more], start=1))
    for after in (0, 3, len(events)):
        assert await store.events_after(task.id, after) == logged[after:]
    assert (await store.list(None)).tasks == [task]
    await _check_counts(store, task)


async def _check_counts(store: TaskStore, task: Task) -> None:
    """Totals counted under schema 4 (with a row per context) stay exact."""
    state = task.status.state
    other = next(s for s in (TaskState.COMPLETED, TaskState.FAILED) if s != state)
    more = await store.create(
        attrs.evolve(_first("more"), context_id=task.context_id, status=TaskStatus(state=other)),
        None,
    )
    await store.create(attrs.evolve(_first("elsewhere"), context_id="another"), None)
    totals = [
        (await store.list(None, **filters)).total_size  # type: ignore[arg-type]
        for filters in (
            {"context_id": task.context_id},
            {"context_id": task.context_id, "status": state},
            {"context_id": task.context_id, "status": other},
            {"context_id": "another"},
            {},
        )
    ]
    assert totals == [2, 1, 1, 1, 3]
    # Moved to another context: counted there, no longer here.
    await store.update(attrs.evolve(more.task, context_id="another"), more.version)
    assert (await store.list(None, context_id=task.context_id)).total_size == 1
    assert (await store.list(None, context_id="another", status=other)).total_size == 1
    assert (await store.list(None, context_id="another")).total_size == 2


async def test_sqlite_database_of_schema_4_moves_forward(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    task, events = _v4_task("old")
    row, messages, logged = _v4_rows(task, events)
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE a2a_schema_migrations (version INTEGER NOT NULL PRIMARY KEY,"
        " name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for migration in _migrations.MIGRATIONS[:4]:
        for statement in migration.sqlite:
            db.execute(statement)
        db.execute(
            "INSERT INTO a2a_schema_migrations VALUES (?, ?, 'x')",
            (migration.version, migration.name),
        )
    db.execute(
        "INSERT INTO a2a_tasks (id, scope, context_id, state, status_key, version, last_seq,"
        " created_at, updated_at, task, history_count) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)",
        row,
    )
    db.executemany("INSERT INTO a2a_task_messages VALUES (?, ?, ?, ?)", messages)
    db.executemany("INSERT INTO a2a_task_events VALUES (?, ?, ?, 0)", logged)
    db.commit()
    db.close()
    async with SQLiteTaskStore(path) as store:
        await _check_v4(store, task, events)
    db = sqlite3.connect(path)
    assert max(r[0] for r in db.execute("SELECT version FROM a2a_schema_migrations")) >= 5
    dims = {r[0] for r in db.execute("SELECT dim FROM a2a_task_counts")}
    assert dims == {"all", "state", "cs"}
    db.close()


async def test_postgres_database_of_schema_4_moves_forward(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    task, events = _v4_task("old")
    row, messages, logged = _v4_rows(task, events)
    q = f'"{pg_schema}"'
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {q}")
        conn.execute(
            f"CREATE TABLE {q}.a2a_schema_migrations (version integer NOT NULL PRIMARY KEY,"
            " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for migration in _migrations.MIGRATIONS[:4]:
            for statement in migration.postgres:
                conn.execute(statement.replace("{schema}", q))
            conn.execute(
                f"INSERT INTO {q}.a2a_schema_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
        conn.execute(
            f"INSERT INTO {q}.a2a_tasks (id, scope, context_id, state, status_key, version,"
            " last_seq, task, history_count) VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)",
            row,
        )
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {q}.a2a_task_messages (task_id, pos, message_id, message)"
                " VALUES (%s, %s, %s, %s::jsonb)",
                messages,
            )
            cursor.executemany(
                f"INSERT INTO {q}.a2a_task_events (task_id, seq, event) VALUES (%s, %s, %s::jsonb)",
                logged,
            )
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await _check_v4(store, task, events)
    with psycopg.connect(pg_dsn) as conn:
        dims = {r[0] for r in conn.execute(f"SELECT dim FROM {q}.a2a_task_counts")}
    # Its one context has too few tasks for counter rows of its own (migration 7).
    assert dims == {"all", "state"}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_two_handles_never_see_a_stale_artifact(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A write from a handle whose read is stale fails; one from a fresh read lands."""
    if kind == "sqlite":
        a: TaskStore = SQLiteTaskStore(tmp_path / "two.db")
        b: TaskStore = SQLiteTaskStore(tmp_path / "two.db")
    else:
        dsn, schema = request.getfixturevalue("pg_dsn"), request.getfixturevalue("pg_schema")
        a, b = PostgresTaskStore(dsn, schema=schema), PostgresTaskStore(dsn, schema=schema)
    task_id = uuid.uuid4().hex
    try:
        await _run(a, task_id, [_chunk(task_id, "x", "from a")])
        await commit(b, task_id, _chunk(task_id, "x", " and b", append=True))
        await commit(a, task_id, _chunk(task_id, "y", "a again"))
        got = await b.get(task_id, None)
        assert got is not None
        assert [p.text for p in got.task.artifacts[0].parts] == ["from a", " and b"]  # type: ignore[union-attr]
        assert len(got.task.artifacts) == 2
    finally:
        await a.aclose()  # type: ignore[attr-defined]
        await b.aclose()  # type: ignore[attr-defined]


async def test_a_write_that_changes_the_context_keeps_what_was_stored_exact(
    store: TaskStore,
) -> None:
    """The engine never moves a task to another context; a store's caller may."""
    events = [_status("t6", TaskState.WORKING, "before the move", 1), _chunk("t6", "a", "x")]
    before = await _run(store, "t6", events)
    stored = await store.get("t6", None)
    assert stored is not None
    moved = attrs.evolve(
        before,
        context_id="elsewhere",
        history=(*before.history, _message("after", "t6", "late")),
    )
    await store.update(moved, stored.version)
    got = await store.get("t6", None)
    assert got is not None and got.task == moved
    assert got.task.history[0].context_id == "ctx"
    logged = [(1, _first("t6")), *((i + 2, e) for i, e in enumerate(events))]
    assert await store.events_after("t6", 0) == logged
