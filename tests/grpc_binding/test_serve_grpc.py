"""``a2a-models serve --grpc-port``: gRPC beside HTTP from one process and store (real processes)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_models import Message
from a2a_models import models as m
from a2a_models.adapters.grpc import GrpcClient
from a2a_models.adapters.http import HTTPClient, RESTClient
from a2a_models.adapters.http._discovery import connect
from a2a_models.client import BrokenStreamError
from a2a_models.errors import AuthenticationError, JSONRPCError, TransportError
from a2a_models.models.rules import MAX_JSON_DEPTH
from tests.test_serve import Served, cli
from tests.test_serve import serve as serve  # the fixture
from tests.test_serve import user_agent_dir as user_agent_dir  # the fixture

pytestmark = pytest.mark.asyncio


def grpc_url_of(served: Served, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in served.output:
            found = re.search(r"a2a-models: gRPC at (\S+)", line)
            if found:
                return found.group(1)
        time.sleep(0.05)
    pytest.fail("serve did not announce its gRPC endpoint\n" + served.log())


async def test_grpc_beside_http_one_store(serve: Any, tmp_path: Path) -> None:
    served = serve("--grpc-port", "0", "--store", f"sqlite:///{tmp_path / 'tasks.db'}")
    grpc_url = grpc_url_of(served)
    assert grpc_url.startswith("grpc://127.0.0.1:")
    async with httpx.AsyncClient() as http:
        card = (await http.get(served.root + "/.well-known/agent-card.json")).json()
    grpc_interfaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    # One port, both services; the 0.3 URL is host:port, what 0.3 clients dial as it is.
    assert grpc_interfaces == [
        {"url": grpc_url, "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {
            "url": grpc_url.removeprefix("grpc://"),
            "protocolBinding": "GRPC",
            "protocolVersion": "0.3",
        },
    ]

    async with GrpcClient(grpc_url, timeout=10) as client:
        task = await client.send_message(Message.user("task"))
        assert isinstance(task, m.Task)
        async with HTTPClient(served.url) as jsonrpc:
            seen = await jsonrpc.get_task(task.id)
            assert seen.id == task.id and seen.status.state is task.status.state
            over_http = await jsonrpc.send_message(Message.user("task"))
        assert isinstance(over_http, m.Task)
        assert (await client.get_task(over_http.id)).id == over_http.id
        items = [i async for i in client.send_streaming_message(Message.user("task"))]
        assert isinstance(items[0], m.Task) and len(items) > 1

    assert served.stop(signal.SIGTERM) == 0, served.log()
    assert "a2a-models: stopped" in served.log()


async def test_cli_send_and_card_over_grpc(serve: Any) -> None:
    served = serve("--grpc-port", "0", "--store", "memory:")
    grpc_url = grpc_url_of(served)
    # through the card: --transport grpc picks the GRPC interface
    done = cli("send", served.url, "hello", "--transport", "grpc", "--json", "--timeout", "10")
    assert done.returncode == 0, done.stderr + served.log()
    assert '"task"' in done.stdout or '"message"' in done.stdout
    # straight to the endpoint
    done = cli("send", grpc_url, "again", "--transport", "grpc", "--no-card", "--timeout", "10")
    assert done.returncode == 0, done.stderr + served.log()
    # the card over gRPC is the extended card: the demo agent has none, and says so
    done = cli("card", grpc_url, "--transport", "grpc", "--timeout", "10")
    assert done.returncode != 0
    assert "extended" in done.stderr.lower()


async def test_discovery_prefers_grpc_when_the_card_does(serve: Any) -> None:
    served = serve("--grpc-port", "0", "--store", "memory:")
    grpc_url = grpc_url_of(served)
    async with httpx.AsyncClient() as http:
        raw = (await http.get(served.root + "/.well-known/agent-card.json")).json()
    import attrs

    from a2a_models.adapters.http._discovery import decode_card

    card = decode_card(raw)
    grpc_first = attrs.evolve(
        card,
        supported_interfaces=sorted(
            card.supported_interfaces, key=lambda i: i.protocol_binding != "GRPC"
        ),
    )
    client = await connect(grpc_first, timeout=10)
    async with client:
        assert isinstance(client, GrpcClient) and client.url == grpc_url
        assert isinstance(await client.send_message(Message.user("hi")), m.Task | m.Message)
    # the served card lists gRPC last: the HTTP interfaces still win there
    client = await connect(served.url, timeout=10)
    async with client:
        assert not isinstance(client, GrpcClient)


async def test_busy_grpc_port_is_a_clean_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = Served(["--grpc-port", str(port), "--store", "memory:"], cwd=tmp_path)
        code = proc.wait(20)
        if code is None:
            proc.kill()
        assert code == 1, proc.log()
        assert "cannot serve gRPC" in proc.log()


async def test_auth_token_protects_grpc(serve: Any) -> None:
    served = serve("--grpc-port", "0", "--store", "memory:", "--auth-token", "s3cret")
    grpc_url = grpc_url_of(served)
    async with GrpcClient(grpc_url, timeout=10) as anonymous:
        with pytest.raises(AuthenticationError, match="Authentication required") as refused:
            await anonymous.send_message(Message.user("task"))
        assert refused.value.remote
    async with GrpcClient(grpc_url, timeout=10, headers={"Authorization": "Bearer nope"}) as bad:
        with pytest.raises(AuthenticationError, match="Invalid bearer token"):
            await bad.send_message(Message.user("task"))
    async with GrpcClient(grpc_url, timeout=10, headers={"Authorization": "Bearer s3cret"}) as ok:
        task = await ok.send_message(Message.user("task"))
        assert isinstance(task, m.Task)
        # the same owner over HTTP sees it
        async with HTTPClient(served.url, headers={"Authorization": "Bearer s3cret"}) as http:
            assert (await http.get_task(task.id)).id == task.id


async def test_health_needs_no_token_and_says_not_serving_from_sigterm_on(serve: Any) -> None:
    # grpc.health.v1.Health on the gRPC port, as /healthz and /readyz on HTTP: no token,
    # and a stop starts by telling a watching load balancer NOT_SERVING.
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    served = serve("--grpc-port", "0", "--store", "memory:", "--auth-token", "s3cret")
    target = grpc_url_of(served).removeprefix("grpc://")
    serving = health_pb2.HealthCheckResponse.SERVING
    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        names = ("", "lf.a2a.v1.A2AService", "a2a.v1.A2AService")
        checks = [await stub.Check(health_pb2.HealthCheckRequest(service=n)) for n in names]
        assert [c.status for c in checks] == [serving] * 3
        get_task = channel.unary_unary("/lf.a2a.v1.A2AService/GetTask")
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await get_task(b"", timeout=10)
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
    # The blocking client's iterator yields every message that came before the status
    # (grpc.aio's read() raises the status once it came, however many were unread).
    with grpc.insecure_channel(target) as blocking:
        watch = health_pb2_grpc.HealthStub(blocking).Watch(health_pb2.HealthCheckRequest())
        assert next(watch).status == serving
        served.proc.send_signal(signal.SIGTERM)
        told = await asyncio.to_thread(next, watch)
        assert told.status == health_pb2.HealthCheckResponse.NOT_SERVING
        # Then the stop ends the watch (gRPC's graceful timeout did not have to cut it off).
        with pytest.raises(grpc.RpcError) as ended:
            await asyncio.to_thread(next, watch)
        assert ended.value.code() is grpc.StatusCode.UNAVAILABLE
        assert ended.value.details() == "the server is shutting down: watch again elsewhere"
    assert served.wait(20) == 0, served.log()
    assert "a2a-models: stopped" in served.log()


@pytest.mark.parametrize("client_class", [HTTPClient, RESTClient])
async def test_a_refused_caller_gets_an_authentication_error_over_http(
    serve: Any, client_class: Any
) -> None:
    # Over every binding the same class (it was a bare -32000 over JSON-RPC and an
    # InternalError over HTTP+JSON and gRPC: the agent's fault, by its name).
    served = serve("--store", "memory:", "--auth-token", "s3cret")
    async with client_class(served.url, timeout=10) as anonymous:
        with pytest.raises(AuthenticationError, match="Authentication required") as refused:
            await anonymous.get_task("t")
        assert refused.value.challenges == ('Bearer realm="a2a"',)
        with pytest.raises(AuthenticationError):
            async for _ in anonymous.send_streaming_message(Message.user("task")):
                pass
    async with client_class(served.url, timeout=10, headers={"Authorization": "Bearer x"}) as bad:
        with pytest.raises(AuthenticationError, match="Invalid bearer token"):
            await bad.send_message(Message.user("task"))


async def test_conformance_cli_runs_the_grpc_checks(serve: Any) -> None:
    served = serve("--agent", "conformance", "--grpc-port", "0", "--store", "memory:")
    grpc_url_of(served)
    done = cli("conformance", served.url, "--transport", "grpc", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr + served.log()
    for check in (
        "grpc.service-methods",
        "grpc.error-info",
        "grpc.streaming",
        "binding.equivalence",
    ):
        assert re.search(rf"PASS\s+MUST\s+{re.escape(check)}\[1\.0-grpc\]", done.stdout), (
            done.stdout
        )
    assert "gRPC = jsonrpc = rest" in done.stdout


async def test_sigterm_answers_a_blocking_grpc_send_message_with_its_failed_task(
    serve: Any, user_agent_dir: Path
) -> None:
    """A blocking gRPC SendMessage in flight at SIGTERM gets its task, failed by the
    stop, instead of waiting for the graceful timeout and being cancelled."""
    served = serve(
        "--grpc-port",
        "0",
        "--store",
        "memory:",
        "--agent",
        "my_agent:UserAgent",
        pythonpath=user_agent_dir,
    )
    async with asyncio.timeout(30), GrpcClient(grpc_url_of(served), timeout=20) as client:
        blocking = asyncio.create_task(client.send_message(Message.user("slow")))
        while not (await client.list_tasks()).tasks:
            await asyncio.sleep(0.05)
        served.proc.send_signal(signal.SIGTERM)
        task = await blocking
    assert isinstance(task, m.Task)
    assert task.status.state is m.TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.text == "The server stopped before the task finished."
    assert served.wait() == 0, served.log()
    assert "Traceback" not in served.log(), served.log()


async def test_a_killed_server_is_a_transport_error_not_an_agent_answer(
    serve: Any, user_agent_dir: Path
) -> None:
    """SIGKILL mid-stream: gRPC's UNAVAILABLE (no ErrorInfo: the agent said nothing) was
    raised as the agent's InternalError ("the agent answered: Stream removed"); it is a
    TransportError, a ConnectionError, as the HTTP clients raise."""
    served = serve(
        "--grpc-port",
        "0",
        "--store",
        "memory:",
        "--agent",
        "my_agent:UserAgent",
        pythonpath=user_agent_dir,
    )
    url = grpc_url_of(served)
    async with asyncio.timeout(30), GrpcClient(url, timeout=20) as client:
        stream = client.send_streaming_message(Message.user("slow"))
        assert isinstance(await anext(stream), m.Task)
        served.proc.send_signal(signal.SIGKILL)
        with pytest.raises(TransportError) as broken:
            async for _ in stream:
                pass
        with pytest.raises(TransportError) as refused:
            await client.get_task("any")
    for error in (broken.value, refused.value):
        assert isinstance(error, ConnectionError) and not isinstance(error, JSONRPCError)
    assert str(refused.value).startswith(f"the connection to {url} failed: ")
    # The stream was resumed (the server stayed down): it says so.
    assert isinstance(broken.value, BrokenStreamError)
    assert str(broken.value).startswith(
        f"the stream broke and resuming it failed: the connection to {url} failed: "
    )
    done = cli("get", url, "any", "--transport", "grpc", "--no-card")
    assert done.returncode == 1
    assert done.stderr.startswith(f"a2a-models get: error: the connection to {url} failed: ")
    assert "the agent answered" not in done.stderr


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


async def test_free_form_values_are_taken_as_deep_as_every_binding_carries(serve: Any) -> None:
    # Deeper ones were taken, then failed where the call stack was deeper: 1,000
    # levels of metadata hung the request while recording the task was retried for
    # minutes; a data part 40 levels deep made a task no gRPC client could read.
    served = serve("--grpc-port", "0", "--store", "memory:")
    grpc_url = grpc_url_of(served)

    def send(data_depth: int, metadata_depth: int) -> dict[str, Any]:
        message = {
            "messageId": f"m-{time.monotonic_ns()}",
            "role": "ROLE_USER",
            "parts": [{"text": "task"}, {"data": "DATA"}],
            "metadata": "METADATA",
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        text = json.dumps(body)  # the deep values as text: json.dumps stops at ~1000 levels
        for marker, depth in (("DATA", data_depth), ("METADATA", metadata_depth)):
            text = text.replace(f'"{marker}"', '{"a":' * depth + '"bottom"' + "}" * depth)
        headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
        reply = httpx.post(served.url, content=text, headers=headers, timeout=10)
        return dict(reply.json())

    deepest = send(MAX_JSON_DEPTH, MAX_JSON_DEPTH)
    task_id = deepest["result"]["task"]["id"]
    async with GrpcClient(grpc_url, timeout=10) as client:
        task = await client.get_task(task_id)
    sent = task.history[0]
    assert sent.parts[1].data == _nested(MAX_JSON_DEPTH)
    assert sent.metadata == _nested(MAX_JSON_DEPTH)

    for data_depth, metadata_depth, field in [
        (MAX_JSON_DEPTH + 1, 1, "message.parts[1].data"),
        (1, 1000, "message.metadata"),
    ]:
        started = time.monotonic()
        error = send(data_depth, metadata_depth)["error"]
        assert time.monotonic() - started < 5
        assert error["code"] == -32602
        assert error["message"] == (
            f"{field} is nested more than {MAX_JSON_DEPTH} levels deep "
            "(the most every A2A binding carries)"
        )
        [bad_request] = [d for d in error["data"] if d["@type"].endswith("google.rpc.BadRequest")]
        assert bad_request["fieldViolations"][0]["field"] == field
    assert "Traceback" not in served.text, served.log()
