"""Our HTTP clients against the official a2a-sdk server (1.3), on 127.0.0.1.

JSON-RPC 1.0 and 0.3 at ``/rpc``, HTTP+JSON 1.0 at ``/`` and 0.3 at ``/v1``,
the (dual 1.0 + 0.3) card at the well-known path. What the SDK does
differently is asserted where it matters to a client:

* its SSE events carry no ``id:``, so there is nothing to resume from
  (``EventStream.last_event_id`` stays ``None``);
* its well-known card is the 1.0 card merged with the 0.3 rendering
  (``url``, ``preferredTransport``, ``protocolVersion`` beside
  ``supportedInterfaces``);
* REST without ``A2A-Version`` is treated as 0.3 and refused on 1.0 routes.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from _client_support import sdk_app, serve_in_thread
from _procs import free_port

from a2a_models import Message, TaskState
from a2a_models import models as m
from a2a_models.adapters.http import HTTPClient, RESTClient, connect, resolve_card
from a2a_models.errors import JSONRPCError, TaskNotFoundError, VersionNotSupportedError

COMBOS = [
    pytest.param(HTTPClient, "/rpc", "1.0", id="jsonrpc-1.0"),
    pytest.param(HTTPClient, "/rpc", "0.3", id="jsonrpc-0.3"),
    pytest.param(RESTClient, "", "1.0", id="rest-1.0"),
    pytest.param(RESTClient, "", "0.3", id="rest-0.3"),
]
Kind = type[HTTPClient] | type[RESTClient]


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    # The card names its own URL, so the port is chosen first.
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with serve_in_thread(sdk_app([url]), port) as served:
        assert served == url
        yield url


@pytest.mark.parametrize(("kind", "path", "version"), COMBOS)
async def test_send_get_and_errors(sdk_url: str, kind: Kind, path: str, version: str) -> None:
    async with kind(sdk_url + path, version=version) as client:
        reply = await client.send_message(Message.user("hi"))
        assert isinstance(reply, m.Message) and reply.text == "echo: hi"
        task = await client.send_message(Message.user("task"))
        assert isinstance(task, m.Task)
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].parts[0] == m.Part.text("result")
        got = await client.get_task(task.id)
        assert got.id == task.id and got.status.state is TaskState.COMPLETED
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("no-such-task")
        assert info.value.remote


@pytest.mark.parametrize(("kind", "path", "version"), COMBOS)
async def test_stream(sdk_url: str, kind: Kind, path: str, version: str) -> None:
    async with kind(sdk_url + path, version=version) as client:
        stream = client.send_streaming_message(Message.user("task"))
        items = [item async for item in stream]
    assert isinstance(items[0], m.Task)
    assert any(isinstance(i, m.TaskArtifactUpdateEvent) for i in items)
    last = items[-1]
    assert isinstance(last, m.TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    assert stream.last_event_id is None  # the SDK sends no SSE ids


@pytest.mark.parametrize(("kind", "path", "version"), COMBOS)
async def test_subscribe_and_cancel(sdk_url: str, kind: Kind, path: str, version: str) -> None:
    async with kind(sdk_url + path, version=version) as client:
        task = await client.send_message(
            Message.user("wait"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(task, m.Task)
        stream = client.subscribe(task.id)
        first = await anext(stream)
        assert isinstance(first, m.Task) and first.id == task.id
        canceled = await client.cancel_task(task.id)
        assert canceled.status.state is TaskState.CANCELED
        rest = [item async for item in stream]
        assert isinstance(rest[-1], m.TaskStatusUpdateEvent | m.Task)
        assert rest[-1].status.state is TaskState.CANCELED


# 0.3 HTTP+JSON has no delete route in the SDK (it answers a DELETE with the 1.0
# handler's VersionNotSupported), so that combination stops after list.
@pytest.mark.parametrize(("kind", "path", "version"), COMBOS)
async def test_push_config_crud(sdk_url: str, kind: Kind, path: str, version: str) -> None:
    async with kind(sdk_url + path, version=version) as client:
        task = await client.send_message(
            Message.user("wait"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(task, m.Task)
        try:
            config = m.TaskPushNotificationConfig(
                task_id=task.id, id="hook-1", url="https://hooks.example/a2a", token="tok"
            )
            created = await client.create_push_config(config)
            assert (created.id, created.url) == ("hook-1", "https://hooks.example/a2a")
            fetched = await client.get_push_config(task.id, "hook-1")
            assert fetched.token == "tok"
            listed = await client.list_push_configs(task.id)
            assert [c.id for c in listed.configs] == ["hook-1"]
            if (kind, version) == (RESTClient, "0.3"):
                return
            # The SDK's 0.3 JSON-RPC answer to a delete has no "result" member (it drops
            # "result": null); the delete happened, so the call succeeds.
            await client.delete_push_config(task.id, "hook-1")
            assert (await client.list_push_configs(task.id)).configs == ()
        finally:
            await client.cancel_task(task.id)


async def test_dual_card_is_read_as_1_0(sdk_url: str) -> None:
    card = await resolve_card(sdk_url)
    assert [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        ("JSONRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
        ("JSONRPC", "0.3"),
    ]
    raw = httpx.get(sdk_url + "/.well-known/agent-card.json").json()
    assert raw["preferredTransport"] == "JSONRPC" and "supportedInterfaces" in raw


@pytest.mark.parametrize(
    ("prefer", "transports", "kind", "version", "path"),
    [
        (("1.0", "0.3"), ("JSONRPC", "HTTP+JSON"), HTTPClient, "1.0", "/rpc"),
        (("0.3",), ("JSONRPC", "HTTP+JSON"), HTTPClient, "0.3", "/rpc"),
        (("1.0", "0.3"), ("HTTP+JSON",), RESTClient, "1.0", ""),
    ],
)
async def test_connect_picks_the_interface(
    sdk_url: str,
    prefer: tuple[str, ...],
    transports: tuple[str, ...],
    kind: Kind,
    version: str,
    path: str,
) -> None:
    client = await connect(sdk_url, prefer=prefer, transports=transports)
    async with client:
        assert type(client) is kind
        assert client.version == version
        assert client.url == sdk_url + path
        reply = await client.send_message(Message.user("hello"))
        assert isinstance(reply, m.Message) and reply.text == "echo: hello"


async def test_rest_without_version_header_is_0_3_for_the_sdk(sdk_url: str) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(sdk_url + "/tasks/x")
    assert response.status_code == 400
    assert isinstance(JSONRPCError.from_http_status(response.json()), VersionNotSupportedError)
