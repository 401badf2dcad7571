"""SendMessage and SendStreamingMessage through the handler."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from a2a_models import (
    InvalidParamsError,
    ListTasksRequest,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UnsupportedOperationError,
)
from a2a_models.server import AgentEvent, InMemoryTaskStore, RequestContext, RequestHandler

from ._support import FuncAgent, collect, make_card, send, settle


async def echo(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.working()
    yield context.artifact(context.message.text, name="echo")
    yield context.complete("done")


def handler_for(agent: FuncAgent, **kwargs: object) -> RequestHandler:
    return RequestHandler(agent, make_card(), **kwargs)  # type: ignore[arg-type]


async def test_blocking_send_returns_the_finished_task() -> None:
    handler = handler_for(FuncAgent(echo))
    task = await handler.on_send_message(send("hello"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert [a.name for a in task.artifacts] == ["echo"]
    assert [m.text for m in task.history] == ["hello", "done"]
    assert task.context_id and task.history[0].task_id == task.id
    assert task.status.timestamp is not None


async def test_engine_assigns_fresh_ids() -> None:
    handler = handler_for(FuncAgent(echo))
    one = await handler.on_send_message(send())
    two = await handler.on_send_message(send())
    assert isinstance(one, Task) and isinstance(two, Task)
    assert one.id != two.id and one.context_id != two.context_id


async def test_context_id_alone_starts_a_new_task_in_that_context() -> None:
    handler = handler_for(FuncAgent(echo))
    one = await handler.on_send_message(send(context_id="ctx-1"))
    two = await handler.on_send_message(send(context_id="ctx-1"))
    assert isinstance(one, Task) and isinstance(two, Task)
    assert one.id != two.id
    assert one.context_id == two.context_id == "ctx-1"


async def test_non_blocking_send_returns_once_the_task_exists() -> None:
    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working("thinking")
        await release.wait()
        yield context.complete()

    handler = handler_for(FuncAgent(slow))
    task = await handler.on_send_message(send(return_immediately=True))
    assert isinstance(task, Task)
    assert task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
    release.set()
    await handler.idle()
    from a2a_models import GetTaskRequest

    done = await handler.on_get_task(GetTaskRequest(id=task.id))
    assert done.status.state is TaskState.COMPLETED


async def test_direct_message_reply() -> None:
    async def answer(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.reply("42")

    handler = handler_for(FuncAgent(answer))
    reply = await handler.on_send_message(send("question", context_id="ctx"))
    assert isinstance(reply, Message)
    assert (reply.text, reply.context_id, reply.task_id) == ("42", "ctx", None)
    assert (await handler.on_list_tasks(ListTasksRequest())).tasks == ()
    stream = await handler.on_send_streaming_message(send("again"))
    items = await collect(stream)
    assert len(items) == 1 and items[0][0] == 0 and isinstance(items[0][1], Message)


async def test_direct_reply_gets_the_context_id_filled_in() -> None:
    async def answer(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield Message.agent("hi", task_id=context.task_id)

    reply = await handler_for(FuncAgent(answer)).on_send_message(send(context_id="c9"))
    assert isinstance(reply, Message)
    assert (reply.context_id, reply.task_id) == ("c9", None)


async def test_stream_items_arrive_as_produced() -> None:
    release = asyncio.Event()
    produced_last = False

    async def gated(context: RequestContext) -> AsyncIterator[AgentEvent]:
        nonlocal produced_last
        yield context.working()
        yield context.artifact("part 1")
        await release.wait()
        produced_last = True
        yield context.complete()

    handler = handler_for(FuncAgent(gated))
    stream = await handler.on_send_streaming_message(send())
    first = await asyncio.wait_for(anext(stream), 1)
    second = await asyncio.wait_for(anext(stream), 1)
    third = await asyncio.wait_for(anext(stream), 1)
    assert not produced_last  # received while the agent still waits
    release.set()
    rest = await collect(stream)
    items = [first, second, third, *rest]
    assert [seq for seq, _ in items] == [1, 2, 3, 4]
    assert isinstance(items[0][1], Task) and items[0][1].status.state is TaskState.SUBMITTED
    assert isinstance(items[1][1], TaskStatusUpdateEvent)
    assert isinstance(items[2][1], TaskArtifactUpdateEvent)
    last = items[3][1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED


async def test_streaming_requires_the_capability() -> None:
    handler = RequestHandler(FuncAgent(echo), make_card(streaming=False))
    with pytest.raises(UnsupportedOperationError, match="streaming"):
        await handler.on_send_streaming_message(send())


async def multi_turn(context: RequestContext) -> AsyncIterator[AgentEvent]:
    if context.task is None:
        yield context.working()
        yield context.ask("which city?")
        yield context.complete("never reached: the turn ended")
    else:
        yield context.working(f"looking up {context.message.text}")
        yield context.artifact(f"weather in {context.message.text}")
        yield context.complete()


async def test_multi_turn_input_required() -> None:
    agent = FuncAgent(multi_turn)
    handler = handler_for(agent)
    asked = await handler.on_send_message(send("weather?"))
    assert isinstance(asked, Task)
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None and asked.status.message.text == "which city?"
    # The answer continues the task (contextId is inferred from the task).
    done = await handler.on_send_message(send("Paris", task_id=asked.id))
    assert isinstance(done, Task)
    assert done.id == asked.id and done.status.state is TaskState.COMPLETED
    assert [m.text for m in done.history] == [
        "weather?",
        "which city?",
        "Paris",
        "looking up Paris",
    ]
    second = agent.contexts[1]
    assert second.task is not None and second.task.id == asked.id
    assert second.message.task_id == asked.id and second.message.context_id == asked.context_id
    # A terminal task takes no more messages.
    with pytest.raises(UnsupportedOperationError, match="COMPLETED"):
        await handler.on_send_message(send("again", task_id=asked.id))


async def test_multi_turn_streams_close_at_each_interruption() -> None:
    handler = handler_for(FuncAgent(multi_turn))
    first = await collect(await handler.on_send_streaming_message(send("weather?")))
    last = first[-1][1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.INPUT_REQUIRED
    task_id = last.task_id
    second = await collect(await handler.on_send_streaming_message(send("Rome", task_id=task_id)))
    head = second[0][1]
    assert isinstance(head, Task) and head.status.state is TaskState.WORKING
    assert head.history[-1].text == "Rome"
    assert second[0][0] == first[-1][0] + 1  # sequence numbers continue
    assert [seq for seq, _ in second] == list(range(second[0][0], second[0][0] + len(second)))
    end = second[-1][1]
    assert isinstance(end, TaskStatusUpdateEvent) and end.status.state is TaskState.COMPLETED


async def test_message_to_unknown_task_is_not_found() -> None:
    handler = handler_for(FuncAgent(echo))
    with pytest.raises(TaskNotFoundError):
        await handler.on_send_message(send(task_id="no-such-task"))


async def test_task_and_context_mismatch_is_invalid_params() -> None:
    handler = handler_for(FuncAgent(multi_turn))
    asked = await handler.on_send_message(send())
    assert isinstance(asked, Task)
    with pytest.raises(InvalidParamsError, match="does not match"):
        await handler.on_send_message(send("x", task_id=asked.id, context_id="other"))


async def test_message_to_a_working_task_is_unsupported() -> None:
    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await release.wait()
        yield context.complete()

    handler = handler_for(FuncAgent(slow))
    task = await handler.on_send_message(send(return_immediately=True))
    assert isinstance(task, Task)
    with pytest.raises(UnsupportedOperationError, match="WORKING"):
        await handler.on_send_message(send("more", task_id=task.id))
    release.set()
    await handler.idle()


async def test_history_length_of_the_send_configuration() -> None:
    handler = handler_for(FuncAgent(echo))
    task = await handler.on_send_message(send(history_length=1))
    assert isinstance(task, Task) and [m.text for m in task.history] == ["done"]
    task = await handler.on_send_message(send(history_length=0))
    assert isinstance(task, Task) and task.history == ()
    items = await collect(await handler.on_send_streaming_message(send(history_length=0)))
    assert isinstance(items[0][1], Task) and items[0][1].history == ()


async def test_agent_exception_fails_the_task_without_leaking(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        raise RuntimeError("secret database password in traceback")

    handler = handler_for(FuncAgent(broken))
    with caplog.at_level(logging.ERROR, logger="a2a_models.server"):
        task = await handler.on_send_message(send())
    assert isinstance(task, Task) and task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.text == "The agent failed with an internal error."
    assert "secret" not in repr(task)
    assert any("secret" in str(r.exc_info) for r in caplog.records if r.exc_info)


async def test_agent_failing_before_any_event_still_gives_a_failed_task() -> None:
    async def broken(context: RequestContext) -> AsyncIterator[AgentEvent]:
        raise ValueError("boom")
        yield context.working()  # pragma: no cover

    task = await handler_for(FuncAgent(broken)).on_send_message(send("hi"))
    assert isinstance(task, Task) and task.status.state is TaskState.FAILED
    assert task.history[0].text == "hi"


async def test_illegal_transition_from_a_buggy_agent_fails_the_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def buggy(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        yield context.status(TaskState.SUBMITTED)
        yield context.complete()  # pragma: no cover

    with caplog.at_level(logging.WARNING, logger="a2a_models.server"):
        task = await handler_for(FuncAgent(buggy)).on_send_message(send())
    assert isinstance(task, Task) and task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "WORKING -> SUBMITTED" in task.status.message.text
    assert any("WORKING -> SUBMITTED" in r.getMessage() for r in caplog.records)


async def test_events_for_another_task_are_rejected() -> None:
    async def confused(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield TaskStatusUpdateEvent(
            task_id="someone-else",
            context_id=context.context_id,
            status=TaskStatus.now(TaskState.COMPLETED),
        )

    task = await handler_for(FuncAgent(confused)).on_send_message(send())
    assert isinstance(task, Task) and task.status.state is TaskState.FAILED


async def test_agent_ending_without_a_final_state_fails_the_task() -> None:
    async def quits(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()

    async def silent(context: RequestContext) -> AsyncIterator[AgentEvent]:
        return
        yield  # pragma: no cover

    for execute, reason in ((quits, "without a terminal"), (silent, "no response")):
        task = await handler_for(FuncAgent(execute)).on_send_message(send())
        assert isinstance(task, Task) and task.status.state is TaskState.FAILED
        assert task.status.message is not None and reason in task.status.message.text


async def test_artifact_chunks_are_assembled() -> None:
    async def chunks(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.artifact("Hel", name="greeting")
        yield context.artifact("lo, ", append=True)
        yield context.artifact("world", append=True, last_chunk=True)
        yield context.artifact("other", artifact_id="second")
        yield context.complete()

    handler = handler_for(FuncAgent(chunks))
    items = await collect(await handler.on_send_streaming_message(send()))
    updates = [e for _, e in items if isinstance(e, TaskArtifactUpdateEvent)]
    assert [(u.append, u.last_chunk) for u in updates] == [
        (False, False),
        (True, False),
        (True, True),
        (False, False),
    ]
    from a2a_models import GetTaskRequest

    task = await handler.on_get_task(GetTaskRequest(id=updates[0].task_id))
    greeting = task.artifacts[0]
    assert greeting.name == "greeting"
    assert "".join(p.text for p in greeting.parts if isinstance(p, TextPart)) == "Hello, world"
    assert [a.artifact_id for a in task.artifacts][1] == "second"


async def test_appending_after_the_last_chunk_fails_the_task() -> None:
    async def sloppy(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.artifact("a", last_chunk=True)
        yield context.artifact("b", append=True)
        yield context.complete()  # pragma: no cover

    task = await handler_for(FuncAgent(sloppy)).on_send_message(send())
    assert isinstance(task, Task) and task.status.state is TaskState.FAILED
    assert task.status.message is not None and "last chunk" in task.status.message.text


async def test_agent_task_snapshot_creates_the_task() -> None:
    async def snapshot(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield Task(
            id=context.task_id,
            status=TaskStatus(state=TaskState.WORKING),
            metadata={"source": "agent"},
        )
        yield context.complete()

    task = await handler_for(FuncAgent(snapshot)).on_send_message(send("hi"))
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert task.metadata == {"source": "agent"}
    assert task.history[0].text == "hi"  # the client's message starts the history


async def test_a_full_store_refuses_new_tasks() -> None:
    from a2a_models.server import TaskStoreFullError

    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await release.wait()
        yield context.complete()

    handler = handler_for(FuncAgent(slow), store=InMemoryTaskStore(max_tasks=1))
    await handler.on_send_message(send(return_immediately=True))
    with pytest.raises(TaskStoreFullError, match="full"):
        await handler.on_send_message(send())
    with pytest.raises(TaskStoreFullError):
        await handler.on_send_streaming_message(send())
    release.set()
    await handler.idle()
    await settle()
    task = await handler.on_send_message(send())  # the finished task was evicted
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
