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
