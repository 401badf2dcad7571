"""``grpc.health.v1.Health`` on :class:`GrpcServer`: SERVING when ``/readyz`` would say 200,
NOT_SERVING when the store's probe fails, and as soon as the server starts stopping."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_models.adapters.grpc import SERVICE_NAME, GrpcServer
from a2a_models.server import InMemoryTaskStore
from tests.http._server_support import make_server

pytestmark = pytest.mark.asyncio

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVICE_UNKNOWN = health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
SERVICE_03 = "a2a.v1.A2AService"
PROBE_ID = "a2a-models-readiness-probe"


class SwitchedStore(InMemoryTaskStore):
    """A store that fails every read while ``down``; counts the readiness probes."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.probes = 0

    async def get(self, task_id: str, *args: Any, **kwargs: Any) -> Any:
        if task_id == PROBE_ID:
            self.probes += 1
        if self.down:
            raise ConnectionRefusedError("connect to postgresql://admin:s3cret@db failed")
        return await super().get(task_id, *args, **kwargs)


@asynccontextmanager
async def health(store: InMemoryTaskStore, **options: Any) -> AsyncIterator[tuple[GrpcServer, Any]]:
    versions = options.pop("supported_versions", ("1.0", "0.3"))
    server, _agent = make_server(store=store, supported_versions=versions)
    gs = GrpcServer(server, **options)
    await gs.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{gs.port}")
    try:
        yield gs, health_pb2_grpc.HealthStub(channel)
    finally:
        await channel.close()
        await gs.stop()


def ask(service: str = "") -> Any:
    return health_pb2.HealthCheckRequest(service=service)


async def test_check_and_list_probe_the_store_for_every_served_service(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = SwitchedStore()
    with caplog.at_level(logging.WARNING, "a2a_models"):
        async with health(store) as (_gs, stub):
            answers = [
                (await stub.Check(ask(name))).status for name in ("", SERVICE_NAME, SERVICE_03)
            ]
            assert answers == [SERVING] * 3
            assert store.probes == 3  # one probe per Check, none in the background
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await stub.Check(ask("no.such.Service"))
            assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
            assert store.probes == 3

            store.down = True
            assert (await stub.Check(ask(SERVICE_NAME))).status == NOT_SERVING
            listed = await stub.List(health_pb2.HealthListRequest())
            assert {k: v.status for k, v in listed.statuses.items()} == {
                "": NOT_SERVING,
                SERVICE_NAME: NOT_SERVING,
                SERVICE_03: NOT_SERVING,
            }
            store.down = False
            assert (await stub.Check(ask())).status == SERVING
            assert store.probes == 6
    lines = [r.getMessage() for r in caplog.records if "readiness" in r.getMessage()]
    # Two failed probes, one outage: its first failure says why (the message is
    # logged, never answered), the first good probe after it that it is over.
    assert lines == [
        "readiness: the store failed: connect to postgresql://admin:s3cret@db failed",
        "readiness: the store and the broker answer again (gRPC SERVING)",
    ]


async def test_a_server_without_0_3_has_no_0_3_health() -> None:
    async with health(InMemoryTaskStore(), supported_versions=("1.0",)) as (_gs, stub):
        assert (await stub.Check(ask(SERVICE_NAME))).status == SERVING
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.Check(ask(SERVICE_03))
        assert refused.value.code() is grpc.StatusCode.NOT_FOUND


async def test_watch_is_sent_each_change_and_probes_run_only_while_watched() -> None:
    store = SwitchedStore()
    async with health(store, health_interval=0.02) as (gs, stub):
        await asyncio.sleep(0.2)
        assert store.probes == 0  # nobody watches: nothing probes
        watch = stub.Watch(ask(SERVICE_NAME))
        unknown = stub.Watch(ask("no.such.Service"))
        seen = [(await watch.read()).status]
        assert (await unknown.read()).status == SERVICE_UNKNOWN
        store.down = True
        seen.append((await asyncio.wait_for(watch.read(), 10)).status)
        store.down = False
        seen.append((await asyncio.wait_for(watch.read(), 10)).status)
        assert seen == [SERVING, NOT_SERVING, SERVING]  # one message per change
        watch.cancel()
        unknown.cancel()
        async with asyncio.timeout(10):  # the cancellations reach the server
            while gs.health._watches:
                await asyncio.sleep(0.01)
        stopped_at = store.probes
        await asyncio.sleep(0.2)  # ten intervals
        assert store.probes == stopped_at  # the last watch gone, probing stopped


async def test_stopping_tells_every_watch_not_serving_while_the_port_is_open() -> None:
    store = SwitchedStore()
    async with health(store) as (gs, stub):
        watches = [stub.Watch(ask(name)) for name in ("", SERVICE_NAME)]
        assert [(await w.read()).status for w in watches] == [SERVING, SERVING]
        # Hold gRPC's own stop (which closes the port) until the test has looked.
        grpc_server = gs._grpc
        real_stop = grpc_server.stop
        release = asyncio.Event()
        calls: list[tuple[int, int]] = []

        async def held_stop(grace: Any) -> Any:
            # (the health status, watches not yet sent NOT_SERVING) as the port closes
            calls.append((gs.health.status, len(gs.health._untold)))
            await release.wait()
            return await real_stop(grace)

        grpc_server.stop = held_stop
        stopping = asyncio.create_task(gs.stop())
        try:
            for watch in watches:
                assert (await asyncio.wait_for(watch.read(), 10)).status == NOT_SERVING
            # The port is still open, and a new Check hears NOT_SERVING (no probe).
            probes = store.probes
            async with grpc.aio.insecure_channel(f"127.0.0.1:{gs.port}") as fresh:
                answer = await health_pb2_grpc.HealthStub(fresh).Check(ask(), timeout=10)
            assert answer.status == NOT_SERVING and store.probes == probes
            # Every watch was told before gRPC's stop was called.
            assert calls == [(NOT_SERVING, 0)]
        finally:
            release.set()
            await stopping
        # ... and ended by the stop, as the A2A streams are.
        for watch in watches:
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                await asyncio.wait_for(watch.read(), 10)
            assert ended.value.code() is grpc.StatusCode.UNAVAILABLE
            assert ended.value.details() == "the server is shutting down: watch again elsewhere"


async def test_a_server_started_again_after_a_stop_is_serving() -> None:
    server, _agent = make_server()
    gs = GrpcServer(server)
    for _ in range(2):
        async with gs, grpc.aio.insecure_channel(f"127.0.0.1:{gs.port}") as channel:
            answer = await health_pb2_grpc.HealthStub(channel).Check(ask(), timeout=10)
        assert answer.status == SERVING
