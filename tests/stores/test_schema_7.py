"""PostgreSQL migration 7 (less room per task): a database written by schema 6
moves forward with its data intact, and what the new schema stores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs

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
from a2a_models.server import apply_event
from a2a_models.stores import PostgresTaskStore, _migrations
from a2a_models.stores._common import encode_artifact, encode_message
from a2a_models.stores._eventlog import CHUNK_EVENTS, compact_event, unpack

from ._schema6 import create_schema, whole, write_task

T0 = datetime(2025, 6, 1, tzinfo=UTC)


def _message(text: str, message_id: str, *, agent: bool = True) -> Message:
    made = (Message.agent if agent else Message.user)(text, task_id="old", context_id="big")
    return attrs.evolve(made, message_id=message_id)


def _status(state: TaskState, second: int, message: Message | None = None) -> TaskStatusUpdateEvent:
    status = TaskStatus(state=state, timestamp=T0 + timedelta(seconds=second), message=message)
    return TaskStatusUpdateEvent(task_id="old", context_id="big", status=status)


def _old_task() -> tuple[Task, list[object], list[bytes]]:
    """A task as schema 6 stored it: its events, and their stored forms (whole and
    referring to rows, one message with a NUL jsonb could not hold)."""
    first = Task(
        id="old",
        context_id="big",
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=T0),
        history=(_message("hello", "u1", agent=False),),
    )
    working = _status(TaskState.WORKING, 1, _message("on it", "a1"))
    artifact = TaskArtifactUpdateEvent(
        task_id="old",
        context_id="big",
        artifact=Artifact(parts=[TextPart(text="the result")], artifact_id="r", name="n"),
    )
    nul = _message("x\x00y", "u2", agent=False)
    done = _status(TaskState.INPUT_REQUIRED, 2)
    events: list[object] = [first, working, artifact, nul, done]
    task = first
    for event in events[1:]:
        task = apply_event(task, event)  # type: ignore[arg-type]
    positions = {encode_message(m): i for i, m in enumerate(task.history)}
    rows = {0: encode_artifact(task.artifacts[0])}
    logged = [
        whole(first),  # type: ignore[arg-type]
        compact_event(working, task, positions, rows)[0],
        compact_event(artifact, task, positions, rows)[0],
        whole(nul),
        whole(done),
    ]
    assert b'"m":1' in logged[1] and b'"a":0' in logged[2]
    return task, events, logged


async def _rows(dsn: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cursor = await conn.execute(sql)
        return await cursor.fetchall()


async def test_a_database_of_schema_6_moves_forward_intact(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    task, events, logged = _old_task()
    mark = _migrations.CONTEXT_COUNTED
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        q = create_schema(conn, pg_schema)
        write_task(conn, q, task, logged, refs={0: 3})
        for i in range(mark + 5):  # a context past the mark, one below it
            other = Task(
                id=f"more{i:03d}",
                context_id="big" if i < mark else "small",
                status=TaskStatus(state=TaskState.WORKING, timestamp=T0 + timedelta(seconds=i)),
            )
            write_task(conn, q, other, [whole(other)])
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        got = await store.get("old", None)
        assert got is not None and got.task == task
        tail = await store.get("old", None, history_length=1)
        assert tail is not None and tail.task.history == (events[3],)
        assert await store.events_after("old", 0) == list(enumerate(events, start=1))
        assert await store.events_after("old", 3) == [(4, events[3]), (5, events[4])]
        # Totals: the big context counted in rows, the small one from its tasks.
        for context, state, want in [
            ("big", None, mark + 1),
            ("big", TaskState.INPUT_REQUIRED, 1),
            ("big", TaskState.WORKING, mark),
            ("small", None, 5),
            ("small", TaskState.WORKING, 5),
            ("small", TaskState.COMPLETED, 0),
        ]:
            page = await store.list(None, context_id=context, status=state, page_size=2)
            assert page.total_size == want, (context, state)
        assert (await store.list(None)).total_size == mark + 6
        # A write after the migration: a known message id is not stored twice (the
        # migrated rows have their id hashes), and its event starts a chunk.
        again = _status(TaskState.WORKING, 3, task.history[1])
        newer = apply_event(got.task, again)
        await store.update(newer, got.version, event=again)
        got = await store.get("old", None)
        assert got is not None and got.task == newer and len(newer.history) == len(task.history)
        assert await store.events_after("old", 5) == [(6, again)]
        # The replaced artifact goes back into the event that referred to its row.
        replaced = TaskArtifactUpdateEvent(
            task_id="old",
            context_id="big",
            artifact=Artifact(parts=[TextPart(text="better")], artifact_id="r", name="n"),
        )
        await store.update(apply_event(newer, replaced), got.version, event=replaced)
        assert await store.events_after("old", 2) == [
            *((n, e) for n, e in enumerate(events, start=1) if n > 2),
            (6, again),
            (7, replaced),
        ]
    counted = await _rows(
        pg_dsn, f"SELECT dim, key FROM {q}.a2a_task_counts WHERE dim IN ('c', 'cs') ORDER BY 1, 2"
    )
    assert counted == [("c", "big"), ("cs", "WORKING big")]
    chunks = await _rows(
        pg_dsn,
        f"SELECT e.seq, e.event FROM {q}.a2a_task_events e JOIN {q}.a2a_tasks t"
        " ON t.key = e.task_key WHERE t.id = 'old' ORDER BY e.seq",
    )
    assert [(seq, len(unpack(bytes(data)))) for seq, data in chunks] == [
        (1, 1),
        (2, 1),
        (3, 1),
        (4, 1),
        (5, 1),
        (6, 2),
    ]


async def test_a_task_log_packs_events_into_chunks(pg_dsn: str, pg_schema: str) -> None:
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
        await store.create(task, None, event=task)
        events = [_status(TaskState.WORKING, i) for i in range(2 * CHUNK_EVENTS + 3)]
        events = [attrs.evolve(e, task_id="t", context_id="c") for e in events]
        for event in events:
            stored = await store.get("t", None)
            assert stored is not None
            await store.update(apply_event(stored.task, event), stored.version, event=event)
        logged = [(1, task), *((i + 2, e) for i, e in enumerate(events))]
        for after in (0, 1, CHUNK_EVENTS - 1, CHUNK_EVENTS, CHUNK_EVENTS + 1, len(logged)):
            assert await store.events_after("t", after) == logged[after:]
    chunks = await _rows(
        pg_dsn, f'SELECT seq, event FROM "{pg_schema}".a2a_task_events ORDER BY seq'
    )
    sizes = [len(unpack(bytes(data))) for _, data in chunks]
    # Consecutive events share rows (up to CHUNK_EVENTS, or CHUNK_BYTES of stored forms).
    assert [row[0] for row in chunks] == [1 + sum(sizes[:i]) for i in range(len(sizes))]
    assert sum(sizes) == len(logged) and len(chunks) <= 6 and max(sizes) <= CHUNK_EVENTS
