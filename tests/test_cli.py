"""The ``a2a-models`` command, run as a subprocess against a server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from a2a_models import codec  # noqa: E402
from a2a_models import models as m  # noqa: E402
from a2a_models._cli import ServeOptions, build_parser, load_agent, main  # noqa: E402
from a2a_models._cli._demo import TASK_TRIGGER, DemoAgent, demo_card  # noqa: E402
from a2a_models.protocol import format_event  # noqa: E402
from a2a_models.server import AgentServer, Reply  # noqa: E402

SRC = str(Path(__file__).resolve().parents[1] / "src")


class Demo:
    """The demo agent behind a minimal JSON-RPC binding, in a thread."""

    def __init__(self) -> None:
        self.url = ""
        self.headers: list[dict[str, str]] = []
        self.server: AgentServer | None = None

    def app(self) -> Starlette:
        async def rpc(request: Request) -> Response:
            assert self.server is not None
            self.headers.append(dict(request.headers))
            reply = await self.server.handle(await request.body(), dict(request.headers))
            if isinstance(reply, Reply):
                return Response(reply.body or b"", media_type="application/json")

            async def events() -> Any:
                async for event in reply.events:
                    yield format_event(event.data, event.id)

            return StreamingResponse(events(), media_type="text/event-stream")

        async def card(request: Request) -> Response:
            return Response(
                codec.encode(demo_card(self.url + "/rpc")), media_type="application/json"
            )

        return Starlette(
            routes=[
                Route("/rpc", rpc, methods=["POST"]),
                Route("/.well-known/agent-card.json", card),
            ]
        )


@pytest.fixture(scope="module")
def demo() -> Iterator[Demo]:
    site = Demo()
    site.server = AgentServer(DemoAgent(step_delay=0.01), demo_card("http://placeholder/"))
    config = uvicorn.Config(
        site.app(), host="127.0.0.1", port=0, log_level="critical", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        time.sleep(0.005)
    site.url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    yield site
    server.should_exit = server.force_exit = True
    thread.join(5)


def cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "a2a_models", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def run(capsys: Any, *args: str) -> tuple[int, str, str]:
    """The command in this process (fast); its status, stdout and stderr."""
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


# ------------------------------------------------------------------------ as a subprocess


def test_send_prints_the_echo(demo: Demo) -> None:
    done = cli("send", demo.url, "hello there")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[message] echo: hello there\n"


def test_send_task_streams_one_line_per_event(demo: Demo) -> None:
    done = cli("send", demo.url, TASK_TRIGGER, "--stream")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("[task ") and lines[0].endswith("submitted")
    assert lines[1] == "[status] working: Planning (step 1 of 3)"
    assert "[artifact report] The demo task " in lines
    assert "[artifact report] (more) is done." in lines
    assert lines[-1] == "[status] completed: Demo task complete"


def test_card_prints_json(demo: Demo) -> None:
    done = cli("card", demo.url)
    assert done.returncode == 0, done.stderr
    card = json.loads(done.stdout)
    assert card["name"] == "a2a-models demo agent"
    assert card["supportedInterfaces"][0]["url"] == demo.url + "/rpc"


def test_send_errors_are_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = cli("send", f"http://127.0.0.1:{port}", "hi")
    assert done.returncode == 1
    assert "error:" in done.stderr and "Traceback" not in done.stderr


def test_help_and_usage_errors() -> None:
    done = cli("send", "http://x", "hi", "--header", "no-colon")
    assert done.returncode == 2
    assert "NAME:VALUE" in done.stderr
    done = cli("--help")
    assert done.returncode == 0 and "serve" in done.stdout


# ------------------------------------------------------------------------ in process


def test_send_json_lines_are_stream_responses(demo: Demo, capsys: Any) -> None:
    status, out, err = run(
        capsys, "send", demo.url, TASK_TRIGGER, "--stream", "--json", "--version", "0.3"
    )
    assert status == 0, err
    items = [codec.decode(m.StreamResponse, line, "1.0") for line in out.splitlines()]
    assert isinstance(items[0], m.Task)
    assert items[-1].status.state is m.TaskState.COMPLETED
    assert "a2a-version" not in demo.headers[-1]  # spoke 0.3


def test_send_blocking_task_prints_the_final_task(demo: Demo, capsys: Any) -> None:
    status, out, err = run(capsys, "send", demo.url, "task", "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # streamed in two chunks, stored as one part (joined at the last chunk)
    assert result["task"]["artifacts"][0]["parts"] == [{"text": "The demo task is done."}]


def test_send_headers_and_no_card(demo: Demo, capsys: Any) -> None:
    status, _out, err = run(
        capsys,
        "send",
        demo.url + "/rpc",
        "hi",
        "--no-card",
        "-H",
        "Authorization: Bearer tok",
        "--header",
        "X-A:b",
    )
    assert status == 0, err
    assert demo.headers[-1]["authorization"] == "Bearer tok"
    assert demo.headers[-1]["x-a"] == "b"
    assert demo.headers[-1]["a2a-version"] == "1.0"


def test_send_finds_the_card_at_the_root(demo: Demo, capsys: Any) -> None:
    status, out, err = run(capsys, "send", demo.url + "/rpc", "hi", "--version", "0.3")
    assert status == 0, err
    assert out == "[message] echo: hi\n"
    assert "no agent card" not in err


def test_send_continues_a_context(demo: Demo, capsys: Any) -> None:
    status, out, err = run(
        capsys,
        "send",
        demo.url,
        "again",
        "--context-id",
        "ctx-1",
        "--json",
        "--transport",
        "jsonrpc",
    )
    assert status == 0, err
    assert json.loads(out)["message"]["contextId"] == "ctx-1"


def test_card_formats(demo: Demo, capsys: Any) -> None:
    status, out, _ = run(capsys, "card", demo.url, "--format", "0.3")
    legacy = json.loads(out)
    assert status == 0
    assert legacy["url"] == demo.url + "/rpc" and legacy["protocolVersion"].startswith("0.3")
    status, out, _ = run(capsys, "card", demo.url, "--format", "raw")
    assert status == 0
    assert json.loads(out) == codec.to_wire(demo_card(demo.url + "/rpc"), "1.0")
    status, _, err = run(capsys, "card", demo.url + "/nothing/here.json")
    assert status == 1 and "no agent card" in err


# ------------------------------------------------------------------------ serve


def test_serve_hands_its_options_to_run_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    http = importlib.import_module("a2a_models._cli._run")
    seen: list[ServeOptions] = []

    async def run_server(options: ServeOptions) -> int:
        seen.append(options)
        return 0

    monkeypatch.setattr(http, "run_server", run_server, raising=False)
    status = main(
        [
            "serve",
            "--port",
            "0",
            "--store",
            "sqlite:///x.db",
            "--auth-token",
            "a",
            "--auth-token",
            "b",
        ]
    )
    assert status == 0
    assert seen == [
        ServeOptions(host="127.0.0.1", port=0, store="sqlite:///x.db", auth_tokens=("a", "b"))
    ]


def test_serve_async_run_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    http = importlib.import_module("a2a_models._cli._run")

    async def run_server(options: ServeOptions) -> int:
        return 3

    monkeypatch.setattr(http, "run_server", run_server, raising=False)
    assert main(["serve", "--agent", "conformance", "--base-path", "/a2a"]) == 3


def test_serve_without_the_server(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:

    monkeypatch.setitem(sys.modules, "a2a_models.adapters.http", None)
    assert main(["serve"]) == 2
    assert "pip install" in capsys.readouterr().err


def test_serve_options_defaults() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.store, args.agent, args.base_path, args.auth_token) == (
        "127.0.0.1",
        8000,
        "sqlite:///a2a-tasks.db",
        "demo",
        "",
        [],
    )


def test_load_agent() -> None:
    assert isinstance(load_agent("demo"), DemoAgent)
    assert isinstance(load_agent("a2a_models._cli._demo:DemoAgent"), DemoAgent)
    with pytest.raises(ValueError, match="without arguments"):
        load_agent("a2a_models._cli._demo:demo_card")
    with pytest.raises(ValueError, match=r"not an a2a_models\.server\.Agent"):
        load_agent("a2a_models._cli._demo:TASK_TRIGGER")
    with pytest.raises(ValueError, match="cannot import"):
        load_agent("no_such_module:x")
