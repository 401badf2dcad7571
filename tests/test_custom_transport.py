"""The examples of docs/custom-transport.md and docs/server.md, executed as written.

The code blocks tagged ``<!-- example: NAME -->`` are extracted from the
markdown and run in one namespace per document, in order; blocks tagged
``<!-- output: NAME -->`` are the exact output of the matching example's
coroutine. The custom transport is then exercised for real: a TCP server on
127.0.0.1 (an ephemeral port), in both protocol versions.
"""

from __future__ import annotations

import asyncio
import json
import re
import types
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    PushNotificationNotSupportedError,
    SendMessageConfiguration,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    UnsupportedOperationError,
)
from a2a_models.client import (
    A2AClient,
    BrokenStreamError,
    ClientCall,
    ClientInterceptor,
    ClientTimeoutError,
    Reconnect,
    StreamChunk,
)
from a2a_models.server import (
    A2AServer,
    Agent,
    AgentEvent,
    AgentServer,
    InMemoryEventBroker,
    RequestContext,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"
_TAGGED = re.compile(
    r"<!-- (?P<kind>example|output): (?P<name>[\w-]+) -->\n```(?P<lang>\w+)\n(?P<code>.*?)^```",
    re.DOTALL | re.MULTILINE,
)
MAX_LINES = 50


def tagged(doc: str) -> dict[tuple[str, str], str]:
    """``{(kind, name): text}`` of the tagged blocks of ``docs/<doc>``."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    found: dict[tuple[str, str], str] = {}
    for match in _TAGGED.finditer(text):
        key = (match["kind"], match["name"])
        assert key not in found, f"{doc}: two blocks tagged {key}"
        found[key] = match["code"]
    return found


def load(doc: str, *, skip: frozenset[str] = frozenset()) -> types.ModuleType:
    """Run the examples of ``doc`` (but ``skip``) in order, in one fresh module namespace."""
    module = types.ModuleType(f"docs_{Path(doc).stem.replace('-', '_')}")
    for (kind, name), code in tagged(doc).items():
        if kind == "example" and name not in skip:
            exec(compile(code, f"{DOCS / doc}:{name}", "exec"), module.__dict__)
    return module


def code_lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip())


# --------------------------------------------------------------------------- the documents


def test_custom_transport_doc_has_the_examples() -> None:
    blocks = tagged("custom-transport.md")
    assert set(blocks) == {
        ("example", "transport"),
        ("example", "hangup"),
        ("example", "server"),
        ("example", "usage"),
        ("output", "usage"),
    }


@pytest.mark.parametrize("name", ["transport", "server", "hangup"])
def test_examples_are_under_50_lines(name: str) -> None:
    code = tagged("custom-transport.md")[("example", name)]
    assert code_lines(code) < MAX_LINES, f"{name}: {code_lines(code)} non-blank lines"


def test_the_transport_example_is_complete() -> None:
    # Both sides of the transport are in that one block.
    code = tagged("custom-transport.md")[("example", "transport")]
    assert "class NDJSONClient(A2AClient)" in code
    assert "async def serve_ndjson(" in code
    module = load("custom-transport.md")
    assert issubclass(module.NDJSONClient, A2AClient)
    assert not getattr(module.NDJSONClient, "__abstractmethods__", None)
    assert issubclass(module.Shouter, A2AServer)


@pytest.mark.parametrize(("doc", "name"), [("custom-transport.md", "usage"),
                                           ("server.md", "usage"), ("server.md", "raw")])  # fmt: skip
async def test_documented_output(doc: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = load(doc)
    entry = {"usage": "main", "raw": "raw"}[name]
    await asyncio.wait_for(getattr(module, entry)(), 5)
    assert capsys.readouterr().out == tagged(doc)[("output", name)]


# --------------------------------------------------------------------------- over TCP

#: The transport exactly as in the main example, and with the hang-up watcher swapped in.
VARIANTS = {
    "plain": load("custom-transport.md", skip=frozenset({"hangup"})),
    "watching": load("custom-transport.md"),
}
DOC = VARIANTS["plain"]
NDJSONClient: Callable[..., A2AClient] = DOC.NDJSONClient
Shouter: type[A2AServer] = DOC.Shouter
Serve = Callable[..., Awaitable[asyncio.Server]]
serve_ndjson: Serve = DOC.serve_ndjson


def make_card() -> AgentCard:
    return AgentCard(
        name="tcp agent",
        description="an agent behind the NDJSON transport",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url="tcp://127.0.0.1", protocol_binding="urn:example:ndjson")
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["test"])],
    )


def text_of(part: Part) -> str:
    assert isinstance(part, TextPart), part
    return part.text


class Stepper(Agent):
    """Echoes in steps; each ``gate`` (if set up) holds the agent before a step."""

    def __init__(self) -> None:
        self.gates: list[asyncio.Event] = []
        self.owners: list[str | None] = []

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.owners.append(context.owner)
        gates = list(self.gates)
        yield context.working()
        yield context.artifact(context.message.text, name="echo")
        if gates:
            await gates.pop(0).wait()
        yield context.artifact(" again", append=True, last_chunk=True)
        if gates:
            await gates.pop(0).wait()
        yield context.complete()


class OwnerServer(AgentServer):
    async def authenticate(self, headers: Mapping[str, str]) -> str | None:
        return headers.get("x-user")


@pytest.fixture(params=["1.0", "0.3"])
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


Serving = tuple[OwnerServer, Stepper, InMemoryEventBroker, int]


@pytest.fixture(params=sorted(VARIANTS))
def variant(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def serving(variant: str) -> AsyncGenerator[Serving, None]:
    """An AgentServer behind the NDJSON transport on 127.0.0.1, stopped afterwards."""
    agent = Stepper()
    broker = InMemoryEventBroker()
    server = OwnerServer(agent, make_card(), broker=broker)
    serve: Serve = VARIANTS[variant].serve_ndjson
    tcp = await serve(server, "127.0.0.1", 0)
    host, port = tcp.sockets[0].getsockname()[:2]
    assert host == "127.0.0.1" and port > 0
    try:
        yield server, agent, broker, port
    finally:
        for gate in agent.gates:
            gate.set()
        tcp.close()
        await tcp.wait_closed()
        await server.aclose()
    # Stopped: nothing listens on the port any more.
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", port)


def client(port: int, version: str, **options: Any) -> A2AClient:
    return NDJSONClient("127.0.0.1", port, version=version, **options)


async def test_send_over_tcp(serving: Serving, version: str) -> None:
    _, _, _, port = serving
    async with client(port, version, timeout=5) as peer:
        task = await peer.send_message(Message.user("hello"))
        assert isinstance(task, Task)
        assert task.status.state is TaskState.COMPLETED
        # The stored artifact is compact: its streamed text chunks are one part.
        assert [text_of(p) for p in task.artifacts[0].parts] == ["hello again"]
        got = await peer.get_task(task.id, history_length=1)
        assert got.id == task.id and len(got.history) == 1


async def test_stream_over_tcp(serving: Serving, version: str) -> None:
    _, _, _, port = serving
    async with client(port, version, timeout=5) as peer:
        stream = peer.send_streaming_message(Message.user("hello"))
        items = [item async for item in stream]
        assert [type(i) for i in items] == [
            Task,
            TaskStatusUpdateEvent,
            TaskArtifactUpdateEvent,
            TaskArtifactUpdateEvent,
            TaskStatusUpdateEvent,
        ]
        assert stream.last_event_id == "5"
        last = items[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED
        assert last.final is (version == "0.3")


async def test_errors_over_tcp(serving: Serving, version: str) -> None:
    _, _, _, port = serving
    async with client(port, version, timeout=5) as peer:
        with pytest.raises(TaskNotFoundError) as info:
            await peer.get_task("no-such-task")
        assert info.value.remote is True and info.value.code == -32001
        with pytest.raises(UnsupportedOperationError):
            # A stream refused before it starts: one error line instead of events.
            task = await peer.send_message(Message.user("x"))
            assert isinstance(task, Task)
            [_ async for _ in peer.subscribe(task.id)]


async def test_big_messages_over_tcp(serving: Serving, version: str) -> None:
    _, _, _, port = serving
    text = "x" * 300_000  # well beyond asyncio's default 64 KiB line limit
    async with client(port, version, timeout=5) as peer:
        task = await peer.send_message(Message.user(text))
        assert isinstance(task, Task)
        assert text_of(task.artifacts[0].parts[0]) == text + " again"


async def test_resume_over_tcp(serving: Serving, version: str) -> None:
    server, agent, _, port = serving
    gate_1, gate_2 = asyncio.Event(), asyncio.Event()
    agent.gates = [gate_1, gate_2]
    async with client(port, version, timeout=5) as peer:
        stream = peer.send_streaming_message(Message.user("hello"))
        first = await anext(stream)
        assert isinstance(first, Task)
        await anext(stream)  # working
        await anext(stream)  # the first chunk
        assert stream.last_event_id == "3"
        await stream.aclose()  # the client hangs up mid-stream

        gate_1.set()  # the agent goes on meanwhile: this event is missed
        await _until_async(lambda: _artifact_text(server, first.id, "hello again"))
        resumed = peer.subscribe(first.id, resume_after=stream.last_event_id)
        missed = await anext(resumed)
        assert isinstance(missed, TaskArtifactUpdateEvent) and missed.append
        assert resumed.last_event_id == "4"
        gate_2.set()
        rest = [item async for item in resumed]
        assert [type(i) for i in rest] == [TaskStatusUpdateEvent]
        assert resumed.last_event_id == "5"


class DroppingClient(NDJSONClient):  # type: ignore[misc, valid-type]
    """The documented transport, whose first stream breaks after ``drop_after`` chunks."""

    def __init__(self, *args: Any, drop_after: int, **options: Any) -> None:
        super().__init__(*args, **options)
        self.drop_after = drop_after
        self.bodies: list[tuple[bytes, dict[str, str]]] = []

    async def stream_bytes(
        self, body: bytes, headers: Mapping[str, str]
    ) -> AsyncGenerator[StreamChunk, None]:
        self.bodies.append((body, dict(headers)))
        chunks = super().stream_bytes(body, headers)
        try:
            count = 0
            async for chunk in chunks:
                if len(self.bodies) == 1 and count == self.drop_after:
                    raise BrokenStreamError("the line went dead", chunk.event_id)
                count += 1
                yield chunk
        finally:
            await chunks.aclose()


@pytest.mark.parametrize("reconnect", [None, Reconnect(delay=0.01)], ids=["off", "on"])
async def test_a_custom_transport_resumes_a_broken_stream_when_asked(
    serving: Serving, version: str, reconnect: Reconnect | None
) -> None:
    """``A2AClient(reconnect=...)``: resumption is the base class's, not only the network clients'."""
    _, _, _, port = serving
    async with DroppingClient(
        "127.0.0.1", port, drop_after=3, version=version, timeout=5, reconnect=reconnect
    ) as peer:
        stream = peer.send_streaming_message(Message.user("hello"))
        if reconnect is None:
            with pytest.raises(BrokenStreamError):
                [item async for item in stream]
            assert len(peer.bodies) == 1
            return
        items = [item async for item in stream]
    # Every event exactly once: the three before the break, then the rest from the resumption.
    assert [type(i) for i in items] == [
        Task,
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    assert stream.last_event_id == "5"
    assert len(peer.bodies) == 2
    resumed_body, resumed_headers = peer.bodies[1]
    method = "SubscribeToTask" if version == "1.0" else "tasks/resubscribe"
    assert json.loads(resumed_body)["method"] == method
    assert resumed_headers["Last-Event-ID"] == "3"


async def _artifact_text(server: AgentServer, task_id: str, text: str) -> bool:
    stored = await server.handler.store.get(task_id, None)
    return stored is not None and "".join(map(text_of, stored.task.artifacts[0].parts)) == text


async def _until_async(check: Callable[[], Awaitable[bool]], timeout: float = 2.0) -> None:
    async def poll() -> None:
        while not await check():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


async def _until(check: Callable[[], bool], timeout: float = 2.0) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


async def test_a_client_hanging_up_releases_the_subscription(
    serving: Serving, variant: str
) -> None:
    server, agent, broker, port = serving
    gate_1, gate_2 = asyncio.Event(), asyncio.Event()
    agent.gates = [gate_1, gate_2]
    async with client(port, "1.0", timeout=5) as peer:
        stream = peer.send_streaming_message(Message.user("hello"))
        first = await anext(stream)
        assert isinstance(first, Task)
        assert broker.subscriber_count(first.id) == 1
        await stream.aclose()
        if variant == "watching":
            # Noticed at once, while the task is idle.
            await _until(lambda: broker.subscriber_count(first.id) == 0)
        else:
            # Noticed when the stream ends (here: the task completes).
            gate_1.set()
            gate_2.set()
            await server.handler.idle()
            await _until(lambda: broker.subscriber_count(first.id) == 0)
        assert server.handler.active_runs() == (1 if variant == "watching" else 0)


async def test_timeout_over_tcp(serving: Serving, version: str) -> None:
    server, agent, _, port = serving
    gate = asyncio.Event()
    agent.gates = [gate]
    async with client(port, version) as peer:
        with pytest.raises(ClientTimeoutError):
            await peer.send_message(Message.user("slow"), timeout=0.1)
    gate.set()
    await server.handler.idle()


async def test_interceptors_over_tcp(serving: Serving, version: str) -> None:
    _, agent, _, port = serving

    class User(ClientInterceptor):
        async def before(self, call: ClientCall) -> None:
            call.headers["X-User"] = "dora"

    async with client(port, version, timeout=5, interceptors=[User()]) as dora:
        task = await dora.send_message(
            Message.user("mine"), configuration=SendMessageConfiguration(history_length=0)
        )
        assert isinstance(task, Task) and task.history == ()
    assert agent.owners == ["dora"]
    async with client(port, version, timeout=5) as stranger:
        with pytest.raises(TaskNotFoundError):
            await stranger.get_task(task.id)


async def test_garbage_over_tcp(serving: Serving) -> None:
    _, _, _, port = serving
    # Garbled headers: the connection is closed without an answer.
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"not json\n{}\n")
    assert await asyncio.wait_for(reader.read(), 2) == b""
    writer.close()
    # A garbled request: a JSON-RPC parse error, on one line without an event id.
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b'{"A2A-Version": "1.0"}\n{"jsonrpc":\n')
    line = await asyncio.wait_for(reader.readline(), 2)
    writer.close()
    assert line.startswith(b" ") and line.endswith(b"\n")
    wire = json.loads(line)
    assert wire["id"] is None and wire["error"]["code"] == -32700


async def test_the_minimal_server_over_tcp(version: str) -> None:
    tcp = await serve_ndjson(Shouter(), "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    try:
        async with client(port, version, timeout=5) as peer:
            reply = await peer.send_message(Message.user("quiet please", context_id="c-1"))
            assert isinstance(reply, Message)
            assert reply.text == "QUIET PLEASE" and reply.context_id == "c-1"
            with pytest.raises(UnsupportedOperationError) as info:
                [_ async for _ in peer.send_streaming_message(Message.user("x"))]
            assert info.value.code == -32004 and info.value.remote is True
            with pytest.raises(UnsupportedOperationError):
                await peer.cancel_task("t-1")
            with pytest.raises(PushNotificationNotSupportedError):
                await peer.create_push_config(
                    TaskPushNotificationConfig(url="https://hook.example", task_id="t-1")
                )
    finally:
        tcp.close()
        await tcp.wait_closed()
