"""A task id taken again once its task is deleted (a custom id factory, a store used
directly): what a SQL store remembers of the deleted task (the history and artifacts
it read or wrote) must never be handed out as the new task's, whether the same handle
or another one on the database deleted and created it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest

from a2a_models import Artifact, Message, Task, TaskState, TaskStatus, TextPart
from a2a_models.stores import PostgresTaskStore, SQLiteTaskStore
from a2a_models.stores._sqlstore import SQLTaskStore

from .conftest import PG_DSN


def _task(texts: list[str], artifact: str, state: TaskState = TaskState.COMPLETED) -> Task:
    return Task(
        id="x",
        context_id="c",
        status=TaskStatus(state=state),
        history=tuple(
            attrs.evolve(Message.user(text, task_id="x", context_id="c"), message_id=text)
            for text in texts
        ),
        artifacts=(Artifact(artifact_id="a", parts=(TextPart(artifact),)),),
    )


def _seen(task: Task) -> tuple[list[str], str]:
    """The history's texts and the artifact's text."""
    part = task.artifacts[0].parts[0]
    assert isinstance(part, TextPart)
    return [m.text for m in task.history], part.text


@pytest.fixture(params=["sqlite", "postgres"])
async def handles(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[SQLTaskStore, SQLTaskStore]]:
    """Two handles of one database (two replicas), each with caches of its own."""
    if request.param == "sqlite":
        pair: tuple[SQLTaskStore, SQLTaskStore] = (
            SQLiteTaskStore(tmp_path / "reuse.db"),
            SQLiteTaskStore(tmp_path / "reuse.db"),
        )
    else:
        schema: str = request.getfixturevalue("pg_schema")
        pair = (PostgresTaskStore(PG_DSN, schema=schema), PostgresTaskStore(PG_DSN, schema=schema))
    try:
        for handle in pair:
            await handle.open()
        yield pair
    finally:
        for handle in pair:
            await handle.aclose()


async def _read(store: SQLTaskStore) -> tuple[list[str], str]:
    stored = await store.get("x", None)
    assert stored is not None
    return _seen(stored.task)


async def test_another_handle_takes_the_id_again(
    handles: tuple[SQLTaskStore, SQLTaskStore],
) -> None:
    a, b = handles
    await a.create(_task(["old1", "old2"], "old"), None)
    assert await _read(a) == (["old1", "old2"], "old")  # a remembers both, at version 1
    assert await b.delete_terminal_older_than(0) == 1
    # Version 1 again, and more messages than a remembers.
    await b.create(_task(["new1", "new2", "new3"], "new"), None)
    assert await _read(a) == (["new1", "new2", "new3"], "new")
    stored = await a.get("x", None, history_length=1)
    assert stored is not None and _seen(stored.task) == (["new3"], "new")


async def test_the_same_handle_takes_the_id_again(
    handles: tuple[SQLTaskStore, SQLTaskStore],
) -> None:
    a, _ = handles
    await a.create(_task(["old1", "old2"], "old"), None)
    assert await _read(a) == (["old1", "old2"], "old")
    assert await a.delete_terminal_older_than(0) == 1
    await a.create(_task(["new1", "new2", "new3"], "new"), None)
    assert await _read(a) == (["new1", "new2", "new3"], "new")


async def test_writes_on_either_side_of_the_id_taken_again(
    handles: tuple[SQLTaskStore, SQLTaskStore],
) -> None:
    a, b = handles
    # a writes the old task up to version 2 (remembering what it wrote).
    working = _task(["old1"], "old", TaskState.WORKING)
    await a.create(working, None)
    assert await a.update(_task(["old1", "old2"], "old, done"), 1) == 2
    assert await _read(a) == (["old1", "old2"], "old, done")
    assert await b.delete_terminal_older_than(0) == 1
    # b creates the new task and brings it to version 2 too, with as many messages.
    await b.create(_task(["new1"], "new", TaskState.WORKING), None)
    assert await b.update(_task(["new1", "new2"], "new, done", TaskState.WORKING), 1) == 2
    assert await _read(a) == (["new1", "new2"], "new, done")
    # a writes the new task from that read; every read after sees the new task only.
    stored = await a.get("x", None)
    assert stored is not None
    assert await a.update(_task(["new1", "new2", "new3"], "new, last"), stored.version) == 3
    assert await _read(a) == (["new1", "new2", "new3"], "new, last")
    assert await _read(b) == (["new1", "new2", "new3"], "new, last")
