"""``a2a-models serve`` as a real subprocess on 127.0.0.1, driven by ``a2a-models send`` and httpx.

Covers the demo agent (echo, the streamed ``task``), the SQLite store
surviving a SIGKILL, graceful SIGTERM/SIGINT with an SSE stream open,
``--auth-token``, ``--base-path``, ``--agent module:object`` and the exit
code of a bad ``--agent``. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

import httpx
import pytest
from _procs import PG_DSN, CliProcess, a2a_command, cli_env, free_port

from a2a_models import Message, SendMessageConfiguration, Task
from a2a_models.adapters.http import HTTPClient

#: A user's agent module, written to a temporary directory by the tests.
USER_AGENT = '''
"""A user's own agent for the serve tests."""

import asyncio

from a2a_models.server import Agent


class UserAgent(Agent):
    """Prefixes echoes; 'slow' ticks every 50 ms for a minute."""

    async def execute(self, context):
        if context.message.text == "slow":
            for i in range(1200):
                yield context.working(f"tick {i}")
                await asyncio.sleep(0.05)
            yield context.complete()
            return
        yield context.reply("user agent: " + context.message.text)
'''

START_TIMEOUT = 20.0
STOP_TIMEOUT = 5.0
V10 = {"A2A-Version": "1.0"}


class Served(CliProcess):
    """``a2a-models serve ARGS`` in a subprocess (see :class:`CliProcess`)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        pythonpath: Path | None = None,
        port: int | None = None,
    ) -> None:
        #: ``None``: a free port chosen here; 0: left to the server (read from its output).
        self.port = free_port() if port is None else port
        super().__init__(
            ["serve", "--port", str(self.port), "--log-level", "warning", *args],
            name="serve",
            cwd=cwd,
            env=cli_env(pythonpath=pythonpath),
        )

    def wait_ready(self, timeout: float = START_TIMEOUT) -> Self:
        super().wait_ready(timeout)
        self.port = urlsplit(self.url).port or self.port
        return self

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int | None:
        return super().stop(sig, timeout)

    def wait(self, timeout: float = STOP_TIMEOUT) -> int | None:
        return super().wait(timeout)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """Start ``a2a-models serve`` (ready to answer); every server is stopped at the end."""
    started: list[Served] = []

    def start(*args: str, pythonpath: Path | None = None, port: int | None = None) -> Served:
        served = Served(args, cwd=tmp_path, pythonpath=pythonpath, port=port)
        started.append(served)
        return served.wait_ready()

    yield start
    for served in started:
        if served.proc.poll() is None:
            served.kill()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The default (demo) agent, in an empty directory."""
    served = Served([], cwd=tmp_path_factory.mktemp("demo")).wait_ready()
    yield served
    assert served.stop() == 0, served.log()


@pytest.fixture
def user_agent_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "my_agent.py").write_text(USER_AGENT)
    return folder


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*a2a_command(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )


def rpc(method: str, params: dict[str, Any], id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def send_params(text: str) -> dict[str, Any]:
    return {
        "message": {
            "messageId": f"m-{time.monotonic_ns()}",
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
    }


# ---------------------------------------------------------------------------- the demo agent


def test_demo_agent_echoes(demo: Served) -> None:
    done = cli("send", demo.url, "hello")
    assert done.returncode == 0, done.stderr + demo.log()
    assert done.stdout == "echo: hello\n"


def test_demo_task_streams_status_updates_and_an_artifact(demo: Served) -> None:
    done = cli("send", demo.url, "task", "--stream")
    assert done.returncode == 0, done.stderr + demo.log()
    lines = done.stdout.splitlines()
    assert lines[0].startswith("task ") and lines[0].endswith("  submitted")
    assert lines[1:5] == [
        "working  Planning (step 1 of 3)",
        "working  Working (step 2 of 3)",
        "working  Checking (step 3 of 3)",
        "completed  Demo task complete",
    ]
    # The artifact's two chunks, joined exactly.
    assert lines[5:] == ["", "── report: what the task made ──", "The demo task is done."]


def test_demo_card_describes_the_server(demo: Served) -> None:
    done = cli("card", demo.url, "--json")
    assert done.returncode == 0, done.stderr
    card = json.loads(done.stdout)
    assert card["name"] == "a2a-models demo agent"
    assert {i["url"] for i in card["supportedInterfaces"]} == {demo.url}
    assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"JSONRPC", "HTTP+JSON"}


# ---------------------------------------------------------------------------- durability


async def test_sqlite_store_keeps_a_task_across_a_sigkill(serve: Any, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'tasks.db'}"  # an absolute path: sqlite:////tmp/...
    first = serve("--store", store)
    message = Message.user("task")
    async with asyncio.timeout(20), HTTPClient(first.url, timeout=10) as client:
        task = await client.send_message(
            message, configuration=SendMessageConfiguration(return_immediately=True)
        )
        assert isinstance(task, Task)
        first.kill()  # SIGKILL right after the reply: no shutdown code runs
        assert first.proc.returncode == -signal.SIGKILL

        second = serve("--store", store, port=first.port)
        again = await client.get_task(task.id)
    assert (again.id, again.context_id) == (task.id, task.context_id)
    assert again.history[0].message_id == message.message_id
    assert again.history[0].text == "task"
    assert not again.status.state.is_terminal  # the run died with the process
    assert second.proc.poll() is None


# ---------------------------------------------------------------------------- shutdown


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_signal_stops_gracefully_closing_open_streams(
    serve: Any, user_agent_dir: Path, sig: signal.Signals
) -> None:
    served = serve("--store", "memory:", "--agent", "my_agent:UserAgent", pythonpath=user_agent_dir)
    body = rpc("SendStreamingMessage", send_params("slow"))
    headers = {**V10, "Accept": "text/event-stream"}
    async with asyncio.timeout(20), httpx.AsyncClient(timeout=10) as http:
        async with http.stream("POST", served.url, json=body, headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.aiter_lines()
            events = 0
            async for line in lines:
                events += line.startswith("data:")
                if events == 3:
                    break
            sent = time.monotonic()
            served.proc.send_signal(sig)
            # The stream ends (cleanly: a complete chunked body) instead of hanging
            # for the minute the task would still run.
            async with asyncio.timeout(STOP_TIMEOUT):
                rest = [line async for line in lines]
            closed = time.monotonic() - sent
    # One signal only: the server must stop on its own (a second one would force it).
    code = await asyncio.to_thread(served.wait, STOP_TIMEOUT)
    assert code == 0, served.log()
    assert closed < STOP_TIMEOUT
    assert all(not line.startswith("data:") or "TASK_STATE" in line for line in rest)
    assert served.output[-1] == "a2a-models: stopped", served.log()
    assert "Traceback" not in served.log(), served.log()


async def test_signal_answers_blocking_send_message_with_its_failed_task(
    serve: Any, user_agent_dir: Path
) -> None:
    """A blocking SendMessage in flight when the server is told to stop gets its task,
    failed by the stop, at once. It used to wait for the graceful timeout (5 s) and
    then get a plain-text 500, with an 'Exception in ASGI application' traceback in
    the log: the agents were stopped only after the requests had drained."""
    served = serve("--store", "memory:", "--agent", "my_agent:UserAgent", pythonpath=user_agent_dir)
    async with asyncio.timeout(30), httpx.AsyncClient(timeout=20) as http:
        blocking = [
            asyncio.create_task(
                http.post(served.url, json=rpc("SendMessage", send_params("slow")), headers=V10)
            )
            for _ in range(2)
        ]
        # Both turns are running (two tasks working) before the signal.
        listed: list[Any] = []
        while len(listed) < 2:
            await asyncio.sleep(0.05)
            page = await http.post(served.url, json=rpc("ListTasks", {}), headers=V10)
            listed = page.json()["result"]["tasks"]
        served.proc.send_signal(signal.SIGTERM)
        answers = await asyncio.gather(*blocking)
    for answer in answers:
        assert answer.status_code == 200, answer.text
        status = answer.json()["result"]["task"]["status"]
        assert status["state"] == "TASK_STATE_FAILED", answer.text
        assert status["message"]["parts"] == [
            {"text": "The server stopped before the task finished."}
        ]
    assert await asyncio.to_thread(served.wait, STOP_TIMEOUT) == 0, served.log()
    assert "Traceback" not in served.log(), served.log()


# ---------------------------------------------------------------------------- options


async def test_auth_token_is_required(serve: Any) -> None:
    served = serve("--store", "memory:", "--auth-token", "s3cret")
    body = rpc("SendMessage", send_params("hi"))
    async with asyncio.timeout(20), httpx.AsyncClient(timeout=10) as http:
        anonymous = await http.post(served.url, json=body, headers=V10)
        wrong = await http.post(
            served.url, json=body, headers={**V10, "Authorization": "Bearer nope"}
        )
        good = await http.post(
            served.url, json=body, headers={**V10, "Authorization": "Bearer s3cret"}
        )
        rest = await http.get(f"{served.url}/tasks/some-task", headers=V10)
        card = await http.get(f"{served.url}/.well-known/agent-card.json")
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].lower().startswith("bearer")
    assert wrong.status_code == 401
    assert rest.status_code == 401
    assert good.status_code == 200, good.text
    assert good.json()["result"]["message"]["parts"] == [{"text": "echo: hi"}]
    # The card stays public and says how to authenticate.
    assert card.status_code == 200
    assert card.json()["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"

    done = cli("send", served.url, "hi", "-H", "Authorization: Bearer s3cret")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hi\n"
    refused = cli("send", served.url, "hi")
    assert refused.returncode == 1
    assert "error:" in refused.stderr and "Traceback" not in refused.stderr


async def test_base_path_serves_under_it(serve: Any) -> None:
    served = serve("--store", "memory:", "--base-path", "/a2a/")
    assert served.url == served.root + "/a2a"
    body = rpc("SendMessage", send_params("hi"))
    async with asyncio.timeout(20), httpx.AsyncClient(timeout=10) as http:
        below = await http.post(served.root + "/a2a", json=body, headers=V10)
        slash = await http.post(served.root + "/a2a/", json=body, headers=V10)
        root = await http.post(served.root + "/", json=body, headers=V10)
        card = await http.get(served.root + "/a2a/.well-known/agent-card.json")
        root_card = await http.get(served.root + "/.well-known/agent-card.json")
        rest = await http.get(served.root + "/a2a/tasks/none", headers=V10)
    for answer in (below, slash):
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["message"]["parts"] == [{"text": "echo: hi"}]
    assert root.status_code in (404, 405)
    assert card.status_code == root_card.status_code == 200
    assert {i["url"] for i in card.json()["supportedInterfaces"]} == {served.root + "/a2a"}
    assert rest.status_code == 404 and "not found" in rest.text.lower()

    done = cli("send", served.root + "/a2a", "hello")  # the card is found under the path
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hello\n"


def test_agent_option_loads_a_user_agent(serve: Any, user_agent_dir: Path) -> None:
    served = serve("--store", "memory:", "--agent", "my_agent:UserAgent", pythonpath=user_agent_dir)
    assert "serving UserAgent at" in "\n".join(served.output)
    done = cli("send", served.url, "hi")
    assert done.returncode == 0, done.stderr + served.log()
    assert done.stdout == "user agent: hi\n"
    # Served under a card of its own name and docstring.
    card = httpx.get(served.url + "/.well-known/agent-card.json", timeout=10).json()
    assert card["name"] == "UserAgent"
    assert card["description"] == "Prefixes echoes; 'slow' ticks every 50 ms for a minute."


def test_user_agent_card_is_readable(serve: Any, user_agent_dir: Path) -> None:
    served = serve("--store", "memory:", "--agent", "my_agent:UserAgent", pythonpath=user_agent_dir)
    shown = cli("card", served.url, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["name"] == "UserAgent"
    sent = cli("send", served.url, "hi")
    assert "no agent card" not in sent.stderr


def test_agent_module_in_the_current_directory(serve: Any, user_agent_dir: Path) -> None:
    served = Served(["--store", "memory:", "--agent", "my_agent:UserAgent"], cwd=user_agent_dir)
    try:
        served.wait_ready()
    finally:
        if served.proc.poll() is None:
            served.kill()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("no_such_module_xyz:Agent", "cannot import 'no_such_module_xyz'"),
        ("a2a_models._cli._demo:Nope", "has no 'Nope'"),
        ("a2a_models._cli._demo:TASK_TRIGGER", "is not an a2a_models.server.Agent"),
        ("nonsense", "expected demo, conformance or module:object"),
    ],
)
def test_bad_agent_exits_2_with_a_clear_message(tmp_path: Path, value: str, says: str) -> None:
    done = cli("serve", "--port", "0", "--store", "memory:", "--agent", value, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"a2a-models serve: --agent {value!r}"), done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr
    assert "serving" not in done.stdout


def test_bad_store_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    done = cli("serve", "--port", "0", "--store", "bogus://x", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unsupported task store URL 'bogus://x'" in done.stderr
    assert "Traceback" not in done.stderr


def _pg_with(
    database: str | None = None, password: str | None = None, port: int | None = None
) -> str:
    """``PG_DSN`` with its database, password or port replaced."""
    parts = urlsplit(PG_DSN)
    user = parts.username or "postgres"
    if password is not None:
        user += f":{password}"
    netloc = f"{user}@{parts.hostname}:{port or parts.port or 5432}"
    path = f"/{database}" if database is not None else parts.path
    return parts._replace(netloc=netloc, path=path).geturl()


def _refused_at_start(done: subprocess.CompletedProcess[str], command: str) -> str:
    """The one line a command printed when it could not open its store."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "serving" not in done.stdout and "running" not in done.stdout, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"a2a-models {command}: cannot open the task store "), lines[0]
    return lines[0]


def test_sqlite_store_in_a_missing_folder_stops_serve_at_start(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "tasks.db"
    done = cli("serve", "--port", "0", "--store", f"sqlite:///{missing}", cwd=tmp_path, timeout=20)
    line = _refused_at_start(done, "serve")
    assert f"(the folder {missing.parent} does not exist)" in line
    assert not missing.parent.exists()


def test_store_wait_starts_serving_once_the_store_can_be_opened(tmp_path: Path) -> None:
    later = tmp_path / "comes-later"
    served = Served(
        ["--store", f"sqlite:///{later / 'tasks.db'}", "--store-wait", "30"], cwd=tmp_path
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not any("waiting up to 30 s" in line for line in served.output):
            assert served.proc.poll() is None, served.log()
            assert time.monotonic() < deadline, served.log()
            time.sleep(0.05)
        later.mkdir()  # the store can be opened from now on
        served.wait_ready()
        assert f"the task store sqlite:///{later / 'tasks.db'} is open" in served.log()
        assert cli("send", served.url, "hello").stdout == "echo: hello\n"
    finally:
        if served.proc.poll() is None:
            served.kill()


def test_store_wait_gives_up_with_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "never" / "tasks.db"
    started = time.monotonic()
    done = cli("serve", "--port", "0", "--store", f"sqlite:///{missing}", "--store-wait", "1")
    assert time.monotonic() - started >= 1.0
    assert done.returncode == 1, done.stdout + done.stderr
    waiting, refused = done.stderr.strip().splitlines()
    assert waiting.startswith("a2a-models serve: waiting up to 1 s: cannot open the task store")
    assert refused.startswith("a2a-models serve: cannot open the task store")
    assert "serving" not in done.stdout


def test_three_slash_sqlite_url_gets_the_four_slash_hint(tmp_path: Path) -> None:
    # sqlite:///tmp/.../tasks.db is relative (SQLAlchemy's convention): from another
    # folder it names a folder that does not exist; the absolute one does.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    relative = str(tmp_path / "tasks.db").lstrip("/")
    done = cli("serve", "--port", "0", "--store", f"sqlite:///{relative}", cwd=elsewhere)
    line = _refused_at_start(done, "serve")
    assert f"write sqlite:////{relative}" in line, line
    assert not (tmp_path / "tasks.db").exists()


def test_unreachable_postgres_stops_serve_and_worker_without_showing_the_password(
    tmp_path: Path,
) -> None:
    url = _pg_with(password="hunter2-secret", port=free_port())  # released: nothing listens
    for command in ("serve", "worker"):
        args = ("--port", "0") if command == "serve" else ()
        done = cli(command, *args, "--store", url, cwd=tmp_path, timeout=30)
        line = _refused_at_start(done, command)
        assert "hunter2-secret" not in done.stdout + done.stderr
        assert ":***@" in line
        assert "Connection refused" in line or "connection" in line.lower(), line


def test_missing_postgres_database_stops_serve_at_start(tmp_path: Path) -> None:
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(PG_DSN, connect_timeout=3).close()
    except psycopg.Error as exc:
        if os.environ.get("A2A_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL at {PG_DSN} is unreachable: {exc}")
        pytest.skip(f"PostgreSQL at {PG_DSN} is unreachable: {exc}")
    url = _pg_with(database="a2a_no_such_database")
    done = cli("serve", "--port", "0", "--store", url, cwd=tmp_path, timeout=30)
    line = _refused_at_start(done, "serve")
    assert 'database "a2a_no_such_database" does not exist' in line, line


def test_a_store_failing_a_write_is_the_servers_error_not_the_agents(
    serve: Any, tmp_path: Path
) -> None:
    import sqlite3

    path = tmp_path / "tasks.db"
    served = serve("--store", f"sqlite:///{path}?busy_timeout=0.2")
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")  # every write of the server now times out
        for i, method in enumerate(("SendMessage", "SendStreamingMessage")):
            reply = httpx.post(
                served.url, json=rpc(method, send_params("task"), id=i), headers=V10, timeout=20
            )
            assert reply.status_code == 200
            body = reply.text.removeprefix("data: ").strip()  # SSE: one event
            error = json.loads(body)["error"]
            assert error == {
                "code": -32603,
                "message": "the server could not record the task (OperationalError)",
            }, error
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    # The store is whole again, and what failed left nothing behind.
    reply = httpx.post(served.url, json=rpc("SendMessage", send_params("task")), headers=V10)
    assert reply.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    listed = httpx.post(served.url, json=rpc("ListTasks", {}), headers=V10, timeout=20).json()
    assert len(listed["result"]["tasks"]) == 1, listed
    assert served.stop() == 0, served.log()
    log = served.log()
    assert log.count("could not record the progress of task") == 2, log
    assert "agent failed" not in log
    assert "Traceback" not in log  # a locked database is no bug to trace


def test_a_run_cut_short_by_the_store_still_ends_its_task_and_stream(
    serve: Any, tmp_path: Path
) -> None:
    """The store refuses writes for 2 s while the demo task works: the run cannot record
    its next step, nor (at first) the task's failure; once the store takes writes
    again the task is failed, and the open stream ends with that."""
    import sqlite3

    path = tmp_path / "tasks.db"
    served = serve("--store", f"sqlite:///{path}?busy_timeout=0.2")
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    released = threading.Event()

    def release() -> None:
        blocker.execute("ROLLBACK")
        released.set()

    events: list[dict[str, Any]] = []
    body = rpc("SendStreamingMessage", send_params("task"))
    deadline = time.monotonic() + 30  # a stream left open gets keep-alive lines
    with httpx.stream("POST", served.url, json=body, headers=V10, timeout=30) as stream:
        for line in stream.iter_lines():
            assert time.monotonic() < deadline, f"the stream did not end: {events}"
            if line.startswith("data:"):
                events.append(json.loads(line.removeprefix("data:"))["result"])
                if len(events) == 1:  # the task exists; its next step is 0.5 s away
                    blocker.execute("BEGIN EXCLUSIVE")
                    threading.Timer(2.0, release).start()
    assert released.wait(5)
    blocker.close()
    last = events[-1]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED", events
    assert last["message"]["parts"] == [
        {"text": "The server could not record the task's progress."}
    ]
    task_id = events[0]["task"]["id"]
    stored = httpx.post(served.url, json=rpc("GetTask", {"id": task_id}), headers=V10).json()
    assert stored["result"]["status"]["state"] == "TASK_STATE_FAILED", stored
    assert served.stop() == 0, served.log()
    log = served.log()
    assert f"could not mark task {task_id} failed (database is locked); trying again" in log, log
    assert re.search(rf"mark task {task_id} failed: done after \d+ attempts", log), log


def test_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("serve", "--port", str(port), "--store", "memory:", cwd=tmp_path, timeout=15)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert "a2a-models serve:" in done.stderr and str(port) in done.stderr


@pytest.mark.parametrize("port", ["0", "8000"])
def test_an_address_this_machine_lacks_is_a_clear_error(tmp_path: Path, port: str) -> None:
    # 192.0.2.1: TEST-NET-1 (RFC 5737), never an address of this machine.
    done = cli("serve", "--host", "192.0.2.1", "--port", port, "--store", "memory:", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("a2a-models serve: cannot listen on 192.0.2.1"), done.stderr
    assert "Cannot assign requested address" in done.stderr
    assert "Traceback" not in done.stderr


def test_port_zero_picks_a_free_port(serve: Any) -> None:
    served = serve("--store", "memory:", port=0)
    assert served.port > 0
    done = cli("send", served.url, "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hello\n"
