"""A2A 0.3's gRPC service ``a2a.v1.A2AService`` beside 1.0's on one port (in-process ``grpc.aio``).

* Conversion: every result (and stream item) the 0.3 HTTP+JSON dialect writes is a valid
  0.3 protobuf message that reads back as the same model (hypothesis); requests read
  through the 0.3 REST routes' builders, resource names included.
* The server: both services answer on one port; the 0.3 one runs the 0.3 semantics
  (``final`` on the last status update), resumes with ``last-event-id``, refuses another
  version and names its errors (``TaskNotFoundError: ...``) with the 1.0 status codes
  and details.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2
from hypothesis import HealthCheck, given, settings

from a2a_models import codec
from a2a_models import models as m
from a2a_models.adapters.grpc import SERVICE_NAME, GrpcClient, GrpcServer
from a2a_models.adapters.grpc._events import event_id_of
from a2a_models.adapters.grpc._pb import a2a_v03_pb2 as pb
from a2a_models.adapters.grpc._status import error_from_rpc
from a2a_models.adapters.grpc._v03 import (
    BY_OPERATION,
    RPCS,
    SERVICE_NAME_V03,
    request_message,
    result_of,
)
from a2a_models.errors import (
    EncodeError,
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_models.protocol import METHODS, V0_3, encode_rest_result
from a2a_models.testing import strategies as a2a_st
from tests.http._server_support import make_server

SETTINGS = settings(max_examples=30, suppress_health_check=list(HealthCheck), deadline=None)


def _enum_zero(value: Any) -> bool:
    """A state or role at 0 (UNSPECIFIED): proto3 cannot tell it from absent."""
    text = codec.dumps(codec.to_wire(value, "0.3-http", lossy=True)).decode()
    return "_UNSPECIFIED" in text


RESULTS = ["SendMessage", "SendStreamingMessage", "GetTask", "GetTaskPushNotificationConfig"]


@pytest.mark.parametrize(
    "operation", [*RESULTS, "ListTaskPushNotificationConfigs", "GetExtendedAgentCard"]
)
def test_results_are_valid_v03_messages_that_read_back(operation: str) -> None:
    rpc = BY_OPERATION[operation]
    spec = METHODS[operation]

    @SETTINGS
    @given(a2a_st.strategy_for(spec.result_type, "0.3-http"))
    def check(result: Any) -> None:
        if _enum_zero(result):
            return
        try:
            wire = encode_rest_result(spec, result, V0_3)
        except EncodeError:  # what 0.3 cannot express at all
            return
        try:
            raw = rpc.encode_result(result)
        except EncodeError as exc:  # only an integer a double cannot hold
            assert "no exact protobuf Struct number" in exc.problem
            return
        back = result_of(rpc, rpc.response.FromString(raw))
        # The same as what the REST dialect reads of its own JSON (numbers: integral
        # doubles as int, as 1.0's gRPC reads them).
        assert back == codec.decode(spec.result_type, codec.dumps(_integral(wire)), "0.3-http")

    check()


def _integral(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    if isinstance(value, float) and value.is_integer() and value:
        return int(value)
    return value


def test_requests_read_through_the_rest_routes() -> None:
    get = BY_OPERATION["GetTask"]
    raw = pb.GetTaskRequest(name="tasks/t-1", history_length=2).SerializeToString()
    assert get.decode_request(raw) == m.GetTaskRequest(id="t-1", history_length=2)
    # proto3: 0 is unset
    raw = pb.GetTaskRequest(name="tasks/t-1").SerializeToString()
    assert get.decode_request(raw) == m.GetTaskRequest(id="t-1")
    with pytest.raises(InvalidParamsError) as info:
        get.decode_request(pb.GetTaskRequest(name="t-1").SerializeToString())
    assert info.value.message == "Invalid request: name: expected tasks/{id}, got 't-1'"
    create = BY_OPERATION["CreateTaskPushNotificationConfig"]
    config = pb.TaskPushNotificationConfig(
        name="tasks/t-1/pushNotificationConfigs/c1",
        push_notification_config=pb.PushNotificationConfig(id="c1", url="https://h.example/x"),
    )
    for parent in ("tasks/t-1", "task/t-1/pushNotificationConfigs"):  # the SDK's, the proto's
        raw = pb.CreateTaskPushNotificationConfigRequest(
            parent=parent, config_id="c1", config=config
        ).SerializeToString()
        assert create.decode_request(raw) == m.TaskPushNotificationConfig(
            task_id="t-1", id="c1", url="https://h.example/x"
        )
    delete = BY_OPERATION["DeleteTaskPushNotificationConfig"]
    raw = pb.DeleteTaskPushNotificationConfigRequest(
        name="tasks/t-1/pushNotificationConfigs/c1"
    ).SerializeToString()
    assert delete.decode_request(raw) == m.DeleteTaskPushNotificationConfigRequest(
        task_id="t-1", id="c1"
    )
    with pytest.raises(InvalidParamsError):
        BY_OPERATION["SendMessage"].decode_request(b"\xff\xff")
    assert {rpc.name for rpc in RPCS} == set(
        pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name
    )


def test_struct_numbers() -> None:
    send = BY_OPERATION["SendMessage"]
    message = m.Message.agent("x", metadata={"n": 1, "f": 1.5, "big": 2**53})
    data = send.response.FromString(send.encode_result(message))
    assert result_of(send, data).metadata == {"n": 1, "f": 1.5, "big": 2**53}
    with pytest.raises(EncodeError) as info:
        send.encode_result(m.Message.agent("x", metadata={"huge": 2**53 + 1}))
    assert info.value.path == "$.message.metadata.huge"


# ------------------------------------------------------------------ the server


@contextlib.asynccontextmanager
async def serving(**kwargs: Any) -> AsyncIterator[tuple[Any, grpc.aio.Channel]]:
    server, agent = make_server(**kwargs)
    grpc_server = GrpcServer(server)
    await grpc_server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_server.port}") as channel:
            yield (grpc_server, agent), channel
    finally:
        await grpc_server.stop()


def _call(channel: grpc.aio.Channel, rpc: str, stream: bool = False) -> Any:
    rpcs = {r.name: r for r in RPCS}
    make = channel.unary_stream if stream else channel.unary_unary
    return make(
        f"/{SERVICE_NAME_V03}/{rpc}",
        request_serializer=lambda msg: msg.SerializeToString(),
        response_deserializer=rpcs[rpc].response.FromString,
    )


def _message(text: str, **kwargs: Any) -> pb.Message:
    return pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, content=[pb.Part(text=text)], **kwargs
    )


async def test_both_services_on_one_port_one_engine() -> None:
    async with serving() as ((grpc_server, _), channel):
        send = _call(channel, "SendMessage")
        configuration = pb.SendMessageConfiguration(blocking=True)
        reply = await send(
            pb.SendMessageRequest(request=_message("hi"), configuration=configuration)
        )
        assert reply.task.status.state == pb.TASK_STATE_COMPLETED
        assert reply.task.artifacts[0].parts[0].text == "done: hi"
        # The task is the 1.0 service's too (one engine, one store).
        async with GrpcClient(grpc_server.url, timeout=10) as client:
            assert (await client.get_task(reply.task.id)).id == reply.task.id
        get = _call(channel, "GetTask")
        got = await get(pb.GetTaskRequest(name=f"tasks/{reply.task.id}", history_length=1))
        assert got.id == reply.task.id and len(got.history) == 1
        echo = await send(pb.SendMessageRequest(request=_message("echo x")))
        assert echo.msg.content[0].text == "echo x"


async def test_streams_end_with_final_and_resume_after_an_event_id() -> None:
    async with serving() as ((_, agent), channel):
        stream = _call(channel, "SendStreamingMessage", stream=True)
        events = [e async for e in stream(pb.SendMessageRequest(request=_message("go")))]
        kinds = [e.WhichOneof("payload") for e in events]
        assert kinds == ["task", "status_update", "artifact_update", "status_update"]
        # 0.3: the last status update says it is the last
        assert [e.status_update.final for e in events if e.HasField("status_update")] == [
            False,
            True,
        ]
        ids = [event_id_of(e) for e in events]
        assert all(ids) and len(set(ids)) == len(ids)
        # Resuming a running task after its first event: the rest, no duplicate.
        send = _call(channel, "SendMessage")
        configuration = pb.SendMessageConfiguration(blocking=False)
        request = pb.SendMessageRequest(request=_message("wait"), configuration=configuration)
        task = (await send(request)).task
        await asyncio.wait_for(agent.waiting.wait(), 5)
        subscribe = _call(channel, "TaskSubscription", stream=True)
        first = subscribe(pb.TaskSubscriptionRequest(name=f"tasks/{task.id}"))
        opening = await first.read()
        assert opening.task.id == task.id
        first.cancel()
        agent.gate.set()
        resumed = subscribe(
            pb.TaskSubscriptionRequest(name=f"tasks/{task.id}"),
            metadata=(("last-event-id", event_id_of(opening)),),
        )
        rest = [e async for e in resumed]
        # What came after the opening snapshot, each once (it may already show "working").
        assert [e.WhichOneof("payload") for e in rest][-2:] == ["artifact_update", "status_update"]
        assert all(int(event_id_of(e)) > int(event_id_of(opening)) for e in rest)
        assert len({event_id_of(e) for e in rest}) == len(rest)
        assert rest[-1].status_update.status.state == pb.TASK_STATE_COMPLETED


async def test_errors_name_the_error_with_the_10_status_and_details() -> None:
    async with serving() as (_, channel):
        get = _call(channel, "GetTask")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await get(pb.GetTaskRequest(name="tasks/nope"))
        assert info.value.code() is grpc.StatusCode.NOT_FOUND
        assert info.value.details() == "TaskNotFoundError: task 'nope' not found"
        trailer = dict(info.value.trailing_metadata())["grpc-status-details-bin"]
        detail = status_pb2.Status.FromString(trailer).details[0]
        error_info = error_details_pb2.ErrorInfo()
        assert detail.Unpack(error_info) and error_info.reason == "TASK_NOT_FOUND"
        # Another version than the service's is refused, naming the fix.
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await get(pb.GetTaskRequest(name="tasks/nope"), metadata=(("a2a-version", "1.0"),))
        assert info.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert info.value.details() == (
            "VersionNotSupportedError: a2a.v1.A2AService is the A2A 0.3 gRPC service but the "
            "call asked for A2A 1.0: send 'a2a-version: 0.3' (or none)"
        )
        # ...and the 1.0 service's names stay bare.
        get10 = channel.unary_unary(f"/{SERVICE_NAME}/GetTask")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await get10(b"\x12\x04nope")  # lf.a2a.v1.GetTaskRequest.id is field 2
        assert info.value.details() == "task 'nope' not found"


async def test_a_server_without_03_refuses_the_03_service() -> None:
    async with serving(supported_versions=("1.0",)) as (_, channel):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await _call(channel, "GetAgentCard")(pb.GetAgentCardRequest())
        assert info.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert "does not serve A2A 0.3" in (info.value.details() or "")


async def test_push_configs_and_card() -> None:
    async with serving() as (_, channel):
        send = _call(channel, "SendMessage")
        task = (await send(pb.SendMessageRequest(request=_message("x")))).task
        create = _call(channel, "CreateTaskPushNotificationConfig")
        name = f"tasks/{task.id}/pushNotificationConfigs/c1"
        config = pb.TaskPushNotificationConfig(
            name=name,
            push_notification_config=pb.PushNotificationConfig(
                id="c1", url="https://hook.example/x", token="t"
            ),
        )
        made = await create(
            pb.CreateTaskPushNotificationConfigRequest(
                parent=f"tasks/{task.id}", config_id="c1", config=config
            )
        )
        assert json_format.MessageToDict(made) == json_format.MessageToDict(config)
        listed = await _call(channel, "ListTaskPushNotificationConfig")(
            pb.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}")
        )
        assert [c.name for c in listed.configs] == [name]
        got = await _call(channel, "GetTaskPushNotificationConfig")(
            pb.GetTaskPushNotificationConfigRequest(name=name)
        )
        assert got.push_notification_config.url == "https://hook.example/x"
        await _call(channel, "DeleteTaskPushNotificationConfig")(
            pb.DeleteTaskPushNotificationConfigRequest(name=name)
        )
        listed = await _call(channel, "ListTaskPushNotificationConfig")(
            pb.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}")
        )
        assert list(listed.configs) == []
        # GetAgentCard is 0.3's agent/getAuthenticatedExtendedCard, as over REST (/v1/card).
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await _call(channel, "GetAgentCard")(pb.GetAgentCardRequest())
        assert (info.value.details() or "").startswith("UnsupportedOperationError: ")


def test_the_client_side_request_messages_read_back() -> None:
    # request_message (the client's half) and decode_request (the server's) agree.
    params = {
        "SendMessage": m.SendMessageRequest(
            message=m.Message.user("hi"),
            configuration=m.SendMessageConfiguration(history_length=2, return_immediately=False),
            metadata={"n": 1},
        ),
        "GetTask": m.GetTaskRequest(id="t-1", history_length=3),
        "CancelTask": m.CancelTaskRequest(id="t-1"),
        "SubscribeToTask": m.SubscribeToTaskRequest(id="t-1"),
        "CreateTaskPushNotificationConfig": m.TaskPushNotificationConfig(
            task_id="t-1", id="c1", url="https://h.example/x", token="tok"
        ),
        "GetTaskPushNotificationConfig": m.GetTaskPushNotificationConfigRequest(
            task_id="t-1", id="c1"
        ),
        "DeleteTaskPushNotificationConfig": m.DeleteTaskPushNotificationConfigRequest(
            task_id="t-1", id="c1"
        ),
        "ListTaskPushNotificationConfigs": m.ListTaskPushNotificationConfigsRequest(task_id="t-1"),
        "GetExtendedAgentCard": m.GetExtendedAgentCardRequest(),
    }
    for operation, sent in params.items():
        rpc = BY_OPERATION[operation]
        raw = request_message(rpc, sent).SerializeToString()
        assert rpc.decode_request(raw) == sent, operation
    with pytest.raises(ValueError):
        request_message(BY_OPERATION["GetTask"], m.GetTaskRequest(id="a/b"))


# ------------------------------------------------------------------ the client


async def test_the_03_client_runs_every_operation() -> None:
    # Before: GrpcClient(version="0.3") raised ValueError ("A2A 1.0 only").
    async with serving() as ((grpc_server, agent), _):
        async with GrpcClient(grpc_server.url, version="0.3", timeout=10) as client:
            task = await client.send_message(m.Message.user("hi"))
            assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
            assert task.artifacts[0].parts[0].text == "done: hi"
            echo = await client.send_message(m.Message.user("echo x"))
            assert isinstance(echo, m.Message) and echo.parts[0].text == "echo x"
            events = [e async for e in client.send_streaming_message(m.Message.user("go"))]
            assert [type(e).__name__ for e in events] == [
                "Task",
                "TaskStatusUpdateEvent",
                "TaskArtifactUpdateEvent",
                "TaskStatusUpdateEvent",
            ]
            got = await client.get_task(task.id, history_length=1)
            assert got.id == task.id and len(got.history) == 1
            config = m.TaskPushNotificationConfig(
                task_id=task.id, id="c1", url="https://hook.example/x", token="t"
            )
            assert (await client.create_push_config(config)).url == "https://hook.example/x"
            assert (await client.get_push_config(task.id, "c1")).id == "c1"
            assert [c.id for c in (await client.list_push_configs(task.id)).configs] == ["c1"]
            await client.delete_push_config(task.id, "c1")
            assert (await client.list_push_configs(task.id)).configs == ()
            # Errors: the 0.3 name is taken off the message; the class is the ErrorInfo's.
            with pytest.raises(TaskNotFoundError) as missing:
                await client.get_task("nope")
            assert missing.value.message == "task 'nope' not found"
            with pytest.raises(UnsupportedOperationError) as card:
                await client.get_extended_agent_card()
            assert not card.value.message.startswith("UnsupportedOperationError")
            # 0.3 has no ListTasks RPC: refused here, not sent.
            with pytest.raises(UnsupportedOperationError, match=r"ListTasks is A2A 1\.0 only"):
                await client.list_tasks()
            # Cancel and resume: a running task's stream after its first event id.
            running = await client.send_message(
                m.Message.user("wait"),
                configuration=m.SendMessageConfiguration(return_immediately=True),
            )
            assert isinstance(running, m.Task)
            await asyncio.wait_for(agent.waiting.wait(), 5)
            first = client.subscribe(running.id)
            opening = await anext(first)
            assert isinstance(opening, m.Task) and first.last_event_id is not None
            await first.aclose()
            agent.gate.set()
            rest = [e async for e in client.subscribe(running.id, resume_after=first.last_event_id)]
            # What came after the opening Task (a new subscription starts with the Task).
            assert [type(e).__name__ for e in rest] == [
                "TaskArtifactUpdateEvent",
                "TaskStatusUpdateEvent",
            ]
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(running.id)


def _rpc_error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details)


def test_a_named_status_without_details_is_its_error() -> None:
    # The a2a-sdk's 0.3 gRPC servers send "Name: message" and no google.rpc.Status.
    error = error_from_rpc(
        _rpc_error(grpc.StatusCode.UNIMPLEMENTED, "TaskNotCancelableError: done"), named=True
    )
    assert type(error) is TaskNotCancelableError and error.message == "done"
    old = error_from_rpc(_rpc_error(grpc.StatusCode.UNIMPLEMENTED, "TaskNotCancelableError: x"))
    assert type(old) is not TaskNotCancelableError  # 1.0 reads no names
    other = error_from_rpc(_rpc_error(grpc.StatusCode.NOT_FOUND, "NoSuchError: x"), named=True)
    assert type(other) is TaskNotFoundError and other.message == "NoSuchError: x"  # by status
    old_name = error_from_rpc(
        _rpc_error(
            grpc.StatusCode.FAILED_PRECONDITION, "AuthenticatedExtendedCardNotConfiguredError: no"
        ),
        named=True,
    )
    assert type(old_name) is ExtendedAgentCardNotConfiguredError
