"""PostgreSQL goes away for a few seconds under a real ``a2a-models serve``.

The server reaches the database through a TCP proxy that the test cuts (every
connection reset, new ones refused) and restores. A task working through the
outage ends (failed, saying why) and its open stream with it; the server keeps
running and answers normally afterwards; the outage is logged once per loop,
without a traceback per attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from _pg_support import PG_DSN, fresh_schema, store_url
from _procs import free_port
from test_workers import Proc

V10 = {"A2A-Version": "1.0"}


class CuttableProxy:
    """A TCP proxy to PostgreSQL on 127.0.0.1, run by its own event loop in a thread."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        threading.Thread(target=self._loop.run_forever, daemon=True, name="pg-proxy").start()
        self.restore()

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        self._writers -= {writer, up_writer}

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._client, "127.0.0.1", self.port, reuse_address=True
        )

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                writer.transport.abort()  # a reset, as a database that went away gives
        self._writers.clear()

    def restore(self) -> None:
        self._call(self._listen())

    def cut(self) -> None:
        self._call(self._cut())

    def close(self) -> None:
        self.cut()
        self._loop.call_soon_threadsafe(self._loop.stop)


@pytest.fixture
def proxied_store() -> Iterator[tuple[str, CuttableProxy]]:
    parts = urlsplit(PG_DSN)
    proxy = CuttableProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    try:
        with fresh_schema("a2a_outage", "PostgreSQL outage") as schema:
            url = urlsplit(store_url(schema))
            netloc = url.netloc.replace(f"{url.hostname}:{url.port or 5432}", "")
            user = netloc.rstrip("@")
            proxied = url._replace(netloc=f"{user}@127.0.0.1:{proxy.port}").geturl()
            yield proxied, proxy
    finally:
        proxy.close()


def _body(method: str, text: str) -> dict[str, Any]:
    """A JSON-RPC ``method`` (SendMessage or SendStreamingMessage) with a user ``text``."""
    message = {
        "messageId": f"m-{time.monotonic_ns()}",
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}


def _stream_through_an_outage(url: str, proxy: CuttableProxy) -> dict[str, Any]:
    """Stream the demo ``task`` from ``url``, cutting the database for 3 s once the task
    exists; the status the stream ended with (it must end, failed or completed)."""
    events: list[dict[str, Any]] = []
    cut_at = 0.0
    deadline = time.monotonic() + 60
    body = _body("SendStreamingMessage", "task")
    with httpx.stream("POST", url, json=body, headers=V10, timeout=30) as stream:
        for line in stream.iter_lines():
            assert time.monotonic() < deadline, f"the stream did not end: {events}"
            if not line.startswith("data:"):
                continue
            events.append(json.loads(line.removeprefix("data:"))["result"])
            if len(events) == 1:  # the task exists; its next step is 0.5 s away
                proxy.cut()
                cut_at = time.monotonic()
                threading.Timer(3.0, proxy.restore).start()
    assert cut_at and time.monotonic() >= cut_at + 3.0, events
    last: dict[str, Any] = events[-1].get("statusUpdate", {}).get("status", {})
    assert last.get("state") in ("TASK_STATE_FAILED", "TASK_STATE_COMPLETED"), events
    if last["state"] == "TASK_STATE_FAILED":
        assert last["message"]["parts"] == [
            {"text": "The server could not record the task's progress."}
        ]
    return last


def _completes(url: str) -> None:
    """A new task sent to ``url`` runs to the end (the database is back)."""
    reply = httpx.post(url, json=_body("SendMessage", "task"), headers=V10, timeout=30).json()
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", reply


#: The loops that retry while the database is gone, as their log lines name them.
_LOOPS = ("listening for a2a events", "sending NOTIFY", "lease upkeep", "pulling a turn")


def _logged_once_per_loop(proc: Proc) -> None:
    """A database that went away is no bug: no tracebacks. Each retrying loop that
    failed says so (the connection dropped, then new ones refused: at most two
    different failures) and says that it works again."""
    log = "\n".join(proc.output)
    assert "Traceback" not in log, log
    for loop in _LOOPS:
        failures = log.count(f"{loop} failed (")
        assert failures <= 2, log
        if failures:
            assert f"{loop} works again" in log, log


def test_a_task_working_through_a_database_outage_ends_and_the_server_recovers(
    proxied_store: tuple[str, CuttableProxy],
) -> None:
    store, proxy = proxied_store
    port = free_port()
    args = ["serve", "--port", str(port), "--store", store, "--lease-ttl", "3"]
    server = Proc("serve", args, r"a2a-models: serving ", {**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        server.wait_ready()
        _stream_through_an_outage(url, proxy)
        _completes(url)
        assert server.proc.poll() is None
    finally:
        server.stop()
    _logged_once_per_loop(server)


def test_a_front_end_and_a_worker_come_through_a_database_outage(
    proxied_store: tuple[str, CuttableProxy],
) -> None:
    store, proxy = proxied_store
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    port = free_port()
    front = Proc(
        "front end",
        ["serve", "--front-end", "--port", str(port), "--store", store],
        r"a2a-models: serving ",
        env,
    )
    worker = Proc(
        "worker",
        ["worker", "--store", store, "--lease-ttl", "3"],
        r"a2a-models: worker .* running",
        env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        front.wait_ready()
        worker.wait_ready()
        _stream_through_an_outage(url, proxy)
        _completes(url)
        assert front.proc.poll() is None and worker.proc.poll() is None
    finally:
        front.stop()
        worker.stop()
    _logged_once_per_loop(worker)
    _logged_once_per_loop(front)


def test_serve_stops_cleanly_while_the_database_is_gone(
    proxied_store: tuple[str, CuttableProxy],
) -> None:
    """SIGTERM while the database is cut: the task the stop cuts short cannot be marked
    failed (its lease lapses for a replica to take it over); the server says so in
    one line and stops, exit status 0 (it raised the store's error before)."""
    store, proxy = proxied_store
    port = free_port()
    args = ["serve", "--port", str(port), "--store", store]
    server = Proc("serve", args, r"a2a-models: serving ", {**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        server.wait_ready()
        body = _body("SendMessage", "task")
        body["params"]["configuration"] = {"returnImmediately": True}
        reply = httpx.post(f"http://127.0.0.1:{port}", json=body, headers=V10, timeout=30).json()
        task_id = reply["result"]["task"]["id"]
        proxy.cut()
        time.sleep(1.0)  # the run meets the outage
        assert server.stop() == 0, server.log()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    log = "\n".join(server.output)
    assert f"could not mark task {task_id} failed while stopping (" in log, log
    assert log.rstrip().endswith("a2a-models: stopped"), log
    assert "Traceback" not in log and "error:" not in log, log


def test_grpc_health_says_not_serving_while_the_database_is_gone(
    proxied_store: tuple[str, CuttableProxy],
) -> None:
    """``grpc.health.v1.Health`` of a real ``serve --grpc-port``: SERVING, NOT_SERVING once
    the store cannot be reached (what ``/readyz`` answers then), SERVING when it is back."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    store, proxy = proxied_store
    port, grpc_port = free_port(), free_port()
    args = ["serve", "--port", str(port), "--grpc-port", str(grpc_port), "--store", store]
    server = Proc("serve", args, r"a2a-models: serving ", {**os.environ, "PYTHONUNBUFFERED": "1"})
    ask = health_pb2.HealthCheckRequest(service="lf.a2a.v1.A2AService")

    def status() -> tuple[int, int]:
        """(the gRPC health status, /readyz's HTTP status), asked now."""
        answer = stub.Check(ask, timeout=30).status
        return answer, httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30).status_code

    serving, not_serving = (
        health_pb2.HealthCheckResponse.SERVING,
        health_pb2.HealthCheckResponse.NOT_SERVING,
    )
    try:
        server.wait_ready()
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            assert status() == (serving, 200)
            proxy.cut()
            assert status() == (not_serving, 503)
            proxy.restore()
            # The pool replaces the connections the cut broke: a few probes may fail first.
            deadline = time.monotonic() + 30
            while (seen := status()) != (serving, 200) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert seen == (serving, 200)
        assert server.proc.poll() is None
    finally:
        server.stop()
    assert "Traceback" not in "\n".join(server.output)
