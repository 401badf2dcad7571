"""An agent's task metadata (``RequestContext.update_task_metadata``): merged into
the task with the next event the agent yields, stored with it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_models import GetTaskRequest, Message, Task, TaskState, TaskStatus
from a2a_models.server import (
    AgentEvent,
    CallContext,
    InMemoryTaskStore,
    RequestContext,
    RequestHandler,
    TaskStore,
)

from ._support import FuncAgent, make_card, send


async def two_turns(context: RequestContext) -> AsyncIterator[AgentEvent]:
    if context.task is None:
        context.update_task_metadata({"cost": 1, "first": True})
        yield context.working()
        context.update_task_metadata({"cost": 2})  # replaces, with the next event
        yield context.ask("more?")
        return
    # a later turn sees the stored metadata and replaces one key of it
    assert context.task.metadata == {"cost": 2, "first": True}
    context.update_task_metadata({"cost": 3})
    yield context.complete()


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    if request.param == "memory":
        yield InMemoryTaskStore()
        return
    from a2a_models.stores import SQLiteTaskStore

    lite = await SQLiteTaskStore(tmp_path / "meta.db").open()
    try:
        yield lite
    finally:
        await lite.aclose()


async def test_metadata_is_merged_with_the_next_event_and_stored(store: TaskStore) -> None:
    handler = RequestHandler(FuncAgent(two_turns), make_card(), store=store)
    call = CallContext()
    first = await handler.on_send_message(send("go"), call)
    assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
    assert first.metadata == {"cost": 2, "first": True}
    stored = await handler.on_get_task(GetTaskRequest(id=first.id), call)
    assert stored.metadata == {"cost": 2, "first": True}

    done = await handler.on_send_message(
        send("yes", task_id=first.id, context_id=first.context_id), call
    )
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert done.metadata == {"cost": 3, "first": True}
    stored = await handler.on_get_task(GetTaskRequest(id=first.id), call)
    assert stored.metadata == {"cost": 3, "first": True}


async def snapshot_first(context: RequestContext) -> AsyncIterator[AgentEvent]:
    context.update_task_metadata({"added": 1})
    yield Task(
        id=context.task_id,
        context_id=context.context_id,
        status=TaskStatus(state=TaskState.COMPLETED),
        metadata={"own": 0},
    )


async def direct_reply(context: RequestContext) -> AsyncIterator[AgentEvent]:
    context.update_task_metadata({"dropped": 1})  # no task to keep it
    yield context.reply("hi")


async def test_a_first_snapshot_gets_the_updates_and_a_direct_reply_drops_them() -> None:
    handler = RequestHandler(FuncAgent(snapshot_first), make_card())
    task = await handler.on_send_message(send("go"), CallContext())
    assert isinstance(task, Task) and task.metadata == {"own": 0, "added": 1}

    replier = RequestHandler(FuncAgent(direct_reply), make_card())
    reply = await replier.on_send_message(send("go"), CallContext())
    assert isinstance(reply, Message) and reply.metadata is None


def test_pending_updates_are_taken_once() -> None:
    context = RequestContext(message=Message.user("x"), task_id="t", context_id="c")
    assert context.take_task_metadata() is None
    context.update_task_metadata({"a": 1})
    context.update_task_metadata({"b": 2})
    assert context.take_task_metadata() == {"a": 1, "b": 2}
    assert context.take_task_metadata() is None
