"""HTTP benchmark: this project's server vs the official a2a-sdk server vs a raw ASGI floor.

Run: ``.venv/bin/python bench/http.py`` (loopback only, bounded request
counts, well under two minutes).

Three servers, each uvicorn with one worker in its own subprocess (so none
shares the load generator's event loop), same uvicorn settings for all:

* ours  - ``AgentServer(Echo(), card)`` + ``create_app`` (defaults: CORS,
          REST routes, in-memory store and broker)
* sdk   - a2a-sdk ``DefaultRequestHandler`` + an ``AgentExecutor`` with the
          same behaviour, JSON-RPC/REST/card routes from its route factories
* raw   - a bare ASGI callable answering every POST with a fixed JSON-RPC
          response (and a fixed SSE stream): the floor of uvicorn + loopback

The agent answers a message with one agent Message echoing its text; the
text ``stream N`` makes it a task with N ``working`` status updates, then
``completed``.

One load generator drives all three (JSON-RPC 1.0, keep-alive):

* SendMessage, sequential on one connection (``--seq`` requests, 2,000)
* SendMessage, 32 concurrent connections (``--conc-requests``, 5,000)
* SendStreamingMessage of ``stream 1000``: SSE events per second (best of 3)

The client is a small asyncio HTTP/1.1 client (Content-Length and chunked
bodies), not httpx: against the floor httpx alone costs more than the server
(the script prints both so the choice can be checked). The client runs on
CPU 0 and the servers on CPU 1 when the machine has two. The SendMessage
loads run in rounds that alternate the servers; besides wall-clock numbers
the table shows each server's own CPU time per request (from /proc), which
other processes on the machine hardly disturb.

Targets: ours >= 3x the SDK's throughput; ours <= 1.5x the floor's latency
(p50, sequential). ``--profile ours`` (or ``sdk``) also runs that server under
cProfile and prints where its time goes. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the standard library's ``http`` package: run as a
# script, its folder comes first on sys.path and would shadow ``http.client``.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import argparse
import asyncio
import contextlib
import functools
import itertools
import json
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

HERE = Path(__file__).resolve()
SRC = HERE.parents[1] / "src"
HOST = "127.0.0.1"
THROUGHPUT_TARGET = 3.0  # ours / sdk requests per second
LATENCY_TARGET = 1.5  # ours / raw p50 latency
SERVE_LATENCY_TARGET = 2.0  # serve / bare Starlette p50 latency, 1 client
SERVERS = ("ours", "sdk", "raw")
ECHO_TEXT = "hello, benchmark"
#: A SendMessage answered with a task: one working update, then completed (the task is
#: stored: on ``serve``'s default SQLite store, its commits are fsynced).
TASK_TEXT = "stream 1"


@functools.cache
def _echo() -> Any:
    """``bench_echo_agent.py`` (the echo agent, ours and the SDK's), loaded by its path:
    bench/ is not on ``sys.path`` in every mode of this script."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_echo_agent", HERE.parent / "bench_echo_agent.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# =========================================================================== servers


def ours_app() -> Any:
    try:
        import a2a_models  # noqa: F401
    except ImportError:  # a bare checkout
        sys.path.insert(0, str(SRC))
    from a2a_models import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from a2a_models.adapters.http import create_app
    from a2a_models.server import AgentServer

    card = AgentCard(
        name="bench echo",
        description="echoes",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://{HOST}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["bench"])],
    )
    return create_app(AgentServer(_echo().Echo(), card))


def sdk_app() -> Any:
    import a2a.server.routes  # noqa: F401  (SDK import order, see tests/interop/sdk_vectors.py)
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import a2a_pb2 as pb
    from starlette.applications import Starlette

    card = pb.AgentCard(
        name="bench echo",
        description="echoes",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(
                url=f"http://{HOST}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="echo", name="echo", description="echoes", tags=["bench"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=_echo().sdk_echo_executor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url="/"),
            *create_rest_routes(handler),
        ]
    )


#: What ``ours`` answers to the echo request (the same size and shape).
RAW_REPLY = (
    b'{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"0197a1d2-9c1e-7f3a-8b4c-'
    b'5d6e7f809a1b","contextId":"0197a1d2-9c1e-7f3a-8b4c-5d6e7f809a1c","role":"ROLE_AGENT",'
    b'"parts":[{"text":"hello, benchmark"}]}}}'
)
RAW_EVENT = (
    b'id: 2\ndata: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"0197a1d2-9c1e-'
    b'7f3a-8b4c-5d6e7f809a1b","contextId":"0197a1d2-9c1e-7f3a-8b4c-5d6e7f809a1c","status":'
    b'{"state":"TASK_STATE_WORKING","message":{"messageId":"0197a1d2-9c1e-7f3a-8b4c-5d6e7f809'
    b'a1d","role":"ROLE_AGENT","parts":[{"text":"step 1"}]},"timestamp":"2025-06-01T12:00:00'
    b'.000Z"}}}}\n\n'
)


async def raw_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The floor: read the body, answer with fixed bytes (a fixed SSE stream for ``stream N``)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if b"SendStreamingMessage" in body:
        steps = int(body.split(b"stream ", 1)[1].split(b'"', 1)[0])
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                ],
            }
        )
        for _ in range(steps + 2):
            await send({"type": "http.response.body", "body": RAW_EVENT, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(RAW_REPLY)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": RAW_REPLY})


def sdk_db_app() -> Any:
    """The SDK's server with its ``DatabaseTaskStore`` on SQLite (``A2A_BENCH_SDK_DB``),
    answering ``turn ...`` with input-required (a conversation), ``stream N`` with N
    working updates then completed, and ``chunks N`` with an artifact in N chunks, like
    bench_echo_agent."""
    import a2a.server.routes  # noqa: F401
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import TaskUpdater
    from a2a.server.tasks.database_task_store import DatabaseTaskStore
    from a2a.types import a2a_pb2 as pb
    from sqlalchemy.ext.asyncio import create_async_engine
    from starlette.applications import Starlette

    echo = _echo()

    class Turns(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None and context.task_id and context.context_id
            text = context.get_user_input()
            if context.current_task is None:
                await event_queue.enqueue_event(
                    pb.Task(
                        id=context.task_id,
                        context_id=context.context_id,
                        status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
                        history=[context.message],
                    )
                )
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            steps = echo.stream_steps(text)
            if steps is not None:  # ``stream N``: N working updates, then completed
                for i in range(steps):
                    await updater.update_status(
                        pb.TASK_STATE_WORKING,
                        updater.new_agent_message([pb.Part(text=f"step {i + 1}")]),
                    )
                await updater.complete()
                return
            chunks = echo.stream_steps(text, "chunks")
            if chunks is not None:
                for i in range(chunks):
                    await updater.add_artifact(
                        [pb.Part(text=echo.CHUNK_TEXT)],
                        artifact_id="report",
                        append=i > 0,
                        last_chunk=i == chunks - 1,
                    )
                await updater.complete()
                return
            await updater.update_status(
                pb.TASK_STATE_INPUT_REQUIRED,
                updater.new_agent_message([pb.Part(text=f"got {text}")]),
            )

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    card = pb.AgentCard(
        name="bench turns",
        description="conversations",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(
                url=f"http://{HOST}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )
    engine = create_async_engine(f"sqlite+aiosqlite:///{os.environ['A2A_BENCH_SDK_DB']}")
    handler = DefaultRequestHandler(
        agent_executor=Turns(), task_store=DatabaseTaskStore(engine), agent_card=card
    )
    return Starlette(
        routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    )


def starlette_app() -> Any:
    """A bare Starlette app answering with the bytes ``a2a-models serve`` answered.

    The bytes come from the JSON file named by ``A2A_BENCH_REPLIES`` (written
    by ``--mode serve`` from real answers of the ``serve`` process): the
    SendMessage reply, the agent card and a ListTasks page.
    """
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    with open(os.environ["A2A_BENCH_REPLIES"]) as f:
        replies = {k: v.encode("latin-1") for k, v in json.load(f).items()}

    async def rpc(request: Request) -> Response:
        body = await request.body()
        if b'"ListTasks"' in body:
            reply = replies["list"]
        else:
            reply = replies["task"] if TASK_TEXT.encode() in body else replies["send"]
        return Response(reply, media_type="application/json")

    async def card(request: Request) -> Response:
        return Response(replies["card"], media_type="application/json")

    return Starlette(
        routes=[
            Route("/", rpc, methods=["POST"]),
            Route("/.well-known/agent-card.json", card, methods=["GET"]),
        ]
    )


def serve(kind: str, port: int, profile: str | None) -> None:
    """The ``--serve`` mode: one server until SIGTERM.

    ``A2A_BENCH_OTEL=1``: the OpenTelemetry SDK is configured first from the
    ``OTEL_*`` variables (as ``opentelemetry-instrument`` would), so the
    a2a-sdk's own tracing records spans (``bench/otel.py``)."""
    import uvicorn

    if os.environ.get("A2A_BENCH_OTEL") == "1":
        from opentelemetry.sdk._configuration import _OTelSDKConfigurator

        _OTelSDKConfigurator().configure()  # type: ignore[no-untyped-call]

    app = {
        "ours": ours_app,
        "sdk": sdk_app,
        "raw": lambda: raw_app,
        "starlette": starlette_app,
        "sdk-db": sdk_db_app,
    }[kind]()
    config = uvicorn.Config(
        app, host=HOST, port=port, log_level="warning", access_log=False, lifespan="on", workers=1
    )
    server = uvicorn.Server(config)
    profiler = None
    if profile is not None:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT it stopped on
        pass
    finally:
        if profiler is not None and profile is not None:
            profiler.disable()
            profiler.dump_stats(profile)


# =========================================================================== client


class HTTPError(Exception):
    pass


class Connection:
    """A minimal keep-alive HTTP/1.1 client connection (one request at a time)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()

    async def get(self, path: bytes, version: bytes = b"1.0") -> bytes:
        self.writer.write(
            b"GET "
            + path
            + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: "
            + version
            + b"\r\n\r\n"
        )
        status, headers = await self._head()
        content = b"".join([chunk async for chunk in self._chunks(headers)])
        if status != 200:
            raise HTTPError(f"GET {path!r}: status {status}: {content[:300]!r}")
        return content

    def _send(self, body: bytes, accept: bytes, path: bytes, version: bytes) -> None:
        self.writer.write(
            b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"A2A-Version: "
            + version
            + b"\r\nAccept: "
            + accept
            + b"\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )

    async def _head(self) -> tuple[int, dict[bytes, bytes]]:
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
        return status, headers

    async def _chunks(self, headers: dict[bytes, bytes]) -> AsyncIterator[bytes]:
        if b"content-length" in headers:
            yield await self.reader.readexactly(int(headers[b"content-length"]))
            return
        if headers.get(b"transfer-encoding", b"").lower() != b"chunked":
            raise HTTPError(f"unsupported response framing: {headers!r}")
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return
            data = await self.reader.readexactly(size + 2)
            yield data[:-2]

    async def subscribe(
        self, path: bytes, version: bytes, last_event_id: bytes | None = None
    ) -> AsyncIterator[bytes]:
        """GET an SSE stream (``Last-Event-ID``: resume after it); once its head arrived,
        an iterator of its chunks. The stream stays open while the task runs: close the
        connection to stop."""
        resume = b"Last-Event-ID: " + last_event_id + b"\r\n" if last_event_id else b""
        self.writer.write(
            b"GET "
            + path
            + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: "
            + version
            + b"\r\nAccept: text/event-stream\r\n"
            + resume
            + b"\r\n"
        )
        status, headers = await self._head()
        if status != 200 or not headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            raise HTTPError(f"GET {path!r}: no stream: {status} {headers!r}")
        return self._chunks(headers)

    async def post(self, body: bytes, path: bytes = b"/", version: bytes = b"1.0") -> bytes:
        self._send(body, b"application/json", path, version)
        status, headers = await self._head()
        content = b"".join([chunk async for chunk in self._chunks(headers)])
        if status != 200:
            raise HTTPError(f"status {status}: {content[:300]!r}")
        return content

    async def stream(
        self,
        body: bytes,
        arrivals: list[float] | None = None,
        path: bytes = b"/",
        version: bytes = b"1.0",
        on_event: Callable[[int], None] | None = None,
    ) -> int:
        """POST and read an SSE answer to its end; the number of events with data
        (``arrivals``: gets the ``perf_counter`` time each one arrived; ``on_event``:
        called with the number of events so far, after each one)."""
        self._send(body, b"text/event-stream, application/json", path, version)
        status, headers = await self._head()
        if status != 200 or not headers.get(b"content-type", b"").startswith(b"text/event-stream"):
            raise HTTPError(f"no stream: {status} {headers!r}")
        events, pending = 0, b""
        async for chunk in self._chunks(headers):
            pending += chunk.replace(b"\r\n", b"\n")
            *complete, pending = pending.split(b"\n\n")
            arrived = sum(1 for block in complete if b"data:" in block)
            if arrivals is not None:
                arrivals.extend([time.perf_counter()] * arrived)
            if on_event is not None:
                for n in range(events + 1, events + arrived + 1):
                    on_event(n)
            events += arrived
        return events


_ids = iter(range(1, 1 << 62))


def send_body(text: str, method: str = "SendMessage") -> bytes:
    n = next(_ids)
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {
                "message": {
                    "messageId": f"bench-{n}",
                    "role": "ROLE_USER",
                    "parts": [{"text": text}],
                }
            },
        },
        separators=(",", ":"),
    ).encode()


def check_echo(content: bytes) -> None:
    reply = json.loads(content)
    parts = reply.get("result", {}).get("message", {}).get("parts")
    if parts != [{"text": ECHO_TEXT}]:
        raise HTTPError(f"not an echo: {content[:300]!r}")


# =========================================================================== measurements


class Sample:
    """Latencies (ns) and busy wall time (s) of one kind of load, summed over rounds."""

    def __init__(self) -> None:
        self.latencies: list[int] = []
        self.requests = 0
        self.wall = 0.0

    def add(self, latencies: list[int], wall: float) -> None:
        self.latencies += latencies
        self.requests += len(latencies)
        self.wall += wall

    def summary(self) -> dict[str, float]:
        ordered = sorted(self.latencies)
        return {
            "rps": self.requests / self.wall,
            "p50": _pct(ordered, 50),
            "p99": _pct(ordered, 99),
        }


def _pct(sorted_ns: list[int], q: float) -> float:
    """Percentile ``q`` in microseconds (nearest rank)."""
    index = min(len(sorted_ns) - 1, max(0, round(q / 100 * len(sorted_ns)) - 1))
    return sorted_ns[index] / 1000


async def sequential(port: int, count: int, sample: Sample) -> None:
    """``count`` SendMessage requests one after the other on one keep-alive connection."""
    conn = await Connection.open(port)
    try:
        bodies = [send_body(ECHO_TEXT) for _ in range(count)]
        check_echo(await conn.post(send_body(ECHO_TEXT)))
        latencies: list[int] = []
        start = time.perf_counter_ns()
        for body in bodies:
            t0 = time.perf_counter_ns()
            await conn.post(body)
            latencies.append(time.perf_counter_ns() - t0)
        sample.add(latencies, (time.perf_counter_ns() - start) / 1e9)
    finally:
        await conn.close()


async def concurrent(port: int, count: int, clients: int, sample: Sample) -> None:
    """``count`` SendMessage requests over ``clients`` connections, each one at a time."""
    conns = [await Connection.open(port) for _ in range(clients)]
    queue = iter([send_body(ECHO_TEXT) for _ in range(count)])
    latencies: list[int] = []

    async def worker(conn: Connection) -> None:
        for body in queue:  # a shared iterator: each body is sent once
            t0 = time.perf_counter_ns()
            await conn.post(body)
            latencies.append(time.perf_counter_ns() - t0)

    try:
        start = time.perf_counter_ns()
        await asyncio.gather(*(worker(c) for c in conns))
        sample.add(latencies, (time.perf_counter_ns() - start) / 1e9)
    finally:
        for conn in conns:
            await conn.close()


async def streaming(port: int, steps: int) -> tuple[int, float]:
    """One SendStreamingMessage of ``stream steps``: (events received, seconds)."""
    conn = await Connection.open(port)
    try:
        t0 = time.perf_counter()
        events = await conn.stream(send_body(f"stream {steps}", "SendStreamingMessage"))
        wall = time.perf_counter() - t0
    finally:
        await conn.close()
    if events < steps + 1:
        raise HTTPError(f"a stream of {steps} updates gave only {events} events")
    return events, wall


async def httpx_sequential(port: int, count: int) -> dict[str, float]:
    """The same sequential load through ``httpx.AsyncClient`` (to size its own overhead)."""
    import httpx

    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    sample = Sample()
    async with httpx.AsyncClient(base_url=f"http://{HOST}:{port}") as client:
        for _ in range(50):
            (
                await client.post("/", content=send_body(ECHO_TEXT), headers=headers)
            ).raise_for_status()
        bodies = [send_body(ECHO_TEXT) for _ in range(count)]
        latencies: list[int] = []
        start = time.perf_counter_ns()
        for body in bodies:
            t0 = time.perf_counter_ns()
            response = await client.post("/", content=body, headers=headers)
            latencies.append(time.perf_counter_ns() - t0)
            response.raise_for_status()
        sample.add(latencies, (time.perf_counter_ns() - start) / 1e9)
    return sample.summary()


# =========================================================================== orchestration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _two_cpus() -> bool:
    return hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2


class ServerProcess:
    """One server subprocess (``--serve KIND``); its stderr goes to a temporary file."""

    def __init__(
        self,
        kind: str,
        profile: str | None,
        command: list[str] | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.kind = kind
        self.port = _free_port()
        if command is None:
            command = [sys.executable, str(HERE), "--serve", kind, "--port", str(self.port)]
            if profile:
                command += ["--profile-out", profile]
        else:
            command = [part.replace("{port}", str(self.port)) for part in command]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
            **(extra_env or {}),
        }
        self.log = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(
            command,
            env=env,
            cwd=str(HERE.parent),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        if _two_cpus():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(self.proc.pid, {1})

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (all threads).

        From ``/proc/PID/task/*/schedstat`` (nanoseconds) where the kernel
        keeps it, else ``/proc/PID/stat`` (clock ticks); 0.0 elsewhere.
        """
        total = 0
        try:
            for task in os.listdir(f"/proc/{self.proc.pid}/task"):
                with open(f"/proc/{self.proc.pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            total = 0
        if total:
            return total / 1e9
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()[-3000:]

    async def ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the {self.kind} server exited with {self.proc.returncode}:\n" + self.output()
                )
            try:
                conn = await Connection.open(self.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            try:
                answer = await conn.post(send_body(ECHO_TEXT))
                if self.kind != "sdk-db":  # that one holds conversations, it does not echo
                    check_echo(answer)
            finally:
                await conn.close()
            return
        raise RuntimeError(f"the {self.kind} server did not start within {timeout} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # uvicorn's graceful shutdown
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.log.close()


async def measure(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Every load against every server, in rounds that alternate the servers.

    Alternating spreads a change in machine load over all three alike; the
    latencies of all rounds are pooled, throughput is requests / busy time.
    """
    if _two_cpus():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {0})
    servers = [
        ServerProcess(kind, args.profile_file if kind == args.profile else None) for kind in SERVERS
    ]
    seq = {s.kind: Sample() for s in servers}
    conc = {s.kind: Sample() for s in servers}
    sse: dict[str, list[tuple[int, float]]] = {s.kind: [] for s in servers}
    results: dict[str, dict[str, float]] = {}
    cpu: dict[tuple[str, str], float] = {}
    deadline = time.monotonic() + args.time_limit

    async def each(label: str, run: Callable[[ServerProcess], Awaitable[Any]]) -> None:
        for server in servers:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"over the {args.time_limit:g} s budget before {label}")
            before = server.cpu_seconds()
            await asyncio.wait_for(run(server), left)
            key = (server.kind, label)
            cpu[key] = cpu.get(key, 0.0) + server.cpu_seconds() - before

    try:
        for server in servers:
            await server.ready()
        rounds = max(1, args.rounds)

        def split(total: int, i: int) -> int:
            return total // rounds + (i < total % rounds)

        async def warm(s: ServerProcess) -> None:
            await sequential(s.port, args.warmup, Sample())

        async def stream(s: ServerProcess) -> None:
            sse[s.kind].append(await streaming(s.port, args.stream_steps))

        t0 = time.monotonic()
        await each("warm-up", warm)
        _progress("warm-up", t0)
        t0 = time.monotonic()
        for i in range(rounds):
            n = split(args.seq, i)

            async def one_by_one(s: ServerProcess, n: int = n) -> None:
                await sequential(s.port, n, seq[s.kind])

            await each("sequential", one_by_one)
        _progress("sequential", t0)
        t0 = time.monotonic()
        for i in range(rounds):
            n = split(args.conc_requests, i)

            async def together(s: ServerProcess, n: int = n) -> None:
                await concurrent(s.port, n, args.clients, conc[s.kind])

            await each("concurrent", together)
        _progress("concurrent", t0)
        t0 = time.monotonic()
        for _ in range(args.stream_repeats):
            await each("sse", stream)
        _progress("sse", t0)
        for server in servers:
            results[server.kind] = {
                **{f"seq_{k}": v for k, v in seq[server.kind].summary().items()},
                **{f"conc_{k}": v for k, v in conc[server.kind].summary().items()},
                "eps": max(n / wall for n, wall in sse[server.kind]),
                "events": sse[server.kind][-1][0],
                # Server CPU microseconds per request / event: unlike wall-clock
                # numbers, hardly moved by other processes competing for the CPU.
                "seq_cpu": cpu[server.kind, "sequential"] / seq[server.kind].requests * 1e6,
                "conc_cpu": cpu[server.kind, "concurrent"] / conc[server.kind].requests * 1e6,
                "sse_cpu": cpu[server.kind, "sse"] / sum(n for n, _ in sse[server.kind]) * 1e6,
            }
        if not args.no_httpx:
            t0 = time.monotonic()
            raw = next(s for s in servers if s.kind == "raw")
            httpx = await asyncio.wait_for(
                httpx_sequential(raw.port, args.httpx_requests),
                max(1.0, deadline - time.monotonic()),
            )
            results["raw"].update({f"httpx_{k}": v for k, v in httpx.items()})
            _progress("httpx check", t0)
    except BaseException:
        for server in servers:
            if server.proc.poll() is not None:
                print(f"--- {server.kind} server output ---\n{server.output()}", file=sys.stderr)
        raise
    finally:
        for server in servers:
            server.stop()
    return results


# =========================================================================== --mode serve

SERVE_KINDS = ("serve", "sdk", "starlette")
#: The servers of the SendMessage answered with a task (the SDK also on SQLite).
TASK_KINDS = ("serve", "sdk", "sdk-db", "starlette")
LIST_BODY = b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":50}}'
CARD_PATH = b"/.well-known/agent-card.json"


async def drive(
    port: int,
    count: int,
    clients: int,
    call: Callable[[Connection], Awaitable[Any]],
    sample: Sample,
) -> None:
    """``count`` calls over ``clients`` keep-alive connections, each one at a time."""
    conns = [await Connection.open(port) for _ in range(clients)]
    todo = iter(range(count))
    latencies: list[int] = []

    async def worker(conn: Connection) -> None:
        for _ in todo:  # a shared iterator: ``count`` calls in all
            t0 = time.perf_counter_ns()
            await call(conn)
            latencies.append(time.perf_counter_ns() - t0)

    try:
        start = time.perf_counter_ns()
        await asyncio.gather(*(worker(c) for c in conns))
        sample.add(latencies, (time.perf_counter_ns() - start) / 1e9)
    finally:
        for conn in conns:
            await conn.close()


async def _send_echo(conn: Connection) -> None:
    await conn.post(send_body(ECHO_TEXT))


async def _send_task(conn: Connection) -> None:
    reply = await conn.post(send_body(TASK_TEXT))
    if b"TASK_STATE_COMPLETED" not in reply:
        raise HTTPError(f"{TASK_TEXT!r} was not answered with a completed task: {reply[:300]!r}")


async def _get_card(conn: Connection) -> None:
    await conn.get(CARD_PATH)


async def _list_tasks(conn: Connection) -> None:
    await conn.post(LIST_BODY)


def _serve_command(store: str) -> list[str]:
    script = Path(sys.executable).with_name("a2a-models")
    launcher = [str(script)] if script.exists() else [sys.executable, "-m", "a2a_models"]
    return [
        *launcher,
        "serve",
        "--host",
        HOST,
        "--port",
        "{port}",
        "--store",
        store,
        "--agent",
        "bench_echo_agent:Echo",
        "--log-level",
        "warning",
    ]


async def measure_serve(args: argparse.Namespace) -> bool:
    """``a2a-models serve`` (SQLite store) vs the SDK's server vs bare Starlette.

    Keep-alive clients at 1, 16 and 64 connections (SendMessage), then the
    agent card and a ListTasks page (50 of 100 tasks) on one connection.
    Rounds alternate the servers, as in the default mode.
    """
    if _two_cpus():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {0})
    tmp = tempfile.TemporaryDirectory(prefix="a2a-bench-serve-")
    servers: list[ServerProcess] = []
    try:
        servers.append(
            ServerProcess("serve", None, _serve_command(f"sqlite:///{tmp.name}/tasks.db"))
        )
        servers.append(ServerProcess("sdk", None))
        for server in servers:
            await server.ready()
        # 100 tasks in each store for ListTasks, then the bytes for the floor.
        for server in servers:
            conn = await Connection.open(server.port)
            try:
                for _ in range(100):
                    await conn.post(send_body("stream 1"))
            finally:
                await conn.close()
        conn = await Connection.open(servers[0].port)
        try:
            replies = {
                "send": await conn.post(send_body(ECHO_TEXT)),
                "task": await conn.post(send_body(TASK_TEXT)),
                "card": await conn.get(CARD_PATH),
                "list": await conn.post(LIST_BODY),
            }
        finally:
            await conn.close()
        if replies["list"].count(b'"id"') < 50:
            raise HTTPError(f"ListTasks gave fewer than 50 tasks: {replies['list'][:300]!r}")
        replies_file = os.path.join(tmp.name, "replies.json")
        with open(replies_file, "w") as f:
            json.dump({k: v.decode("latin-1") for k, v in replies.items()}, f)
        floor = ServerProcess("starlette", None, extra_env={"A2A_BENCH_REPLIES": replies_file})
        servers.append(floor)
        await floor.ready()
        # The SDK on SQLite too (its DatabaseTaskStore), for the SendMessage answered with a
        # task only: what storing the task costs each server.
        sdk_db = ServerProcess("sdk-db", None, extra_env={"A2A_BENCH_SDK_DB": f"{tmp.name}/sdk.db"})
        servers.append(sdk_db)
        await sdk_db.ready()
        task_kinds = {s.kind: s for s in servers}

        loads: list[tuple[str, int, int, Callable[[Connection], Awaitable[Any]]]] = [
            ("SendMessage, 1 client", 1, args.serve_requests // 4, _send_echo),
            ("SendMessage, 16 clients", 16, args.serve_requests, _send_echo),
            ("SendMessage, 64 clients", 64, args.serve_requests, _send_echo),
            ("agent card, 1 client", 1, args.serve_requests // 4, _get_card),
            ("ListTasks (50 of 100), 1 client", 1, args.serve_requests // 8, _list_tasks),
        ]
        echoing = [s for s in servers if s.kind in SERVE_KINDS]
        samples = {(label, s.kind): Sample() for label, *_ in loads for s in echoing}
        for s in echoing:  # warm-up
            await drive(s.port, args.warmup, 4, _send_echo, Sample())
        rounds = max(1, args.rounds)
        for label, clients, total, call in loads:
            t0 = time.monotonic()
            for _ in range(rounds):
                for s in echoing:
                    await drive(
                        s.port, max(1, total // rounds), clients, call, samples[label, s.kind]
                    )
            _progress(label[:28], t0)
        # SendMessage answered with a task, 1 client: rounds alternate the four servers;
        # each server's CPU time is counted over its own calls only.
        tasks = {kind: Sample() for kind in TASK_KINDS}
        task_cpu = dict.fromkeys(TASK_KINDS, 0.0)
        for kind in TASK_KINDS:
            await drive(task_kinds[kind].port, args.warmup, 1, _send_task, Sample())
        count = max(1, args.serve_requests // 4 // rounds)
        t0 = time.monotonic()
        for _ in range(rounds):
            for kind in TASK_KINDS:
                server = task_kinds[kind]
                before = server.cpu_seconds()
                await drive(server.port, count, 1, _send_task, tasks[kind])
                task_cpu[kind] += server.cpu_seconds() - before
        _progress("SendMessage -> task", t0)
    except BaseException:
        for server in servers:
            if server.proc.poll() is not None:
                print(f"--- {server.kind} server output ---\n{server.output()}", file=sys.stderr)
        raise
    finally:
        for server in servers:
            server.stop()
        tmp.cleanup()

    print()
    print(
        f"| {'':<34} | {'':<6} | {'serve':>7} | {'sdk':>7} | {'starlette':>9} | "
        f"{'serve/sdk':>9} | {'serve/starl.':>12} |"
    )
    print(f"|{'-' * 36}|{'-' * 8}|{'-' * 9}|{'-' * 9}|{'-' * 11}|{'-' * 11}|{'-' * 14}|")
    summary = {key: sample.summary() for key, sample in samples.items()}
    for label, *_ in loads:
        for unit, key in (("req/s", "rps"), ("p50 us", "p50"), ("p99 us", "p99")):
            v = [summary[label, kind][key] for kind in SERVE_KINDS]
            print(
                f"| {label if key == 'rps' else '':<34} | {unit:<6} | {v[0]:>7,.0f} | "
                f"{v[1]:>7,.0f} | {v[2]:>9,.0f} | {v[0] / v[1]:>8.2f}x | {v[0] / v[2]:>11.2f}x |"
            )
    task_summary = {kind: sample.summary() for kind, sample in tasks.items()}
    cpu_us = {kind: task_cpu[kind] / (count * rounds) * 1e6 for kind in TASK_KINDS}
    print()
    print(f"SendMessage answered with a task ({TASK_TEXT!r}: working, then completed), 1 client")
    print()
    print(
        f"| {'':<12} | {'serve':>7} | {'sdk':>7} | {'sdk-db':>7} | {'starlette':>9} | "
        f"{'serve/sdk':>9} | {'serve/sdk-db':>12} |"
    )
    print(f"|{'-' * 14}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 11}|{'-' * 11}|{'-' * 14}|")
    for unit, value in (
        ("req/s", lambda kind: task_summary[kind]["rps"]),
        ("p50 us", lambda kind: task_summary[kind]["p50"]),
        ("CPU us/req", lambda kind: cpu_us[kind]),
    ):
        v = [value(kind) for kind in TASK_KINDS]
        print(
            f"| {unit:<12} | {v[0]:>7,.0f} | {v[1]:>7,.0f} | {v[2]:>7,.0f} | {v[3]:>9,.0f} | "
            f"{v[0] / v[1]:>8.2f}x | {v[0] / v[2]:>11.2f}x |"
        )
    print(
        "sdk-db: a2a-sdk DefaultRequestHandler + DatabaseTaskStore (SQLite, aiosqlite); "
        "serve's SQLite store fsyncs every commit (synchronous=FULL), the SDK's does not "
        "ask for that. CPU: the server process's, over its own calls."
    )
    import uvicorn

    print()
    print(
        f"serve: `a2a-models serve --store sqlite:///...` process; sdk: a2a-sdk "
        f"DefaultRequestHandler + InMemoryTaskStore; starlette: bare Starlette returning "
        f"serve's bytes. uvicorn {uvicorn.__version__}, one process each; "
        f"{os.cpu_count()} CPUs" + ("; client on CPU 0, servers on CPU 1" if _two_cpus() else "")
    )
    throughput = (
        summary["SendMessage, 16 clients", "serve"]["rps"]
        / summary["SendMessage, 16 clients", "sdk"]["rps"]
    )
    latency = (
        summary["SendMessage, 1 client", "serve"]["p50"]
        / summary["SendMessage, 1 client", "starlette"]["p50"]
    )
    ok_t, ok_l = throughput >= THROUGHPUT_TARGET, latency <= SERVE_LATENCY_TARGET
    print(
        f"target: serve >= {THROUGHPUT_TARGET:g}x the SDK's SendMessage req/s at 16 clients: "
        f"{throughput:.2f}x {'ok' if ok_t else 'MISSED'}"
    )
    print(
        f"target: serve p50 at 1 client <= {SERVE_LATENCY_TARGET:g}x bare Starlette's: "
        f"{latency:.2f}x {'ok' if ok_l else 'MISSED'}"
    )
    return ok_t and ok_l


# =========================================================================== --mode turns

TURN_TARGET = 1.5  # last 50 turns / first 50 turns


def turn_body(text: str, task_id: str | None, context_id: str | None) -> bytes:
    message: dict[str, Any] = {
        "messageId": f"turn-{next(_ids)}",
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
        message["contextId"] = context_id
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            # A client deep in a conversation asks for the newest messages only.
            "params": {"message": message, "configuration": {"historyLength": 10}},
        },
        separators=(",", ":"),
    ).encode()


async def conversation(port: int, turns: int) -> list[float]:
    """One conversation of ``turns`` SendMessage calls on one task; seconds per turn."""
    conn = await Connection.open(port)
    try:
        task_id = context_id = None
        times = []
        for i in range(turns):
            t0 = time.perf_counter()
            reply = json.loads(await conn.post(turn_body(f"turn {i}", task_id, context_id)))
            times.append(time.perf_counter() - t0)
            task = reply["result"]["task"]
            if task["status"]["state"] != "TASK_STATE_INPUT_REQUIRED":
                raise HTTPError(f"turn {i}: {reply!r:.300}")
            if len(task.get("history", [])) > 10:
                raise HTTPError(f"turn {i}: historyLength not applied")
            task_id, context_id = task["id"], task["contextId"]
        return times
    finally:
        await conn.close()


async def _each_store_server(
    args: argparse.Namespace, name: str, run: Callable[[int], Awaitable[Any]]
) -> list[tuple[str, Any]]:
    """``(label, run(port))`` for ``a2a-models serve`` on SQLite and (unless
    ``--no-postgres``) PostgreSQL, then the SDK's server with its DatabaseTaskStore on
    SQLite, one after the other; files and schema are removed afterwards."""
    if _two_cpus():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {0})
    tmp = tempfile.TemporaryDirectory(prefix=f"a2a-bench-{name}-")
    pg = os.environ.get("A2A_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
    schema = f"bench_{name}_{os.getpid()}"
    kinds = [("serve sqlite", _serve_command(f"sqlite:///{tmp.name}/{name}.db"), None)]
    if not args.no_postgres:
        kinds.append(("serve postgres", _serve_command(f"{pg}?schema={schema}"), None))
    kinds.append(("sdk sqlite", None, {"A2A_BENCH_SDK_DB": f"{tmp.name}/sdk.db"}))
    results = []
    try:
        for label, command, env in kinds:
            server = ServerProcess("sdk-db" if command is None else "serve", None, command, env)
            try:
                await server.ready()
                results.append((label, await run(server.port)))
            finally:
                server.stop()
    finally:
        if not args.no_postgres:
            with contextlib.suppress(Exception):
                import psycopg

                with psycopg.connect(pg, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        tmp.cleanup()
    return results


async def measure_turns(args: argparse.Namespace) -> bool:
    """``args.turns`` turns of one conversation through ``a2a-models serve`` (SQLite and,
    if reachable, PostgreSQL) and through the SDK's server with its DatabaseTaskStore."""
    rows = []
    for label, times in await _each_store_server(
        args, "turns", lambda port: conversation(port, args.turns)
    ):
        first = statistics.median(times[:50]) * 1e3
        last = statistics.median(times[-50:]) * 1e3
        rows.append((label, first, last))
    ok = True
    print(f"\n{args.turns:,} turns of one conversation (SendMessage, historyLength=10), ms/turn:")
    print(f"| {'':<16} | {'first 50':>9} | {'last 50':>9} | {'last/first':>10} |")
    for label, first, last in rows:
        target = (
            "" if label.startswith("sdk") else (" ok" if last / first <= TURN_TARGET else " MISSED")
        )
        if target == " MISSED":
            ok = False
        print(f"| {label:<16} | {first:>9.2f} | {last:>9.2f} | {last / first:>9.2f}x |{target}")
    print(f"target: serve's last 50 turns <= {TURN_TARGET:g}x its first 50 (medians)")
    return ok


# =========================================================================== --mode chunks

CHUNK_TARGET = 1.5  # time per chunk, last 300 / first 300


async def streamed_artifact(port: int, chunks: int) -> list[float]:
    """One SendStreamingMessage of ``chunks N``; seconds between consecutive events."""
    conn = await Connection.open(port)
    try:
        arrivals: list[float] = []
        events = await conn.stream(send_body(f"chunks {chunks}", "SendStreamingMessage"), arrivals)
    finally:
        await conn.close()
    if events < chunks + 1:
        raise HTTPError(f"an artifact of {chunks} chunks gave only {events} events")
    return [b - a for a, b in itertools.pairwise(arrivals)]


async def measure_chunks(args: argparse.Namespace) -> bool:
    """One artifact streamed in ``args.chunks`` appended chunks through ``a2a-models
    serve`` (SQLite and, if reachable, PostgreSQL) and the SDK's server with its
    DatabaseTaskStore: the time per chunk at the start and at the end of the stream."""

    async def stream(port: int) -> tuple[list[float], float]:
        t0 = time.perf_counter()
        gaps = await streamed_artifact(port, args.chunks)
        return gaps, time.perf_counter() - t0

    rows = []
    for label, (gaps, wall) in await _each_store_server(args, "chunks", stream):
        window = min(300, len(gaps) // 4)
        first = statistics.mean(gaps[1 : window + 1]) * 1e3
        last = statistics.mean(gaps[-window - 1 : -1]) * 1e3
        rows.append((label, first, last, wall))
    print(f"\none artifact streamed in {args.chunks:,} chunks (SendStreamingMessage), ms/chunk:")
    print(f"| {'':<16} | {'first 300':>9} | {'last 300':>9} | {'last/first':>10} | {'total':>8} |")
    ok = True
    for label, first, last, wall in rows:
        target = ""
        if not label.startswith("sdk"):
            target = " ok" if last / first <= CHUNK_TARGET else " MISSED"
            ok = ok and target == " ok"
        print(
            f"| {label:<16} | {first:>9.2f} | {last:>9.2f} | {last / first:>9.2f}x "
            f"| {wall:>6.1f} s |{target}"
        )
    print(f"target: serve's last 300 chunks <= {CHUNK_TARGET:g}x its first 300 (means)")
    return ok


# =========================================================================== --mode bindings

#: Every binding and dialect ``a2a-models serve --grpc-port`` answers.
BINDINGS = ("jsonrpc", "jsonrpc-0.3", "rest", "rest-0.3", "grpc")
GET_TASK_TARGET = 1.5  # GetTask(historyLength=10): long conversation / short one
_GRPC_METADATA = (("a2a-version", "1.0"),)


def _grpc_pb() -> Any:
    """The ``lf.a2a.v1`` protobuf module (this process is the load generator)."""
    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    from a2a_models.adapters.grpc import pb

    return pb


def _wire_message(binding: str, text: str, task: tuple[str, str] | None) -> dict[str, Any]:
    """A user message of ``text`` in the binding's JSON (``task``: its task and context ids)."""
    if binding == "jsonrpc-0.3":
        message = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": text}]}
    elif binding == "rest-0.3":  # 0.3's HTTP+JSON is the 0.3 proto's JSON: parts are "content"
        message = {"role": "ROLE_USER", "content": [{"text": text}]}
    else:
        message = {"role": "ROLE_USER", "parts": [{"text": text}]}
    message["messageId"] = f"bench-{next(_ids)}"
    if task is not None:
        message["taskId"], message["contextId"] = task
    return message


class BindingClient:
    """One keep-alive HTTP connection and one gRPC channel to a ``serve --grpc-port``,
    speaking ``binding``: a stream of ``chunks N``, a conversation's turns, GetTask."""

    def __init__(self, binding: str, conn: Connection, channel: Any) -> None:
        self.binding = binding
        self.conn = conn
        self.channel = channel
        self.version = b"0.3" if binding.endswith("0.3") else b"1.0"

    @classmethod
    async def open(cls, binding: str, port: int, grpc_port: int) -> BindingClient:
        import grpc.aio

        channel = grpc.aio.insecure_channel(f"{HOST}:{grpc_port}")
        return cls(binding, await Connection.open(port), channel)

    async def close(self) -> None:
        await self.conn.close()
        await self.channel.close()

    def _rpc(self, method: str, params: dict[str, Any]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()

    async def stream(self, text: str, on_event: Callable[[int], None]) -> int:
        """SendStreamingMessage (0.3: ``message/stream``) of ``text``; the events received."""
        if self.binding == "grpc":
            pb = _grpc_pb()
            request = pb.SendMessageRequest(message=pb.Message(**_pb_message(text)))
            call = self.channel.unary_stream("/lf.a2a.v1.A2AService/SendStreamingMessage")
            events = 0
            async for _ in call(request.SerializeToString(), metadata=_GRPC_METADATA):
                events += 1
                on_event(events)
            return events
        params = {"message": _wire_message(self.binding, text, None)}
        if self.binding.startswith("rest"):
            path = b"/v1/message:stream" if self.version == b"0.3" else b"/message:stream"
            body = json.dumps(params).encode()
        else:
            path = b"/"
            method = "message/stream" if self.version == b"0.3" else "SendStreamingMessage"
            body = self._rpc(method, params)
        return await self.conn.stream(body, path=path, version=self.version, on_event=on_event)

    async def turn(self, text: str, task: tuple[str, str] | None) -> tuple[str, str]:
        """One SendMessage asking for ``historyLength: 10``; the task's (id, context id)."""
        if self.binding == "grpc":
            pb = _grpc_pb()
            message = pb.Message(**_pb_message(text))
            if task is not None:
                message.task_id, message.context_id = task
            request = pb.SendMessageRequest(
                message=message, configuration=pb.SendMessageConfiguration(history_length=10)
            )
            call = self.channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage")
            raw = await call(request.SerializeToString(), metadata=_GRPC_METADATA)
            answer = pb.SendMessageResponse.FromString(raw).task
            state, history = pb.TaskState.Name(answer.status.state), len(answer.history)
            ids = (answer.id, answer.context_id)
        else:
            if self.binding != "jsonrpc-0.3":
                raise ValueError(f"turns over {self.binding}: use --mode turns (JSON-RPC 1.0)")
            params = {
                "message": _wire_message(self.binding, text, task),
                "configuration": {"historyLength": 10},
            }
            result = json.loads(
                await self.conn.post(self._rpc("message/send", params), version=self.version)
            )["result"]
            state, history = result["status"]["state"], len(result.get("history", []))
            ids = (result["id"], result["contextId"])
        if state not in ("TASK_STATE_INPUT_REQUIRED", "input-required") or history > 10:
            raise HTTPError(f"{self.binding} turn {text!r}: {state}, {history} messages")
        return ids

    async def get_task(self, task_id: str, history_length: int) -> int:
        """GetTask (0.3: ``tasks/get``) with ``historyLength``; the messages returned."""
        if self.binding == "grpc":
            pb = _grpc_pb()
            request = pb.GetTaskRequest(id=task_id, history_length=history_length)
            call = self.channel.unary_unary("/lf.a2a.v1.A2AService/GetTask")
            raw = await call(request.SerializeToString(), metadata=_GRPC_METADATA)
            return len(pb.Task.FromString(raw).history)
        if self.binding.startswith("rest"):
            prefix = b"/v1/tasks/" if self.version == b"0.3" else b"/tasks/"
            path = prefix + task_id.encode() + b"?historyLength=" + str(history_length).encode()
            task = json.loads(await self.conn.get(path, self.version))
        else:
            method = "tasks/get" if self.version == b"0.3" else "GetTask"
            params = {"id": task_id, "historyLength": history_length}
            task = json.loads(await self.conn.post(self._rpc(method, params), version=self.version))
            task = task["result"]
        return len(task.get("history", []))


def _pb_message(text: str) -> dict[str, Any]:
    pb = _grpc_pb()
    return {
        "message_id": f"bench-{next(_ids)}",
        "role": pb.ROLE_USER,
        "parts": [pb.Part(text=text)],
    }


async def _chunk_cpu(
    client: BindingClient, server: ServerProcess, chunks: int
) -> tuple[float, float]:
    """Server CPU µs per chunk over the first and the last 300 chunks of one stream."""
    window = min(300, chunks // 4)
    # Event 1 is the task, events 2 .. chunks + 1 the chunks.
    marks = {2: 0.0, 2 + window: 0.0, chunks + 1 - window: 0.0, chunks + 1: 0.0}

    def on_event(n: int) -> None:
        if n in marks:
            marks[n] = server.cpu_seconds()

    events = await client.stream(f"chunks {chunks}", on_event)
    if events < chunks + 1:
        raise HTTPError(f"{client.binding}: {chunks} chunks gave only {events} events")
    first = (marks[2 + window] - marks[2]) / window * 1e6
    last = (marks[chunks + 1] - marks[chunks + 1 - window]) / window * 1e6
    return first, last


async def _turn_cpu(
    client: BindingClient, server: ServerProcess, turns: int
) -> tuple[str, list[float]]:
    """One conversation of ``turns`` turns; its task id and the server CPU µs of each turn."""
    task = None
    per_turn = []
    for i in range(turns):
        before = server.cpu_seconds()
        task = await client.turn(f"turn {i}", task)
        per_turn.append((server.cpu_seconds() - before) * 1e6)
    assert task is not None
    return task[0], per_turn


async def _get_task_cpu(
    client: BindingClient, server: ServerProcess, task_id: str, requests: int = 100
) -> float:
    """Server CPU µs per GetTask(historyLength=10) of ``task_id``."""
    before = server.cpu_seconds()
    for _ in range(requests):
        if await client.get_task(task_id, 10) != 10:
            raise HTTPError(f"{client.binding}: historyLength=10 not applied")
    return (server.cpu_seconds() - before) / requests * 1e6


async def measure_bindings(args: argparse.Namespace) -> bool:
    """``a2a-models serve --grpc-port`` (SQLite) over every binding and dialect: server CPU
    per chunk of a streamed artifact (first vs last 300), per turn of a long conversation
    over gRPC and 0.3 JSON-RPC (first vs last 50), per GetTask(historyLength=10) of that
    conversation against a short one, and per first resume of their streams in a fresh
    process (REST, ``Last-Event-ID``)."""
    if _two_cpus():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {0})
    tmp = tempfile.TemporaryDirectory(prefix="a2a-bench-bindings-")
    grpc_port = _free_port()
    command = _serve_command(f"sqlite:///{tmp.name}/bindings.db")
    server = ServerProcess("serve", None, [*command, "--grpc-port", str(grpc_port)])
    ok = True

    def row(binding: str, small: float, large: float, target: float) -> None:
        nonlocal ok
        good = large / small <= target
        ok = ok and good
        verdict = " ok" if good else " MISSED"
        print(
            f"| {binding:<12} | {small:>11.0f} | {large:>11.0f} | {large / small:>9.2f}x |{verdict}"
        )

    def head(title: str, small: str, large: str) -> None:
        print(f"\n{title}")
        print(f"| {'binding':<12} | {small:>11} | {large:>11} | {'ratio':>10} |")

    async def client(binding: str) -> BindingClient:
        # A connection per section: the server closes one left idle (keep-alive timeout).
        return await BindingClient.open(binding, server.port, grpc_port)

    try:
        await server.ready()
        head(
            f"one artifact in {args.chunks:,} chunks, server CPU µs/chunk:", "first 300", "last 300"
        )
        for binding in BINDINGS:
            c = await client(binding)
            try:
                row(binding, *await _chunk_cpu(c, server, args.chunks), CHUNK_TARGET)
            finally:
                await c.close()

        head(f"{args.turns:,} turns (historyLength=10), server CPU µs/turn:", "first 50", "last 50")
        tasks: list[str] = []
        for binding in ("grpc", "jsonrpc-0.3", "grpc"):
            c = await client(binding)
            try:
                turns = args.turns if len(tasks) < 2 else 5  # then a short conversation
                task_id, per_turn = await _turn_cpu(c, server, turns)
            finally:
                await c.close()
            tasks.append(task_id)
            if len(tasks) < 3:
                first, last = statistics.median(per_turn[:50]), statistics.median(per_turn[-50:])
                row(binding, first, last, TURN_TARGET)
        long_task, short_task = tasks[0], tasks[2]

        messages = f"{2 * args.turns:,} msgs"
        head("GetTask(historyLength=10), server CPU µs (best of 3 x 100):", "10 msgs", messages)
        for binding in BINDINGS:
            c = await client(binding)
            try:
                short = min([await _get_task_cpu(c, server, short_task) for _ in range(3)])
                long = min([await _get_task_cpu(c, server, long_task) for _ in range(3)])
            finally:
                await c.close()
            row(binding, short, long, GET_TASK_TARGET)

        # A process that has not read the tasks yet (a restart, another replica): the
        # first resume of each one's stream in a fresh `serve` on the same database.
        head("first resume (Last-Event-ID) in a fresh process, server CPU µs:", "10 msgs", messages)
        last_ids = {task: await _last_event_id(server.port, task) for task in tasks}
        for binding in ("rest", "rest-0.3"):
            server.stop()
            server = ServerProcess("serve", None, command)
            await server.ready()
            await _resume_cpu(server, binding, tasks[1], last_ids[tasks[1]])  # warms the code
            short = await _resume_cpu(server, binding, short_task, last_ids[short_task])
            long = await _resume_cpu(server, binding, long_task, last_ids[long_task])
            row(binding, short, long, GET_TASK_TARGET)
        print(
            f"targets: last/first <= {CHUNK_TARGET:g}x (chunks), {TURN_TARGET:g}x (turns); "
            f"long/short <= {GET_TASK_TARGET:g}x (GetTask, resume)"
        )
    finally:
        server.stop()
        tmp.cleanup()
    return ok


async def _last_event_id(port: int, task_id: str) -> bytes:
    """The seq of a task's newest event: the SSE id of SubscribeToTask's first event."""
    conn = await Connection.open(port)
    try:
        pending = b""
        path = b"/tasks/" + task_id.encode() + b":subscribe"
        async for chunk in await conn.subscribe(path, b"1.0"):
            pending += chunk
            if b"\n\n" in pending.replace(b"\r\n", b"\n"):
                break
    finally:
        await conn.close()
    for line in pending.replace(b"\r\n", b"\n").split(b"\n"):
        if line.startswith(b"id:"):
            return line[3:].strip()
    raise HTTPError(f"no event id in {pending[:300]!r}")


async def _resume_cpu(server: ServerProcess, binding: str, task_id: str, last_id: bytes) -> float:
    """Server CPU µs of one resume at the task's newest event (nothing to replay)."""
    prefix, version = (b"/v1/tasks/", b"0.3") if binding == "rest-0.3" else (b"/tasks/", b"1.0")
    conn = await Connection.open(server.port)
    before = server.cpu_seconds()
    try:  # once the head is answered, the task has been read
        await conn.subscribe(prefix + task_id.encode() + b":subscribe", version, last_id)
    finally:
        await conn.close()
    await asyncio.sleep(0.05)  # the server notices the close
    return (server.cpu_seconds() - before) * 1e6


def _progress(label: str, since: float) -> None:
    print(f"  {label:<12} {time.monotonic() - since:6.1f} s", file=sys.stderr, flush=True)


def report(results: dict[str, dict[str, float]], args: argparse.Namespace) -> bool:
    ours, sdk, raw = (results[k] for k in SERVERS)
    rows = [
        (f"SendMessage, sequential ({args.seq:,})", "req/s", "seq_rps"),
        ("", "p50 us", "seq_p50"),
        ("", "p99 us", "seq_p99"),
        ("", "CPU us/req", "seq_cpu"),
        (f"SendMessage, {args.clients} clients ({args.conc_requests:,})", "req/s", "conc_rps"),
        ("", "p50 us", "conc_p50"),
        ("", "p99 us", "conc_p99"),
        ("", "CPU us/req", "conc_cpu"),
        (f"SSE, {args.stream_steps:,} status updates", "events/s", "eps"),
        ("", "CPU us/ev", "sse_cpu"),
    ]
    print()
    print(
        f"| {'':<36} | {'':<10} | {'ours':>7} | {'sdk':>7} | {'raw':>7} | "
        f"{'ours/sdk':>8} | {'ours/raw':>8} |"
    )
    print(f"|{'-' * 38}|{'-' * 12}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 10}|{'-' * 10}|")
    for label, unit, key in rows:
        o, s, r = ours[key], sdk[key], raw[key]
        ratio_s = f"{o / s:>7.2f}x" if s else f"{'-':>8}"
        ratio_r = f"{o / r:>7.2f}x" if r else f"{'-':>8}"
        print(
            f"| {label:<36} | {unit:<10} | {o:>7,.0f} | {s:>7,.0f} | {r:>7,.0f} | "
            f"{ratio_s} | {ratio_r} |"
        )
    print()
    print(
        f"events per stream: ours {ours['events']:.0f}, sdk {sdk['events']:.0f}, "
        f"raw {raw['events']:.0f}; SSE: best of {args.stream_repeats}"
    )
    if "httpx_p50" in raw:
        print(
            f"load generator: a raw asyncio HTTP/1.1 client. httpx.AsyncClient against the "
            f"floor: {raw['httpx_rps']:,.0f} req/s, p50 {raw['httpx_p50']:,.0f} us "
            f"(raw client: {raw['seq_rps']:,.0f} req/s, p50 {raw['seq_p50']:,.0f} us)"
        )
    import uvicorn

    loop = "uvloop" if _has("uvloop") else "asyncio"
    parser = "httptools" if _has("httptools") else "h11"
    print(
        f"uvicorn {uvicorn.__version__}, one worker each, loop={loop}, http={parser}; "
        f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs"
        + ("; client on CPU 0, servers on CPU 1" if _two_cpus() else "")
    )
    throughput = min(ours["seq_rps"] / sdk["seq_rps"], ours["conc_rps"] / sdk["conc_rps"])
    latency = ours["seq_p50"] / raw["seq_p50"]
    ok_t = throughput >= THROUGHPUT_TARGET
    ok_l = latency <= LATENCY_TARGET
    if sdk["seq_cpu"] and raw["seq_cpu"]:
        print(
            f"by server CPU per request (robust to machine load): the SDK needs "
            f"{sdk['seq_cpu'] / ours['seq_cpu']:.2f}x ours (sequential), "
            f"{sdk['conc_cpu'] / ours['conc_cpu']:.2f}x (concurrent); ours needs "
            f"{ours['seq_cpu'] / raw['seq_cpu']:.2f}x the floor's"
        )
    print(
        f"target: ours >= {THROUGHPUT_TARGET:g}x the SDK's SendMessage throughput "
        f"(worse of sequential/concurrent): {throughput:.2f}x {'ok' if ok_t else 'MISSED'}"
    )
    print(
        f"target: ours <= {LATENCY_TARGET:g}x the floor's p50 latency (sequential): "
        f"{latency:.2f}x {'ok' if ok_l else 'MISSED'}"
    )
    return ok_t and ok_l


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def print_profile(path: str, limit: int) -> None:
    import pstats

    print(f"\n--- cProfile of the {path} server (by own time) ---")
    stats = pstats.Stats(path)
    stats.sort_stats("tottime").print_stats(limit)
    print("--- by cumulative time ---")
    stats.sort_stats("cumulative").print_stats(limit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seq", type=int, default=2000, help="sequential SendMessage requests")
    parser.add_argument("--conc-requests", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--stream-steps", type=int, default=1000)
    parser.add_argument("--stream-repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=4, help="rounds alternating the servers")
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument(
        "--serve-requests", type=int, default=4000, help="--mode serve: requests per load"
    )
    parser.add_argument("--httpx-requests", type=int, default=1000)
    parser.add_argument("--time-limit", type=float, default=100.0, help="overall budget, seconds")
    parser.add_argument("--no-httpx", action="store_true", help="skip the httpx comparison")
    parser.add_argument("--profile", choices=("ours", "sdk"), help="run that server under cProfile")
    parser.add_argument("--profile-limit", type=int, default=35)
    parser.add_argument(
        "--mode",
        choices=("apps", "serve", "turns", "chunks", "bindings"),
        default="apps",
        help="apps: the three ASGI apps (default); serve: `a2a-models serve --store sqlite` "
        "as a process vs the SDK vs bare Starlette, at 1/16/64 keep-alive clients; turns: "
        "one long conversation through serve and the SDK; chunks: one artifact streamed "
        "in many appended chunks through serve and the SDK; bindings: serve's server CPU per "
        "chunk, turn and GetTask over JSON-RPC, REST (1.0 and 0.3) and gRPC",
    )
    parser.add_argument(
        "--serve", choices=(*SERVERS, "starlette", "sdk-db"), help=argparse.SUPPRESS
    )
    parser.add_argument("--turns", type=int, default=1000, help="--mode turns, bindings: turns")
    parser.add_argument("--chunks", type=int, default=3000, help="--mode chunks, bindings: chunks")
    parser.add_argument(
        "--no-postgres", action="store_true", help="--mode turns, chunks: SQLite only"
    )
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.port, args.profile_out)
        return 0
    args.profile_file = None
    if args.profile:
        args.profile_file = os.path.join(
            tempfile.gettempdir(), f"a2a-bench-{args.profile}-{os.getpid()}.prof"
        )
    started = time.monotonic()
    if args.mode == "bindings":
        ok = asyncio.run(measure_bindings(args))
        print(f"(total {time.monotonic() - started:.1f} s)")
        return 0 if ok else 1
    if args.mode == "chunks":
        ok = asyncio.run(measure_chunks(args))
        print(f"(total {time.monotonic() - started:.1f} s)")
        return 0 if ok else 1
    if args.mode == "turns":
        ok = asyncio.run(measure_turns(args))
        print(f"(total {time.monotonic() - started:.1f} s)")
        return 0 if ok else 1
    if args.mode == "serve":
        ok = asyncio.run(measure_serve(args))
        print(f"(total {time.monotonic() - started:.1f} s)")
        return 0 if ok else 1
    results = asyncio.run(measure(args))
    ok = report(results, args)
    print(f"(total {time.monotonic() - started:.1f} s)")
    if args.profile_file and os.path.exists(args.profile_file):
        print_profile(args.profile_file, args.profile_limit)
        os.unlink(args.profile_file)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
