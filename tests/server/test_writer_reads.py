"""The engine's writer applies a run's events to the task as the run last wrote it:
a turn reads the task from the store once at most (a continued task, at its first
event), never once per event; a write by anyone else in between is still seen."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2a_models import Task, TaskState
from a2a_models.server import (
    AgentEvent,
    InMemoryTaskStore,
    RequestContext,
    RequestHandler,
    StoredTask,
    TaskStore,
)
from a2a_models.stores import SQLiteTaskStore

from ._support import FuncAgent, make_card, send


class CountingMemoryStore(InMemoryTaskStore):
    def __init__(self) -> None:
        super().__init__()
        self.gets = 0

    async def get(self, *args: Any, **kwargs: Any) -> StoredTask | None:
        self.gets += 1
        return await super().get(*args, **kwargs)


class CountingSQLiteStore(SQLiteTaskStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gets = 0

    async def get(self, *args: Any, **kwargs: Any) -> StoredTask | None:
        self.gets += 1
        return await super().get(*args, **kwargs)


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield CountingMemoryStore()
        return
    made = CountingSQLiteStore(tmp_path / "tasks.db")
    try:
        yield made
    finally:
        await made.aclose()


def _handler(store: TaskStore, reads: list[int]) -> RequestHandler:
    async def chunky(context: RequestContext) -> AsyncIterator[AgentEvent]:
        count: Any = store
        follow_up = context.task is not None
        yield context.working("on it")
        reads.append(count.gets)
        for i in range(6):
            yield context.artifact(
                f"part {i} ", append=i > 0, last_chunk=i == 5, artifact_id="answer"
            )
            reads.append(count.gets)
        yield context.artifact("draft", artifact_id="notes")
        reads.append(count.gets)
        yield context.artifact("final", artifact_id="notes", name="notes")
        reads.append(count.gets)
        yield context.working("almost")
        reads.append(count.gets)
        if follow_up:
            yield context.complete("done")
        else:
            yield context.ask("more?")

    return RequestHandler(FuncAgent(chunky), make_card(), store=store)


async def test_a_turn_reads_the_task_once_at_most_not_per_event(store: Any) -> None:
    reads: list[int] = []
    handler = _handler(store, reads)
    try:
        first = await handler.on_send_message(send("go"))
        assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
        # A new task: the run made it, and wrote all its events without reading it.
        assert len(reads) == 10 and set(reads) == {0}, reads
        reads.clear()
        follow = send("again", task_id=first.id, context_id=first.context_id)
        before = store.gets
        done = await handler.on_send_message(follow)
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        # A continued task: read once, at the run's first event, then never again.
        assert len(reads) == 10 and len(set(reads)) == 1, reads
        assert reads[0] - before <= 3, (before, reads)  # the message's accept, and the run's
    finally:
        await handler.aclose()

    # The same task as when every event read it first.
    (answer, notes) = done.artifacts
    assert answer.artifact_id == "answer" and notes.artifact_id == "notes"
    assert [p.text for p in answer.parts] == ["".join(f"part {i} " for i in range(6))]
    assert notes.name == "notes" and [p.text for p in notes.parts] == ["final"]
    texts = [m.text for m in done.history]
    assert texts == ["go", "on it", "almost", "more?", "again", "on it", "almost", "done"]


async def test_a_write_by_someone_else_between_two_events_is_kept(store: Any) -> None:
    working = asyncio.Event()
    go_on = asyncio.Event()

    async def two_steps(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working("step 1")
        working.set()
        await go_on.wait()
        yield context.artifact("result", artifact_id="r")
        yield context.complete("done")

    handler = RequestHandler(FuncAgent(two_steps), make_card(), store=store)
    try:
        task = await handler.on_send_message(send("go", return_immediately=True))
        assert isinstance(task, Task)
        await working.wait()
        # Another process changes the task (its metadata) while the run waits.
        stored = await store.get(task.id, None, None)
        assert stored is not None
        await store.update(
            attrs.evolve(stored.task, metadata={"by": "someone else"}), stored.version
        )
        go_on.set()
        while handler.active_runs():
            await asyncio.sleep(0.01)
        final = await store.get(task.id, None, None)
    finally:
        await handler.aclose()
    assert final is not None
    assert final.task.status.state is TaskState.COMPLETED
    assert final.task.metadata == {"by": "someone else"}
    assert [a.artifact_id for a in final.task.artifacts] == ["r"]
    assert [m.text for m in final.task.history] == ["go", "step 1", "done"]
    # The event log continues after the other write (which logged nothing).
    events = await store.events_after(task.id, 0)
    assert [seq for seq, _ in events] == [1, 2, 3, 4]
