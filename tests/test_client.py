"""The engine's behaviour as a client sees it: ``InProcessClient`` → ``AgentServer``.

Every request goes through the full JSON-RPC encode/decode path of both
sides, in both protocol versions ("1.0" and "0.3"; ListTasks is 1.0 only).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import pytest

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    ExtendedAgentCardNotConfiguredError,
    InvalidAgentResponseError,
    ListTasksRequest,
    Message,
    MethodNotFoundError,
    Part,
    PushNotificationNotSupportedError,
    Role,
    SendMessageConfiguration,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    UnsupportedOperationError,
)
from a2a_models.client import (
    ClientCall,
    ClientInterceptor,
    ClientTimeoutError,
    EventStream,
    InProcessClient,
    StreamChunk,
)
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext

Execute = Callable[[RequestContext], AsyncIterator[AgentEvent]]


# --------------------------------------------------------------------------- helpers


def make_card(
    *,
    streaming: bool = True,
    push: bool = True,
    extended: bool | None = None,
    extensions: tuple[str, ...] = (),
    name: str = "test agent",
) -> AgentCard:
    return AgentCard(
        name=name,
        description="an agent for tests",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url="http://test/a2a", protocol_binding="JSONRPC")],
        capabilities=AgentCapabilities(
            streaming=streaming,
            push_notifications=push,
            extended_agent_card=extended,
            extensions=[AgentExtension(uri=u) for u in extensions],
        ),
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["test"])],
    )


class FuncAgent(Agent):
    def __init__(self, execute: Execute) -> None:
        self._execute = execute
        self.contexts: list[RequestContext] = []

    def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.contexts.append(context)
        return self._execute(context)


class BearerServer(AgentServer):
    """Owner = the bearer token; no token is the anonymous caller."""

    async def authenticate(self, headers: Mapping[str, str]) -> str | None:
        token = headers.get("authorization", "")
        return token.removeprefix("Bearer ") or None


async def echo(context: RequestContext) -> AsyncIterator[AgentEvent]:
    yield context.working()
    yield context.artifact(context.message.text, name="echo")
    yield context.complete("done")


async def asking(context: RequestContext) -> AsyncIterator[AgentEvent]:
    """Asks for a name on the first turn, greets on the second."""
    if not context.is_continuation:
        yield context.working()
        yield context.ask("what is your name?")
    else:
        yield context.artifact(f"hello {context.message.text}")
        yield context.complete("bye")


@pytest.fixture(params=["1.0", "0.3"])
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


Servers = Callable[..., AgentServer]


@pytest.fixture
async def make_server() -> AsyncGenerator[Servers, None]:
    """``make_server(execute, **card_options)``; every server is closed after the test."""
    made: list[AgentServer] = []

    def build(
        execute: Execute = echo,
        *,
        server_class: type[AgentServer] = AgentServer,
        extended_card: AgentCard | None = None,
        **card: Any,
    ) -> AgentServer:
        server = server_class(FuncAgent(execute), make_card(**card), extended_card=extended_card)
        made.append(server)
        return server

    yield build
    for server in made:
        await server.aclose()


def agent_of(server: AgentServer) -> FuncAgent:
    agent = server.handler.agent
    assert isinstance(agent, FuncAgent)
    return agent


async def collect(stream: EventStream, timeout: float = 2.0) -> list[StreamResponse]:
    async def run() -> list[StreamResponse]:
        return [item async for item in stream]

    return await asyncio.wait_for(run(), timeout)


async def next_item(stream: EventStream, timeout: float = 1.0) -> StreamResponse:
    return await asyncio.wait_for(anext(stream), timeout)


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 2.0) -> None:
    async def poll() -> None:
        while not await check():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


def state_of(item: StreamResponse) -> TaskState | None:
    if isinstance(item, Task | TaskStatusUpdateEvent):
        return item.status.state
    return None


def texts(task: Task) -> list[str]:
    return [text_of(a.parts[0]) for a in task.artifacts]


def text_of(part: Part) -> str:
    assert isinstance(part, TextPart), part
    return part.text


# --------------------------------------------------------------------------- sending


async def test_blocking_send_returns_the_finished_task(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(echo), version=version)
    task = await client.send_message(Message.user("hello"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None and task.status.message.text == "done"
    assert texts(task) == ["hello"]
    assert [(m.role, m.text) for m in task.history] == [(Role.USER, "hello"), (Role.AGENT, "done")]
    assert task.context_id and all(m.task_id == task.id for m in task.history)


async def test_non_blocking_send_returns_before_the_agent_finishes(
    make_server: Servers, version: str
) -> None:
    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await release.wait()
        yield context.complete()

    server = make_server(slow)
    client = InProcessClient(server, version=version)
    task = await client.send_message(
        Message.user("go"), configuration=SendMessageConfiguration(return_immediately=True)
    )
    assert isinstance(task, Task)
    assert task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
    release.set()
    await server.handler.idle()
    assert (await client.get_task(task.id)).status.state is TaskState.COMPLETED


async def test_direct_message_reply(make_server: Servers, version: str) -> None:
    async def reply(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.reply(f"you said {context.message.text}")

    client = InProcessClient(make_server(reply), version=version)
    answer = await client.send_message(Message.user("hi", context_id="ctx-7"))
    assert isinstance(answer, Message)
    assert answer.role is Role.AGENT and answer.text == "you said hi"
    assert answer.context_id == "ctx-7" and answer.task_id is None

    stream = client.send_streaming_message(Message.user("again"))
    items = await collect(stream)
    assert len(items) == 1 and isinstance(items[0], Message)
    assert items[0].text == "you said again"
    assert stream.last_event_id is None  # a direct reply belongs to no task log


# --------------------------------------------------------------------------- streaming


async def test_stream_order(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(echo), version=version)
    stream = client.send_streaming_message(Message.user("hello"))
    items = await collect(stream)
    assert [type(i) for i in items] == [
        Task,
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    assert [state_of(i) for i in items] == [
        TaskState.SUBMITTED,
        TaskState.WORKING,
        None,
        TaskState.COMPLETED,
    ]
    task = items[0]
    assert isinstance(task, Task)
    assert all(getattr(i, "task_id", task.id) == task.id for i in items)
    assert stream.last_event_id == "4"
    if version == "0.3":
        finals = [i.final for i in items if isinstance(i, TaskStatusUpdateEvent)]
        assert finals == [False, True]


async def test_events_arrive_as_they_happen(make_server: Servers, version: str) -> None:
    gate = asyncio.Event()
    produced: list[str] = []

    async def gated(context: RequestContext) -> AsyncIterator[AgentEvent]:
        produced.append("working")
        yield context.working()
        await gate.wait()
        produced.append("artifact")
        yield context.artifact("late")
        produced.append("complete")
        yield context.complete()

    client = InProcessClient(make_server(gated), version=version)
    stream = client.send_streaming_message(Message.user("go"))
    first = await next_item(stream)
    second = await next_item(stream)
    # Received while the agent is still blocked before its last events.
    assert isinstance(first, Task)
    assert state_of(second) is TaskState.WORKING
    assert produced == ["working"]
    gate.set()
    rest = await collect(stream)
    assert [type(i) for i in rest] == [TaskArtifactUpdateEvent, TaskStatusUpdateEvent]
    assert produced == ["working", "artifact", "complete"]


async def test_artifact_chunks_are_assembled(make_server: Servers, version: str) -> None:
    async def chunks(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.artifact("Once ", name="story")
        yield context.artifact("upon ", append=True)
        yield context.artifact("a time", append=True, last_chunk=True)
        yield context.artifact("other", name="note", last_chunk=True)
        yield context.complete()

    client = InProcessClient(make_server(chunks), version=version)
    task = await client.send_message(Message.user("tell me"))
    assert isinstance(task, Task)
    assert [a.name for a in task.artifacts] == ["story", "note"]
    story = task.artifacts[0]
    assert [text_of(p) for p in story.parts] == ["Once upon a time"]  # chunks joined when stored

    items = await collect(client.send_streaming_message(Message.user("again")))
    updates = [i for i in items if isinstance(i, TaskArtifactUpdateEvent)]
    assert [(u.append, u.last_chunk) for u in updates] == [
        (False, False),
        (True, False),
        (True, True),
        (False, True),
    ]
    # Client-side assembly from the stream gives the same artifacts as the task.
    assembled: dict[str, list[str]] = {}
    for update in updates:
        parts = [text_of(p) for p in update.artifact.parts]
        if update.append:
            assembled[update.artifact.artifact_id] += parts
        else:
            assembled[update.artifact.artifact_id] = parts
    assert list(assembled.values()) == [["Once ", "upon ", "a time"], ["other"]]
    final = await client.get_task(updates[0].task_id)
    assert [[text_of(p) for p in a.parts] for a in final.artifacts] == list(assembled.values())


# --------------------------------------------------------------------------- multi-turn


async def test_input_required_then_continue(make_server: Servers, version: str) -> None:
    server = make_server(asking)
    client = InProcessClient(server, version=version)
    first = await client.send_message(Message.user("hi"))
    assert isinstance(first, Task)
    assert first.status.state is TaskState.INPUT_REQUIRED
    assert first.status.message is not None and first.status.message.text == "what is your name?"

    second = await client.send_message(Message.user("Ada", task_id=first.id))
    assert isinstance(second, Task)
    assert second.id == first.id and second.context_id == first.context_id
    assert second.status.state is TaskState.COMPLETED
    assert texts(second) == ["hello Ada"]
    assert [m.text for m in second.history] == ["hi", "what is your name?", "Ada", "bye"]
    contexts = agent_of(server).contexts
    assert [c.is_continuation for c in contexts] == [False, True]

    # A terminal task takes no more messages.
    with pytest.raises(UnsupportedOperationError) as info:
        await client.send_message(Message.user("again", task_id=first.id))
    assert info.value.remote is True


async def test_streamed_turns_end_at_input_required(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(asking), version=version)
    items = await collect(client.send_streaming_message(Message.user("hi")))
    assert state_of(items[-1]) is TaskState.INPUT_REQUIRED
    task_id = items[0].id  # type: ignore[union-attr]
    items = await collect(client.send_streaming_message(Message.user("Bob", task_id=task_id)))
    assert isinstance(items[0], Task) and items[0].status.state is TaskState.WORKING
    assert state_of(items[-1]) is TaskState.COMPLETED


async def test_get_task_with_history_length(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(asking), version=version)
    task = await client.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    await client.send_message(Message.user("Ada", task_id=task.id))
    everything = ["hi", "what is your name?", "Ada", "bye"]
    assert [m.text for m in (await client.get_task(task.id)).history] == everything
    for n in (0, 1, 3, 4, 10):
        got = await client.get_task(task.id, history_length=n)
        assert [m.text for m in got.history] == (everything[len(everything) - n :] if n else [])
        assert texts(got) == ["hello Ada"]  # artifacts are never trimmed
    with pytest.raises(TaskNotFoundError) as info:
        await client.get_task("no-such-task")
    assert info.value.remote is True


# --------------------------------------------------------------------------- cancel


async def test_cancel_running_then_terminal(make_server: Servers, version: str) -> None:
    forever = asyncio.Event()

    async def stuck(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working("busy")
        await forever.wait()
        yield context.complete()

    server = make_server(stuck)
    client = InProcessClient(server, version=version)
    task = await client.send_message(
        Message.user("work"), configuration=SendMessageConfiguration(return_immediately=True)
    )
    assert isinstance(task, Task)
    canceled = await client.cancel_task(task.id)
    assert canceled.id == task.id
    assert canceled.status.state is TaskState.CANCELED
    await server.handler.idle()
    assert (await client.get_task(task.id)).status.state is TaskState.CANCELED

    with pytest.raises(TaskNotCancelableError) as info:
        await client.cancel_task(task.id)
    assert info.value.remote is True
    assert info.value.code == -32002


async def test_cancel_a_completed_task(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(echo), version=version)
    task = await client.send_message(Message.user("x"))
    assert isinstance(task, Task)
    with pytest.raises(TaskNotCancelableError) as info:
        await client.cancel_task(task.id)
    assert info.value.remote is True
    with pytest.raises(TaskNotFoundError):
        await client.cancel_task("no-such-task")


async def test_cancel_a_task_waiting_for_input(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(asking), version=version)
    task = await client.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    canceled = await client.cancel_task(task.id)
    assert canceled.status.state is TaskState.CANCELED


# --------------------------------------------------------------------------- list (1.0)


async def test_list_filter_and_paginate(make_server: Servers) -> None:
    async def by_text(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.artifact(context.message.text)
        if context.message.text.startswith("ask"):
            yield context.ask("?")
        else:
            yield context.complete()

    client = InProcessClient(make_server(by_text), version="1.0")
    made: list[Task] = []
    for text, context_id in [
        ("a1", "ctx-a"),
        ("ask1", "ctx-b"),
        ("a2", "ctx-a"),
        ("ask2", "ctx-b"),
        ("a3", "ctx-a"),
    ]:
        task = await client.send_message(Message.user(text, context_id=context_id))
        assert isinstance(task, Task)
        made.append(task)

    everything = await client.list_tasks()
    assert everything.total_size == 5 and everything.next_page_token == ""
    assert {t.id for t in everything.tasks} == {t.id for t in made}
    stamps = [t.status.timestamp for t in everything.tasks]
    assert all(a is not None and b is not None and a >= b for a, b in itertools.pairwise(stamps))
    assert all(t.artifacts == () for t in everything.tasks)  # omitted by default

    in_a = await client.list_tasks(ListTasksRequest(context_id="ctx-a"))
    assert sorted(texts_of_history(in_a.tasks)) == ["a1", "a2", "a3"]
    waiting = await client.list_tasks(ListTasksRequest(status=TaskState.INPUT_REQUIRED))
    assert sorted(texts_of_history(waiting.tasks)) == ["ask1", "ask2"]
    both = await client.list_tasks(
        ListTasksRequest(context_id="ctx-a", status=TaskState.INPUT_REQUIRED)
    )
    assert both.tasks == () and both.total_size == 0

    full = await client.list_tasks(ListTasksRequest(include_artifacts=True, history_length=0))
    assert all(len(t.artifacts) == 1 and t.history == () for t in full.tasks)

    seen: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        page = await client.list_tasks(ListTasksRequest(page_size=2, page_token=token))
        pages += 1
        assert page.page_size == 2 and page.total_size == 5
        assert len(page.tasks) <= 2
        seen += [t.id for t in page.tasks]
        if not page.next_page_token:
            break
        token = page.next_page_token
    assert pages == 3
    assert seen == [t.id for t in everything.tasks]  # same order, no gap, no duplicate


def texts_of_history(tasks: tuple[Task, ...]) -> list[str]:
    return [t.history[0].text for t in tasks]


async def test_list_tasks_does_not_exist_in_0_3(make_server: Servers) -> None:
    client = InProcessClient(make_server(echo), version="0.3")
    with pytest.raises(MethodNotFoundError) as info:
        await client.list_tasks()
    assert info.value.remote is False  # refused locally, nothing was sent


# --------------------------------------------------------------------------- subscribe / resume


async def test_subscribe_starts_with_the_task(make_server: Servers, version: str) -> None:
    gate = asyncio.Event()

    async def gated(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await gate.wait()
        yield context.complete()

    server = make_server(gated)
    client = InProcessClient(server, version=version)
    task = await client.send_message(
        Message.user("go"), configuration=SendMessageConfiguration(return_immediately=True)
    )
    assert isinstance(task, Task)
    await eventually(lambda: _state_is(client, task.id, TaskState.WORKING))
    stream = client.subscribe(task.id)
    first = await next_item(stream)
    assert isinstance(first, Task) and first.status.state is TaskState.WORKING
    gate.set()
    rest = await collect(stream)
    assert [state_of(i) for i in rest] == [TaskState.COMPLETED]

    # A terminal task has nothing to subscribe to (§3.1.6).
    with pytest.raises(UnsupportedOperationError):
        await collect(client.subscribe(task.id))


async def _state_is(client: InProcessClient, task_id: str, state: TaskState) -> bool:
    return (await client.get_task(task_id)).status.state is state


async def test_resume_after_a_dropped_stream(make_server: Servers, version: str) -> None:
    gate_1, gate_2 = asyncio.Event(), asyncio.Event()

    async def in_steps(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        yield context.artifact("one")
        await gate_1.wait()
        yield context.artifact("two")
        yield context.artifact("three")
        await gate_2.wait()
        yield context.complete()

    server = make_server(in_steps)
    client = InProcessClient(server, version=version)
    stream = client.send_streaming_message(Message.user("go"))
    seen = [await next_item(stream) for _ in range(3)]
    task = seen[0]
    assert isinstance(task, Task)
    assert stream.last_event_id == "3"
    await stream.aclose()  # the connection drops ...

    gate_1.set()  # ... and the agent goes on meanwhile
    await eventually(lambda: _has_artifacts(client, task.id, 3))

    resumed = client.subscribe(task.id, resume_after=stream.last_event_id)
    missed = [await next_item(resumed) for _ in range(2)]
    assert [text_of(u.artifact.parts[0]) for u in missed] == ["two", "three"]  # type: ignore[union-attr]
    assert resumed.last_event_id == "5"
    gate_2.set()
    rest = await collect(resumed)
    assert [state_of(i) for i in rest] == [TaskState.COMPLETED]
    assert resumed.last_event_id == "6"

    # Nothing after the last event: a terminal task has no more to replay.
    with pytest.raises(UnsupportedOperationError):
        await collect(client.subscribe(task.id, resume_after="6"))
    # Resuming earlier replays the log again, exactly.
    replay = await collect(client.subscribe(task.id, resume_after="1"))
    assert [type(i).__name__ for i in replay] == [
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]


async def _has_artifacts(client: InProcessClient, task_id: str, count: int) -> bool:
    return len((await client.get_task(task_id)).artifacts) == count


async def test_closing_a_stream_early_is_not_a_failure(make_server: Servers) -> None:
    calls: list[ClientCall] = []

    class Record(ClientInterceptor):
        async def after(self, call: ClientCall) -> None:
            calls.append(call)

    client = InProcessClient(make_server(asking), interceptors=[Record()])
    async with client.send_streaming_message(Message.user("hi")) as stream:
        await next_item(stream)
    [call] = calls
    assert call.error is None and call.result == 1


# --------------------------------------------------------------------------- push configs


async def test_push_config_crud(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(asking), version=version)
    task = await client.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    created = await client.create_push_config(
        TaskPushNotificationConfig(url="https://hooks.example/a2a", task_id=task.id, token="t0k")
    )
    assert created.id and created.task_id == task.id
    assert created.url == "https://hooks.example/a2a" and created.token == "t0k"

    fetched = await client.get_push_config(task.id, created.id)
    assert fetched == created
    listed = await client.list_push_configs(task.id)
    assert list(listed.configs) == [created]

    second = await client.create_push_config(
        TaskPushNotificationConfig(url="https://other.example/hook", task_id=task.id, id="mine")
    )
    assert second.id == "mine"
    assert {c.id for c in (await client.list_push_configs(task.id)).configs} == {
        created.id,
        "mine",
    }

    await client.delete_push_config(task.id, created.id)
    await client.delete_push_config(task.id, created.id)  # idempotent
    assert [c.id for c in (await client.list_push_configs(task.id)).configs] == ["mine"]
    with pytest.raises(TaskNotFoundError):
        await client.get_push_config(task.id, created.id)
    with pytest.raises(TaskNotFoundError):
        await client.list_push_configs("no-such-task")


async def test_push_configs_without_the_capability(make_server: Servers, version: str) -> None:
    client = InProcessClient(make_server(asking, push=False), version=version)
    task = await client.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    with pytest.raises(PushNotificationNotSupportedError) as info:
        await client.create_push_config(
            TaskPushNotificationConfig(url="https://hooks.example/a2a", task_id=task.id)
        )
    assert info.value.remote is True and info.value.code == -32003
    with pytest.raises(PushNotificationNotSupportedError):
        await client.list_push_configs(task.id)


# --------------------------------------------------------------------------- extended card


async def test_extended_card(make_server: Servers, version: str) -> None:
    extended = make_card(name="extended agent", extended=True)
    configured = InProcessClient(
        make_server(extended=True, extended_card=extended), version=version
    )
    card = await configured.get_extended_agent_card()
    assert card.name == "extended agent"
    assert card.capabilities.extended_agent_card is True

    undeclared = InProcessClient(make_server(extended_card=extended), version=version)
    with pytest.raises(UnsupportedOperationError) as unsupported:
        await undeclared.get_extended_agent_card()
    assert unsupported.value.remote is True

    missing = InProcessClient(make_server(extended=True), version=version)
    with pytest.raises(ExtendedAgentCardNotConfiguredError) as not_configured:
        await missing.get_extended_agent_card()
    assert not_configured.value.code == -32007 and not_configured.value.remote is True


# --------------------------------------------------------------------------- interceptors


class Log(ClientInterceptor):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    async def before(self, call: ClientCall) -> None:
        self.log.append(f"{self.name}.before {call.method.name}")

    async def after(self, call: ClientCall) -> None:
        outcome = type(call.error).__name__ if call.error else type(call.result).__name__
        self.log.append(f"{self.name}.after {outcome}")


class Credentials(ClientInterceptor):
    def __init__(self, user: str) -> None:
        self.user = user

    async def before(self, call: ClientCall) -> None:
        call.headers["Authorization"] = f"Bearer {self.user}"


async def test_interceptor_adds_credentials_the_server_authenticates(
    make_server: Servers, version: str
) -> None:
    server = make_server(echo, server_class=BearerServer)
    client = InProcessClient(server, version=version, interceptors=[Credentials("carol")])
    task = await client.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    assert [c.owner for c in agent_of(server).contexts] == ["carol"]
    assert (await client.get_task(task.id)).id == task.id
    # Without the interceptor, the caller is someone else.
    with pytest.raises(TaskNotFoundError):
        await InProcessClient(server, version=version).get_task(task.id)


async def test_interceptors_run_in_order_and_see_results_and_errors(
    make_server: Servers, version: str
) -> None:
    log: list[str] = []
    client = InProcessClient(
        make_server(echo), version=version, interceptors=[Log("a", log), Log("b", log)]
    )
    task = await client.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    assert log == [
        "a.before SendMessage",
        "b.before SendMessage",
        "b.after Task",
        "a.after Task",
    ]
    log.clear()
    with pytest.raises(TaskNotFoundError):
        await client.get_task("nope")
    assert log == [
        "a.before GetTask",
        "b.before GetTask",
        "b.after TaskNotFoundError",
        "a.after TaskNotFoundError",
    ]
    log.clear()
    items = await collect(client.send_streaming_message(Message.user("s")))
    assert log == [
        "a.before SendStreamingMessage",
        "b.before SendStreamingMessage",
        "b.after int",  # a stream's result is the number of items
        "a.after int",
    ]
    assert len(items) == 4


async def test_a_failing_before_still_runs_the_earlier_afters(make_server: Servers) -> None:
    log: list[str] = []

    class Refuse(ClientInterceptor):
        async def before(self, call: ClientCall) -> None:
            raise PermissionError("no token")

    server = make_server(echo)
    client = InProcessClient(server, interceptors=[Log("a", log), Refuse(), Log("c", log)])
    with pytest.raises(PermissionError):
        await client.send_message(Message.user("hi"))
    assert log == ["a.before SendMessage", "a.after PermissionError"]
    assert agent_of(server).contexts == []  # nothing was sent


async def test_interceptor_can_rewrite_params(make_server: Servers, version: str) -> None:
    class Shout(ClientInterceptor):
        async def before(self, call: ClientCall) -> None:
            if call.method.name == "SendMessage":
                message = Message.user(call.params.message.text.upper())
                call.params = type(call.params)(message=message)

    server = make_server(echo)
    client = InProcessClient(server, version=version, interceptors=[Shout()])
    task = await client.send_message(Message.user("quiet"))
    assert isinstance(task, Task) and texts(task) == ["QUIET"]


# --------------------------------------------------------------------------- timeouts


async def test_per_call_timeout(make_server: Servers, version: str) -> None:
    release = asyncio.Event()

    async def slow(context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        await release.wait()
        yield context.complete()

    server = make_server(slow)
    client = InProcessClient(server, version=version)
    with pytest.raises(ClientTimeoutError) as info:
        await client.send_message(Message.user("slow"), timeout=0.05)
    assert isinstance(info.value, TimeoutError)
    assert "SendMessage did not complete within 0.05 s" in str(info.value)

    # The client-wide default applies too, and a per-call value overrides it.
    patient = InProcessClient(server, version=version, timeout=0.05)
    with pytest.raises(ClientTimeoutError):
        await patient.send_message(Message.user("slow"))

    # For streams the timeout bounds the wait for each event.
    stream = patient.send_streaming_message(Message.user("slow"))
    assert isinstance(await next_item(stream), Task)
    assert state_of(await next_item(stream)) is TaskState.WORKING
    with pytest.raises(ClientTimeoutError, match=r"no event within 0\.05 s"):
        await anext(stream)

    release.set()
    await server.handler.idle()
    page_client = InProcessClient(server, version=version, timeout=0.05)
    task = await page_client.send_message(Message.user("now fast"), timeout=2)
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


# --------------------------------------------------------------------------- owners


async def test_owner_isolation(make_server: Servers, version: str) -> None:
    server = make_server(asking, server_class=BearerServer)
    alice = InProcessClient(server, version=version, headers={"Authorization": "Bearer alice"})
    bob = InProcessClient(server, version=version, headers={"Authorization": "Bearer bob"})
    anonymous = InProcessClient(server, version=version)

    task = await alice.send_message(Message.user("hi"))
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    await alice.create_push_config(
        TaskPushNotificationConfig(url="https://alice.example/hook", task_id=task.id, id="c1")
    )

    for other in (bob, anonymous):
        with pytest.raises(TaskNotFoundError):
            await other.get_task(task.id)
        with pytest.raises(TaskNotFoundError):
            await other.cancel_task(task.id)
        with pytest.raises(TaskNotFoundError):
            await collect(other.subscribe(task.id))
        with pytest.raises(TaskNotFoundError):
            await other.send_message(Message.user("me too", task_id=task.id))
        with pytest.raises(TaskNotFoundError):
            await other.get_push_config(task.id, "c1")
        with pytest.raises(TaskNotFoundError):
            await other.create_push_config(
                TaskPushNotificationConfig(url="https://evil.example", task_id=task.id)
            )

    # The same answer as for a task that does not exist (§13.1).
    with pytest.raises(TaskNotFoundError) as unknown:
        await bob.get_task("no-such-task")
    with pytest.raises(TaskNotFoundError) as hidden:
        await bob.get_task(task.id)
    assert type(unknown.value) is type(hidden.value)

    # Alice still sees and controls her task.
    assert (await alice.get_task(task.id)).status.state is TaskState.INPUT_REQUIRED
    assert (await alice.cancel_task(task.id)).status.state is TaskState.CANCELED


async def test_owner_isolation_in_list(make_server: Servers) -> None:
    server = make_server(asking, server_class=BearerServer)
    alice = InProcessClient(server, headers={"Authorization": "Bearer alice"})
    bob = InProcessClient(server, headers={"Authorization": "Bearer bob"})
    task = await alice.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    assert [t.id for t in (await alice.list_tasks()).tasks] == [task.id]
    assert (await bob.list_tasks()).tasks == ()
    assert (await InProcessClient(server).list_tasks()).tasks == ()


# --------------------------------------------------------------------------- transport details


async def test_extensions_are_requested_and_echoed(make_server: Servers, version: str) -> None:
    server = make_server(echo, extensions=("urn:x:one", "urn:x:two"))
    client = InProcessClient(server, version=version, extensions=["urn:x:two", "urn:x:nope"])
    await client.send_message(Message.user("hi"))
    assert agent_of(server).contexts[0].requested_extensions == {"urn:x:two", "urn:x:nope"}
    name = "A2A-Extensions" if version == "1.0" else "X-A2A-Extensions"
    assert dict(client.last_headers) == {name: "urn:x:two"}


class Meddling(InProcessClient):
    """Rewrites the id of every answer, as a confused transport might."""

    async def send_bytes(self, body: bytes, headers: Mapping[str, str]) -> bytes:
        wire = json.loads(await super().send_bytes(body, headers))
        wire["id"] = 999
        return json.dumps(wire).encode()

    async def stream_bytes(
        self, body: bytes, headers: Mapping[str, str]
    ) -> AsyncIterator[StreamChunk]:
        async for chunk in super().stream_bytes(body, headers):
            wire = json.loads(chunk.data)
            wire["id"] = "other"
            yield StreamChunk(json.dumps(wire).encode(), chunk.event_id)


async def test_answers_to_another_request_are_rejected(make_server: Servers) -> None:
    client = Meddling(make_server(echo))
    with pytest.raises(InvalidAgentResponseError, match="does not match"):
        await client.send_message(Message.user("hi"))
    with pytest.raises(InvalidAgentResponseError, match="does not match"):
        await collect(client.send_streaming_message(Message.user("hi")))


async def test_client_closes_as_a_context_manager(make_server: Servers) -> None:
    async with InProcessClient(make_server(echo)) as client:
        assert isinstance(client, InProcessClient)
        assert isinstance(await client.send_message(Message.user("x")), Task)
