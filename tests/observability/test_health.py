"""``/healthz`` and ``/readyz`` on the HTTP app: no auth, not in the card, 503 naming the failure."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest
from _otel_support import Echo, Telemetry, card

from a2a_models.adapters.http import AuthenticationError, HTTPServer
from a2a_models.server import AgentServer, InMemoryTaskStore


class DownStore(InMemoryTaskStore):
    async def get(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionRefusedError("connect to postgresql://admin:s3cret@db failed")


class Refuse:
    """An authenticator that refuses everyone."""

    async def authenticate(self, request: Any) -> Any:
        raise AuthenticationError("no credentials")


async def test_healthz_and_readyz_answer_without_credentials() -> None:
    server = AgentServer(Echo(), card("h"))
    async with HTTPServer(server) as http, httpx.AsyncClient(base_url=http.url) as client:
        health = await client.get("/healthz")
        ready = await client.get("/readyz")
        card_doc = (await client.get("/.well-known/agent-card.json")).text
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": {"store": "ok", "broker": "ok"}}
    assert ready.headers["cache-control"] == "no-store"
    assert "healthz" not in card_doc and "readyz" not in card_doc


async def test_readyz_is_503_naming_the_component_not_the_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = AgentServer(Echo(), card("h"), store=DownStore())
    with caplog.at_level(logging.WARNING, "a2a_models.server"):
        async with HTTPServer(server) as http, httpx.AsyncClient(base_url=http.url) as client:
            ready = await client.get("/readyz")
            health = await client.get("/healthz")
    assert health.status_code == 200  # the process is up
    assert ready.status_code == 503
    body = ready.json()
    assert body == {
        "status": "unavailable",
        "checks": {"store": "failed (ConnectionRefusedError)", "broker": "ok"},
    }
    assert "s3cret" not in ready.text
    assert [r.getMessage() for r in caplog.records if "readiness" in r.getMessage()] == [
        "readiness: the store failed: connect to postgresql://admin:s3cret@db failed"
    ]


async def test_health_routes_skip_the_authenticator() -> None:
    server = AgentServer(Echo(), card("h"))
    async with (
        HTTPServer(server, authenticator=Refuse()) as http,
        httpx.AsyncClient(base_url=http.url) as client,
    ):
        refused = await client.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"})
        health = await client.get("/healthz")
        ready = await client.get("/readyz")
    assert refused.status_code == 401
    assert (health.status_code, ready.status_code) == (200, 200)


class Frozen(InMemoryTaskStore):
    """A store on a database that stopped answering: a read never ends, and its
    cancellation waits for the database too (as psycopg's does) until ``thawed``."""

    def __init__(self) -> None:
        super().__init__()
        self.thawed = asyncio.Event()
        self.cancelled = 0

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            await self.thawed.wait()
            raise


async def test_readyz_answers_at_its_timeout_however_long_the_probe_takes_to_cancel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # /readyz waited for the probe's cancellation: with PostgreSQL frozen, psycopg's
    # cancel talks to the frozen server, and the answer came after 13 s, not 3.
    from a2a_models.server import _readiness

    monkeypatch.setattr(_readiness, "READY_TIMEOUT", 0.2)
    store = Frozen()
    server = AgentServer(Echo(), card("h"), store=store)
    async with HTTPServer(server) as http, httpx.AsyncClient(base_url=http.url) as client:
        try:
            ready = await client.get("/readyz", timeout=5)
            health = await client.get("/healthz", timeout=5)
        finally:
            store.thawed.set()
    assert store.cancelled == 1  # the probe was given up on, still finishing
    assert ready.status_code == 503
    assert ready.json()["checks"]["store"] == "no answer within 0.2 s"
    assert health.status_code == 200


async def test_grpc_health_needs_no_credentials_and_is_no_a2a_request(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    grpc = pytest.importorskip("grpc")
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from a2a_models.adapters.grpc import SERVICE_NAME, GrpcServer
    from a2a_models.adapters.grpc import pb as a2a_pb
    from a2a_models.adapters.http import BearerTokenAuthenticator

    serving = health_pb2.HealthCheckResponse.SERVING
    authenticator = BearerTokenAuthenticator({"t0ken": "alice"})
    grpc_server = GrpcServer(AgentServer(Echo(), card("g")), authenticator=authenticator)
    await grpc_server.start()
    try:
        with caplog.at_level(logging.INFO, "a2a_models.server.refusals"):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_server.port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                check = await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
                listed = await stub.List(health_pb2.HealthListRequest())
                watch = stub.Watch(health_pb2.HealthCheckRequest())
                first = await watch.read()
                watch.cancel()
                get_task = channel.unary_unary(f"/{SERVICE_NAME}/GetTask")
                request = a2a_pb.GetTaskRequest(id="x").SerializeToString()
                with pytest.raises(grpc.aio.AioRpcError) as anonymous:
                    await get_task(request)
                with pytest.raises(grpc.aio.AioRpcError) as unknown:
                    await get_task(request, metadata=[("authorization", "Bearer t0ken")])
    finally:
        await grpc_server.stop()
    assert check.status == serving and first.status == serving
    assert {v.status for v in listed.statuses.values()} == {serving}
    # The A2A service asks for the token the health service does without.
    assert anonymous.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
    # The two refusal lines, the one span and the one metric point are the A2A calls':
    # the health calls make none.
    refusals = [r.getMessage() for r in caplog.records if r.name == "a2a_models.server.refusals"]
    assert refusals == [
        "GetTask refused: -32000 AuthenticationError (Authentication required: send an "
        "'Authorization: Bearer <token>' header)",
        "GetTask refused: -32001 TaskNotFoundError (task 'x' not found)",
    ]
    assert [s.name for s in telemetry.spans()] == [f"{SERVICE_NAME}/GetTask"]
    points = telemetry.points("rpc.server.call.duration")
    assert [(p.attributes["rpc.method"], p.count) for p in points] == [("GetTask", 1)]
