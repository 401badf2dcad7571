"""gRPC server and client on the shared engine (in-process ``grpc.aio`` on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from a2a_models import Message
from a2a_models import models as m
from a2a_models.adapters.grpc import SERVICE_NAME, GrpcClient, GrpcServer
from a2a_models.adapters.grpc._pb import a2a_pb2 as pb
from a2a_models.adapters.http import BearerTokenAuthenticator, HTTPClient, RESTClient
from a2a_models.client import ClientCall, ClientInterceptor, ClientTimeoutError, Reconnect
from a2a_models.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    TransportError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from tests.http._server_support import EXT_URI, make_card, make_server, running

pytestmark = pytest.mark.asyncio


@contextlib.asynccontextmanager
async def serving(
    server: Any = None, **kwargs: Any
) -> AsyncIterator[tuple[GrpcServer, GrpcClient]]:
    if server is None:
        server, _ = make_server()
    grpc_server = GrpcServer(server, **kwargs)
    await grpc_server.start()
    try:
        async with GrpcClient(grpc_server.url, timeout=10) as client:
            yield grpc_server, client
    finally:
        await grpc_server.stop()


async def test_send_get_list_cancel() -> None:
    async with serving() as (_, client):
        task = await client.send_message(Message.user("hello"))
        assert isinstance(task, m.Task) and task.state is m.TaskState.COMPLETED
        assert task.artifacts[0].parts[0].text == "done: hello"  # type: ignore[union-attr]
        got = await client.get_task(task.id, history_length=0)
        assert got.id == task.id and got.history == ()
        page = await client.list_tasks()
        assert [t.id for t in page.tasks] == [task.id]
        reply = await client.send_message(Message.user("echo hi"))
        assert isinstance(reply, m.Message) and reply.text == "echo hi"
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(task.id)
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("nope")
        assert info.value.remote


async def test_streaming_and_subscribe() -> None:
    server, agent = make_server()
    async with serving(server) as (_, client):
        items = [i async for i in client.send_streaming_message(Message.user("stream"))]
        assert isinstance(items[0], m.Task)
        assert isinstance(items[-1], m.TaskStatusUpdateEvent)
        assert items[-1].status.state is m.TaskState.COMPLETED
        assert any(isinstance(i, m.TaskArtifactUpdateEvent) for i in items)
        # subscribe to a running task, then let it finish
        task = await client.send_message(
            Message.user("wait"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        await asyncio.wait_for(agent.waiting.wait(), 5)
        sub = client.subscribe(task.id)
        first = await anext(sub)
        assert isinstance(first, m.Task) and first.id == task.id
        agent.gate.set()
        rest = [i async for i in sub]
        assert rest[-1].status.state is m.TaskState.COMPLETED  # type: ignore[union-attr]
        with pytest.raises(UnsupportedOperationError):
            # terminal task: nothing to subscribe to
            [i async for i in client.subscribe(task.id)]


async def test_push_config_crud_and_extended_card() -> None:
    async with serving() as (_, client):
        task = await client.send_message(Message.user("x"))
        config = await client.create_push_config(
            m.TaskPushNotificationConfig(task_id=task.id, url="https://hook.example/x", token="t")
        )
        assert config.id and config.task_id == task.id
        assert await client.get_push_config(task.id, config.id) == config
        listed = await client.list_push_configs(task.id)
        assert listed.configs == (config,)
        await client.delete_push_config(task.id, config.id)
        assert (await client.list_push_configs(task.id)).configs == ()
        with pytest.raises(UnsupportedOperationError):
            await client.get_extended_agent_card()


async def test_one_engine_three_bindings() -> None:
    server, _ = make_server()
    async with running(server) as (http, _), serving(server) as (_, client):
        over_grpc = await client.send_message(Message.user("a"))
        async with HTTPClient(http.url) as jsonrpc, RESTClient(http.url) as rest:
            assert (await jsonrpc.get_task(over_grpc.id)).id == over_grpc.id
            assert (await rest.get_task(over_grpc.id)).id == over_grpc.id
            over_rest = await rest.send_message(Message.user("b"))
        assert (await client.get_task(over_rest.id)).artifacts == over_rest.artifacts  # type: ignore[union-attr]


async def test_status_codes_and_error_info_are_spec_exact() -> None:
    async with serving() as (gs, _):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{gs.port}") as channel:
            get = channel.unary_unary(f"/{SERVICE_NAME}/GetTask")
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await get(
                    pb.GetTaskRequest(id="missing").SerializeToString(),
                    metadata=(("a2a-version", "1.0"),),
                )
            err = info.value
            assert err.code() is grpc.StatusCode.NOT_FOUND
            (raw,) = [v for k, v in err.trailing_metadata() if k == "grpc-status-details-bin"]
            status = status_pb2.Status.FromString(raw)
            assert status.code == grpc.StatusCode.NOT_FOUND.value[0]
            infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
            assert len(infos) == 1
            detail = error_details_pb2.ErrorInfo()
            infos[0].Unpack(detail)
            assert (detail.reason, detail.domain) == ("TASK_NOT_FOUND", "a2a-protocol.org")
            # a request missing a REQUIRED field: INVALID_ARGUMENT naming it
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await get(pb.GetTaskRequest().SerializeToString())
            assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert "$.id" in (info.value.details() or "")
            # garbage bytes
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await get(b"\xff\xff\xff")
            assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            # a 0.3 version on the 1.0 service
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await get(
                    pb.GetTaskRequest(id="x").SerializeToString(),
                    metadata=(("a2a-version", "0.3"),),
                )
            assert info.value.code() is grpc.StatusCode.FAILED_PRECONDITION
            # an unknown method
            nope = channel.unary_unary(f"/{SERVICE_NAME}/Nope")
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await nope(b"")
            assert info.value.code() is grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.parametrize(
    ("method", "request_pb", "field"),
    [
        ("ListTasks", pb.ListTasksRequest(page_size=0), "pageSize"),
        ("ListTasks", pb.ListTasksRequest(page_token="not a token"), "pageToken"),
    ],
)
async def test_a_wrong_field_is_named_in_a_bad_request_detail(
    method: str, request_pb: Any, field: str
) -> None:
    # Spec: validation errors SHOULD carry a google.rpc.BadRequest. These went out as a
    # google.protobuf.Struct {"field": ...}, which no gRPC tooling reads as a violation.
    async with serving() as (gs, _):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{gs.port}") as channel:
            call = channel.unary_unary(f"/{SERVICE_NAME}/{method}")
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call(request_pb.SerializeToString(), metadata=(("a2a-version", "1.0"),))
        assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        (raw,) = [v for k, v in info.value.trailing_metadata() if k == "grpc-status-details-bin"]
        status = status_pb2.Status.FromString(raw)
        wanted = error_details_pb2.BadRequest.DESCRIPTOR
        (packed,) = [d for d in status.details if d.Is(wanted)]
        bad_request = error_details_pb2.BadRequest()
        packed.Unpack(bad_request)
        assert [v.field for v in bad_request.field_violations] == [field]
        assert bad_request.field_violations[0].description == status.message


class _AskFor03(ClientInterceptor):
    async def before(self, call: ClientCall) -> None:
        call.headers["A2A-Version"] = "0.3"


async def test_client_maps_errors_back() -> None:
    async with serving() as (gs, client):
        async with GrpcClient(gs.url, interceptors=[_AskFor03()]) as bad:
            with pytest.raises(VersionNotSupportedError) as info:
                await bad.get_task("x")
            assert info.value.remote and "A2A 1.0 gRPC service" in info.value.message
        with pytest.raises(TaskNotFoundError) as info2:
            await client.cancel_task("missing")
        # the ErrorInfo travels in the error's details, as over HTTP+JSON
        assert any(d.get("reason") == "TASK_NOT_FOUND" for d in info2.value.data)


async def test_extensions_metadata_round_trip() -> None:
    card = make_card(extensions=[m.AgentExtension(uri=EXT_URI)])
    server, _ = make_server(card)
    async with serving(server) as (gs, _):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{gs.port}") as channel:
            send = channel.unary_unary(f"/{SERVICE_NAME}/SendMessage")
            call = send(
                pb.SendMessageRequest(
                    message=pb.Message(
                        message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="echo x")]
                    )
                ).SerializeToString(),
                metadata=(("a2a-extensions", f"{EXT_URI}, https://other/ext"),),
            )
            await call
            initial = dict(await call.initial_metadata())
            assert initial["a2a-extensions"] == EXT_URI


async def test_authentication_and_owner_isolation() -> None:
    server, _ = make_server()
    auth = BearerTokenAuthenticator({"alice-token": "alice", "bob-token": "bob"})
    async with serving(server, authenticator=auth) as (gs, anonymous):
        with pytest.raises(Exception) as info:
            await anonymous.send_message(Message.user("x"))
        assert getattr(info.value, "remote", False)
        assert "Authentication required" in str(info.value)
        async with (
            GrpcClient(gs.url, headers={"Authorization": "Bearer alice-token"}) as alice,
            GrpcClient(gs.url, headers={"Authorization": "Bearer bob-token"}) as bob,
        ):
            task = await alice.send_message(Message.user("mine"))
            assert (await alice.get_task(task.id)).id == task.id
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(task.id)
            assert (await bob.list_tasks()).tasks == ()


async def test_deadline_is_honoured() -> None:
    server, agent = make_server()
    async with serving(server) as (gs, _):
        async with GrpcClient(gs.url, timeout=0.3) as client:
            with pytest.raises(ClientTimeoutError):
                await client.send_message(Message.user("wait"))
        agent.gate.set()


async def test_message_size_limit() -> None:
    async with serving(max_message_bytes=64 * 1024) as (_gs, client):
        big = Message.user("echo " + "x" * 100_000)
        with pytest.raises(Exception) as info:
            await client.send_message(big)
        assert "RESOURCE_EXHAUSTED" in repr(info.value) or "larger than max" in str(info.value)
        small = await client.send_message(Message.user("echo ok"))
        assert isinstance(small, m.Message)


async def test_graceful_shutdown_ends_streams_with_unavailable() -> None:
    server, agent = make_server()
    gs = GrpcServer(server, graceful_timeout=2.0)
    await gs.start()
    async with GrpcClient(gs.url, reconnect=Reconnect(attempts=0)) as client:
        stream = client.send_streaming_message(Message.user("wait"))
        assert isinstance(await anext(stream), m.Task)
        await asyncio.wait_for(agent.waiting.wait(), 5)
        stopping = asyncio.create_task(gs.stop())
        with pytest.raises(Exception) as info:
            async for _ in stream:
                pass
        assert "shutting down" in str(info.value)
        await asyncio.wait_for(stopping, 5)
    agent.gate.set()
    # the port is closed
    async with GrpcClient(f"grpc://127.0.0.1:{gs.port}", timeout=1) as late:
        with pytest.raises(TransportError, match="connect"):
            await late.get_task("x")


def _self_signed() -> tuple[bytes, bytes]:
    """A fresh key and certificate for 127.0.0.1 / localhost (PEM)."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return key_pem, cert.public_bytes(serialization.Encoding.PEM)


async def test_tls() -> None:
    key, cert = _self_signed()
    server, _ = make_server()
    creds = grpc.ssl_server_credentials([(key, cert)])
    async with GrpcServer(server, credentials=creds) as gs:
        assert gs.url.startswith("grpcs://127.0.0.1:")
        trusted = grpc.ssl_channel_credentials(root_certificates=cert)
        async with GrpcClient(gs.url, credentials=trusted, timeout=10) as client:
            reply = await client.send_message(Message.user("echo secure"))
            assert isinstance(reply, m.Message) and reply.text == "echo secure"
        # a client that does not trust the certificate cannot talk to it
        async with GrpcClient(gs.url, timeout=3) as untrusting:
            with pytest.raises(TransportError):
                await untrusting.send_message(Message.user("echo x"))
        # nor can a plaintext one
        async with GrpcClient(f"grpc://127.0.0.1:{gs.port}", timeout=3) as plain:
            with pytest.raises(TransportError):
                await plain.send_message(Message.user("echo x"))


async def test_a_header_grpc_cannot_send_is_named_before_the_call() -> None:
    # gRPC refused them mid-call with a C-level log line and "Failed "execute_batch":
    # (<grpc._cython.cygrpc.SendInitialMetadataOperation object at 0x...>, ...)".
    async with serving() as (_, client):
        for headers, named in (
            ({"Bad Key": "x"}, "header 'bad key' cannot be sent as gRPC metadata"),
            ({"X-Note": "café"}, "the value of header 'x-note' cannot be sent"),
            ({"X-Note": "a\nb"}, "the value of header 'x-note' cannot be sent"),
        ):
            async with GrpcClient(client.url or "", timeout=10, headers=headers) as bad:
                with pytest.raises(ValueError, match=named):
                    await bad.send_message(Message.user("hello"))
                with pytest.raises(ValueError, match=named):
                    await anext(bad.send_streaming_message(Message.user("hello")))
        assert (await client.list_tasks()).tasks == ()  # none of them reached the server
