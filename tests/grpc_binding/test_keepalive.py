"""gRPC keep-alive pings: a long-silent stream stays up, a dead peer is still found.

Real ``a2a-models serve --grpc-port`` processes; the keep-alive intervals are
made small (``--grpc-keepalive``, ``--keepalive``) instead of waiting minutes.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _procs import CliProcess, a2a_command, cli_env

pytest.importorskip("grpc")

from a2a_models._cli import main

TIMEOUT = 60.0

#: ``silent S``: S seconds without a word, then completed; ``tick N GAP``: N updates.
QUIET_AGENT = """
import asyncio

from a2a_models.server import Agent


class QuietAgent(Agent):
    async def execute(self, context):
        word, *args = context.message.text.split()
        if word == "silent":
            await asyncio.sleep(float(args[0]))
            yield context.complete("done after silence")
            return
        for i in range(int(args[0])):
            yield context.working(f"tick {i}")
            await asyncio.sleep(float(args[1]))
        yield context.complete("ticks done")
"""


class Grpc(CliProcess):
    """``a2a-models serve --grpc-port 0`` with :data:`QUIET_AGENT`; ``grpc_url`` once ready."""

    def __init__(self, folder: Path, *args: str, env: dict[str, str] | None = None) -> None:
        super().__init__(
            [
                "serve",
                "--port",
                "0",
                "--grpc-port",
                "0",
                "--store",
                "memory:",
                "--agent",
                "quiet_agent:QuietAgent",
                *args,
            ],
            name="serve",
            cwd=folder,
            env=cli_env(env, pythonpath=folder),
            ready=r"a2a-models: gRPC at (\S+)",
        )
        self.wait_ready(TIMEOUT)
        self.grpc_url = self.url


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    (tmp_path / "quiet_agent.py").write_text(QUIET_AGENT)
    return tmp_path


@pytest.fixture
def serve(agent_dir: Path) -> Iterator[Any]:
    started: list[Grpc] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Grpc:
        started.append(Grpc(agent_dir, *args, env=env))
        return started[-1]

    yield start
    for served in started:
        if served.proc.poll() is None:
            served.kill()


def test_a_stream_silent_before_its_first_event_outlasts_the_idle_limit(
    serve: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from a2a_models._cli import _commands

    # An agent silent for over 60 s before its first event failed `send --stream` over
    # gRPC: the client took the quiet stream for dead ("went silent: nothing within
    # 60.0 s") and, with no task id yet, could not resume it. Now the limit bounds the
    # wait for the server's answer only; the connection is watched by pings.
    monkeypatch.setattr(_commands, "STREAM_IDLE_TIMEOUT", 0.5)
    served = serve()
    argv = ["send", served.grpc_url, "silent 2.5", "--transport", "grpc", "--no-card"]
    status = main([*argv, "--stream"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "went silent" not in err
    assert out.count("done after silence") == 1  # the one event, once


def _pings_sent(text: str, side: str) -> int:
    return len(re.findall(rf"{side}\[0x[0-9a-f]+\]: Ping \d+ sent", text))


def test_keepalive_pings_flow_both_ways_on_a_silent_stream(serve: Any) -> None:
    import subprocess

    # Both sides ping through 4 s of silence (every 0.2 s asked; gRPC sends at most
    # one a second): more than the 2 pings gRPC sends without data by default, the
    # server accepts its client's pings (by default it closes the connection:
    # too_many_pings) and the stream ends normally. Counted from gRPC's own trace.
    trace = {"GRPC_TRACE": "http_keepalive", "GRPC_VERBOSITY": "debug"}
    served = serve("--grpc-keepalive", "0.2", env=trace)
    done = subprocess.run(
        [
            *a2a_command(),
            "send",
            served.grpc_url,
            "silent 4",
            "--transport",
            "grpc",
            "--no-card",
            "--stream",
            "--keepalive",
            "0.2",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=cli_env(trace),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("done after silence") == 1
    assert "too_many_pings" not in done.stderr
    assert _pings_sent(done.stderr, "CLIENT") >= 3, done.stderr[-3000:]
    assert _pings_sent(served.log(), "SERVER") >= 3, served.log()[-3000:]


def test_a_stopped_server_is_found_by_the_pings(
    serve: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from a2a_models._cli import _commands

    # SIGSTOP: the connection stays open but nothing answers, not even pings. The
    # client's unanswered ping drops the connection, the resumptions get no answer
    # either, and `send` ends with one line instead of waiting for ever.
    monkeypatch.setattr(_commands, "STREAM_IDLE_TIMEOUT", 0.5)
    monkeypatch.setattr(_commands, "STREAM_RECONNECT_ATTEMPTS", 2)
    served = serve("--grpc-keepalive", "0.3")
    status: list[int] = []
    argv = [
        "send",
        served.grpc_url,
        "tick 600 0.1",
        "--transport",
        "grpc",
        "--no-card",
        "--stream",
        "--keepalive",
        "0.3",
    ]
    sender = threading.Thread(target=lambda: status.append(main(argv)), daemon=True)
    sender.start()
    seen = ""
    deadline = time.monotonic() + TIMEOUT
    while "tick 3" not in seen and time.monotonic() < deadline:
        seen += capsys.readouterr().out
        time.sleep(0.05)
    served.proc.send_signal(signal.SIGSTOP)
    try:
        sender.join(TIMEOUT)
        assert not sender.is_alive()  # without pings: waiting for ever
    finally:
        served.proc.send_signal(signal.SIGCONT)
    err = capsys.readouterr().err
    assert status == [1]
    assert err.count("\n") == 1 and err.startswith("a2a-models send: error: "), err
    assert "Traceback" not in err


#: A client process that subscribes to a task and prints each event.
_SUBSCRIBER = """
import asyncio, sys
from a2a_models.adapters.grpc import GrpcClient

async def main():
    async with GrpcClient(sys.argv[1]) as client:
        async for item in client.subscribe(sys.argv[2]):
            print(type(item).__name__, flush=True)

asyncio.run(main())
"""


@pytest.mark.asyncio
async def test_the_server_releases_the_stream_of_a_frozen_client(tmp_path: Path) -> None:
    import asyncio
    import subprocess
    import sys

    from a2a_models import Message
    from a2a_models import models as m
    from a2a_models.adapters.grpc import GrpcClient, GrpcServer
    from a2a_models.server import Agent, AgentServer
    from tests.http._server_support import make_card

    class Quiet(Agent):
        async def execute(self, context: Any) -> Any:
            yield context.working("started")
            await asyncio.sleep(3600)  # quiet for an hour
            yield context.complete()

    # A client that froze (SIGSTOP, a laptop put to sleep) kept its stream, its
    # subscription and its connection on the server for as long as the task ran:
    # nothing was sent on the quiet stream, so nothing failed. The server's
    # unanswered keep-alive ping now drops it.
    server = AgentServer(Quiet(), make_card())
    broker = server.handler.broker  # type: ignore[attr-defined]
    script = tmp_path / "subscriber.py"
    script.write_text(_SUBSCRIBER)
    async with (
        GrpcServer(server, keepalive_time=0.3, keepalive_timeout=0.3) as gs,
        GrpcClient(gs.url, timeout=10) as client,
    ):
        task = await client.send_message(
            Message.user("go"), configuration=m.SendMessageConfiguration(return_immediately=True)
        )
        child = subprocess.Popen(
            [sys.executable, str(script), gs.url, task.id],
            stdout=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        try:
            assert child.stdout is not None
            first = await asyncio.to_thread(child.stdout.readline)
            assert first.strip() == "Task"
            assert broker.subscriber_count(task.id) == 1
            child.send_signal(signal.SIGSTOP)
            deadline = time.monotonic() + TIMEOUT
            while broker.subscriber_count(task.id) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert broker.subscriber_count(task.id) == 0  # old code: 1 for the hour
            assert not gs.servicer._waiting
        finally:
            child.kill()
            child.wait(10)
        await client.cancel_task(task.id)
