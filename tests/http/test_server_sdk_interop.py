"""The official a2a-sdk client against our HTTP server, over real sockets.

The SDK resolves our well-known card, picks the transport and version the
card's interface names (``ClientFactory``: a ``protocolVersion`` of 0.3
selects the ``a2a.compat.v0_3`` transports) and runs every operation:
send (blocking and streaming), get, list (1.0 only), cancel, subscribe and
the four push-config operations, plus a typed error.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _procs import free_port
from _server_support import GateAgent, make_card, make_server

# Import order matters in the SDK (see tests/interop/sdk_vectors.py, quirk 13).
import a2a.server.routes  # noqa: F401  # isort: skip
from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors

from a2a_models.adapters.http import HTTPServer


def _message(text: str) -> pb.Message:
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)])


@pytest.fixture
async def agent_url(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, str, GateAgent]]:
    """Our server on a free port, its card naming exactly one (binding, version) interface."""
    binding, version = request.param
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server, agent = make_server(make_card(url, interfaces=[(binding, version)]))
    async with HTTPServer(server, port=port):
        yield url, binding, agent


async def _client(url: str, binding: str, *, streaming: bool) -> Any:
    config = ClientConfig(streaming=streaming, supported_protocol_bindings=[binding])
    return await create_client(url, config)


async def _events(stream: AsyncIterator[pb.StreamResponse]) -> list[pb.StreamResponse]:
    return [event async for event in stream]


TRANSPORTS = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")]


@pytest.mark.parametrize(
    "agent_url", TRANSPORTS, indirect=True, ids=["jsonrpc-1.0", "rest-1.0", "jsonrpc-0.3"]
)
async def test_sdk_client_runs_every_operation(agent_url: tuple[str, str, GateAgent]) -> None:
    url, binding, agent = agent_url
    streaming = await _client(url, binding, streaming=True)
    blocking = await _client(url, binding, streaming=False)
    v03 = _is_v03(streaming)
    try:
        # Streaming send: the Task, then its updates, in order.
        events = await _events(
            streaming.send_message(pb.SendMessageRequest(message=_message("hi")))
        )
        assert [e.WhichOneof("payload") for e in events] == [
            "task",
            "status_update",
            "artifact_update",
            "status_update",
        ]
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        done_id = events[0].task.id

        # Blocking send: a direct Message reply, and a Task.
        (reply,) = await _events(
            blocking.send_message(pb.SendMessageRequest(message=_message("echo x")))
        )
        assert reply.message.parts[0].text == "echo x"
        (finished,) = await _events(
            blocking.send_message(pb.SendMessageRequest(message=_message("t")))
        )
        assert finished.task.status.state == pb.TASK_STATE_COMPLETED
        assert finished.task.artifacts[0].parts[0].text == "done: t"

        # Get.
        got = await blocking.get_task(pb.GetTaskRequest(id=done_id))
        assert got.id == done_id and got.status.state == pb.TASK_STATE_COMPLETED
        with pytest.raises(sdk_errors.TaskNotFoundError):
            await blocking.get_task(pb.GetTaskRequest(id="no-such-task"))
        # A bad parameter is the SDK's InvalidParamsError with our message, over
        # HTTP+JSON too, where 400 INVALID_ARGUMENT alone does not say which error.
        with pytest.raises(sdk_errors.InvalidParamsError, match="historyLength"):
            await blocking.get_task(pb.GetTaskRequest(id=done_id, history_length=-1))

        # Two tasks left waiting on the agent's gate.
        later = pb.SendMessageConfiguration(return_immediately=True)
        (sub,) = await _events(
            blocking.send_message(
                pb.SendMessageRequest(message=_message("wait"), configuration=later)
            )
        )
        (cancel,) = await _events(
            blocking.send_message(
                pb.SendMessageRequest(message=_message("wait"), configuration=later)
            )
        )
        assert sub.task.status.state == pb.TASK_STATE_WORKING

        # List (1.0 only).
        if not v03:
            listed = await blocking.list_tasks(pb.ListTasksRequest())
            assert {t.id for t in listed.tasks} >= {done_id, sub.task.id, cancel.task.id}

        # Push configs: create, get, list, delete.
        created = await blocking.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(
                task_id=sub.task.id, url="https://hooks.example/a2a", token="tok"
            )
        )
        assert created.id and created.url == "https://hooks.example/a2a"
        fetched = await blocking.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=sub.task.id, id=created.id)
        )
        assert fetched.token == "tok"
        configs = await blocking.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=sub.task.id)
        )
        assert [c.id for c in configs.configs] == [created.id]
        await blocking.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=sub.task.id, id=created.id)
        )

        # Cancel.
        canceled = await blocking.cancel_task(pb.CancelTaskRequest(id=cancel.task.id))
        assert canceled.status.state == pb.TASK_STATE_CANCELED

        # Subscribe: the Task first, then live updates until it completes.
        stream = streaming.subscribe(pb.SubscribeToTaskRequest(id=sub.task.id))
        first = await asyncio.wait_for(stream.__anext__(), 5)
        assert first.task.id == sub.task.id
        agent.gate.set()
        rest = await asyncio.wait_for(_events(stream), 5)
        assert rest[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    finally:
        await streaming.close()
        await blocking.close()


def _is_v03(client: Any) -> bool:
    return "Compat" in type(client._transport).__name__


# The SDK's 0.3 REST transport sends snake_case proto field names
# (MessageToDict(preserving_proto_field_name=True)), which ProtoJSON parsers accept.
@pytest.mark.parametrize("agent_url", [("HTTP+JSON", "0.3")], indirect=True)
async def test_sdk_v03_rest_client(agent_url: tuple[str, str, GateAgent]) -> None:
    url, binding, agent = agent_url
    client = await _client(url, binding, streaming=False)
    try:
        (reply,) = await _events(
            client.send_message(pb.SendMessageRequest(message=_message("echo")))
        )
        assert reply.message.parts[0].text == "echo"

        # Non-blocking: the SDK writes ProtoJSON, where the proto3 bool ``blocking``
        # is left out when false (``"configuration": {}``). The task must come back
        # at once, still working, not after the agent's turn (here: never).
        later = pb.SendMessageConfiguration(return_immediately=True)
        (sub,) = await asyncio.wait_for(
            _events(
                client.send_message(
                    pb.SendMessageRequest(message=_message("wait"), configuration=later)
                )
            ),
            20,
        )
        assert sub.task.status.state == pb.TASK_STATE_WORKING

        # Blocking (``"blocking": true``) still waits for the turn.
        agent.gate.set()
        (done,) = await _events(
            client.send_message(pb.SendMessageRequest(message=_message("wait")))
        )
        assert done.task.status.state == pb.TASK_STATE_COMPLETED
    finally:
        agent.gate.set()
        await client.close()
