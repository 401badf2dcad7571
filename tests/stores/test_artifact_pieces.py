"""Artifacts in pieces (migration 9): an append writes the parts it adds, not the artifact.

An artifact streamed in many appended chunks (an LLM writing token by token)
reads back exactly, with every event from every resume point, through head
changes, replacements, other handles (replicas) and the ``last_chunk`` join;
what an append writes to the database does not grow with the artifact (before
pieces, each append rewrote the whole artifact: O(N²) bytes for N chunks);
and a database of schema 8 moves forward with its artifacts intact.
"""

from __future__ import annotations

import gc
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from a2a_models import (
    Artifact,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.models import StreamResponse
from a2a_models.models import _task as _task_module
from a2a_models.server import TaskStore, apply_event
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore, _pieces
from a2a_models.stores._pieces import PIECE_BYTES, whole_artifacts
from a2a_models.stores._sqlstore import ArtifactReads

from ._support import Lines, commit

T0 = datetime(2025, 6, 1, tzinfo=UTC)


def _first(task_id: str) -> Task:
    status = TaskStatus(state=TaskState.WORKING, timestamp=T0)
    return Task(id=task_id, context_id="ctx", status=status)


def _chunk(
    task_id: str,
    artifact_id: str,
    *parts: Part,
    append: bool = True,
    last: bool = False,
    **head: object,
) -> TaskArtifactUpdateEvent:
    artifact = Artifact(parts=parts, artifact_id=artifact_id, **head)  # type: ignore[arg-type]
    return TaskArtifactUpdateEvent(
        task_id=task_id, context_id="ctx", artifact=artifact, append=append, last_chunk=last
    )


class _Run:
    """A task written event by event, with what it must read back as."""

    def __init__(self, store: TaskStore, task_id: str) -> None:
        self.store = store
        self.task_id = task_id
        self.expected = _first(task_id)
        self.logged: list[tuple[int, StreamResponse]] = [(1, self.expected)]

    async def start(self) -> _Run:
        await self.store.create(self.expected, None, event=self.expected)
        return self

    async def send(self, event: StreamResponse, store: TaskStore | None = None) -> None:
        await commit(store or self.store, self.task_id, event)
        self.expected = apply_event(self.expected, event)
        self.logged.append((len(self.logged) + 1, event))

    async def check(self, store: TaskStore | None = None, *, every_resume: bool = False) -> None:
        store = store or self.store
        got = await store.get(self.task_id, None)
        assert got is not None and got.task == self.expected
        points = range(len(self.logged) + 1) if every_resume else (0, len(self.logged) - 3)
        for after in points:
            assert await store.events_after(self.task_id, after) == self.logged[after:]
        page = await store.list(None)
        assert [t for t in page.tasks if t.id == self.task_id] == [self.expected]


def _values(i: int) -> Part:
    """Parts whose JSON differs where Python's == does not (1, 1.0 and True)."""
    kind = i % 4
    if kind == 0:
        return Part.data({"n": 1, "i": i, "big": 2**70 + i, "x": 1e300})
    if kind == 1:
        return Part.data({"n": 1.0, "i": i})
    if kind == 2:
        return Part.data({"n": True, "i": i})
    return TextPart(text=f"token {i} " + "é" * (i % 7))


async def test_a_long_streamed_artifact_reads_back_exactly(store: TaskStore) -> None:
    run = await _Run(store, "long").start()
    await run.send(_chunk("long", "a", TextPart(text="start "), append=False, name="report"))
    await run.send(_chunk("long", "b", TextPart(text="other artifact"), append=False))
    for i in range(300):
        await run.send(_chunk("long", "a", _values(i), name="report" if i % 2 else None))
        if i in (0, 1, 150):
            await run.check(every_resume=True)
    # The head changes while the parts grow; the other artifact is replaced meanwhile.
    await run.send(_chunk("long", "a", TextPart(text="x"), metadata={"step": 1}))
    await run.send(_chunk("long", "a", TextPart(text="y"), metadata={"step": True}))
    await run.send(_chunk("long", "b", TextPart(text="replaced"), append=False))
    await run.send(_chunk("long", "a", TextPart(text="z"), description="d", extensions=["e"]))
    await run.check(every_resume=True)
    assert run.expected.artifacts[0].metadata == {"step": True}
    assert len(run.expected.artifacts[0].parts) == 304
    # The last chunk joins adjacent text parts: a whole write again.
    await run.send(_chunk("long", "a", TextPart(text=" end"), last=True))
    await run.check(every_resume=True)
    assert len(run.expected.artifacts[0].parts) < 304
    # A replacement of an artifact held in pieces, then appends again.
    await run.send(_chunk("long", "a", TextPart(text="anew"), append=False))
    for i in range(40):
        await run.send(_chunk("long", "a", _values(i)))
    await run.check(every_resume=True)


async def test_a_task_snapshot_event_writes_its_artifacts_whole(store: TaskStore) -> None:
    run = await _Run(store, "snap").start()
    await run.send(_chunk("snap", "a", TextPart(text="one"), append=False))
    for i in range(30):
        await run.send(_chunk("snap", "a", TextPart(text=f" {i}")))
    snapshot = attrs.evolve(
        run.expected,
        artifacts=(Artifact(parts=[TextPart(text="rewritten")], artifact_id="a"),),
        status=TaskStatus(state=TaskState.WORKING, timestamp=T0 + timedelta(seconds=1)),
    )
    await run.send(snapshot)
    await run.send(_chunk("snap", "a", TextPart(text=" again")))
    await run.check(every_resume=True)
    assert [p.text for p in run.expected.artifacts[0].parts] == ["rewritten", " again"]  # type: ignore[union-attr]


@pytest.fixture(params=["sqlite", "postgres"])
async def two_handles(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
    """Two store instances on one database (two replicas), each with caches of its own."""
    if request.param == "sqlite":
        a: TaskStore = SQLiteTaskStore(tmp_path / "two.db")
        b: TaskStore = SQLiteTaskStore(tmp_path / "two.db")
    else:
        dsn, schema = request.getfixturevalue("pg_dsn"), request.getfixturevalue("pg_schema")
        a, b = PostgresTaskStore(dsn, schema=schema), PostgresTaskStore(dsn, schema=schema)
    try:
        yield a, b
    finally:
        await a.aclose()  # type: ignore[attr-defined]
        await b.aclose()  # type: ignore[attr-defined]


async def test_replicas_appending_in_turn_read_back_exactly(
    two_handles: tuple[TaskStore, TaskStore],
) -> None:
    a, b = two_handles
    task_id = uuid.uuid4().hex
    run = await _Run(a, task_id).start()
    await run.send(_chunk(task_id, "x", TextPart(text="from a"), append=False))
    for i in range(60):
        # Runs of appends from each: a handle's first append after the other's
        # has a stale cache and writes the artifact whole; the next ones add pieces.
        handle = a if (i // 7) % 2 == 0 else b
        await run.send(_chunk(task_id, "x", _values(i)), store=handle)
    await run.check(a, every_resume=True)
    await run.check(b, every_resume=True)


# --- what an append writes --------------------------------------------------------------------


async def _bytes_written_per_append(
    store: TaskStore, written: Callable[[], int], parts: int
) -> list[int]:
    """Artifact bytes written by each of 5 appends to an artifact of ``parts`` parts."""
    task_id = f"grown-{parts}"
    run = await _Run(store, task_id).start()
    await run.send(_chunk(task_id, "a", TextPart(text="t" * 40), append=False))
    for _ in range(parts - 1):
        await run.send(_chunk(task_id, "a", TextPart(text="t" * 40)))
    costs = []
    for _ in range(5):
        before = written()
        await run.send(_chunk(task_id, "a", TextPart(text="t" * 40)))
        costs.append(written() - before)
    await run.check()
    return costs


def _logging_artifact_writes(path: Path) -> sqlite3.Connection:
    """A connection to the SQLite database at ``path`` whose table ``written`` gets the
    bytes of every artifact row written from now on."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE written (n INTEGER)")
    for op in ("INSERT", "UPDATE"):
        db.execute(
            f"CREATE TRIGGER written_{op} AFTER {op} ON a2a_task_artifacts"
            " BEGIN INSERT INTO written VALUES (length(CAST(NEW.artifact AS BLOB))); END"
        )
    db.commit()
    return db


async def test_sqlite_append_writes_do_not_grow_with_the_artifact(tmp_path: Path) -> None:
    path = tmp_path / "grow.db"
    async with SQLiteTaskStore(path) as store:
        db = _logging_artifact_writes(path)

        def written() -> int:
            return int(db.execute("SELECT coalesce(sum(n), 0) FROM written").fetchone()[0])

        small = await _bytes_written_per_append(store, written, 3)
        big = await _bytes_written_per_append(store, written, 2_000)
        db.close()
    # The whole artifact at 2,000 parts is some 36 KB; each append writes a piece.
    assert max(small) <= PIECE_BYTES + 100, small
    assert max(big) <= PIECE_BYTES + 100, big


async def test_postgres_append_writes_do_not_grow_with_the_artifact(
    pg_dsn: str, pg_schema: str
) -> None:
    import psycopg

    q = f'"{pg_schema}"'
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE {q}.written (n bigint)")
            conn.execute(
                f"CREATE FUNCTION {q}.count_written() RETURNS trigger LANGUAGE plpgsql AS $$"
                f" BEGIN INSERT INTO {q}.written VALUES (length(NEW.artifact)); RETURN NULL; END $$"
            )
            conn.execute(
                f"CREATE TRIGGER written AFTER INSERT OR UPDATE ON {q}.a2a_task_artifacts"
                f" FOR EACH ROW EXECUTE FUNCTION {q}.count_written()"
            )

            def written() -> int:
                row = conn.execute(f"SELECT coalesce(sum(n), 0) FROM {q}.written").fetchone()
                assert row is not None
                return int(row[0])

            small = await _bytes_written_per_append(store, written, 3)
            big = await _bytes_written_per_append(store, written, 2_000)
    assert max(small) <= PIECE_BYTES + 100, small
    assert max(big) <= PIECE_BYTES + 100, big


async def test_appends_stay_small_with_many_tasks_streaming_at_once(tmp_path: Path) -> None:
    """More tasks streaming at once than the store's cache of artifacts once held (256):
    each append still writes only its piece (the cache dropped entries in turn, and
    every append of every stream rewrote its whole artifact)."""
    path = tmp_path / "many.db"
    async with SQLiteTaskStore(path) as store:
        db = _logging_artifact_writes(path)
        runs = [await _Run(store, f"t{i}").start() for i in range(300)]
        text = "x" * 500
        for run in runs:
            event = _chunk(run.task_id, "a", TextPart(text=text), append=False)
            await store.update(apply_event(run.expected, event), 1, event=event)
            run.expected = apply_event(run.expected, event)
        for round_ in range(8):
            db.execute("DELETE FROM written")
            db.commit()
            for run in runs:  # each run writes on from what it wrote last, as the engine does
                event = _chunk(run.task_id, "a", TextPart(text=text))
                await store.update(apply_event(run.expected, event), round_ + 2, event=event)
                run.expected = apply_event(run.expected, event)
            biggest = db.execute("SELECT max(n) FROM written").fetchone()[0]
            assert biggest <= PIECE_BYTES + 600, (round_, biggest)
        db.close()
        got = await store.get("t0", None)
        assert got is not None and got.task == runs[0].expected


def test_the_artifact_cache_keeps_running_tasks_only_and_is_bounded() -> None:
    reads = ArtifactReads(max_tasks=10, max_parts=25)
    artifact = Artifact(parts=[TextPart(text=f"{i}") for i in range(5)], artifact_id="a")
    running = attrs.evolve(_first("t"), artifacts=(artifact,))
    done = attrs.evolve(running, status=TaskStatus(state=TaskState.COMPLETED))
    reads.remember("t", 1, 2, running)
    assert reads.get("t") == (2, (artifact,), 1)
    reads.remember("t", 1, 3, done)  # no write follows a terminal one
    assert reads.get("t") is None
    for i in range(6):  # 5 parts each: the sixth goes over 25 parts, the first goes
        reads.remember(f"r{i}", 1, 1, running)
    assert reads.get("r0") is None and reads.get("r1") is not None


def test_applying_an_append_checks_only_the_parts_it_adds() -> None:
    """The engine's side: the new artifact is not checked part by part again."""

    def lines_run(parts: int) -> int:
        artifact = Artifact(parts=[TextPart(text=f"{i}") for i in range(parts)], artifact_id="a")
        task = attrs.evolve(_first("t"), artifacts=(artifact,))
        event = _chunk("t", "a", TextPart(text="more"), name="n")
        with Lines() as lines:
            after = apply_event(task, event)
        assert after.artifacts[0] == attrs.evolve(
            artifact, parts=(*artifact.parts, TextPart(text="more")), name="n"
        )
        return lines.count

    small, big = lines_run(5), lines_run(5_000)
    assert big - small <= 20, (small, big)


async def test_a_store_learns_what_an_append_added_without_a_pass_over_the_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[object] = []

    class CountingOperator:
        @staticmethod
        def is_(a: object, b: object) -> bool:
            compared.append(a)
            return a is b

    monkeypatch.setattr(_pieces, "operator", CountingOperator)
    async with SQLiteTaskStore(tmp_path / "known.db") as store:
        run = await _Run(store, "t").start()
        parts = [TextPart(text=f"{i} ") for i in range(5_000)]
        await run.send(_chunk("t", "a", *parts, append=False))
        await run.send(_chunk("t", "a", TextPart(text="more")))  # the engine's append
        assert compared == []
        # An artifact built otherwise is compared part by part, and still written right.
        artifact = run.expected.artifacts[0]
        rebuilt = attrs.evolve(artifact, parts=(*artifact.parts, TextPart(text="x")))
        grown = attrs.evolve(run.expected, artifacts=(rebuilt,))
        stored = await store.get("t", None)
        assert stored is not None
        await store.update(grown, stored.version)
        assert len(compared) == 5_001
        got = await store.get("t", None)
        assert got is not None and got.task.artifacts == (rebuilt,)


def test_an_artifact_knows_what_it_was_appended_to_while_it_lives() -> None:
    earlier = Artifact(parts=[TextPart(text="a"), TextPart(text="b")], artifact_id="x")
    chunk = Artifact(parts=[TextPart(text="c")], artifact_id="x", name="n")
    joined = chunk.after_parts_of(earlier)
    assert joined.parts_added_to(earlier) == (TextPart(text="c"),)
    assert joined == attrs.evolve(chunk, parts=(*earlier.parts, *chunk.parts))
    assert joined.parts_added_to(chunk) is None  # not what it was made from
    assert attrs.evolve(joined).parts_added_to(earlier) is None  # a copy made otherwise
    assert earlier.parts_added_to(earlier) is None
    before = len(_task_module._JOINED)
    made = [chunk.after_parts_of(earlier) for _ in range(100)]
    assert len(_task_module._JOINED) == before + 100
    del made
    gc.collect()
    assert len(_task_module._JOINED) == before  # entries go with their artifacts


def test_whole_artifacts_refuses_pieces_without_their_first() -> None:
    with pytest.raises(ValueError, match="no piece 0"):
        whole_artifacts(['[{"text":"x"}]'])
    assert whole_artifacts(['{"parts":[{"text":"a"}],"artifactId":"i"}', '[{"text":"b"}]']) == [
        b'{"parts":[{"text":"a"},{"text":"b"}],"artifactId":"i"}'
    ]


# --- migration 9: a database of schema 8 ------------------------------------------------------


def _schema_8_events(task_id: str) -> list[StreamResponse]:
    return [
        _chunk(task_id, "a", TextPart(text="first "), append=False, name="n"),
        _chunk(task_id, "a", TextPart(text="second")),
        _chunk(task_id, "b", TextPart(text="referred to by its event"), append=False),
        TaskStatusUpdateEvent(
            task_id=task_id,
            context_id="ctx",
            status=TaskStatus(state=TaskState.WORKING, timestamp=T0 + timedelta(seconds=1)),
        ),
    ]


async def _write_as_schema_8(open_store: Callable[[], TaskStore], task_id: str) -> _Run:
    """The task written by handles that did not read it: every write then rewrites
    each artifact whole, as schema 8 stored them (piece 0 only, no pieces)."""
    reader, writer = open_store(), open_store()
    run = await _Run(writer, task_id).start()
    for event in _schema_8_events(task_id):
        stored = await reader.get(task_id, None)
        assert stored is not None
        await writer.aclose()  # type: ignore[attr-defined]
        writer = open_store()
        await writer.update(apply_event(stored.task, event), stored.version, event=event)
        run.expected = apply_event(run.expected, event)
        run.logged.append((len(run.logged) + 1, event))
    await reader.aclose()  # type: ignore[attr-defined]
    await writer.aclose()  # type: ignore[attr-defined]
    return run


async def _moves_forward(store: TaskStore, run: _Run) -> None:
    run.store = store
    await run.check(every_resume=True)
    for i in range(20):
        await run.send(_chunk(run.task_id, "b", _values(i)))
    await run.send(_chunk(run.task_id, "a", TextPart(text=" third"), last=True))
    await run.check(every_resume=True)


async def test_sqlite_database_of_schema_8_moves_forward(tmp_path: Path) -> None:
    path = tmp_path / "v8.db"
    run = await _write_as_schema_8(lambda: SQLiteTaskStore(path), "old")
    db = sqlite3.connect(path)
    assert {r[0] for r in db.execute("SELECT piece FROM a2a_task_artifacts")} == {0}
    refs = db.execute("SELECT count(*) FROM a2a_task_artifacts WHERE ref_seq IS NOT NULL")
    assert refs.fetchone()[0] == 1  # artifact b's event refers to its row
    db.executescript(
        """
        CREATE TABLE v8 (
            task_key INTEGER NOT NULL REFERENCES a2a_tasks (key) ON DELETE CASCADE,
            pos INTEGER NOT NULL, artifact TEXT NOT NULL, ref_seq INTEGER,
            PRIMARY KEY (task_key, pos)
        ) WITHOUT ROWID;
        INSERT INTO v8 SELECT task_key, pos, artifact, ref_seq FROM a2a_task_artifacts;
        DROP TABLE a2a_task_artifacts;
        ALTER TABLE v8 RENAME TO a2a_task_artifacts;
        DROP INDEX a2a_push_owed;
        ALTER TABLE a2a_push_configs DROP COLUMN owed_seq;
        ALTER TABLE a2a_push_configs DROP COLUMN delivered_seq;
        ALTER TABLE a2a_push_configs DROP COLUMN claim_expires;
        ALTER TABLE a2a_push_configs DROP COLUMN dialect;
        DROP INDEX a2a_tasks_started_by;
        ALTER TABLE a2a_tasks DROP COLUMN started_by;
        DROP INDEX a2a_tasks_context_state;
        DELETE FROM a2a_schema_migrations WHERE version >= 9;
        """
    )
    db.close()
    async with SQLiteTaskStore(path) as store:
        await _moves_forward(store, run)
    db = sqlite3.connect(path)
    assert max(r[0] for r in db.execute("SELECT version FROM a2a_schema_migrations")) >= 9
    assert max(r[0] for r in db.execute("SELECT piece FROM a2a_task_artifacts")) >= 1
    db.close()


async def test_postgres_database_of_schema_8_moves_forward(pg_dsn: str, pg_schema: str) -> None:
    import psycopg

    run = await _write_as_schema_8(lambda: PostgresTaskStore(pg_dsn, schema=pg_schema), "old")
    q = f'"{pg_schema}"'
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            f"ALTER TABLE {q}.a2a_task_artifacts DROP CONSTRAINT a2a_task_artifacts_pkey,"
            " DROP COLUMN piece, ADD CONSTRAINT a2a_task_artifacts_pkey PRIMARY KEY (task_key, pos)"
        )
        conn.execute(
            f"ALTER TABLE {q}.a2a_push_configs DROP COLUMN owed_seq,"
            " DROP COLUMN delivered_seq, DROP COLUMN claim_expires, DROP COLUMN dialect"
        )
        conn.execute(f"ALTER TABLE {q}.a2a_tasks DROP COLUMN started_by")
        conn.execute(f"DROP INDEX {q}.a2a_tasks_context_state")
        conn.execute(f"DELETE FROM {q}.a2a_schema_migrations WHERE version >= 9")
    async with PostgresTaskStore(pg_dsn, schema=pg_schema) as store:
        await _moves_forward(store, run)
    with psycopg.connect(pg_dsn) as conn:
        pieces = conn.execute(f"SELECT max(piece) FROM {q}.a2a_task_artifacts").fetchone()
    assert pieces is not None and pieces[0] >= 1
