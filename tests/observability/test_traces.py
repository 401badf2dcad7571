"""Server and client spans across two real HTTP servers, and trace propagation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from _otel_support import Echo, Telemetry, card
from opentelemetry.trace import SpanKind, StatusCode

from a2a_models import Message, Task
from a2a_models.adapters.http import HTTPClient, HTTPServer, RESTClient
from a2a_models.errors import TaskNotFoundError
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext

SERVICE = "lf.a2a.v1.A2AService"
SEND = f"{SERVICE}/SendMessage"


class Caller(Agent):
    """Asks agent B (over HTTP+JSON) and completes with its answer."""

    def __init__(self) -> None:
        self.b_url = ""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        async with RESTClient(self.b_url) as client:
            answer = await client.send_message(Message.user(context.message.text))
        assert isinstance(answer, Task)
        text = answer.artifacts[0].parts[0].text
        yield context.artifact(f"a: {text}")
        yield context.complete()


async def test_two_agents_make_one_trace(telemetry: Telemetry) -> None:
    caller = Caller()
    async with (
        HTTPServer(AgentServer(Echo(), card("b"))) as b,
        HTTPServer(AgentServer(caller, card("a"))) as a,
    ):
        caller.b_url = b.url
        async with HTTPClient(a.url + "/") as client:
            task = await client.send_message(Message.user("hi"))
    assert isinstance(task, Task)
    assert task.artifacts[0].parts[0].text == "a: b: hi"

    sends = telemetry.named(SEND)
    kinds = sorted((s.kind.name, s.attributes["rpc.system"]) for s in sends)  # type: ignore[index]
    # test -> A (JSON-RPC), A -> B (HTTP+JSON): a client and a server span each.
    assert kinds == [
        ("CLIENT", "http"),
        ("CLIENT", "jsonrpc"),
        ("SERVER", "http"),
        ("SERVER", "jsonrpc"),
    ]
    assert len({s.context.trace_id for s in sends}) == 1  # one trace
    by = {(s.kind, s.attributes["rpc.system"]): s for s in sends}  # type: ignore[index]
    root = by[SpanKind.CLIENT, "jsonrpc"]
    a_server = by[SpanKind.SERVER, "jsonrpc"]
    a_client = by[SpanKind.CLIENT, "http"]
    b_server = by[SpanKind.SERVER, "http"]
    assert root.parent is None
    assert a_server.parent is not None and a_server.parent.span_id == root.context.span_id
    assert a_server.parent.is_remote
    # A's client call runs in A's agent turn, inside A's server span
    (a_turn,) = [
        t
        for t in telemetry.named("a2a.agent.turn")
        if t.parent is not None and t.parent.span_id == a_server.context.span_id
    ]
    assert a_client.parent is not None and a_client.parent.span_id == a_turn.context.span_id
    assert b_server.parent is not None and b_server.parent.span_id == a_client.context.span_id
    for span in (root, a_server):
        attributes = span.attributes or {}
        assert attributes["rpc.method"] == "SendMessage"
        assert attributes["a2a.protocol.version"] == "1.0"
        assert attributes["a2a.task.id"] == task.id
        assert attributes["a2a.context.id"] == task.context_id
        assert attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert b_server.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    assert b_server.attributes["a2a.task.id"] != task.id  # type: ignore[index]


async def test_errors_mark_the_spans_and_count_as_errors(telemetry: Telemetry) -> None:
    async with HTTPServer(AgentServer(Echo(), card("b"))) as b, RESTClient(b.url) as client:
        try:
            await client.get_task("nope")
        except TaskNotFoundError:
            pass
        else:
            raise AssertionError("GetTask of an unknown task succeeded")
    spans = telemetry.named(f"{SERVICE}/GetTask")
    assert {s.kind for s in spans} == {SpanKind.CLIENT, SpanKind.SERVER}
    for span in spans:
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "TaskNotFoundError"
        assert (span.attributes or {})["a2a.task.id"] == "nope"
    points = telemetry.points("rpc.server.call.duration")
    outcomes = {(p.attributes["rpc.method"], p.attributes["outcome"]): p.count for p in points}
    assert outcomes == {("GetTask", "error"): 1}
    (duration,) = telemetry.points("rpc.server.call.duration")
    assert duration.count == 1
    assert duration.attributes["error.type"] == "TaskNotFoundError"
    assert 0 < duration.sum < 5  # seconds


async def test_uninstrumented_servers_and_clients_record_nothing(telemetry: Telemetry) -> None:
    from a2a_models import observability

    observability.uninstrument()
    async with HTTPServer(AgentServer(Echo(), card("b"))) as b, HTTPClient(b.url + "/") as client:
        await client.send_message(Message.user("x"))
    assert telemetry.spans() == []
    assert not observability.instrumented()


async def test_grpc_calls_carry_the_trace_in_metadata_and_count_streams(
    telemetry: Telemetry,
) -> None:
    pytest.importorskip("grpc")
    from a2a_models.adapters.grpc import GrpcClient, GrpcServer

    grpc_server = GrpcServer(AgentServer(Echo(), card("g")))
    await grpc_server.start()
    try:
        async with GrpcClient(grpc_server.url, timeout=10) as client:
            task = await client.send_message(Message.user("g"))
            events = [e async for e in client.send_streaming_message(Message.user("s"))]
    finally:
        await grpc_server.stop()
    assert isinstance(task, Task) and events
    (client_span,) = [s for s in telemetry.named(SEND) if s.kind is SpanKind.CLIENT]
    (server_span,) = [s for s in telemetry.named(SEND) if s.kind is SpanKind.SERVER]
    assert client_span.attributes["rpc.system"] == "grpc"  # type: ignore[index]
    assert server_span.attributes["rpc.system"] == "grpc"  # type: ignore[index]
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.context.trace_id == client_span.context.trace_id
    streams = telemetry.named(f"{SERVICE}/SendStreamingMessage")
    assert {s.kind for s in streams} == {SpanKind.CLIENT, SpanKind.SERVER}
    # The stream was opened and closed: the up-down counter is back at zero.
    (opened,) = telemetry.points("a2a.server.active_streams")
    assert opened.attributes["rpc.method"] == "SendStreamingMessage"
    assert opened.value == 0
    counts = {
        (p.attributes["rpc.method"], p.attributes["outcome"]): p.count
        for p in telemetry.points("rpc.server.call.duration")
    }
    assert counts == {("SendMessage", "ok"): 1, ("SendStreamingMessage", "ok"): 1}


class Asker(Agent):
    """Asks once (input-required), then completes on the answer."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working()
        if context.message.text == "start":
            yield context.ask("which city?")
            return
        yield context.complete()


async def test_stream_server_spans_name_the_task_they_opened(telemetry: Telemetry) -> None:
    # The server span of a stream ends as the stream is accepted; SendStreamingMessage's
    # named no task (none existed when the request came), so its trace could not be found
    # by task id. It now carries the ids of the task the stream opened with (not a state:
    # the agent may be changing it as the span ends).
    asker = Asker()
    async with HTTPServer(AgentServer(asker, card("s"))) as server:
        async with HTTPClient(server.url + "/") as client:
            events = [e async for e in client.send_streaming_message(Message.user("start"))]
            first = events[0]
            assert isinstance(first, Task)
            followed = client.subscribe(first.id)
            head = await anext(followed)  # the stream is open: the task as it found it
            assert isinstance(head, Task)
            await client.send_message(Message.user("Oslo", task_id=first.id))
            [e async for e in followed]
    (opened,) = [
        s for s in telemetry.named(f"{SERVICE}/SendStreamingMessage") if s.kind is SpanKind.SERVER
    ]
    attributes = opened.attributes or {}
    assert attributes["a2a.task.id"] == first.id
    assert attributes["a2a.context.id"] == first.context_id
    assert "a2a.task.state" not in attributes
    (subscribed,) = [
        s for s in telemetry.named(f"{SERVICE}/SubscribeToTask") if s.kind is SpanKind.SERVER
    ]
    attributes = subscribed.attributes or {}
    assert attributes["a2a.task.id"] == first.id
    assert attributes["a2a.context.id"] == first.context_id


async def test_agent_turns_are_spans_and_active_tasks_are_counted_by_state(
    telemetry: Telemetry,
) -> None:
    def active() -> dict[str, int]:
        points = telemetry.points("a2a.server.active_tasks")
        return {p.attributes["a2a.task.state"]: p.value for p in points if p.value}

    async with HTTPServer(AgentServer(Asker(), card("q"))) as q, HTTPClient(q.url + "/") as client:
        task = await client.send_message(Message.user("start"))
        assert isinstance(task, Task)
        assert active() == {"TASK_STATE_INPUT_REQUIRED": 1}
        done = await client.send_message(
            Message.user("Oslo", task_id=task.id, context_id=task.context_id)
        )
        assert isinstance(done, Task) and done.status.state.name == "COMPLETED"
        assert active() == {}
    turns = telemetry.named("a2a.agent.turn")
    assert len(turns) == 2
    servers = {s.context.span_id for s in telemetry.named(SEND) if s.kind is SpanKind.SERVER}
    assert len(servers) == 2
    # each turn runs inside the server span of the request that started it
    assert {t.parent.span_id for t in turns if t.parent is not None} == servers
    assert {(t.attributes or {})["a2a.task.id"] for t in turns} == {task.id}


async def test_store_spans_are_opt_in(telemetry: Telemetry) -> None:
    from a2a_models import observability

    async with (
        HTTPServer(AgentServer(Echo(), card("s"))) as plain,
        HTTPClient(plain.url + "/") as client,
    ):
        await client.send_message(Message.user("x"))
    assert not [s for s in telemetry.spans() if s.name.startswith("a2a.store.")]

    observability.instrument(
        tracer_provider=telemetry.tracer_provider,
        meter_provider=telemetry.meter_provider,
        detail="store",
    )
    async with (
        HTTPServer(AgentServer(Echo(), card("s"))) as traced,
        HTTPClient(traced.url + "/") as client,
    ):
        task = await client.send_message(Message.user("y"))
    assert isinstance(task, Task)
    stores = [s for s in telemetry.spans() if s.name.startswith("a2a.store.")]
    names = {s.name for s in stores}
    # (No get: the answer is the task as the run wrote it, see tests/stores/test_request_cost.py.)
    assert {"a2a.store.create", "a2a.store.update"} <= names
    (create,) = [s for s in stores if s.name == "a2a.store.create"]
    assert (create.attributes or {})["a2a.task.id"] == task.id
    assert (create.attributes or {})["a2a.store"] == "InMemoryTaskStore"
    (server,) = [
        s
        for s in telemetry.named(SEND)
        if s.kind is SpanKind.SERVER and s.context.trace_id == create.context.trace_id
    ]
    assert create.context.trace_id == server.context.trace_id


async def test_a_queued_turn_carries_the_span_of_the_request_that_queued_it(
    telemetry: Telemetry,
) -> None:
    # A turn queued for a worker carried only the caller's traceparent: from a caller
    # that sent none (the CLI's `send`), every span of the worker (its push deliveries,
    # its model calls) was the root of a trace of its own; from one that did, they hung
    # from the caller's span, beside the front end's server span instead of under it.
    import uuid

    import psycopg
    from _procs import PG_DSN

    from a2a_models import SendMessageConfiguration
    from a2a_models.client import InProcessClient
    from a2a_models.server import FrontEndHandler
    from a2a_models.stores import PostgresEventBroker, PostgresTaskStore, PostgresTurnQueue

    schema = f"a2a_otel_queue_{uuid.uuid4().hex[:10]}"
    store = PostgresTaskStore(PG_DSN, schema=schema)
    broker = PostgresEventBroker(PG_DSN, channel=schema)
    handler = FrontEndHandler(card("front"), store=store, broker=broker)
    queue = PostgresTurnQueue(store, f"{PG_DSN}{'&' if '?' in PG_DSN else '?'}schema={schema}")
    try:
        async with InProcessClient(AgentServer(None, card("front"), handler=handler)) as client:
            now = SendMessageConfiguration(return_immediately=True)
            task = await client.send_message(Message.user("hi"), configuration=now)
        turn = await queue.pull("w", 30.0)
    finally:
        await handler.aclose()
        await queue.aclose()
        await broker.aclose()
        await store.aclose()
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    assert isinstance(task, Task) and turn is not None and turn.task_id == task.id
    (server,) = [s for s in telemetry.named(SEND) if s.kind is SpanKind.SERVER]
    carried = dict(turn.call.trace)["traceparent"]
    assert carried.split("-")[1:3] == [
        format(server.context.trace_id, "032x"),
        format(server.context.span_id, "016x"),
    ]
