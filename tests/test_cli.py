"""The ``a2a-models`` command, run as real processes against a real ``a2a-models serve``.

A module-scoped ``serve`` process runs :data:`CLI_AGENT` (a user agent module
written to a temporary directory) whose answers cover every outcome: a direct
reply, an artifact streamed in small chunks, data and file parts with token
usage, and the failed, rejected, input-required, auth-required and canceled
states. Each test runs ``a2a-models ...`` as a subprocess (stdout a pipe, so
plain output) or, for the live view, on a pseudo-terminal.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _procs import CliProcess, a2a_command, free_port

pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
pytest.importorskip("rich")

from a2a_models import codec
from a2a_models import models as m
from a2a_models._cli import ServeOptions, build_parser, load_agent, main
from a2a_models._cli._demo import DemoAgent
from a2a_models._cli._errors import describe_error
from a2a_models._cli._render import (
    STATE_EXIT_STATUS,
    USAGE_METADATA_KEY,
    TaskView,
    blocks,
    file_label,
    human_size,
    plain_parts,
    usage_of,
)
from a2a_models.client import ClientEventStream

SRC = str(Path(__file__).resolve().parents[1] / "src")
TIMEOUT = 60.0

#: The agent the CLI talks to; TEXT picks the behaviour.
CLI_AGENT = '''
"""An agent for the CLI tests: every outcome a task can have."""

import asyncio

from a2a_models import models as m
from a2a_models.server import Agent

USAGE = {"a2a_models.usage": {"inputTokens": 1200, "outputTokens": 345}}


class CliAgent(Agent):
    """Answers by the text it is sent (chunks, parts, fail, reject, ask, auth, slow)."""

    async def execute(self, context):
        text = context.message.text
        if text == "chunks":
            yield context.working("writing")
            yield context.artifact("knowle", name="answer")
            for chunk in ("dge gra", "ph."):
                await asyncio.sleep(0.3)
                yield context.artifact(chunk, append=True, last_chunk=chunk == "ph.")
            yield context.complete("done")
        elif text == "parts":
            yield m.Task(
                id=context.task_id,
                context_id=context.context_id,
                status=m.TaskStatus(state=m.TaskState.WORKING),
                metadata=USAGE,
            )
            yield context.artifact(
                [
                    m.Part.data({"answer": 42, "items": ["a", "b"]}),
                    m.Part.file(raw=b"x" * 1500, filename="notes.txt", media_type="text/plain"),
                    m.Part.file(url="https://example.com/r.pdf", media_type="application/pdf"),
                ],
                name="results",
                description="what was found",
            )
            yield context.complete()
        elif text == "fail":
            yield context.fail("the tool crashed")
        elif text == "reject":
            yield context.reject("not my job")
        elif text == "ask":
            yield context.ask("which city?")
        elif text == "auth":
            yield context.require_auth("sign in first")
        elif text == "slow":
            for i in range(600):
                yield context.working(f"tick {i}")
                await asyncio.sleep(0.1)
            yield context.complete()
        else:
            yield context.reply("echo: " + text)
'''

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1", **extra}
    env.pop("NO_COLOR", None)
    return env


class Server(CliProcess):
    """``a2a-models serve`` in a subprocess, started (ready) here and stopped by the fixture."""

    def __init__(self, folder: Path, *args: str, port: int | None = None) -> None:
        self.port = free_port() if port is None else port
        super().__init__(
            ["serve", "--port", str(self.port), "--log-level", "warning", *args],
            name="serve",
            cwd=folder,
            env=_env(PYTHONPATH=os.pathsep.join([str(folder), SRC])),
        )
        self.wait_ready(TIMEOUT)


@pytest.fixture(scope="module")
def agent_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-agent")
    (folder / "cli_agent.py").write_text(CLI_AGENT)
    return folder


@pytest.fixture(scope="module")
def server(agent_dir: Path) -> Iterator[Server]:
    served = Server(
        agent_dir,
        "--agent",
        "cli_agent:CliAgent",
        "--store",
        "memory:",
        "--push-allow",
        "127.0.0.1",
    )
    yield served
    served.stop()


def cli(*args: str, timeout: float = TIMEOUT, **env: str) -> subprocess.CompletedProcess[str]:
    """``a2a-models ARGS`` with stdout and stderr as pipes (not a terminal)."""
    return subprocess.run(
        [*a2a_command(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(**env),
        stdin=subprocess.DEVNULL,
        check=False,
    )


def on_a_terminal(*args: str, timeout: float = TIMEOUT) -> tuple[int, str]:
    """``a2a-models ARGS`` with stdout and stderr on a pseudo-terminal: status and output."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [*a2a_command(), *args],
        stdout=terminal,
        stderr=terminal,
        stdin=subprocess.DEVNULL,
        env=_env(TERM="xterm-256color", COLUMNS="120", LINES="40"),
    )
    os.close(terminal)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.1)
            if ready:
                try:
                    data = os.read(controller, 65536)
                except OSError:  # the terminal closed: the process is gone
                    break
                if not data:
                    break
                out += data
            elif proc.poll() is not None:
                break
        status = proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        os.close(controller)
    return status, out.decode("utf-8", "replace")


def task_id_of(done: subprocess.CompletedProcess[str], status: int = 0) -> str:
    assert done.returncode == status, done.stderr
    return str(json.loads(done.stdout)["task"]["id"])


# ------------------------------------------------------------------------ send


def test_send_prints_a_direct_reply_as_plain_text(server: Server) -> None:
    done = cli("send", server.url, "hello there")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hello there\n"
    assert "\x1b" not in done.stdout + done.stderr


def test_send_joins_the_chunks_of_an_artifact_exactly(server: Server) -> None:
    for mode in ("--stream", "--no-stream"):
        done = cli("send", server.url, "chunks", mode)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert "knowledge graph." in lines, done.stdout
        assert "── answer ──" in lines
        assert "\x1b" not in done.stdout
    # Streamed, the plain view says each status as it happens, then the artifact.
    streamed = cli("send", server.url, "chunks").stdout.splitlines()
    assert re.fullmatch(r"task \S+  submitted", streamed[0])
    assert streamed[1:3] == ["working  writing", "completed  done"]


def test_send_shows_data_files_and_token_usage(server: Server) -> None:
    done = cli("send", server.url, "parts")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "tokens: 1,200 input, 345 output" in out
    assert "── results: what was found ──" in out
    data = out[out.index("{") : out.index("}") + 1]
    assert json.loads(data) == {"answer": 42, "items": ["a", "b"]}
    assert '  "answer": 42,' in out  # pretty-printed, not one line
    assert "[file] notes.txt (text/plain, 1.5 kB)" in out
    assert "[file] r.pdf (application/pdf, https://example.com/r.pdf)" in out


@pytest.mark.parametrize(
    ("text", "status", "state", "said"),
    [
        ("fail", 3, "failed", "the tool crashed"),
        ("reject", 4, "rejected", "not my job"),
        ("ask", 6, "input-required", "which city?"),
        ("auth", 7, "auth-required", "sign in first"),
    ],
)
def test_send_exit_status_says_how_the_task_ended(
    server: Server, text: str, status: int, state: str, said: str
) -> None:
    for mode in ("--stream", "--no-stream"):
        done = cli("send", server.url, text, mode)
        assert done.returncode == status, (mode, done.stdout, done.stderr)
        assert f"{state}  {said}" in done.stdout
        assert done.stderr == ""


def test_send_json_is_parseable(server: Server) -> None:
    done = cli("send", server.url, "chunks", "--json")
    assert done.returncode == 0, done.stderr
    task = codec.decode(m.SendMessageResponse, done.stdout, "1.0")
    assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
    assert "".join(p.text for p in task.artifacts[0].parts) == "knowledge graph."

    done = cli("send", server.url, "chunks", "--json", "--stream")
    assert done.returncode == 0, done.stderr
    items = [codec.decode(m.StreamResponse, line, "1.0") for line in done.stdout.splitlines()]
    assert isinstance(items[0], m.Task)
    assert sum(isinstance(i, m.TaskArtifactUpdateEvent) for i in items) == 3
    assert items[-1].status.state is m.TaskState.COMPLETED

    failed = cli("send", server.url, "fail", "--json")
    assert failed.returncode == 3
    assert json.loads(failed.stdout)["task"]["status"]["state"] == "TASK_STATE_FAILED"


def test_send_data_file_and_stdin(server: Server, tmp_path: Path) -> None:
    attachment = tmp_path / "a.json"
    attachment.write_text("{}")
    done = cli("send", server.url, "hi", "--data", '{"x": 1}', "--file", str(attachment))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hi\n"
    piped = subprocess.run(
        [*a2a_command(), "send", server.url, "-"],
        input="from stdin",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_env(),
        check=False,
    )
    assert piped.stdout == "echo: from stdin\n", piped.stderr
    bad = cli("send", server.url, "hi", "--data", "{nope")
    assert bad.returncode == 2
    assert bad.stderr.startswith("a2a-models send: --data '{nope' is not JSON")


def test_send_live_view_on_a_terminal(server: Server) -> None:
    status, out = on_a_terminal("send", server.url, "chunks")
    assert status == 0, out
    assert "\x1b[" in out  # drawn with rich
    assert any(frame in out for frame in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")  # the spinner turned
    text = ANSI.sub("", out)
    assert "knowle" in text  # the artifact grew in place ...
    final = text[text.rindex("✓") :]  # ... and the final picture is printed once
    assert "completed" in final and "knowledge graph." in final
    assert "Traceback" not in text


def test_demo_serves_sends_a_task_and_keeps_serving(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    demo = subprocess.Popen(
        [*a2a_command(), "demo", "--port", str(port), "--store", f"sqlite:///{tmp_path / 't.db'}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
        env=_env(),
    )
    try:
        assert demo.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and not lines[-1:] == ["Stop it with Ctrl-C."]:
            line = demo.stdout.readline()
            assert line, "demo ended early:\n" + "".join(lines)
            lines.append(line.rstrip("\n"))
        assert lines[0] == f"a2a-models: serving a2a-models demo agent at {url}"
        assert lines[2].endswith(f"send {url} task")
        assert "completed  Demo task complete" in lines
        assert "The demo task is done." in lines  # the answer, chunks joined
        started = re.fullmatch(r"task (\S+)  submitted", lines[3])
        assert started is not None, lines
        task_id = started.group(1)
        assert any(line.endswith(f"get {url} {task_id}") for line in lines)
        # Still serving: the commands it suggests work.
        assert cli("send", url, "hello").stdout == "echo: hello\n"
        listed = cli("list", url, "--json")
        assert [t["id"] for t in json.loads(listed.stdout)["tasks"]] == [task_id]
        demo.terminate()
        rest, _ = demo.communicate(timeout=TIMEOUT)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait(5)
    assert demo.returncode == 0
    assert rest.splitlines()[-1] == "a2a-models: stopped"
    assert (tmp_path / "t.db").exists()


def test_demo_on_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("demo", "--port", str(port), "--store", "memory:")
    assert done.returncode == 1
    assert done.stderr.startswith(f"a2a-models serve: cannot listen on 127.0.0.1:{port}")
    assert done.stderr.count("\n") == 1


def test_demo_port_falls_back_only_when_not_given() -> None:
    from a2a_models._cli._demo import _bindable

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert _bindable("127.0.0.1", port) is None
        free = _bindable("127.0.0.1", 0)
        assert free is not None and free != port
    assert build_parser().parse_args(["demo"]).port is None  # 8000, else a free one


# ------------------------------------------------------------------------ tasks


def test_get_list_cancel_follow_end_to_end(server: Server) -> None:
    task_id = task_id_of(cli("send", server.url, "slow", "--no-wait", "--json"))
    follower = subprocess.Popen(
        [*a2a_command(), "follow", server.url, task_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    try:
        listed = cli("list", server.url, "--state", "working")
        assert listed.returncode == 0, listed.stderr
        header, *rows = listed.stdout.splitlines()
        assert header.split() == ["TASK", "STATE", "UPDATED", "CONTEXT", "STATUS"]
        assert any(row.split()[:2] == [task_id, "working"] for row in rows), listed.stdout

        got = cli("get", server.url, task_id, "--json")
        assert json.loads(got.stdout)["id"] == task_id

        assert follower.stdout is not None
        first = follower.stdout.readline()  # printed once it is subscribed
        canceled = cli("cancel", server.url, task_id)
        assert canceled.returncode == 0, canceled.stderr
        assert canceled.stdout.startswith(f"task {task_id}  canceled")

        out, err = follower.communicate(timeout=TIMEOUT)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait(5)
    assert follower.returncode == 5, first + out + err
    lines = [first.rstrip("\n"), *out.splitlines()]
    assert lines[0] == f"task {task_id}  working"
    assert re.fullmatch(r"working  tick \d+", lines[1])
    assert lines[-1] == "canceled"

    shown = cli("get", server.url, task_id, "--history", "2")
    assert shown.stdout.startswith(f"task {task_id}  canceled")
    assert "history (2 messages):" in shown.stdout
    newest = cli("list", server.url, "--state", "canceled", "--limit", "1", "--json")
    page = codec.decode(m.ListTasksResponse, newest.stdout, "1.0")
    assert [t.id for t in page.tasks] == [task_id]


@pytest.mark.parametrize(
    ("argv", "asked"),
    [([], 0), (["--history", "3"], 3), (["--json"], None), (["--json", "--history", "2"], 2)],
)
def test_get_reads_only_the_history_it_shows(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    asked: int | None,
) -> None:
    from a2a_models._cli import _commands

    # `get` without --history asked for the whole history and showed none of it:
    # a task of 50,000 messages and a 5 MB artifact answered 13 MB, not 5.2 MB.
    history = tuple(m.Message.user(f"message {i}") for i in range(5))
    asked_for: list[int | None] = []

    class Client:
        card = None

        async def __aenter__(self) -> Client:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        async def get_task(self, task_id: str, *, history_length: int | None = None) -> m.Task:
            asked_for.append(history_length)
            kept = history if history_length is None else history[len(history) - history_length :]
            status = m.TaskStatus(state=m.TaskState.COMPLETED)
            return m.Task(id=task_id, context_id="c", status=status, history=kept)

    async def open_client(args: Any) -> Client:
        return Client()

    monkeypatch.setattr(_commands, "open_client", open_client)
    assert main(["get", "http://x", "T", *argv]) == 0
    assert asked_for == [asked]
    out = capsys.readouterr().out
    if "--json" in argv:
        assert len(json.loads(out).get("history", [])) == (5 if asked is None else asked)
    else:
        assert out.startswith("task T  completed")
        assert ("history (3 messages):" in out) == bool(asked)


@pytest.mark.parametrize("transport", ["auto", "grpc"])
def test_follow_of_a_stalled_server_does_not_hang(
    agent_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    transport: str,
) -> None:
    import signal
    import threading

    from a2a_models._cli import _commands

    # A server that stops sending (SIGSTOP: as a half-open connection, not even its
    # keep-alives arrive) left `follow` waiting for ever: streams had no idle bound.
    # Over gRPC too: its keep-alive ping goes unanswered (0.3 s here, not 60 s).
    monkeypatch.setattr(_commands, "STREAM_IDLE_TIMEOUT", 0.5)
    args = ("--agent", "cli_agent:CliAgent", "--store", "memory:")
    keepalive: tuple[str, ...] = ()
    if transport == "grpc":
        pytest.importorskip("grpc")
        args += ("--grpc-port", "0", "--grpc-keepalive", "0.3")
        keepalive = ("--keepalive", "0.3")
    served = Server(agent_dir, *args)
    try:
        task_id = task_id_of(cli("send", served.url, "slow", "--no-wait", "--json"))
        status: list[int] = []
        argv = ["follow", served.url, task_id, "--transport", transport, *keepalive]
        follower = threading.Thread(target=lambda: status.append(main(argv)), daemon=True)
        follower.start()
        deadline = time.monotonic() + TIMEOUT
        while "tick" not in capsys.readouterr().out and time.monotonic() < deadline:
            time.sleep(0.05)
        served.proc.send_signal(signal.SIGSTOP)
        follower.join(TIMEOUT)
        assert not follower.is_alive()  # old code: still waiting
    finally:
        served.proc.send_signal(signal.SIGCONT)
        served.kill()
    assert status == [1]
    err = capsys.readouterr().err
    assert err.startswith("a2a-models follow: error: "), err
    # The resumed stream's request had no answer either: said in words, not "ReadTimeout('')".
    if transport == "grpc":
        assert err.rstrip().endswith(" went silent: nothing within 0.5 s"), err
    else:
        assert err.rstrip().endswith(": nothing within 0.5 s waiting for data (ReadTimeout)"), err


def test_a_reader_that_stops_reading_ends_the_command_without_a_word(server: Server) -> None:
    # `send URL "..." | head -2`: the closed pipe was reported as a failure,
    # "a2a-models send: error: [Errno 32] Broken pipe", exit status 1.
    sending = subprocess.Popen(
        [*a2a_command(), "send", server.url, "slow", "--stream"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=_env(),
    )
    assert sending.stdout is not None and sending.stderr is not None
    assert sending.stdout.readline().startswith(b"task ")
    sending.stdout.close()
    assert sending.wait(TIMEOUT) == 141
    assert sending.stderr.read() == b""  # nothing written


@pytest.mark.parametrize("transport", ["auto", "grpc"])
def test_follow_outlasts_a_server_killed_and_restarted(
    agent_dir: Path, tmp_path: Path, transport: str
) -> None:
    import signal

    # SIGKILL, then `serve` again on the same store and port 3 s later: follow
    # gave up within 2 s ("connection refused"); it now resumes and shows the end.
    # Over gRPC it ended at once: "the connection to grpc://... failed: Stream removed".
    args: tuple[str, ...] = ("--agent", "cli_agent:CliAgent")
    args += ("--store", f"sqlite:///{tmp_path / 'tasks.db'}")
    if transport == "grpc":
        pytest.importorskip("grpc")
        args += ("--grpc-port", str(free_port()))
    served = Server(agent_dir, *args)
    restarted: Server | None = None
    try:
        task_id = task_id_of(cli("send", served.url, "slow", "--no-wait", "--json"))
        follower = subprocess.Popen(
            [*a2a_command(), "follow", served.url, task_id, "--transport", transport],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=_env(),
        )
        try:
            assert follower.stdout is not None
            assert follower.stdout.readline().startswith(f"task {task_id}")
            served.proc.send_signal(signal.SIGKILL)
            served.proc.wait(5)
            time.sleep(3)
            restarted = Server(agent_dir, *args, port=served.port)
            out, err = follower.communicate(timeout=TIMEOUT)
        finally:
            if follower.poll() is None:
                follower.kill()
                follower.wait(5)
    finally:
        served.kill()
        if restarted is not None:
            restarted.stop()
    assert follower.returncode == 3, out + err  # failed: its process died
    assert err == ""
    assert out.splitlines()[-1].startswith("failed")


@pytest.mark.parametrize(
    ("argv", "asked"),
    [(["--no-stream"], 0), (["--stream"], 0), (["--json"], None), (["--json", "--stream"], None)],
)
def test_send_asks_for_no_history_it_does_not_show(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], asked: int | None
) -> None:
    from a2a_models._cli import _commands

    # A turn of a long conversation was answered with the task's whole history
    # (50,000 messages: 9.5 MB), which `send` never shows.
    asked_for: list[int | None] = []
    task = m.Task(id="T", context_id="c", status=m.TaskStatus(state=m.TaskState.COMPLETED))

    class Client:
        card = None

        async def __aenter__(self) -> Client:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        async def send_message(self, message: m.Message, *, configuration: Any) -> m.Task:
            asked_for.append(configuration.history_length)
            return task

        def send_streaming_message(self, message: m.Message, *, configuration: Any) -> Any:
            asked_for.append(configuration.history_length)

            async def events() -> Any:
                yield task

            return ClientEventStream((None, item) async for item in events())

    async def open_client(args: Any) -> Client:
        return Client()

    monkeypatch.setattr(_commands, "open_client", open_client)
    assert main(["send", "http://x", "hi", *argv]) == 0
    assert asked_for == [asked]


def test_follow_a_finished_task_shows_it_and_exits_with_its_state(server: Server) -> None:
    task_id = task_id_of(cli("send", server.url, "reject", "--json"), 4)
    done = cli("follow", server.url, task_id)
    assert done.returncode == 4, done.stderr
    assert done.stdout == f"task {task_id}  rejected  not my job\n"
    as_json = cli("follow", server.url, task_id, "--json")
    assert as_json.returncode == 4
    item = codec.decode(m.StreamResponse, as_json.stdout, "1.0")
    assert isinstance(item, m.Task) and item.id == task_id


@pytest.mark.parametrize(("argv", "asked"), [([], 0), (["--json"], None)])
def test_follow_of_an_ended_task_asks_for_no_history_it_does_not_show(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], asked: int | None
) -> None:
    from a2a_models._cli import _commands
    from a2a_models.errors import UnsupportedOperationError

    asked_for: list[int | None] = []

    class Client:
        card = None

        async def __aenter__(self) -> Client:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        def subscribe(self, task_id: str) -> Any:
            async def refused() -> Any:
                raise UnsupportedOperationError("the task has ended")
                yield

            return ClientEventStream(refused())

        async def get_task(self, task_id: str, *, history_length: int | None = None) -> m.Task:
            asked_for.append(history_length)
            status = m.TaskStatus(state=m.TaskState.REJECTED)
            return m.Task(id=task_id, context_id="c", status=status)

    async def open_client(args: Any) -> Client:
        return Client()

    monkeypatch.setattr(_commands, "open_client", open_client)
    assert main(["follow", "http://x", "T", *argv]) == 4
    assert asked_for == [asked]


def test_list_filters_by_context(server: Server) -> None:
    context = f"ctx-{time.monotonic_ns()}"
    first = task_id_of(cli("send", server.url, "fail", "--json", "--context-id", context), 3)
    empty = cli("list", server.url, "--context", "no-such-context")
    assert empty.stdout == "no tasks\n"
    listed = cli("list", server.url, "--context", context, "--json")
    assert [t["id"] for t in json.loads(listed.stdout)["tasks"]] == [first]
    bad = cli("list", server.url, "--state", "bogus")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_push_set_get_list_delete(server: Server) -> None:
    task_id = task_id_of(cli("send", server.url, "ask", "--json"), 6)
    hook = "http://127.0.0.1:9/a2a"  # allowed by the server's --push-allow
    made = cli(
        "push", "set", server.url, task_id, hook, "--id", "c1", "--token", "t0k",
        "--auth-scheme", "Bearer", "--auth-credentials", "s3cret",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert made.stdout == (
        f"id c1  task {task_id}  url {hook}  token (set)  auth Bearer (credentials set)\n"
    )
    got = cli("push", "get", server.url, task_id, "c1", "--json")
    config = codec.decode(m.TaskPushNotificationConfig, got.stdout, "1.0")
    assert (config.url, config.token, config.authentication.credentials) == (hook, "t0k", "s3cret")
    listed = cli("push", "list", server.url, task_id)
    assert listed.stdout.startswith("id c1  ")
    gone = cli("push", "delete", server.url, task_id, "c1")
    assert gone.returncode == 0
    assert gone.stdout == f"deleted push notification config c1 of task {task_id}\n"
    assert cli("push", "list", server.url, task_id).stdout == "no push notification configs\n"
    missing = cli("push", "get", server.url, task_id, "c1")
    assert missing.returncode == 1
    assert missing.stderr.count("\n") == 1 and "not found" in missing.stderr


# ------------------------------------------------------------------------ card


def test_card_summary_and_json(server: Server) -> None:
    done = cli("card", server.url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "CliAgent  v1.0.0"
    assert f"  JSONRPC    1.0  {server.url}" in lines
    assert f"  HTTP+JSON  0.3  {server.url}" in lines
    assert "capabilities: streaming, push notifications" in lines
    assert "security: none (no authentication)" in lines
    # An agent without a card of its own is served with one skill: itself.
    assert (
        "  CliAgent  CliAgent: Answers by the text it is sent (chunks, parts, fail, reject, ask, auth, slow)."
        in lines
    )
    as_json = cli("card", server.url, "--json")
    card = codec.decode(m.AgentCard, as_json.stdout, "1.0")
    assert card.name == "CliAgent"
    legacy = json.loads(cli("card", server.url, "--format", "0.3").stdout)
    assert legacy["url"] == server.url and legacy["protocolVersion"].startswith("0.3")
    raw = json.loads(cli("card", server.url, "--format", "raw").stdout)
    assert raw["name"] == "CliAgent"  # as served: 1.0 and 0.3 fields side by side
    assert "supportedInterfaces" in raw and "protocolVersion" in raw


def test_card_summary_on_a_terminal_and_with_security(agent_dir: Path) -> None:
    secured = Server(agent_dir, "--store", "memory:", "--auth-token", "tok")
    try:
        done = cli("card", secured.url)
        assert "bearer: HTTP Bearer" in done.stdout.splitlines()[-2:][0] + done.stdout
        assert "requires: bearer" in done.stdout
        skills = done.stdout[done.stdout.index("skills:") :]
        assert "task  Demo task: A multi-step task" in skills
        status, out = on_a_terminal("card", secured.url)
        assert status == 0
        text = ANSI.sub("", out)
        assert "a2a-models demo agent" in text and "bearer: HTTP Bearer" in text
        assert "\x1b[1m" in out  # bold name
        refused = cli("send", secured.url, "hi")
        assert refused.returncode == 1
        assert refused.stderr.startswith("a2a-models send: error: the agent answered: ")
        assert refused.stderr.count("\n") == 1 and "uthenticat" in refused.stderr
        allowed = cli("send", secured.url, "hi", "-H", "Authorization: Bearer tok")
        assert allowed.stdout == "echo: hi\n", allowed.stderr
    finally:
        secured.stop()


# ------------------------------------------------------------------------ errors


def test_errors_are_one_line_and_debug_shows_the_traceback() -> None:
    port = free_port()
    down = cli("get", f"http://127.0.0.1:{port}", "some-task")
    assert down.returncode == 1
    assert down.stderr == (
        f"a2a-models get: error: cannot connect to http://127.0.0.1:{port}"
        "/.well-known/agent-card.json: connection refused (is the server running?)\n"
    )
    debug = cli("get", f"http://127.0.0.1:{port}", "some-task", "--debug")
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.splitlines()[-1] == down.stderr.strip()
    first = cli("--debug", "send", f"http://127.0.0.1:{port}", "hi")
    assert "Traceback" in first.stderr


def test_agent_errors_are_one_line(server: Server) -> None:
    missing = cli("get", server.url, "no-such-task")
    assert missing.returncode == 1
    assert missing.stderr == (
        "a2a-models get: error: the agent answered: task 'no-such-task' not found "
        "[TaskNotFoundError, code -32001]\n"
    )
    done = cli("cancel", server.url, task_id_of(cli("send", server.url, "fail", "--json"), 3))
    assert done.returncode == 1
    assert done.stderr.startswith("a2a-models cancel: error: the agent answered: ")
    assert done.stderr.count("\n") == 1 and "TaskNotCancelableError" in done.stderr


def test_usage_errors() -> None:
    done = cli("send", "http://x", "hi", "--header", "no-colon")
    assert done.returncode == 2
    assert "NAME:VALUE" in done.stderr
    # Before: httpx's "'ascii' codec can't encode character" or LocalProtocolError, exit 1,
    # naming no header; gRPC printed a C-core line and an internal error.
    done = cli("send", "http://127.0.0.1:9", "hi", "-H", "x-note: café")
    assert done.returncode == 2
    assert "header 'x-note': the value must be printable ASCII" in done.stderr
    done = cli("send", "http://127.0.0.1:9", "hi", "-H", "bad key: x", "--transport", "grpc")
    assert done.returncode == 2 and "header name 'bad key'" in done.stderr
    done = cli("list", "http://x", "--limit", "0")
    assert done.returncode == 2 and "at least 1" in done.stderr
    done = cli("get", "http://x", "T", "--history", "-1")
    assert done.returncode == 2 and "at least 0" in done.stderr
    done = cli("--help")
    assert done.returncode == 0
    for command in ("send", "get", "list", "cancel", "follow", "push", "card", "serve"):
        assert f"    {command}" in done.stdout


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "--port", "70000"], "argument --port: expected at most 65535, got 70000"),
        (["serve", "--grpc-port", "-1"], "argument --grpc-port: expected at least 0, got -1"),
        (["demo", "--port", "65536"], "argument --port: expected at most 65535, got 65536"),
        (["serve", "--lease-ttl", "nan"], "argument --lease-ttl: expected a finite number"),
        (["serve", "--lease-ttl", "0"], "argument --lease-ttl: expected a number above 0"),
        (["serve", "--header-timeout", "inf"], "argument --header-timeout: expected a finite"),
        (["serve", "--push-rate", "0"], "argument --push-rate: expected a number above 0"),
        (["serve", "--max-connections", "0"], "argument --max-connections: expected at least 1"),
        (["serve", "--max-active-tasks-per-owner", "-5"], "expected at least 0, got -5"),
        (["worker", "--grace", "-1"], "argument --grace: expected 0 or more, got '-1'"),
        (["serve", "--store-wait", "-1"], "argument --store-wait: expected 0 or more"),
        (["worker", "--store-wait", "nan"], "argument --store-wait: expected a finite number"),
        (["worker", "--lease-ttl", "inf"], "argument --lease-ttl: expected a finite number"),
        (["send", "http://x", "hi", "--timeout", "nan"], "argument --timeout: expected a finite"),
        (["card", "http://x", "--timeout", "0"], "argument --timeout: expected a number above 0"),
        (["serve", "--port", "eighty"], "argument --port: expected a whole number, got 'eighty'"),
    ],
)
def test_numbers_out_of_range_are_usage_errors(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from a2a_models._cli import build_parser

    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert says in capsys.readouterr().err


def test_agent_run_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from a2a_models._cli._agent import build_agent_parser

    with pytest.raises(SystemExit) as exited:
        build_agent_parser().parse_args(["run", "ws", "--port", "99999"])
    assert exited.value.code == 2
    assert "argument --port: expected at most 65535, got 99999" in capsys.readouterr().err


def test_agent_run_reports_an_mcp_server_that_cannot_start(tmp_path: Path) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("mcp")
    workspace = tmp_path / "ws"
    made = cli("agent", "init", str(workspace))
    assert made.returncode == 0, made.stderr
    skill = workspace / "skills" / "brief.md"
    skill.write_text(skill.read_text().replace("guardrails:", "mcp: [files]\nguardrails:", 1))
    (workspace / "mcp.json").write_text(
        json.dumps({"mcpServers": {"files": {"command": str(tmp_path / "no-such-server")}}})
    )
    done = cli(
        "agent", "run", str(workspace), "--port", "0", "--store", "memory:",
        OPENAI_API_KEY="sk-test",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("a2a-models agent run: error: MCP server 'files'")
    assert done.stderr.count("\n") == 1, done.stderr
    assert "no-such-server" in done.stderr
    debug = cli(
        "agent", "run", str(workspace), "--port", "0", "--store", "memory:", "--debug",
        OPENAI_API_KEY="sk-test",
    )  # fmt: skip
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def test_debug_is_taken_from_any_command_but_the_harnesses() -> None:
    from a2a_models._cli._main import _take_debug

    assert _take_debug(["get", "U", "T", "--debug"]) == (["get", "U", "T"], True)
    assert _take_debug(["--debug", "agent", "run", "d"]) == (["agent", "run", "d"], True)
    assert _take_debug(["send", "U", "--", "--debug"]) == (["send", "U", "--", "--debug"], False)
    assert _take_debug(["conformance", "U", "--debug"]) == (["conformance", "U", "--debug"], False)
    assert _take_debug(["--debug", "conformance-client", "--debug"]) == (
        ["conformance-client", "--debug"],
        True,
    )


def test_parser_builds_only_the_command_being_run() -> None:
    args = build_parser(only="get").parse_args(["get", "http://x", "T", "--history", "2"])
    assert (args.command, args.task_id, args.history) == ("get", "T", 2)
    light = build_parser(only="get")
    with pytest.raises(SystemExit):  # send has its name and help here, not its options
        light.parse_args(["send", "http://x", "hi"])
    assert build_parser().parse_args(["send", "http://x", "hi"]).text == "hi"


def test_help_imports_neither_rich_nor_the_http_client() -> None:
    code = (
        "import sys\n"
        "from a2a_models._cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'httpx', 'uvicorn')"
        " or m.startswith('a2a_models.adapters')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


# ------------------------------------------------------------------------ the pieces


def test_text_chunks_join_exactly_and_other_parts_stay_apart() -> None:
    parts = [
        m.Part.text("knowle"),
        m.Part.text("dge gra"),
        m.Part.text("ph."),
        m.Part.data({"a": 1}),
        m.Part.text("after"),
    ]
    joined = blocks(parts)
    assert [type(p) for p in joined] == [m.TextPart, m.DataPart, m.TextPart]
    assert joined[0].text == "knowledge graph."
    assert plain_parts(parts) == 'knowledge graph.\n{\n  "a": 1\n}\nafter'


def test_joining_the_chunks_of_an_artifact_copies_its_text_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Joining chunk by chunk made a text part of everything read so far for each
    # chunk: 2,000 chunks of 23 characters built 46 million characters.
    built: list[int] = []
    init = m.TextPart.__init__

    def counting_init(self: m.TextPart, text: str, *args: Any, **kwargs: Any) -> None:
        built.append(len(text))
        init(self, text, *args, **kwargs)

    monkeypatch.setattr(m.TextPart, "__init__", counting_init)
    chunks = [m.TextPart("a few streamed tokens, ") for _ in range(2000)]
    built.clear()
    joined = blocks(chunks)
    assert [p.text for p in joined] == ["a few streamed tokens, " * 2000]
    assert sum(built) == len(joined[0].text)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_live_view_draws_per_refresh_not_per_event_and_only_what_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import rich.live
    from rich.markdown import Markdown
    from rich.text import Text

    from a2a_models._cli import _render

    # Drawing is the live display's to do when it refreshes (here: only when it
    # starts and stops, its refresh thread does nothing): drawing the whole task
    # for every chunk cost O(N²) for an artifact of N chunks (8,000: a minute).
    monkeypatch.setattr(rich.live._RefreshThread, "run", lambda self: None)
    monkeypatch.setenv("TERM", "xterm")
    drawn: list[int] = []
    rich_task = _render._rich_task

    def counting(*args: Any, **kwargs: Any) -> Any:
        group = rich_task(*args, **kwargs)
        texts = [r for r in group.renderables for r in getattr(r, "renderables", [r])]
        drawn.append(
            sum(len(r.plain) for r in texts if isinstance(r, Text))
            + sum(len(r.markup) for r in texts if isinstance(r, Markdown))
        )
        return group

    monkeypatch.setattr(_render, "_rich_task", counting)
    chunk = "a few streamed tokens, "

    async def events() -> Any:
        yield m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING))
        for i in range(2000):
            yield m.TaskArtifactUpdateEvent(
                task_id="t",
                context_id="c",
                artifact=m.Artifact(parts=[m.Part.text(chunk)], artifact_id="r"),
                append=i > 0,
            )

    screen = _Terminal()
    output = _render.Output(screen)
    assert output.rich
    view = await output.watch(events())
    width, height = output.console.size
    assert len(drawn) <= 3  # the live display's start and stop, and the final picture
    assert max(drawn[:-1]) <= 4 * width * height + 200  # the live frames: a few screenfuls
    assert drawn[-1] > 2000 * len(chunk)  # the final picture: all of it
    assert view.task is not None and len(view.task.artifacts[0].parts) == 2000


def test_sizes_labels_and_usage() -> None:
    assert [human_size(n) for n in (0, 1, 999, 1000, 1_500_000, 3 * 10**12)] == [
        "0 bytes",
        "1 byte",
        "999 bytes",
        "1.0 kB",
        "1.5 MB",
        "3.0 TB",
    ]
    assert file_label(m.Part.file(raw=b"abc")) == "file (unknown type, 3 bytes)"
    assert usage_of({USAGE_METADATA_KEY: {"inputTokens": 3, "outputTokens": 4}}) == (3, 4)
    assert usage_of({USAGE_METADATA_KEY: {"inputTokens": 3}}) == (3, None)
    assert usage_of({USAGE_METADATA_KEY: {"inputTokens": True, "outputTokens": "4"}}) is None
    assert usage_of({USAGE_METADATA_KEY: [1, 2]}) is None
    assert usage_of(None) is None
    assert STATE_EXIT_STATUS[m.TaskState.CANCELED] == 5


def test_task_view_is_lenient_with_a_peer_that_breaks_the_rules() -> None:
    view = TaskView()
    chunk = m.TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=m.Artifact(parts=[m.Part.text("a")], artifact_id="x"),
        append=True,  # to an artifact never sent, before any Task
    )
    view.apply(chunk)
    view.apply(chunk)
    assert view.task is not None and view.task.artifacts[0].parts[1].text == "a"
    done = m.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.COMPLETED)
    )
    view.apply(done)
    view.apply(done)  # nothing is allowed after a terminal state: shown anyway
    assert view.task.status.state is m.TaskState.COMPLETED


def test_the_task_view_costs_an_event_the_same_however_many_came_before() -> None:
    import tracemalloc

    # The view rebuilt the task for each event: a status update copied the history
    # (one message more each time) and a chunk the artifact's parts, so the Nth
    # event allocated N pointers' worth again (O(N²) over a stream; at 60,000
    # events 10x the first event's cost). Now the view keeps no history and
    # appends a chunk to a list.
    n = 5000

    def update(i: int) -> m.TaskStatusUpdateEvent:
        message = m.Message.agent(f"step {i}", task_id="t", context_id="c")
        status = m.TaskStatus(state=m.TaskState.WORKING, message=message)
        return m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=status)

    def chunk(i: int) -> m.TaskArtifactUpdateEvent:
        artifact = m.Artifact(parts=[m.Part.text(f"{i},")], artifact_id="r")
        return m.TaskArtifactUpdateEvent(
            task_id="t", context_id="c", artifact=artifact, append=i > 0
        )

    view = TaskView()
    view.apply(m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.SUBMITTED)))
    for i in range(n):
        view.apply(update(i))
        view.apply(chunk(i))
    last = [event for i in range(n, n + 32) for event in (update(i), chunk(i))]
    allocated: list[int] = []
    tracemalloc.start()
    try:
        for event in last:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            view.apply(event)
            allocated.append(tracemalloc.get_traced_memory()[1] - before)
    finally:
        tracemalloc.stop()
    # (A list of the chunks grows now and then: a few events may allocate more.)
    assert sorted(allocated)[len(allocated) // 2] < n * 8 // 4  # old: over n * 8 bytes
    task = view.task
    assert task is not None and task.history == ()
    assert task.status.message is not None and task.status.message.text == f"step {n + 31}"
    assert plain_parts(task.artifacts[0].parts) == "".join(f"{i}," for i in range(n + 32))
    view.apply(
        m.TaskArtifactUpdateEvent(
            task_id="t",
            context_id="c",
            artifact=m.Artifact(parts=[m.Part.text("end")], artifact_id="r"),
            append=True,
            last_chunk=True,
        )
    )
    view.apply(update(n + 32))
    task = view.task
    assert task is not None and len(task.artifacts[0].parts) == 1  # joined as stored
    assert task.artifacts[0].parts[0].text.endswith(f"{n + 31},end")


def test_describe_error_unwraps_groups_and_names_builtin_errors() -> None:
    assert describe_error(ExceptionGroup("g", [ValueError("bad value")])) == "bad value"
    assert describe_error(KeyError("k")) == "KeyError: 'k'"
    missing = ModuleNotFoundError("No module named 'openai'", name="openai")
    assert describe_error(missing).endswith("pip install 'a2a-models[llm]'")


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


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["http://x", "--request-timeout", "nan"], "--request-timeout: expected a finite number"),
        (["http://x", "--timeout-scale", "0"], "--timeout-scale: expected a number above 0"),
    ],
)
def test_conformance_numbers_out_of_range_are_usage_errors(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from a2a_models.conformance._cli import build_parser as conformance_parser

    with pytest.raises(SystemExit) as exited:
        conformance_parser().parse_args(argv)
    assert exited.value.code == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--port", "70000", "--", "true"], "argument --port: expected at most 65535"),
        (["--timeout", "inf", "--", "true"], "argument --timeout: expected a finite number"),
    ],
)
def test_conformance_client_numbers_out_of_range_are_usage_errors(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from a2a_models.conformance._client_cli import client_main

    with pytest.raises(SystemExit) as exited:
        client_main(argv)
    assert exited.value.code == 2
    assert says in capsys.readouterr().err
