"""gRPC interop with the official a2a-sdk (1.x, ``a2a-sdk[grpc]``), on 127.0.0.1.

* The SDK's gRPC client (``create_client`` with a GRPC interface) against our
  :class:`GrpcServer`: send (blocking, streaming), get, list, cancel,
  subscribe, push-config CRUD, the extended card and a typed error.
* Our :class:`GrpcClient` against the SDK's ``GrpcHandler`` on ``grpc.aio``:
  the same operations.

The SDK's messages come from its own ``lf.a2a.v1`` registration; ours live
in a private descriptor pool, so both load in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

# Import order matters in the SDK (see tests/interop/sdk_vectors.py, quirk 13).
import a2a.server.routes  # noqa: F401  # isort: skip
import grpc
import grpc.aio
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2 as spb
from a2a.utils import errors as sdk_errors

from a2a_models import Message, TaskState
from a2a_models import models as m
from a2a_models.adapters.grpc import GrpcClient, GrpcServer, grpc_target
from a2a_models.client import Reconnect
from a2a_models.errors import TaskNotCancelableError, TaskNotFoundError
from tests.http._server_support import make_card, make_server

pytestmark = pytest.mark.asyncio


def _message(text: str) -> spb.Message:
    return spb.Message(
        message_id=str(uuid.uuid4()), role=spb.ROLE_USER, parts=[spb.Part(text=text)]
    )


def _channel(url: str) -> Any:
    return grpc.aio.insecure_channel(grpc_target(url)[0])


async def _events(stream: AsyncIterator[spb.StreamResponse]) -> list[spb.StreamResponse]:
    return [event async for event in stream]


@contextlib.asynccontextmanager
async def our_server() -> AsyncIterator[tuple[m.AgentCard, Any]]:
    """Our engine on gRPC; its card names the gRPC interface only (and has an extended card)."""
    server, agent = make_server(make_card(extended=True))
    grpc_server = GrpcServer(server)
    await grpc_server.start()
    card = make_card(grpc_server.url, interfaces=[("GRPC", "1.0")], extended=True)
    extended = make_card(grpc_server.url, interfaces=[("GRPC", "1.0")], extended=True)
    import attrs

    extended = attrs.evolve(extended, description="the extended card")
    server.card = card
    server.handler.extended_card = extended
    try:
        yield card, agent
    finally:
        await grpc_server.stop()


async def test_sdk_grpc_client_against_our_server() -> None:
    async with our_server() as (card, agent):
        from google.protobuf import json_format

        from a2a_models import codec

        sdk_card = json_format.ParseDict(codec.to_wire(card, "1.0"), spb.AgentCard())
        config = dict(grpc_channel_factory=_channel, supported_protocol_bindings=["GRPC"])
        streaming = await create_client(sdk_card, ClientConfig(streaming=True, **config))
        blocking = await create_client(sdk_card, ClientConfig(streaming=False, **config))
        try:
            events = await _events(
                streaming.send_message(spb.SendMessageRequest(message=_message("hi")))
            )
            assert [e.WhichOneof("payload") for e in events] == [
                "task",
                "status_update",
                "artifact_update",
                "status_update",
            ]
            assert events[-1].status_update.status.state == spb.TASK_STATE_COMPLETED
            done_id = events[0].task.id

            (reply,) = await _events(
                blocking.send_message(spb.SendMessageRequest(message=_message("echo x")))
            )
            assert reply.message.parts[0].text == "echo x"
            (finished,) = await _events(
                blocking.send_message(spb.SendMessageRequest(message=_message("t")))
            )
            assert finished.task.artifacts[0].parts[0].text == "done: t"

            got = await blocking.get_task(spb.GetTaskRequest(id=done_id))
            assert got.id == done_id and got.status.state == spb.TASK_STATE_COMPLETED
            with pytest.raises(sdk_errors.TaskNotFoundError):
                await blocking.get_task(spb.GetTaskRequest(id="no-such-task"))
            # INVALID_ARGUMENT alone does not say which error: the ErrorInfo does.
            with pytest.raises(sdk_errors.InvalidParamsError, match="history_length"):
                await blocking.get_task(spb.GetTaskRequest(id=done_id, history_length=-1))

            later = spb.SendMessageConfiguration(return_immediately=True)
            (sub,) = await _events(
                blocking.send_message(
                    spb.SendMessageRequest(message=_message("wait"), configuration=later)
                )
            )
            (cancel,) = await _events(
                blocking.send_message(
                    spb.SendMessageRequest(message=_message("wait"), configuration=later)
                )
            )
            listed = await blocking.list_tasks(spb.ListTasksRequest())
            assert {t.id for t in listed.tasks} >= {done_id, sub.task.id, cancel.task.id}

            created = await blocking.create_task_push_notification_config(
                spb.TaskPushNotificationConfig(
                    task_id=sub.task.id, url="https://hooks.example/a2a", token="tok"
                )
            )
            assert created.id and created.url == "https://hooks.example/a2a"
            fetched = await blocking.get_task_push_notification_config(
                spb.GetTaskPushNotificationConfigRequest(task_id=sub.task.id, id=created.id)
            )
            assert fetched.token == "tok"
            configs = await blocking.list_task_push_notification_configs(
                spb.ListTaskPushNotificationConfigsRequest(task_id=sub.task.id)
            )
            assert [c.id for c in configs.configs] == [created.id]
            await blocking.delete_task_push_notification_config(
                spb.DeleteTaskPushNotificationConfigRequest(task_id=sub.task.id, id=created.id)
            )

            canceled = await blocking.cancel_task(spb.CancelTaskRequest(id=cancel.task.id))
            assert canceled.status.state == spb.TASK_STATE_CANCELED
            with pytest.raises(sdk_errors.TaskNotCancelableError):
                await blocking.cancel_task(spb.CancelTaskRequest(id=done_id))

            stream = streaming.subscribe(spb.SubscribeToTaskRequest(id=sub.task.id))
            first = await asyncio.wait_for(stream.__anext__(), 5)
            assert first.task.id == sub.task.id
            agent.gate.set()
            rest = await asyncio.wait_for(_events(stream), 5)
            assert rest[-1].status_update.status.state == spb.TASK_STATE_COMPLETED

            extended = await blocking.get_extended_agent_card(spb.GetExtendedAgentCardRequest())
            assert extended.description == "the extended card"
        finally:
            await streaming.close()
            await blocking.close()


# --------------------------------------------------------------------------- the SDK's server


@contextlib.asynccontextmanager
async def sdk_server() -> AsyncIterator[str]:
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.agent_execution import RequestContext as SDKContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.request_handlers.grpc_handler import GrpcHandler
    from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
    from a2a.types import a2a_pb2_grpc as sdk_grpc

    class Echo(AgentExecutor):
        async def execute(self, context: SDKContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            assert context.task_id is not None and context.context_id is not None
            text = context.get_user_input()
            if text not in ("task", "wait"):
                await event_queue.enqueue_event(
                    spb.Message(
                        message_id=f"reply-{context.message.message_id}",
                        role=spb.ROLE_AGENT,
                        context_id=context.context_id,
                        parts=[spb.Part(text=f"echo: {text}")],
                    )
                )
                return
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            if context.current_task is None:
                await event_queue.enqueue_event(
                    spb.Task(
                        id=context.task_id,
                        context_id=context.context_id,
                        status=spb.TaskStatus(state=spb.TASK_STATE_SUBMITTED),
                        history=[context.message],
                    )
                )
            await updater.start_work()
            if text == "wait":
                await asyncio.sleep(30)
                return
            await asyncio.sleep(0.02)
            await updater.add_artifact([spb.Part(text="result")], name="answer")
            await updater.complete()

        async def cancel(self, context: SDKContext, event_queue: EventQueue) -> None:
            assert context.task_id is not None and context.context_id is not None
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    card = spb.AgentCard(
        name="sdk echo",
        description="the a2a-sdk gRPC server",
        version="1.0.0",
        supported_interfaces=[
            spb.AgentInterface(
                url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version="1.0"
            )
        ],
        capabilities=spb.AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[spb.AgentSkill(id="echo", name="echo", description="echoes", tags=["t"])],
    )
    extended = spb.AgentCard()
    extended.CopyFrom(card)
    extended.description = "the SDK's extended card"
    handler = DefaultRequestHandler(
        agent_executor=Echo(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
        extended_agent_card=extended,
    )
    sdk_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    try:
        yield f"grpc://127.0.0.1:{port}"
    finally:
        await server.stop(0)


async def test_our_grpc_client_against_the_sdk_server() -> None:
    async with sdk_server() as url, GrpcClient(url, timeout=10) as client:
        reply = await client.send_message(Message.user("hi"))
        assert isinstance(reply, m.Message) and reply.text == "echo: hi"
        task = await client.send_message(Message.user("task"))
        assert isinstance(task, m.Task) and task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].parts[0] == m.Part.text("result")
        got = await client.get_task(task.id)
        assert got.id == task.id and got.status.state is TaskState.COMPLETED
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("no-such-task")
        assert info.value.remote

        items = [i async for i in client.send_streaming_message(Message.user("task"))]
        assert isinstance(items[0], m.Task)
        assert any(isinstance(i, m.TaskArtifactUpdateEvent) for i in items)
        assert items[-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]

        listed = await client.list_tasks()
        assert task.id in {t.id for t in listed.tasks}

        waiting = await client.send_message(
            Message.user("wait"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(waiting, m.Task)
        config = await client.create_push_config(
            m.TaskPushNotificationConfig(
                task_id=waiting.id, url="https://hooks.example/x", token="t"
            )
        )
        assert config.id
        assert (await client.get_push_config(waiting.id, config.id)).token == "t"
        assert [c.id for c in (await client.list_push_configs(waiting.id)).configs] == [config.id]
        await client.delete_push_config(waiting.id, config.id)
        assert (await client.list_push_configs(waiting.id)).configs == ()

        stream = client.subscribe(waiting.id)
        first = await anext(stream)
        assert isinstance(first, m.Task) and first.id == waiting.id
        canceled = await client.cancel_task(waiting.id)
        assert canceled.status.state is TaskState.CANCELED
        rest = [i async for i in stream]
        assert rest[-1].status.state is TaskState.CANCELED  # type: ignore[union-attr]
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(task.id)

        card = await client.get_extended_agent_card()
        assert card.description == "the SDK's extended card"


async def test_our_client_resumes_an_sdk_stream_from_a_fresh_task_snapshot() -> None:
    # The SDK's server sends no event ids (and ignores last-event-id): a stream of ours
    # resumed there starts again with the whole Task, as SubscribeToTask does, not an error.
    resume = Reconnect(attempts=1, delay=0.01)
    # Without keep-alive pings the idle limit bounds the silence between events too.
    quiet = {"idle_timeout": 0.3, "keepalive_time": None}
    async with (
        sdk_server() as url,
        GrpcClient(url, timeout=10, reconnect=resume, **quiet) as client,
    ):
        waiting = await client.send_message(
            Message.user("wait"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(waiting, m.Task)
        stream = client.subscribe(waiting.id)
        first = await anext(stream)
        again = await anext(stream)  # 0.3 s of silence: re-subscribed
        assert isinstance(first, m.Task) and isinstance(again, m.Task)
        assert again.id == waiting.id and stream.last_event_id is None
        await client.cancel_task(waiting.id)
        rest = [i async for i in stream]
        assert rest[-1].status.state is TaskState.CANCELED  # type: ignore[union-attr]


async def test_the_sdk_client_reads_our_event_ids_as_unknown_fields() -> None:
    async with our_server() as (card, _agent):
        channel = _channel(card.supported_interfaces[0].url)
        from a2a.types import a2a_pb2_grpc as sdk_grpc

        stub = sdk_grpc.A2AServiceStub(channel)
        request = spb.SendMessageRequest(message=_message("stream"))
        events = await _events(stub.SendStreamingMessage(request))
        await channel.close()
    assert events[-1].status_update.status.state == spb.TASK_STATE_COMPLETED
    # The event id is kept as an unknown field and changes nothing the SDK reads.
    from google.protobuf import unknown_fields

    assert all(len(unknown_fields.UnknownFieldSet(event)) == 1 for event in events)
