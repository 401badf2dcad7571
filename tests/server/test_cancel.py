"""CancelTask: running, interrupted and terminal tasks; races with the agent."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from a2a_models import (
    CancelTaskRequest,
    GetTaskRequest,
    Task,
    TaskNotCancelableError,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_models.server import AgentEvent, RequestContext, RequestHandler

from ._support import FuncAgent, collect, make_card, send, settle


class Blocking:
    """An agent that works until released (or canceled)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.stopped = False

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        try:
            yield context.working()
            await self.release.wait()
            yield context.complete()
        finally:
            self.stopped = True


async def _running(handler: RequestHandler) -> Task:
    task = await handler.on_send_message(send(return_immediately=True))
    assert isinstance(task, Task)
    return task


async def test_cancel_a_running_task() -> None:
    blocking = Blocking()
    agent = FuncAgent(blocking.execute)
    handler = RequestHandler(agent, make_card())
    task = await _running(handler)
    canceled = await handler.on_cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state is TaskState.CANCELED
    assert len(agent.canceled) == 1 and agent.canceled[0].cancel_requested
    await handler.idle()
    assert blocking.stopped and handler.active_runs() == 0
    got = await handler.on_get_task(GetTaskRequest(id=task.id))
    assert got.status.state is TaskState.CANCELED


async def test_cancel_ends_the_blocking_send_and_the_streams() -> None:
    from a2a_models import SubscribeToTaskRequest

    agent = FuncAgent(Blocking().execute)
    handler = RequestHandler(agent, make_card())
    blocked = asyncio.create_task(handler.on_send_message(send()))
    await settle()
    task_id = agent.contexts[0].task_id
    streams = [
        await handler.on_subscribe_to_task(SubscribeToTaskRequest(id=task_id)) for _ in range(2)
    ]
    await handler.on_cancel_task(CancelTaskRequest(id=task_id))
    result = await asyncio.wait_for(blocked, 1)
    assert isinstance(result, Task) and result.status.state is TaskState.CANCELED
    for stream in streams:
        items = await collect(stream)
        assert isinstance(items[0][1], Task)
        last = items[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.CANCELED


async def test_late_completed_after_cancel_is_rejected(caplog: pytest.LogCaptureFixture) -> None:
    go = asyncio.Event()

    async def stubborn(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await go.wait()
        yield context.complete("finished anyway")

    async def cancel(context: RequestContext) -> None:
        go.set()  # the agent wakes up and produces "completed" while we cancel
        await asyncio.sleep(0.01)

    handler = RequestHandler(FuncAgent(stubborn, cancel), make_card())
    task = await _running(handler)
    with caplog.at_level(logging.WARNING, logger="a2a_models.server"):
        canceled = await handler.on_cancel_task(CancelTaskRequest(id=task.id))
        await handler.idle()
    assert canceled.status.state is TaskState.CANCELED
    got = await handler.on_get_task(GetTaskRequest(id=task.id))
    assert got.status.state is TaskState.CANCELED
    assert all(m.text != "finished anyway" for m in got.history)
    log = await handler.store.events_after(task.id, 0)
    states = [e.status.state for _, e in log if isinstance(e, TaskStatusUpdateEvent)]
    assert states == [TaskState.WORKING, TaskState.CANCELED]
    assert any("discarding" in r.getMessage() for r in caplog.records)


async def test_cancel_of_a_terminal_task_is_not_cancelable() -> None:
    async def quick(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.complete()

    handler = RequestHandler(FuncAgent(quick), make_card())
    task = await handler.on_send_message(send())
    assert isinstance(task, Task)
    with pytest.raises(TaskNotCancelableError, match="COMPLETED"):
        await handler.on_cancel_task(CancelTaskRequest(id=task.id))


async def test_cancel_of_an_already_canceled_task_is_not_cancelable() -> None:
    # §3.1.5 lists "already ... canceled" among the not-cancelable states.
    handler = RequestHandler(FuncAgent(Blocking().execute), make_card())
    task = await _running(handler)
    await handler.on_cancel_task(CancelTaskRequest(id=task.id))
    with pytest.raises(TaskNotCancelableError, match="CANCELED"):
        await handler.on_cancel_task(CancelTaskRequest(id=task.id))


async def test_overlapping_cancels_have_the_same_effect() -> None:
    # §3.3.1: duplicate cancel requests in flight together both succeed.
    async def slow_cancel(context: RequestContext) -> None:
        await asyncio.sleep(0.01)

    agent = FuncAgent(Blocking().execute, slow_cancel)
    handler = RequestHandler(agent, make_card())
    task = await _running(handler)
    one, two = await asyncio.gather(
        handler.on_cancel_task(CancelTaskRequest(id=task.id)),
        handler.on_cancel_task(CancelTaskRequest(id=task.id)),
    )
    assert one.status.state is two.status.state is TaskState.CANCELED
    assert len(agent.canceled) == 1


async def test_agent_may_refuse_to_cancel() -> None:
    blocking = Blocking()

    async def refuse(context: RequestContext) -> None:
        raise TaskNotCancelableError("too late to stop the rocket")

    handler = RequestHandler(FuncAgent(blocking.execute, refuse), make_card())
    task = await _running(handler)
    with pytest.raises(TaskNotCancelableError, match="rocket"):
        await handler.on_cancel_task(CancelTaskRequest(id=task.id))
    blocking.release.set()
    await handler.idle()
    got = await handler.on_get_task(GetTaskRequest(id=task.id))
    assert got.status.state is TaskState.COMPLETED


async def test_agent_cancel_crashing_still_cancels(caplog: pytest.LogCaptureFixture) -> None:
    async def crash(context: RequestContext) -> None:
        raise RuntimeError("cleanup failed")

    handler = RequestHandler(FuncAgent(Blocking().execute, crash), make_card())
    task = await _running(handler)
    with caplog.at_level(logging.ERROR, logger="a2a_models.server"):
        canceled = await handler.on_cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state is TaskState.CANCELED
    assert any("canceling anyway" in r.getMessage() for r in caplog.records)


async def test_cancel_an_interrupted_task() -> None:
    async def asks(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.ask("name?")

    agent = FuncAgent(asks)
    handler = RequestHandler(agent, make_card())
    task = await handler.on_send_message(send("hello"))
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    await handler.idle()
    canceled = await handler.on_cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state is TaskState.CANCELED
    context = agent.canceled[0]
    assert context.task is not None and context.task.id == task.id
    assert context.message.text == "hello"
