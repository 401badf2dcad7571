"""Our clients against our own HTTP server (``create_app``): every binding and version."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _client_support import ScriptAgent, make_card, serve_in_thread
from _procs import free_port

from a2a_models import Message, TaskState
from a2a_models import models as m
from a2a_models.adapters.http import HTTPClient, RESTClient, connect
from a2a_models.errors import TaskNotFoundError
from a2a_models.server import AgentServer

create_app = pytest.importorskip("a2a_models.adapters.http").create_app

COMBOS = [
    pytest.param(HTTPClient, "1.0", id="jsonrpc-1.0"),
    pytest.param(HTTPClient, "0.3", id="jsonrpc-0.3"),
    pytest.param(RESTClient, "1.0", id="rest-1.0"),
    pytest.param(RESTClient, "0.3", id="rest-0.3"),
]
Kind = type[HTTPClient] | type[RESTClient]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/a2a"
    card = m.AgentCard(
        name="own",
        description="our server",
        version="1",
        supported_interfaces=[
            m.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
            m.AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        capabilities=make_card(url).capabilities,
        skills=make_card(url).skills,
    )
    app = create_app(AgentServer(ScriptAgent(), card), base_path="/a2a")
    with serve_in_thread(app, port):
        yield url


@pytest.mark.parametrize(("kind", "version"), COMBOS)
async def test_operations(base: str, kind: Kind, version: str) -> None:
    async with kind(base, version=version) as client:
        reply = await client.send_message(Message.user("hi"))
        assert isinstance(reply, m.Message) and reply.text == "echo: hi"
        stream = client.send_streaming_message(Message.user("task"))
        items = [item async for item in stream]
        assert isinstance(items[0], m.Task)
        assert items[-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        assert stream.last_event_id == str(len(items))
        task_id = items[0].id
        assert (await client.get_task(task_id)).status.state is TaskState.COMPLETED
        with pytest.raises(TaskNotFoundError):
            await client.get_task("nope")

        waiting = await client.send_message(
            Message.user("wait"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(waiting, m.Task)
        sub = client.subscribe(waiting.id)
        assert isinstance(await anext(sub), m.Task)
        assert (await client.cancel_task(waiting.id)).status.state is TaskState.CANCELED
        assert [i async for i in sub][-1].status.state is TaskState.CANCELED  # type: ignore[union-attr]

        # Resuming replays what came after an event id.
        replay = client.subscribe(task_id, resume_after="2")
        assert len([i async for i in replay]) == len(items) - 2


@pytest.mark.parametrize(("kind", "version"), COMBOS)
async def test_push_configs(base: str, kind: Kind, version: str) -> None:
    async with kind(base, version=version) as client:
        task = await client.send_message(Message.user("ask"))
        assert isinstance(task, m.Task)
        created = await client.create_push_config(
            m.TaskPushNotificationConfig(
                url="https://example.com/hook",
                id="cfg-1",
                task_id=task.id,
                authentication=m.AuthenticationInfo(scheme="Bearer", credentials="c"),
            )
        )
        assert (created.id, created.task_id) == ("cfg-1", task.id)
        got = await client.get_push_config(task.id, "cfg-1")
        assert got.url == "https://example.com/hook"
        assert [c.id for c in (await client.list_push_configs(task.id)).configs] == ["cfg-1"]
        await client.delete_push_config(task.id, "cfg-1")
        assert (await client.list_push_configs(task.id)).configs == ()


async def test_connect_reads_the_served_card(base: str) -> None:
    client = await connect(base.rsplit("/", 1)[0], transports=("HTTP+JSON",))
    async with client:
        assert isinstance(client, RESTClient) and client.url == base
        assert isinstance(await client.send_message(Message.user("x")), m.Message)
