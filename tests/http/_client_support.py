"""Servers for the HTTP client, push and CLI tests: real sockets on 127.0.0.1.

* :func:`serve_in_thread` runs any ASGI app under uvicorn on an ephemeral
  port, in a thread with its own event loop (start it once per module: a
  uvicorn shutdown takes ~0.2 s); :func:`serve` does the same in the test's
  own event loop; :func:`raw_peer` is a socket server whose answers the test
  writes byte by byte (stalls, endless bodies).
* :func:`jsonrpc_app` is a small JSON-RPC binding of our :class:`AgentServer`
  (it stands in for the HTTP server adapter), with hooks to record requests
  and to break streams on purpose.
* :class:`ScriptAgent` answers by keyword: plain text is echoed in a
  Message; ``task`` runs a short task; ``slow`` a longer one; ``wait`` works
  until canceled; ``nap`` pauses 1 s; ``ask`` stops at input-required.
* :func:`sdk_app` is the official a2a-sdk server (JSON-RPC 1.0 + 0.3, REST
  1.0 + 0.3, agent card) with an equivalent executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import attrs
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from a2a_models import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, codec
from a2a_models.protocol import format_event
from a2a_models.server import Agent, AgentEvent, AgentServer, Reply, RequestContext

logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """Run ``app`` on 127.0.0.1 (port 0); yield its base URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="critical", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        server.force_exit = True
        await asyncio.wait_for(task, 5)


RawAnswer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def raw_peer(answer: RawAnswer) -> AsyncIterator[tuple[str, list[str]]]:
    """An HTTP peer on 127.0.0.1 that reads each request's head, then lets ``answer``
    write bytes by hand (what a misbehaving webhook or agent sends); yields its base
    URL and the request lines it got (``"POST /hook"``)."""
    requests: list[str] = []
    handlers: set[asyncio.Task[object]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.add(asyncio.current_task())  # type: ignore[arg-type]
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            requests.append(" ".join(head.decode("latin-1").split(" ", 2)[:2]))
            await answer(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the sender hung up, or the test is over
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", requests
    finally:
        server.close()
        for handler in handlers:  # answers that never end, by design
            handler.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)


async def endless_json(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A :func:`raw_peer` answer: 200, JSON, and a body that never ends (64 KiB of
    spaces every 10 ms)."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
    block = b" " * 65536
    while True:
        writer.write(b"%x\r\n%s\r\n" % (len(block), block))
        await writer.drain()
        await asyncio.sleep(0.01)


@contextlib.contextmanager
def serve_in_thread(app: Any, port: int = 0) -> Iterator[str]:
    """Run ``app`` on 127.0.0.1 (any free port) in a background thread; yield its base URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="critical", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="test-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        server.force_exit = True
        thread.join(5)


class ScriptAgent(Agent):
    """Keyword-driven agent (see the module docstring)."""

    def __init__(self, delay: float = 0.01) -> None:
        self.delay = delay

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text
        if text == "task":
            yield context.working("step 1")
            await asyncio.sleep(self.delay)
            yield context.artifact("result", name="answer")
            yield context.complete("done")
        elif text == "slow":
            for i in range(6):
                yield context.working(f"step {i}")
                await asyncio.sleep(self.delay)
            yield context.complete("done")
        elif text == "wait":
            yield context.working("waiting")
            await asyncio.sleep(30)
            yield context.complete("gave up waiting")
        elif text == "nap":
            yield context.working("napping")
            await asyncio.sleep(1)
            yield context.complete("rested")
        elif text == "ask":
            yield context.ask("what now?")
        elif text == "sleep":
            await asyncio.sleep(2)
            yield context.reply("awake")
        else:
            yield context.reply(f"echo: {text}")


def make_card(
    url: str, *, binding: str = "JSONRPC", versions: tuple[str, ...] = ("1.0",)
) -> AgentCard:
    return AgentCard(
        name="script agent",
        description="answers by keyword",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version=v) for v in versions
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["test"])],
    )


@attrs.define
class Recorder:
    """What the JSON-RPC test app saw, and how it should misbehave."""

    requests: list[tuple[dict[str, str], bytes]] = attrs.field(factory=list)
    #: Break the next streams after this many events each (consumed in order).
    drop_after: list[int] = attrs.field(factory=list)
    #: Answer the next calls with this (status, body, content type) instead.
    canned: list[tuple[int, bytes, str]] = attrs.field(factory=list)

    def reset(self) -> None:
        self.requests.clear()
        self.drop_after.clear()
        self.canned.clear()


def jsonrpc_app(
    server: AgentServer,
    card: AgentCard | None = None,
    recorder: Recorder | None = None,
    *,
    card_json: Callable[[], bytes] | None = None,
) -> Starlette:
    """A minimal JSON-RPC binding of ``server`` at ``POST /`` (+ the well-known card)."""
    rec = recorder if recorder is not None else Recorder()

    async def rpc(request: Request) -> Response:
        body = await request.body()
        rec.requests.append((dict(request.headers), body))
        if rec.canned:
            status, content, media = rec.canned.pop(0)
            return Response(content, status_code=status, media_type=media)
        reply = await server.handle(body, dict(request.headers))
        if isinstance(reply, Reply):
            if reply.body is None:
                return Response(status_code=204)
            return Response(reply.body, media_type="application/json", headers=dict(reply.headers))
        drop = rec.drop_after.pop(0) if rec.drop_after else None

        async def events() -> AsyncIterator[bytes]:
            sent = 0
            try:
                if drop == 0:
                    raise ConnectionResetError("dropped on purpose")
                async for event in reply.events:
                    yield format_event(event.data, event.id)
                    sent += 1
                    if drop is not None and sent >= drop:
                        raise ConnectionResetError("dropped on purpose")
            finally:
                await reply.aclose()

        return StreamingResponse(
            events(), media_type="text/event-stream", headers=dict(reply.headers)
        )

    async def well_known(request: Request) -> Response:
        if card_json is not None:
            return Response(card_json(), media_type="application/json")
        if card is None:
            return Response(status_code=404)
        return Response(codec.encode(card, "1.0"), media_type="application/json")

    return Starlette(
        routes=[
            Route("/", rpc, methods=["POST"]),
            Route("/.well-known/agent-card.json", well_known, methods=["GET"]),
        ]
    )


# --------------------------------------------------------------------------- the a2a-sdk server


def sdk_app(base_url_holder: list[str]) -> Any:
    """The official SDK's server: JSON-RPC at ``/rpc``, REST at ``/``, card at the well-known path.

    ``base_url_holder[0]`` is read lazily for the card's interface URLs.
    """
    import a2a.server.routes  # noqa: F401  (SDK import order, see tests/interop/sdk_vectors.py)
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.agent_execution import RequestContext as SDKContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
    from a2a.types import a2a_pb2 as pb

    class Echo(AgentExecutor):
        async def execute(self, context: SDKContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            assert context.task_id is not None and context.context_id is not None
            text = context.get_user_input()
            if text not in ("task", "wait"):
                await event_queue.enqueue_event(
                    pb.Message(
                        message_id=f"reply-{context.message.message_id}",
                        role=pb.ROLE_AGENT,
                        context_id=context.context_id,
                        parts=[pb.Part(text=f"echo: {text}")],
                    )
                )
                return
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            if context.current_task is None:
                await event_queue.enqueue_event(
                    pb.Task(
                        id=context.task_id,
                        context_id=context.context_id,
                        status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
                        history=[context.message],
                    )
                )
            await updater.start_work()
            if text == "wait":
                await asyncio.sleep(30)
                return
            await asyncio.sleep(0.05)
            await updater.add_artifact([pb.Part(text="result")], name="answer")
            await updater.complete()

        async def cancel(self, context: SDKContext, event_queue: EventQueue) -> None:
            assert context.task_id is not None and context.context_id is not None
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.cancel()

    base = base_url_holder[0]
    card = pb.AgentCard(
        name="sdk echo",
        description="the a2a-sdk server",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(
                url=f"{base}/rpc", protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            pb.AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            pb.AgentInterface(
                url=f"{base}/rpc", protocol_binding="JSONRPC", protocol_version="0.3"
            ),
        ],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="echo", name="echo", description="echoes", tags=["t"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Echo(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url="/rpc", enable_v0_3_compat=True),
            *create_rest_routes(handler, enable_v0_3_compat=True),
        ]
    )
