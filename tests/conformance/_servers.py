"""Servers for the conformance tests, each served by uvicorn on 127.0.0.1 in a thread.

* :func:`serving` runs an ASGI app built for its own URL and yields that URL.
* :func:`sdk_app` is the official a2a-sdk server with an executor implementing
  the conformance contract through the SDK's own API.
* :func:`engine_app` is a minimal JSON-RPC transport over our engine
  (``A2AServer.handle``): the base the deliberately broken fixtures vary.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from a2a_models import codec
from a2a_models import models as m
from a2a_models.server import A2AServer, Reply

AppFactory = Callable[[str], Any]

#: How long a check waits for a stream to close after its terminal event (or a
#: Message). The servers under test close at once; the wait is measured on the
#: clock of this process, which also runs the server (a thread), so a stall of
#: the whole process (a loaded machine, a long garbage collection) right after
#: the terminal event counts against the server. 0.5 s failed that way under
#: load; a compliant server costs nothing more with a longer wait.
STREAM_GRACE = 5.0


@contextlib.contextmanager
def serving(factory: AppFactory) -> Iterator[str]:
    """Serve ``factory(url)`` on a free loopback port; yield the URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by accepted sockets
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    app = factory(url)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        loop="asyncio",
        timeout_graceful_shutdown=1,
        h11_max_incomplete_event_size=64 * 1024 * 1024,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(5)
        sock.close()


# ------------------------------------------------------------------ our engine, minimal JSON-RPC


def dual_card_json(card: m.AgentCard) -> dict[str, Any]:
    """The 1.0 card plus the 0.3 top-level fields (what a dual-stack server serves)."""
    v10 = codec.to_wire(card, "1.0")
    v03 = codec.to_wire(card, "0.3", lossy=True)
    for key in (
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "supportsAuthenticatedExtendedCard",
        "security",
    ):
        if key in v03 and key not in v10:
            v10[key] = v03[key]
    return v10


def engine_app(
    server: A2AServer,
    card: dict[str, Any],
    *,
    malformed_status: int = 200,
    extra_routes: list[Route] | None = None,
) -> Starlette:
    """JSON-RPC at ``/`` (both versions, via ``server.handle``) and the card.

    ``malformed_status`` is the HTTP status used when the body is not JSON
    (a broken fixture sets 500).
    """

    async def get_card(request: Request) -> Response:
        return JSONResponse(card, headers={"Cache-Control": "max-age=60"})

    async def rpc(request: Request) -> Response:
        body = await request.body()
        status = 200
        try:
            codec.loads(body)
        except ValueError:
            status = malformed_status
        reply = await server.handle(body, dict(request.headers))
        if isinstance(reply, Reply):
            if reply.body is None:
                return Response(status_code=204, headers=dict(reply.headers))
            return Response(
                reply.body,
                status_code=status,
                media_type="application/json",
                headers=dict(reply.headers),
            )

        async def events() -> Any:
            try:
                async for event in reply.events:
                    yield b"data: " + event.data + b"\n\n"
            finally:
                await reply.aclose()

        return StreamingResponse(
            events(), media_type="text/event-stream", headers=dict(reply.headers)
        )

    routes = [Route("/.well-known/agent-card.json", get_card), Route("/", rpc, methods=["POST"])]
    return Starlette(routes=[*(extra_routes or []), *routes])


# ------------------------------------------------------------------ the official SDK


def sdk_app(
    url: str,
    *,
    streaming: bool = True,
    push: bool = True,
) -> Starlette:
    """The a2a-sdk server (JSON-RPC at ``/``, REST at the root, 0.3 compat on) running
    an executor that implements the conformance contract."""
    import a2a.server.routes  # noqa: F401 - import order (SDK quirk 13)
    from a2a.helpers.proto_helpers import new_text_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
    from a2a.types import a2a_pb2 as pb

    from a2a_models.conformance import ARTIFACT_TEXT, REPLY_TEXT, parse_command

    card = pb.AgentCard(
        name="sdk conformance agent",
        description="a2a-sdk server running the conformance contract",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            pb.AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3"),
            pb.AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="0.3"),
        ],
        provider=pb.AgentProvider(organization="tests", url="https://example.com"),
        capabilities=pb.AgentCapabilities(streaming=streaming, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            pb.AgentSkill(
                id="a2a-conformance",
                name="conformance",
                description="the conformance contract",
                tags=["conformance"],
            )
        ],
    )

    slow_events: dict[str, asyncio.Event] = {}

    class ContractExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            text = context.get_user_input()
            task_id, context_id = context.task_id or "", context.context_id or ""
            updater = TaskUpdater(event_queue, task_id, context_id)

            def agent(msg: str) -> Any:
                return new_text_message(
                    msg, context_id=context_id, task_id=task_id, role=pb.Role.ROLE_AGENT
                )

            if context.current_task is not None:
                await updater.start_work()
                await updater.add_artifact([pb.Part(text=f"received: {text}")], name="answer")
                await updater.complete()
                return
            command, count = parse_command(text)
            if command == "message":
                await event_queue.enqueue_event(
                    new_text_message(REPLY_TEXT, context_id=context_id, role=pb.Role.ROLE_AGENT)
                )
                return
            await event_queue.enqueue_event(
                pb.Task(
                    id=task_id,
                    context_id=context_id,
                    status=pb.TaskStatus(state=pb.TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
            if command == "reject":
                await updater.reject(agent("rejected"))
                return
            await updater.start_work()
            if command in ("complete", "echo"):
                await event_queue.enqueue_event(
                    pb.TaskArtifactUpdateEvent(
                        task_id=task_id,
                        context_id=context_id,
                        artifact=pb.Artifact(
                            artifact_id=f"art-{task_id}",
                            name="result",
                            parts=[pb.Part(text=ARTIFACT_TEXT if command == "complete" else text)],
                        ),
                    )
                )
                await updater.complete()
            elif command == "input":
                await updater.requires_input(agent("input required"))
            elif command == "auth":
                await updater.requires_auth(agent("auth required"))
            elif command == "fail":
                await updater.failed(agent("failed"))
            elif command == "stream":
                for i in range(count):
                    await asyncio.sleep(0.005)
                    await updater.update_status(
                        pb.TaskState.TASK_STATE_WORKING, agent(f"step {i + 1} of {count}")
                    )
                for i in range(count):
                    await asyncio.sleep(0.005)
                    await updater.add_artifact(
                        [pb.Part(text=f"chunk-{i}")],
                        artifact_id=f"stream-{task_id}",
                        name="stream" if i == 0 else None,
                        append=i > 0,
                        last_chunk=i == count - 1,
                    )
                await updater.complete()
            elif command == "slow":
                done = slow_events.setdefault(task_id, asyncio.Event())
                try:
                    await asyncio.wait_for(done.wait(), 300)
                except TimeoutError:
                    await updater.failed(agent("slow: no cancel"))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            task_id = context.task_id or ""
            slow_events.setdefault(task_id, asyncio.Event()).set()
            updater = TaskUpdater(event_queue, task_id, context.context_id or "")
            await updater.cancel()

    handler = DefaultRequestHandler(
        agent_executor=ContractExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore() if push else None,
    )
    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
            *create_rest_routes(handler, enable_v0_3_compat=True),
        ]
    )
