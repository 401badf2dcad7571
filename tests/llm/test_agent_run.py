"""``agent run`` as a client meets it (a subprocess, a scripted model server).

* ``kill -9`` in the middle of a model stream, then a restart on the same store (SQLite
  and PostgreSQL): the task it left ``working`` is failed, saying why, and its
  subscriber's stream ends; it is never left ``working`` for ever;
* a card that declares push notifications gets them delivered to the webhook.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_models import Message, Task, TaskState, TaskStatusUpdateEvent, codec
from a2a_models import models as m
from a2a_models._cli._agent import main as agent_main
from a2a_models.adapters.http import connect
from a2a_models.adapters.llm import ARTIFACT_TOOL, START_TASK_TOOL
from a2a_models.server import STOPPED_MESSAGE

from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn, _EmbeddedServer
from .test_e2e_agent import AgentProcess, agent_env

#: Lease time of the agent processes: the killed one's task is taken over within about that.
TTL = "1"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.db'}"
        return
    from stores.conftest import PG_DSN, drop_schema, require_postgres

    require_postgres()
    schema = f"a2a_agent_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{PG_DSN}?schema={schema}&channel={schema}"
    finally:
        drop_schema(schema)


async def test_a_task_left_working_by_a_killed_agent_run_is_failed_after_a_restart(
    scripted_server: ScriptedModelServer, tmp_path: Path, store: str
) -> None:
    workspace = tmp_path / "agent"
    assert agent_main(["init", str(workspace)]) == 0
    env = agent_env(scripted_server)
    scripted_server.script(
        Turn(tool_calls=[ScriptedToolCall(START_TASK_TOOL, {"skill": "brief"})]),
        # A model that streams for minutes: the process dies in the middle of it.
        Turn(text=["thinking "] * 2000, delay=0.1),
    )
    async with AgentProcess(workspace, store, env, "--lease-ttl", TTL) as agent:
        client = await connect(agent.url, timeout=15)
        seen: list[Any] = []
        working = asyncio.Event()

        async def follow() -> None:
            async with client:
                async for event in client.send_streaming_message(Message.user("Brief me")):
                    seen.append(event)
                    if isinstance(event, TaskStatusUpdateEvent):
                        working.set()

        follower = asyncio.create_task(follow())
        async with asyncio.timeout(30):
            await working.wait()
        assert agent.proc is not None
        agent.proc.kill()
        # The subscriber is told: its stream ends (with an error), it does not hang.
        with pytest.raises(Exception):  # noqa: B017 - whichever the broken connection gives
            async with asyncio.timeout(30):
                await follower
        task_id = next(e.id for e in seen if isinstance(e, Task))

    async with AgentProcess(workspace, store, env, "--lease-ttl", TTL) as agent:
        client = await connect(agent.url, timeout=15)
        async with client:
            async with asyncio.timeout(30):
                while True:
                    task = await client.get_task(task_id)
                    if task.status.state is not TaskState.WORKING:
                        break
                    await asyncio.sleep(0.2)
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.text == STOPPED_MESSAGE


@pytest.fixture
async def webhook() -> AsyncIterator[tuple[str, asyncio.Queue[bytes]]]:
    """A webhook receiver on 127.0.0.1: its URL, and the bodies it receives."""
    received: asyncio.Queue[bytes] = asyncio.Queue()

    async def hook(request: Request) -> Response:
        received.put_nowait(await request.body())
        return Response(status_code=200)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    server = _EmbeddedServer(uvicorn.Config(app, lifespan="off", log_config=None))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/hook", received
    finally:
        server.should_exit = True
        server.exit_requested.set()
        await serving


async def test_push_notifications_of_a_card_that_declares_them_are_delivered(
    scripted_server: ScriptedModelServer,
    tmp_path: Path,
    webhook: tuple[str, asyncio.Queue[bytes]],
) -> None:
    url, received = webhook
    workspace = tmp_path / "agent"
    assert agent_main(["init", str(workspace)]) == 0
    agent_md = workspace / "agent.md"
    agent_md.write_text(
        agent_md.read_text().replace(
            "  streaming: true\n", "  streaming: true\n  pushNotifications: true\n"
        )
    )
    scripted_server.script(
        Turn(tool_calls=[ScriptedToolCall(START_TASK_TOOL, {"skill": "brief"})]),
        Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"name": "b", "content": "Done."})]),
    )
    env = agent_env(scripted_server)
    async with AgentProcess(workspace, "memory:", env, "--push-allow", "127.0.0.1") as agent:
        client = await connect(agent.url, timeout=15)
        async with client:
            assert client.card.capabilities.push_notifications
            request = m.SendMessageRequest(
                message=Message.user("Brief me"),
                configuration=m.SendMessageConfiguration(
                    task_push_notification_config=m.TaskPushNotificationConfig(url=url)
                ),
            )
            task = await client.send_message(request)
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        # The webhook hears of the task until it completes.
        async with asyncio.timeout(20):
            while True:
                update = codec.decode(m.StreamResponse, await received.get(), "1.0")
                if (
                    isinstance(update, TaskStatusUpdateEvent)
                    and update.status.state is TaskState.COMPLETED
                ):
                    break
        assert update.task_id == task.id
