"""gRPC streams: resumed after a break, bounded in silence, and big first events (127.0.0.1)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
import pytest

from a2a_models import Message
from a2a_models import models as m
from a2a_models.adapters.grpc import SERVICE_NAME, GrpcClient, GrpcServer, to_proto
from a2a_models.adapters.grpc._events import EVENT_ID_FIELD, event_id_of
from a2a_models.adapters.grpc._pb import a2a_pb2 as pb
from a2a_models.client import BrokenStreamError, Reconnect
from a2a_models.errors import InvalidAgentResponseError, InvalidRequestError, TransportError
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext
from tests.http._server_support import make_card

pytestmark = pytest.mark.asyncio


class StepAgent(Agent):
    """``steps N``: N working updates, each released by the test; ``big N``: an N-byte artifact."""

    def __init__(self) -> None:
        self.steps: asyncio.Queue[None] = asyncio.Queue()
        self.sent = 0

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        word, _, count = context.message.text.partition(" ")
        if word == "big":
            yield context.artifact("x" * int(count), name="big")
            yield context.complete()
            return
        yield context.working("started")
        for i in range(int(count)):
            await self.steps.get()
            yield context.working(f"step {i}")
            self.sent += 1
        yield context.complete("all steps")


def _texts(items: list[Any]) -> list[str]:
    out = []
    for item in items:
        if isinstance(item, m.TaskStatusUpdateEvent) and item.status.message is not None:
            out.append(item.status.message.text)
    return out


async def test_a_stream_is_resumed_after_the_server_went_away_without_gap_or_duplicate() -> None:
    # The gRPC stream ended with an error when its server went away (here: stopped and
    # started again on the same port, the engine running on); it is now resumed after
    # the last event it saw, as the HTTP clients resume theirs.
    agent = StepAgent()
    server = AgentServer(agent, make_card())
    first = GrpcServer(server)
    await first.start()
    second: GrpcServer | None = None
    try:
        async with asyncio.timeout(20), GrpcClient(first.url) as client:
            stream = client.send_streaming_message(Message.user("steps 6"))
            items: list[Any] = [await anext(stream)]
            for _ in range(2):
                agent.steps.put_nowait(None)
                items.append(await anext(stream))
            seen = stream.last_event_id
            assert seen is not None
            await first.stop()  # ends the stream: UNAVAILABLE
            for _ in range(2):  # events logged while no server is there
                agent.steps.put_nowait(None)
            while agent.sent < 4:
                await asyncio.sleep(0.01)
            second = GrpcServer(server, port=first.port)
            await second.start()
            for _ in range(2):
                agent.steps.put_nowait(None)
            items.extend([item async for item in stream])
    finally:
        if second is not None:
            await second.stop()
        await server.aclose()
    assert _texts(items) == ["started"] + [f"step {i}" for i in range(6)] + ["all steps"]
    assert int(stream.last_event_id or 0) > int(seen)


async def test_resuming_asks_our_server_for_the_events_after_the_last_one() -> None:
    agent = StepAgent()
    server = AgentServer(agent, make_card())
    async with GrpcServer(server) as gs, GrpcClient(gs.url) as client:
        for _ in range(3):
            agent.steps.put_nowait(None)
        stream = client.send_streaming_message(Message.user("steps 3"))
        ids: dict[str, str | None] = {}
        async for item in stream:
            for text in _texts([item]):
                ids[text] = stream.last_event_id
        # Each event carries its id (the proto has none: an extra field the SDK ignores).
        resumed = client.subscribe(item.task_id, resume_after=ids["step 0"])
        replay = [item async for item in resumed]
    assert _texts(replay) == ["step 1", "step 2", "all steps"]
    assert resumed.last_event_id == ids["all steps"] == str(int(ids["step 0"] or 0) + 3)


async def test_event_ids_ride_in_a_field_other_readers_ignore() -> None:
    event = m.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING)
    )
    from a2a_models.adapters.grpc._events import with_event_id

    raw = with_event_id(to_proto(event, m.StreamResponse).SerializeToString(), 300)
    parsed = pb.StreamResponse.FromString(raw)
    assert parsed.WhichOneof("payload") == "status_update"
    assert event_id_of(parsed) == "300"
    assert event_id_of(pb.StreamResponse.FromString(raw[: -len(b"\xac\x02") - 3])) is None
    assert EVENT_ID_FIELD not in {f.number for f in pb.StreamResponse.DESCRIPTOR.fields}


class _Stalling:
    """A gRPC server that answers the first stream with one Task, then stops answering."""

    def __init__(self) -> None:
        self.calls = 0
        self.stall = asyncio.Event()

    async def handle(self, raw: bytes, context: Any) -> AsyncIterator[bytes]:
        self.calls += 1
        if self.calls == 1:
            task = m.Task(id="t1", context_id="c1", status=m.TaskStatus(state=m.TaskState.WORKING))
            yield to_proto(task, m.StreamResponse).SerializeToString()
        await self.stall.wait()  # never set: a stalled server


async def test_a_silent_server_does_not_hang_the_stream() -> None:
    # `follow` over gRPC waited for ever on a server that stopped sending (the HTTP
    # path takes 60 s of silence for a dead connection); now `idle_timeout` bounds it.
    stalling = _Stalling()
    server = grpc.aio.server()
    handler = grpc.unary_stream_rpc_method_handler(stalling.handle)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE_NAME, {"SubscribeToTask": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        # Without keep-alive pings the idle limit bounds the silence between events too.
        async with GrpcClient(
            f"grpc://127.0.0.1:{port}",
            idle_timeout=0.3,
            keepalive_time=None,
            reconnect=Reconnect(attempts=1),
        ) as client:
            stream = client.subscribe("t1")
            with pytest.raises(BrokenStreamError) as info:
                async with asyncio.timeout(10):
                    items = [item async for item in stream]
                    assert items  # not reached
    finally:
        await server.stop(0)
    assert stalling.calls == 2  # the stream, then one resumption the server never answered
    assert str(info.value).endswith("went silent: nothing within 0.3 s")
    assert info.value.last_event_id is None  # this server sends no event ids


async def test_a_quiet_stream_of_a_live_server_outlasts_the_idle_limit() -> None:
    agent = StepAgent()
    server = AgentServer(agent, make_card())
    async with (
        GrpcServer(server) as gs,
        GrpcClient(gs.url, idle_timeout=0.1, reconnect=Reconnect(attempts=1, delay=0.01)) as client,
    ):
        stream = client.send_streaming_message(Message.user("steps 1"))
        items: list[Any] = [await anext(stream)]
        # Silence for several idle periods: each re-subscription is answered at once,
        # so none counts as a failed attempt (one attempt allowed).
        await asyncio.sleep(0.8)
        agent.steps.put_nowait(None)
        async with asyncio.timeout(10):
            items.extend([item async for item in stream])
    assert _texts(items) == ["started", "step 0", "all steps"]


async def test_a_task_bigger_than_4_mib_reaches_the_client() -> None:
    # A Task with a 12 MiB artifact: our server refused to send it ("Sent message
    # larger than max (12583196 vs. 10485760)", reported as the agent's InternalError).
    server = AgentServer(StepAgent(), make_card())
    size = 12 * 1024 * 1024
    async with GrpcServer(server) as gs, GrpcClient(gs.url, timeout=30) as client:
        task = await client.send_message(Message.user(f"big {size}"))
        got = await client.get_task(task.id)
        assert len(got.artifacts[0].parts[0].text or "") == size
        async with GrpcClient(gs.url, max_message_bytes=1024 * 1024) as small:
            with pytest.raises(InvalidAgentResponseError) as info:
                await small.get_task(task.id)
    text = str(info.value)
    assert "larger than this client's limit of 1048576 bytes" in text
    assert text.endswith("raise GrpcClient(max_message_bytes=...)")


async def test_a_request_over_the_servers_limit_is_not_blamed_on_the_client() -> None:
    # gRPC refuses it with RESOURCE_EXHAUSTED and no A2A details: the client made it
    # an InternalError (the server's fault) saying "SERVER: Received message larger
    # than max (100059 vs. 65536)". It is the request's fault, as a 413 is over HTTP.
    server = AgentServer(StepAgent(), make_card())
    async with GrpcServer(server, max_message_bytes=64 * 1024) as gs, GrpcClient(gs.url) as client:
        for call in (
            client.send_message(Message.user("big " + "1" * 100_000)),
            anext(client.send_streaming_message(Message.user("big " + "1" * 100_000))),
        ):
            with pytest.raises(InvalidRequestError) as info:
                await call
            assert info.value.data["limit"] == 64 * 1024
            assert info.value.data["size"] > 100_000
            assert str(info.value).startswith("[-32600] Request too large: 1000")
            assert f"over the limit of 65536 bytes of the gRPC server at {gs.url}" in str(
                info.value
            )
        # Headers over gRPC's metadata limit (16 KiB by default) likewise.
        async with GrpcClient(gs.url, headers={"x-note": "a" * 20_000}) as noisy:
            with pytest.raises(InvalidRequestError) as info:
                await noisy.send_message(Message.user("hello"))
        assert str(info.value).startswith("[-32600] Request headers too large for the gRPC")
        assert "received metadata size exceeds hard limit (value length 20000 vs." in str(
            info.value
        )
        assert (await client.list_tasks()).tasks == ()  # nothing reached the agent


async def test_a_request_over_the_limit_is_one_refusal_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # gRPC refused it before any handler of ours ran: no line, unlike every other
    # refusal. gRPC now takes up to twice the limit and the handler refuses, in gRPC's
    # words (clients read them as before), with one line per request.
    server = AgentServer(StepAgent(), make_card())
    limit = 64 * 1024
    with caplog.at_level(logging.INFO, "a2a_models.server.refusals"):
        async with GrpcServer(server, max_message_bytes=limit) as gs, GrpcClient(gs.url) as client:
            with pytest.raises(InvalidRequestError) as unary:
                await client.send_message(Message.user("big " + "1" * 100_000))
            with pytest.raises(InvalidRequestError):
                await anext(client.send_streaming_message(Message.user("big " + "1" * 100_000)))
            # Exactly at the limit is taken (refused by what the bytes are, not their size).
            async with grpc.aio.insecure_channel(gs.url.removeprefix("grpc://")) as channel:
                get_task = channel.unary_unary(f"/{SERVICE_NAME}/GetTask")
                with pytest.raises(grpc.aio.AioRpcError) as at_limit:
                    await get_task(b"\xff" * limit)
                with pytest.raises(grpc.aio.AioRpcError) as over_twice:
                    await get_task(b"\xff" * (2 * limit + 1))
            assert (await client.list_tasks()).tasks == ()  # nothing reached the agent
    size = unary.value.data["size"]
    assert size > 100_000 and unary.value.data["limit"] == limit
    assert at_limit.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert over_twice.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    lines = [r.getMessage() for r in caplog.records if r.name == "a2a_models.server.refusals"]
    too_large = f"-32600 InvalidRequestError (Request message too large: {size} bytes, the "
    assert lines == [
        f"SendMessage refused: {too_large}limit is 65536 bytes)",
        f"SendStreamingMessage refused: {too_large}limit is 65536 bytes)",
        lines[2],  # the bytes at the limit: not protobuf
    ]
    assert lines[2].startswith("GetTask refused: -32602 InvalidParamsError (")
    # Over twice the limit gRPC still refuses it itself, before any handler: no line.


async def test_cancelled_streams_leave_nothing_behind_on_the_server() -> None:
    # 30 streams closed by their client after the first event, 30 before it: every
    # handler, subscription and asyncio task of the server's is gone once the agents
    # ended, and no task is left behind unfinished.
    agent = StepAgent()
    server = AgentServer(agent, make_card())
    broker = server.handler.broker  # type: ignore[attr-defined]
    async with GrpcServer(server) as gs, GrpcClient(gs.url, timeout=10) as client:
        await client.send_message(Message.user("steps 0"))  # everything started once
        baseline = len(asyncio.all_tasks())

        async def after_first() -> None:
            stream = client.send_streaming_message(Message.user("steps 1"))
            await anext(stream)
            await stream.aclose()

        async def before_first() -> None:
            stream = client.send_streaming_message(Message.user("steps 1"))
            waiting = asyncio.ensure_future(anext(stream))
            await asyncio.sleep(0.05)
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            await stream.aclose()

        await asyncio.gather(*[after_first() for _ in range(30)])
        await asyncio.gather(*[before_first() for _ in range(30)])
        for _ in range(60):
            agent.steps.put_nowait(None)
        async with asyncio.timeout(30):
            while True:  # a leak times out here
                page = await client.list_tasks(m.ListTasksRequest(page_size=100))
                ended = {t.status.state for t in page.tasks} == {m.TaskState.COMPLETED}
                if ended and len(asyncio.all_tasks()) <= baseline:
                    break
                await asyncio.sleep(0.05)
        # A stream closed before its task existed started none; every other ran to its end.
        assert agent.sent == len(page.tasks) - 1 >= 30
        assert broker._subscribers == {}
        assert gs.servicer._waiting == set()


async def test_a_stream_still_waiting_for_its_task_is_told_the_server_stops() -> None:
    # An agent that had not said a word when the server stopped: its stream was not
    # among those stop() ends, so it waited out the 5 s graceful period and ended
    # with gRPC's "Cancelling all calls" (under `serve`: "the agent produced no
    # response", an InternalError blaming the agent). It is UNAVAILABLE "shutting
    # down" at once, as for a stream under way: the kind a client retries elsewhere.
    started = asyncio.Event()

    class Silent(Agent):
        async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
            started.set()
            await asyncio.sleep(3600)
            yield context.complete()

    gs = GrpcServer(AgentServer(Silent(), make_card()))
    await gs.start()
    async with GrpcClient(gs.url, reconnect=Reconnect(attempts=0)) as client:
        waiting = asyncio.ensure_future(anext(client.send_streaming_message(Message.user("x"))))
        async with asyncio.timeout(10):
            await started.wait()
        await gs.stop()
        with pytest.raises(TransportError) as info:
            await waiting
    assert "the server is shutting down" in str(info.value)
