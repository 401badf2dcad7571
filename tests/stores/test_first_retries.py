"""A client's first message (no ``taskId``) sent again with the same ``messageId`` (its
connection dropped before the answer): one task, one run of the agent, on every store.

In the process that started the run, a retry joins it (or gets its task) without
starting the agent. Another process sharing the database (here: a second handler on
the same store) starts the agent, whose task the store refuses to create
(``started_by``): the retry is answered with the first task, and nothing the second
agent produced is recorded.
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
    StreamResponse,
    Task,
    TaskState,
)
from a2a_models.server import (
    Agent,
    AgentEvent,
    CallContext,
    DuplicateMessageError,
    EventBroker,
    InMemoryEventBroker,
    InMemoryTaskStore,
    LeasingExecutor,
    RequestContext,
    RequestHandler,
    TaskStore,
)
from a2a_models.server._firsts import FirstMessages, started_key

from ._support import make_card


class _Counting(Agent):
    """Says it works on the message, waits for ``gate`` (if set), then completes with
    the message's text; counts its runs and the completions it produced."""

    def __init__(self, gate: asyncio.Event | None = None) -> None:
        self.runs = 0
        self.completions = 0
        self.gate = gate

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.runs += 1
        yield context.working("on it")
        if self.gate is not None:
            await self.gate.wait()
        self.completions += 1
        yield context.complete(f"done: {context.message.text}")


def _handler(store: TaskStore, agent: Agent, broker: EventBroker | None = None) -> RequestHandler:
    """A handler as ``serve`` builds one (a store with leases runs turns leased);
    ``broker``: one shared with other handlers (processes) on the store."""
    options: dict[str, Any] = {"broker": broker}
    if not isinstance(store, InMemoryTaskStore):
        options["executor"] = lambda a, w: LeasingExecutor(a, w, ttl=15.0)
    return RequestHandler(agent, make_card(), store=store, **options)


def _request(text: str = "hello", message_id: str = "m-1", **kwargs: Any) -> SendMessageRequest:
    message = attrs.evolve(Message.user(text), message_id=message_id, **kwargs)
    return SendMessageRequest(message=message)


async def _send(
    handler: RequestHandler, request: SendMessageRequest, owner: str | None = None
) -> Task:
    answer = await handler.on_send_message(request, CallContext(owner=owner))
    assert isinstance(answer, Task)
    return answer


async def _count_tasks(store: TaskStore, owner: str | None = None) -> int:
    page = await store.list(owner)
    return len(page.tasks)


@pytest.fixture
async def handlers(store: TaskStore) -> AsyncIterator[tuple[RequestHandler, RequestHandler]]:
    """Two handlers on one store: two server processes on one database."""
    pair = (_handler(store, _Counting()), _handler(store, _Counting()))
    try:
        yield pair
    finally:
        for handler in pair:
            await handler.aclose()


def _agent(handler: RequestHandler) -> _Counting:
    assert isinstance(handler.agent, _Counting)
    return handler.agent


async def test_a_retry_gets_the_task_and_runs_no_agent(
    store: TaskStore, handlers: tuple[RequestHandler, RequestHandler]
) -> None:
    here, _ = handlers
    first = await _send(here, _request())
    again = await _send(here, _request())
    assert again.id == first.id and again.status.state is TaskState.COMPLETED
    assert again.status.message is not None and again.status.message.text == "done: hello"
    assert _agent(here).runs == 1
    assert await _count_tasks(store) == 1
    # A streaming retry: the task as it is (terminal), and nothing else.
    events = await here.on_send_streaming_message(_request(), CallContext())
    async with events as items:
        streamed = [item async for _, item in items]
    assert [type(item).__name__ for item in streamed] == ["Task"]
    assert isinstance(streamed[0], Task) and streamed[0].id == first.id
    assert _agent(here).runs == 1


async def test_a_retry_reaching_another_process_gets_the_first_task(
    store: TaskStore, handlers: tuple[RequestHandler, RequestHandler]
) -> None:
    here, there = handlers
    first = await _send(here, _request())
    again = await _send(there, _request())
    assert again.id == first.id
    assert again.status.message is not None and again.status.message.text == "done: hello"
    # The other process's agent started (it knew nothing of the message), but its task
    # was refused at the first write: it completed nothing.
    assert _agent(there).completions == 0
    assert await _count_tasks(store) == 1
    # That process now knows the task: its next retry starts no agent.
    runs = _agent(there).runs
    assert (await _send(there, _request())).id == first.id
    assert _agent(there).runs == runs


async def test_a_retry_with_other_content_is_refused(
    store: TaskStore, handlers: tuple[RequestHandler, RequestHandler]
) -> None:
    here, there = handlers
    await _send(here, _request("hello"))
    for handler in (here, there):
        with pytest.raises(InvalidParamsError, match=r"messageId 'm-1'.*other content") as err:
            await _send(handler, _request("something else"))
        assert err.value.data == {"field": "message.messageId"}
    assert await _count_tasks(store) == 1
    assert _agent(there).completions == 0


async def test_another_caller_with_the_same_message_id_gets_a_task_of_its_own(
    store: TaskStore, handlers: tuple[RequestHandler, RequestHandler]
) -> None:
    here, there = handlers
    alice = await _send(here, _request(), owner="alice")
    bob = await _send(here, _request(), owner="bob")
    bob_elsewhere = await _send(there, _request(), owner="bob")
    assert alice.id != bob.id and bob_elsewhere.id == bob.id
    assert await _count_tasks(store, "alice") == 1 and await _count_tasks(store, "bob") == 1
    assert _agent(here).runs == 2


async def test_identical_sends_at_once_run_the_agent_once(store: TaskStore) -> None:
    gate = asyncio.Event()
    agent = _Counting(gate)
    handler = _handler(store, agent)
    try:
        sends = [asyncio.create_task(_send(handler, _request())) for _ in range(3)]
        stream = await handler.on_send_streaming_message(_request(), CallContext())
        await asyncio.sleep(0.05)
        gate.set()
        tasks = await asyncio.gather(*sends)
        async with stream as items:
            streamed = [item async for _, item in items]
        assert {task.id for task in tasks} == {tasks[0].id}
        assert all(task.status.state is TaskState.COMPLETED for task in tasks)
        assert agent.runs == 1 and await _count_tasks(store) == 1
        assert isinstance(streamed[0], Task) and streamed[0].id == tasks[0].id
        assert _state(streamed[-1]) is TaskState.COMPLETED
    finally:
        await handler.aclose()


async def test_identical_sends_at_once_on_two_processes_make_one_task(store: TaskStore) -> None:
    gate = asyncio.Event()
    agents = (_Counting(gate), _Counting(gate))
    broker = InMemoryEventBroker()  # processes on one database share a broker
    pair = [_handler(store, agent, broker) for agent in agents]
    try:
        sends = [asyncio.create_task(_send(h, _request())) for h in pair]
        await asyncio.sleep(0.05)
        gate.set()
        tasks = await asyncio.gather(*sends)
        assert tasks[0].id == tasks[1].id and tasks[0].status.state is TaskState.COMPLETED
        assert sum(agent.completions for agent in agents) == 1
        assert await _count_tasks(store) == 1
    finally:
        for handler in pair:
            await handler.aclose()


async def test_a_direct_reply_is_sent_again(store: TaskStore) -> None:
    class Replying(Agent):
        runs = 0

        async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
            self.runs += 1
            yield context.reply(f"reply {self.runs}")

    agent = Replying()
    handler = _handler(store, agent)
    try:
        first = await handler.on_send_message(_request(), CallContext())
        again = await handler.on_send_message(_request(), CallContext())
        # No task to find: the agent answers again (a direct reply has no task to repeat).
        assert isinstance(first, Message) and isinstance(again, Message)
        assert (first.text, again.text) == ("reply 1", "reply 2")
        assert await _count_tasks(store) == 0
    finally:
        await handler.aclose()


def _state(item: StreamResponse) -> TaskState | None:
    status = getattr(item, "status", None)
    return None if status is None else status.state


# --- the stores -----------------------------------------------------------------------


async def test_a_store_refuses_a_second_task_for_a_started_by(store: TaskStore) -> None:
    key = started_key(None, None, "m-1")
    first = Task.submitted(_request().message)
    await store.create(first, None, event=first, started_by=key)  # type: ignore[call-arg]
    second = Task.submitted(_request().message)
    with pytest.raises(DuplicateMessageError) as err:
        await store.create(second, None, event=second, started_by=key)  # type: ignore[call-arg]
    assert (err.value.task_id, err.value.message_id) == (first.id, "m-1")
    assert await store.get(second.id, None) is None
    # Another scope, or no key: a task of its own.
    await store.create(second, "bob", event=second, started_by=key)  # type: ignore[call-arg]
    third = Task.submitted(_request().message)
    await store.create(third, None, event=third)
    assert await _count_tasks(store) == 2 and await _count_tasks(store, "bob") == 1


async def test_a_store_without_started_by_still_works() -> None:
    class OldStore(InMemoryTaskStore):
        async def create(  # type: ignore[override]
            self,
            task: Task,
            owner: str | None,
            tenant: str | None = None,
            *,
            event: StreamResponse | None = None,
        ) -> Any:
            return await super().create(task, owner, tenant, event=event)

    store = OldStore()
    here, there = _handler(store, _Counting()), _handler(store, _Counting())
    try:
        first = await _send(here, _request())
        assert (await _send(here, _request())).id == first.id  # known in this process
        # Another process cannot tell: the store takes a second task, as before.
        assert (await _send(there, _request())).id != first.id
    finally:
        await here.aclose()
        await there.aclose()


def test_the_key_tells_callers_and_ids_apart() -> None:
    keys = {
        started_key(None, None, "m"),
        started_key("", None, "m"),
        started_key(None, "", "m"),
        started_key("a", None, "m"),
        started_key(None, "a", "m"),
        started_key(None, None, "n"),
        started_key("a\x00", None, "m"),
    }
    assert len(keys) == 7 and all(len(key) == 16 for key in keys)
    assert started_key("a", "t", "m") == started_key("a", "t", "m")


def test_first_messages_are_bounded() -> None:
    firsts = FirstMessages(size=2)
    for i in range(3):
        firsts.remember(bytes([i]), None, f"t{i}")
    assert len(firsts) == 2 and firsts.find(b"\x00") is None
    assert firsts.find(b"\x02") == ("t2", None)


async def test_an_evicted_task_takes_its_key_with_it() -> None:
    store = InMemoryTaskStore(max_tasks=1)
    key = started_key(None, None, "m-1")

    def finished(message_id: str) -> Task:
        task = Task.submitted(_request(message_id=message_id).message)
        return attrs.evolve(task, status=attrs.evolve(task.status, state=TaskState.COMPLETED))

    done = finished("m-1")
    await store.create(done, None, started_by=key)
    await store.create(finished("m-2"), None)  # evicts the finished task to make room
    assert await store.get(done.id, None) is None
    again = Task.submitted(_request().message)
    await store.create(again, None, started_by=key)
    assert store._started == {(None, None, key): again.id}
