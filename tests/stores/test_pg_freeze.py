"""A PostgreSQL that freezes (a stalled server, or a network that drops packets
without a reset) under a real ``a2a-models serve``: requests that need the store
fail within the store's ``request_timeout`` with an error saying the store did
not answer (JSON-RPC -32603, HTTP+JSON 503, gRPC UNAVAILABLE), and the server
works again by itself once the database answers.

A TCP proxy between ``serve`` and PostgreSQL stops forwarding without closing
anything, as a frozen peer does: the bytes sent are acknowledged (by the
proxy's kernel) and never answered.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from _procs import CliProcess, cli_env, free_port

from a2a_models.errors import InternalError

from ._pgproxy import PgProxy, pg_proxy

V10 = {"A2A-Version": "1.0"}
#: The longest a client waits: far above the limit the server is given (1 s).
CLIENT_TIMEOUT = 60.0


@pytest.fixture
async def freezer(pg_dsn: str) -> AsyncIterator[tuple[PgProxy, str]]:
    async with pg_proxy(pg_dsn) as (proxy, dsn):
        yield proxy, dsn


def _rpc(method: str, params: dict[str, Any], id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def _send(text: str) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"message": message}


async def _get_task_everywhere(
    http: httpx.AsyncClient, url: str, grpc_url: str, task_id: str, n: int
) -> list[Any]:
    """``n`` GetTask at once on each binding, and one SendMessage over JSON-RPC: what
    each answered (a reply, or the exception the client raised)."""
    from a2a_models.adapters.grpc import GrpcClient

    async def grpc_get() -> Any:
        async with GrpcClient(grpc_url, timeout=CLIENT_TIMEOUT) as client:
            return await client.get_task(task_id)

    calls = [
        *(http.post(url, json=_rpc("GetTask", {"id": task_id}, i), headers=V10) for i in range(n)),
        *(http.get(f"{url}/tasks/{task_id}", headers=V10) for _ in range(n)),
        *(grpc_get() for _ in range(n)),
        http.post(url, json=_rpc("SendMessage", _send("task"), n), headers=V10),
    ]
    return await asyncio.gather(*calls, return_exceptions=True)


def _unavailable(answer: Any) -> str:
    """Which binding ``answer`` is a "store did not answer" error of ('' if none)."""
    said = "the task store did not answer within 1 s"
    if isinstance(answer, InternalError):  # the gRPC client's (UNAVAILABLE, ErrorInfo)
        return "grpc" if answer.message == said else ""
    if not isinstance(answer, httpx.Response):
        return ""
    body = answer.json()
    if answer.status_code == 503 and body["error"]["status"] == "UNAVAILABLE":
        return "http" if body["error"]["message"] == said else ""
    error = body.get("error") or {}
    if error.get("code") == -32603 and error.get("message") == said:
        return "jsonrpc"
    if error.get("message") == f"the server could not record the task: {said}":
        return "send"
    return ""


async def test_a_frozen_database_fails_requests_within_the_limit_then_recovers(
    freezer: tuple[PgProxy, str], pg_schema: str
) -> None:
    # Before: GetTask on a frozen PostgreSQL hung until the client gave up (60 s),
    # with no limit in the product; every answer below was a client timeout.
    pytest.importorskip("grpc")
    proxy, dsn = freezer
    port, grpc_port = free_port(), free_port()
    store = f"{dsn}&schema={pg_schema}&request_timeout=1"
    served = CliProcess(
        ["serve", "--port", str(port), "--grpc-port", str(grpc_port), "--store", store],
        name="serve",
        env=cli_env(),
    )
    await asyncio.to_thread(served.wait_ready)  # the proxy runs on this loop
    url, grpc_url = served.url, f"grpc://127.0.0.1:{grpc_port}"
    n = 3
    try:
        async with httpx.AsyncClient(timeout=CLIENT_TIMEOUT) as http:
            reply = await http.post(url, json=_rpc("SendMessage", _send("task"), 0), headers=V10)
            task = reply.json()["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", task

            proxy.flowing.clear()
            frozen = await _get_task_everywhere(http, url, grpc_url, task["id"], n)
            kinds = [_unavailable(answer) for answer in frozen]
            assert kinds == ["jsonrpc"] * n + ["http"] * n + ["grpc"] * n + ["send"], (
                frozen,
                served.log(),
            )

            proxy.flowing.set()
            thawed = await _get_task_everywhere(http, url, grpc_url, task["id"], n)
            # Everything stored is as it was: the same task, whole, on every binding.
            assert [a.json()["result"]["id"] for a in thawed[:n]] == [task["id"]] * n, thawed
            assert [a.json()["id"] for a in thawed[n : 2 * n]] == [task["id"]] * n, thawed
            assert [t.id for t in thawed[2 * n : 3 * n]] == [task["id"]] * n, thawed
            for answer in thawed[: 2 * n]:
                got = answer.json()
                got = got.get("result", got)
                assert got["status"] == task["status"]
                assert got["history"] == task["history"]
            sent = thawed[-1].json()["result"]["task"]
            assert sent["status"]["state"] == "TASK_STATE_COMPLETED", sent
    finally:
        served.kill()


def test_a_store_that_is_down_or_silent_is_grpc_unavailable_and_http_503() -> None:
    # Before: HTTP+JSON 500 INTERNAL (gRPC INTERNAL) for a database that is down.
    grpc = pytest.importorskip("grpc")
    psycopg = pytest.importorskip("psycopg")
    from a2a_models._outages import DatabaseTimeout
    from a2a_models.adapters.grpc._status import status_of
    from a2a_models.server import error_for

    down = error_for(psycopg.OperationalError("connection refused"), "GetTask")
    silent = error_for(DatabaseTimeout(1.0), "GetTask")
    assert (down.message, silent.message) == (
        "the task store failed (OperationalError)",
        "the task store did not answer within 1 s",
    )
    for error in (down, silent):
        assert error.code == -32603
        assert error.to_http_status()["error"]["code"] == 503
        assert error.to_http_status()["error"]["status"] == "UNAVAILABLE"
        assert status_of(error)[0] is grpc.StatusCode.UNAVAILABLE


def test_request_timeout_is_a_parameter_of_the_store_url() -> None:
    pytest.importorskip("psycopg")
    from a2a_models.stores import PostgresTaskStore, store_from_url

    store = store_from_url("postgresql://app@db/agents?request_timeout=2.5&sslmode=disable")
    assert isinstance(store, PostgresTaskStore)
    assert store.request_timeout == 2.5
    assert store._own_pool is not None and "request_timeout" not in store._own_pool._conninfo
    default = store_from_url("postgresql://app@db/agents")
    assert isinstance(default, PostgresTaskStore) and default.request_timeout == 30.0
    for bad in ("0", "-1", "soon", "inf"):
        with pytest.raises(ValueError, match=f"request_timeout must be .* \\(got '{bad}'\\)"):
            store_from_url(f"postgresql://app@db/agents?request_timeout={bad}")


def test_connections_get_keepalives_unless_the_url_sets_them() -> None:
    pytest.importorskip("psycopg")
    from a2a_models.stores._pg_pool import connect_params

    params = connect_params("postgresql://app@db/agents", {"application_name": "x"})
    assert params == {
        "connect_timeout": "10",
        "keepalives": "1",
        "keepalives_idle": "30",
        "keepalives_interval": "10",
        "keepalives_count": "3",
        "tcp_user_timeout": "60000",
        "application_name": "x",
    }
    own = connect_params("postgresql://app@db/agents?keepalives_idle=5&tcp_user_timeout=0", {})
    assert "keepalives_idle" not in own and "tcp_user_timeout" not in own
    assert own["keepalives_count"] == "3"
