"""A message its task already has (a client's retry, same ``messageId``) runs no turn.

The answer is the task as it is now: a blocking send waits for a turn still
running, a stream starts from the task's current state (§3.3.1: "Agents may
utilize the messageId to detect duplicate messages"). The agent used to run
again: the store left the repeated message out, the answer went in twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from a2a_models import (
    InvalidParamsError,
    Message,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from a2a_models.server import (
    AgentEvent,
    InMemoryTaskStore,
    RequestContext,
    RequestHandler,
    TaskStore,
)

from ._support import FuncAgent, RecordingSender, collect, make_card, send, settle


class Asking:
    """An agent that asks again after every message; ``gate`` (if set) holds its turns
    after their working status until released."""

    def __init__(self) -> None:
        self.turns: list[str] = []
        self.gate: asyncio.Event | None = None

    async def __call__(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text
        self.turns.append(text)
        if self.gate is not None:
            yield context.working(f"on {text}")
            await self.gate.wait()
        if text == "done":
            yield context.complete(f"got {text}")
        else:
            yield context.ask(f"got {text}")


def again(request: SendMessageRequest, **config: Any) -> SendMessageRequest:
    """``request`` sent once more (same message, same id), with other ``config``."""
    configuration = attrs.evolve(request.configuration, **config) if config else None
    return attrs.evolve(request, configuration=configuration or request.configuration)


async def started(
    store: TaskStore | None = None, **kwargs: Any
) -> tuple[RequestHandler, Asking, str]:
    agent = Asking()
    handler = RequestHandler(FuncAgent(agent), make_card(), store=store, **kwargs)
    task = await handler.on_send_message(send("turn 1"))
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    return handler, agent, task.id


def texts(task: Task) -> list[str]:
    return [m.text for m in task.history]


async def test_a_repeated_message_runs_no_turn() -> None:
    handler, agent, task_id = await started()
    second = send("turn 2", task_id=task_id)
    first = await handler.on_send_message(second)
    repeat = await handler.on_send_message(second)
    assert agent.turns == ["turn 1", "turn 2"]
    assert isinstance(first, Task) and isinstance(repeat, Task)
    assert repeat == first
    assert texts(repeat) == ["turn 1", "got turn 1", "turn 2", "got turn 2"]
    # A new message (new id, same text) is a turn, as before.
    third = await handler.on_send_message(send("turn 2", task_id=task_id))
    assert isinstance(third, Task) and texts(third)[-2:] == ["turn 2", "got turn 2"]
    assert agent.turns == ["turn 1", "turn 2", "turn 2"]
    # historyLength applies to the answer of a repeat too.
    short = await handler.on_send_message(again(second, history_length=1))
    assert isinstance(short, Task) and texts(short) == ["got turn 2"]


async def test_a_repeat_while_its_turn_runs_answers_when_the_turn_is_over() -> None:
    handler, agent, task_id = await started()
    agent.gate = asyncio.Event()
    second = send("turn 2", task_id=task_id)
    running = await handler.on_send_message(again(second, return_immediately=True))
    assert isinstance(running, Task) and running.status.state is TaskState.WORKING
    retry = asyncio.create_task(handler.on_send_message(second))
    await settle()
    assert not retry.done()  # it waits for the turn, as the first send would have
    # returnImmediately: the task as it is, at once.
    now = await handler.on_send_message(again(second, return_immediately=True))
    assert isinstance(now, Task) and now.status.state is TaskState.WORKING
    agent.gate.set()
    answer = await asyncio.wait_for(retry, 2)
    assert isinstance(answer, Task) and answer.status.state is TaskState.INPUT_REQUIRED
    assert texts(answer)[-3:] == ["turn 2", "on turn 2", "got turn 2"]
    assert agent.turns == ["turn 1", "turn 2"]
    await handler.idle()


async def test_identical_retries_at_once_run_one_turn() -> None:
    handler, agent, task_id = await started()
    second = send("turn 2", task_id=task_id)
    answers = await asyncio.gather(*(handler.on_send_message(second) for _ in range(4)))
    assert agent.turns == ["turn 1", "turn 2"]
    for answer in answers:
        assert isinstance(answer, Task) and answer.status.state is TaskState.INPUT_REQUIRED
        assert texts(answer) == ["turn 1", "got turn 1", "turn 2", "got turn 2"]
    # Streams alike: one turn, and each stream ends where the turn did.
    third = send("turn 3", task_id=task_id)
    streams = await asyncio.gather(*(handler.on_send_streaming_message(third) for _ in range(3)))
    for stream in streams:
        last = (await collect(stream))[-1][1]
        state = last.status.state if isinstance(last, Task | TaskStatusUpdateEvent) else None
        assert state is TaskState.INPUT_REQUIRED
    assert agent.turns == ["turn 1", "turn 2", "turn 3"]


async def test_a_streaming_repeat_streams_from_the_current_state() -> None:
    handler, agent, task_id = await started()
    second = send("turn 2", task_id=task_id)
    await handler.on_send_message(second)
    # The turn is over: the task, and the stream ends (the task waits for input).
    items = await collect(await handler.on_send_streaming_message(second))
    assert len(items) == 1
    seq, task = items[0]
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    assert texts(task)[-2:] == ["turn 2", "got turn 2"]
    stored = await handler.store.get(task_id, None)
    assert stored is not None and seq == stored.last_seq
    # While the turn runs: the task as it is, then the turn's events to its end.
    agent.gate = asyncio.Event()
    third = send("turn 3", task_id=task_id)
    await handler.on_send_message(again(third, return_immediately=True))
    stream = await handler.on_send_streaming_message(third)
    agent.gate.set()
    items = await collect(stream)
    first = items[0][1]
    assert isinstance(first, Task) and first.status.state is TaskState.WORKING
    last = items[-1][1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.INPUT_REQUIRED
    seqs = [s for s, _ in items]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert agent.turns == ["turn 1", "turn 2", "turn 3"]


async def test_a_repeat_of_the_message_that_ended_the_task_answers_the_task() -> None:
    handler, agent, task_id = await started()
    done = send("done", task_id=task_id)
    finished = await handler.on_send_message(done)
    assert isinstance(finished, Task) and finished.status.state is TaskState.COMPLETED
    assert await handler.on_send_message(done) == finished
    (only,) = await collect(await handler.on_send_streaming_message(done))
    assert only[1] == finished
    assert agent.turns == ["turn 1", "done"]
    # A new message to the finished task is refused, as before.
    with pytest.raises(UnsupportedOperationError):
        await handler.on_send_message(send("done", task_id=task_id))


async def test_the_id_of_an_agent_message_is_refused() -> None:
    handler, agent, task_id = await started()
    stored = await handler.store.get(task_id, None)
    assert stored is not None
    asked = stored.task.history[-1]
    assert asked.text == "got turn 1"
    request = SendMessageRequest(
        message=attrs.evolve(Message.user("hi", task_id=task_id), message_id=asked.message_id)
    )
    with pytest.raises(InvalidParamsError) as err:
        await handler.on_send_message(request)
    assert err.value.data == {"field": "message.messageId"}
    assert agent.turns == ["turn 1"]


async def test_a_repeat_stores_no_push_config_again() -> None:
    handler, agent, task_id = await started(push_sender=RecordingSender())
    hook = TaskPushNotificationConfig(url="https://example.com/hook")
    second = send("turn 2", task_id=task_id, push=hook)
    await handler.on_send_message(second)
    await handler.on_send_message(second)
    assert len(await handler.store.list_push_configs(task_id)) == 1
    assert agent.turns == ["turn 1", "turn 2"]


async def test_a_store_written_before_repeats_runs_the_turn_as_before() -> None:
    """A store whose ``update`` takes no ``new_message`` (and that has no
    ``find_message``) keeps working: the repeat runs a turn, the message is not added
    twice."""

    class OlderStore(InMemoryTaskStore):
        async def update(  # type: ignore[override]
            self, task: Task, expected_version: int, *, event: Any = None,
            history_offset: int = 0, lease: int | None = None,
        ) -> int:  # fmt: skip
            return await super().update(
                task, expected_version, event=event, history_offset=history_offset
            )

        find_message = TaskStore.find_message

    handler, agent, task_id = await started(OlderStore())
    second = send("turn 2", task_id=task_id)
    await handler.on_send_message(second)
    answer = await handler.on_send_message(second)
    assert agent.turns == ["turn 1", "turn 2", "turn 2"]
    assert isinstance(answer, Task)
    assert texts(answer) == ["turn 1", "got turn 1", "turn 2", "got turn 2", "got turn 2"]
