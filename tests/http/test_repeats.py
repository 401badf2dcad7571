"""A client's retry of a message (same ``messageId``, same task) runs no second turn:
real ``a2a-models serve`` processes, counted by the turns the agent logs.

Two deployments: one process on SQLite, and a ``serve --front-end`` with an
``a2a-models worker`` on PostgreSQL (the repeat is refused in the transaction that
would have queued its turn). Retries go through JSON-RPC 1.0 and 0.3, HTTP+JSON and
streams, one at a time, four at once, and while the turn they repeat still runs.
Before: each retry of a task waiting for input ran the agent again (its answer went
into the history twice); a retry during the turn was refused.

A first message (no ``taskId``) retried with its ``messageId`` gets the task it
started (the store keeps the message's key with the task, unique per caller), also
after ``kill -9`` of the serving process. Before: each retry started another task.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _pg_support import fresh_schema, store_url
from _procs import CliProcess, cli_env, free_port

#: Logs each turn (``turn TASK TEXT``); ``wait`` holds its turn, working, until the
#: file ``release`` (next to the log) exists.
AGENT = """
import asyncio, os, pathlib

from a2a_models.server import Agent


class AskingAgent(Agent):
    async def execute(self, context):
        log = pathlib.Path(os.environ["REPEAT_AGENT_LOG"])
        text = context.message.text
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"turn {context.task_id} {text}\\n".encode())
        finally:
            os.close(fd)
        if text == "wait":
            yield context.working("waiting")
            release = log.with_name("release")
            for _ in range(3000):  # at most 60 s
                if release.exists():
                    break
                await asyncio.sleep(0.02)
        yield context.ask(f"got {text}")
"""

V10 = {"A2A-Version": "1.0"}
V03 = {"A2A-Version": "0.3"}


@contextlib.contextmanager
def _deployment(kind: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``(url, agent log)`` of a running deployment; its processes stop on the way out."""
    (tmp_path / "repeat_agent.py").write_text(AGENT)
    log = tmp_path / "turns.log"
    env = cli_env({"REPEAT_AGENT_LOG": str(log)}, pythonpath=tmp_path)
    agent = ["--agent", "repeat_agent:AskingAgent", "--log-level", "warning"]
    port = free_port()
    serve = ["serve", "--host", "127.0.0.1", "--port", str(port), *agent]
    with contextlib.ExitStack() as stack:
        if kind == "sqlite":
            procs = [CliProcess([*serve, "--store", f"sqlite:///{tmp_path / 'a.db'}"], env=env)]
        else:
            store = store_url(stack.enter_context(fresh_schema("a2a_repeats", "repeat")))
            procs = [
                CliProcess([*serve, "--front-end", "--store", store], name="front end", env=env),
                CliProcess(
                    ["worker", "--store", store, *agent],
                    name="worker",
                    env=env,
                    ready=r"a2a-models: worker .* running",
                ),
            ]
        for proc in procs:
            stack.callback(proc.stop)
        for proc in procs:
            proc.wait_ready()
        yield f"http://127.0.0.1:{port}", log


def _message(task_id: str | None, message_id: str, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "ROLE_USER",
        "messageId": message_id,
        "parts": [{"text": text}],
    }
    if task_id is not None:
        message["taskId"] = task_id
    return message


async def _rpc(http: httpx.AsyncClient, url: str, method: str, params: Any, **kw: Any) -> Any:
    reply = await http.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, **kw
    )
    body = reply.json()
    assert "result" in body, body
    return body["result"]


async def _send(http: httpx.AsyncClient, url: str, message: dict[str, Any], **config: Any) -> Any:
    params: dict[str, Any] = {"message": message}
    if config:
        params["configuration"] = config
    return (await _rpc(http, url, "SendMessage", params, headers=V10))["task"]


async def _stream(http: httpx.AsyncClient, url: str, message: dict[str, Any]) -> Any:
    """The items of a SendStreamingMessage, as they come (an async iterator)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage"}
    async with http.stream(
        "POST", url, json={**body, "params": {"message": message}}, headers=V10
    ) as reply:
        async for line in reply.aiter_lines():
            if line.startswith("data:"):
                yield json.loads(line[5:])["result"]


def _texts(task: dict[str, Any]) -> list[str]:
    return [m["parts"][0]["text"] for m in task["history"]]


@pytest.mark.parametrize("kind", ["sqlite", "workers"])
async def test_a_retried_message_runs_no_second_turn(kind: str, tmp_path: Path) -> None:
    with _deployment(kind, tmp_path) as (url, log):
        async with httpx.AsyncClient(timeout=30) as http:
            task = await _send(http, url, _message(None, "m1", "one"))
            task_id = task["id"]
            two = _message(task_id, "m2", "two")
            first = await _send(http, url, two)
            assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            # The retry, by each binding: the task as it is, no turn.
            assert await _send(http, url, two) == first
            rest = await http.post(f"{url}/message:send", json={"message": two}, headers=V10)
            assert rest.status_code == 200 and rest.json()["task"] == first
            legacy = {"kind": "message", "role": "user", "messageId": "m2", "taskId": task_id}
            legacy["parts"] = [{"kind": "text", "text": "two"}]
            old = await _rpc(http, url, "message/send", {"message": legacy}, headers=V03)
            assert old["status"]["state"] == "input-required" and len(old["history"]) == 4
            # Four identical retries at once: one turn; each answer has it once.
            three = _message(task_id, "m3", "three")
            answers = await asyncio.gather(*(_send(http, url, three) for _ in range(4)))
            for answer in answers:
                assert _texts(answer)[-3:] == ["got two", "three", "got three"]
            # A retry while its turn runs: the stream starts from the task, working,
            # and follows the turn to its end.
            four = _message(task_id, "m4", "wait")
            running = await _send(http, url, four, returnImmediately=True)
            assert running["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
            items = []
            async for item in _stream(http, url, four):
                if not items:
                    assert item["task"]["status"]["state"] == "TASK_STATE_WORKING", item
                    (log.parent / "release").touch()
                items.append(item)
            assert items[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            final = await _send(http, url, four)
            assert _texts(final)[-3:] == ["wait", "waiting", "got wait"]
        turns = log.read_text().splitlines()
        assert turns == [f"turn {task_id} {text}" for text in ("one", "two", "three", "wait")]


# --- a retried first message (no taskId): the task it started, no second one ---------


class _Cluster:
    """A deployment whose serving process can be killed and started again: one
    ``serve`` on SQLite, or a ``serve --front-end`` and a worker on PostgreSQL."""

    def __init__(self, kind: str, tmp_path: Path, stack: contextlib.ExitStack) -> None:
        (tmp_path / "repeat_agent.py").write_text(AGENT)
        self.log = tmp_path / "turns.log"
        self.env = cli_env({"REPEAT_AGENT_LOG": str(self.log)}, pythonpath=tmp_path)
        self.agent = ["--agent", "repeat_agent:AskingAgent", "--log-level", "warning"]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.kind, self.stack = kind, stack
        if kind == "sqlite":
            self.store = f"sqlite:///{tmp_path / 'a.db'}"
        else:
            self.store = store_url(stack.enter_context(fresh_schema("a2a_firsts", "first")))
            worker = CliProcess(
                ["worker", "--store", self.store, *self.agent],
                name="worker",
                env=self.env,
                ready=r"a2a-models: worker .* running",
            )
            stack.callback(worker.stop)
            worker.wait_ready()
        self.front = self.start()

    def start(self) -> CliProcess:
        serve = ["serve", "--host", "127.0.0.1", "--port", str(self.port), *self.agent]
        serve += ["--store", self.store, *(["--front-end"] if self.kind == "workers" else [])]
        proc = CliProcess(serve, name="serve", env=self.env)
        self.stack.callback(proc.stop)
        return proc.wait_ready()

    def turns(self) -> list[tuple[str, str]]:
        """``(task id, text)`` of each turn the agent started, in order."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [tuple(line.split(" ", 2)[1:]) for line in lines]  # type: ignore[misc]


async def _rpc_error(http: httpx.AsyncClient, url: str, message: dict[str, Any]) -> Any:
    params = {"message": message}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    reply = (await http.post(url, json=body, headers=V10)).json()
    assert "error" in reply, reply
    return reply["error"]


async def _count(http: httpx.AsyncClient, url: str) -> int:
    listed = await _rpc(http, url, "ListTasks", {}, headers=V10)
    return int(listed["totalSize"])


@pytest.mark.parametrize("kind", ["sqlite", "workers"])
async def test_a_retried_first_message_starts_no_second_task(kind: str, tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack:
        cluster = _Cluster(kind, tmp_path, stack)
        url = cluster.url
        async with httpx.AsyncClient(timeout=30) as http:
            one = _message(None, "m1", "one")
            first = await _send(http, url, one)
            assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            # The retry, by each binding: the task as it is, no turn.
            assert await _send(http, url, one) == first
            rest = await http.post(f"{url}/message:send", json={"message": one}, headers=V10)
            assert rest.status_code == 200 and rest.json()["task"] == first
            legacy = {"kind": "message", "role": "user", "messageId": "m1"}
            legacy["parts"] = [{"kind": "text", "text": "one"}]
            old = await _rpc(http, url, "message/send", {"message": legacy}, headers=V03)
            assert old["id"] == first["id"] and old["status"]["state"] == "input-required"
            # Same id, other content: refused, pointing at the id.
            error = await _rpc_error(http, url, _message(None, "m1", "other"))
            assert error["code"] == -32602 and "message.messageId" in json.dumps(error)
            rest = await http.post(
                f"{url}/message:send",
                json={"message": _message(None, "m1", "other")},
                headers=V10,
            )
            assert rest.status_code == 400 and "messageId" in rest.text
            # Four identical first messages at once: one task, one turn.
            answers = await asyncio.gather(
                *(_send(http, url, _message(None, "m2", "two")) for _ in range(4))
            )
            assert len({answer["id"] for answer in answers}) == 1
            # A retry while its turn runs joins it: the stream follows that turn.
            wait = _message(None, "m3", "wait")
            running = await _send(http, url, wait, returnImmediately=True)
            items = []
            async for item in _stream(http, url, wait):
                if not items:
                    assert item["task"]["id"] == running["id"], item
                    (cluster.log.parent / "release").touch()
                items.append(item)
            assert items[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            assert await _count(http, url) == 3
        assert cluster.turns() == [
            (first["id"], "one"),
            (answers[0]["id"], "two"),
            (running["id"], "wait"),
        ]


@pytest.mark.parametrize("kind", ["sqlite", "workers"])
async def test_a_first_message_retried_after_kill_9_of_the_server_finds_its_task(
    kind: str, tmp_path: Path
) -> None:
    with contextlib.ExitStack() as stack:
        cluster = _Cluster(kind, tmp_path, stack)
        url = cluster.url
        async with httpx.AsyncClient(timeout=30) as http:
            wait = _message(None, "m1", "wait")
            running = await _send(http, url, wait, returnImmediately=True)
            cluster.front.kill()  # the client's connection drops: it retries
            cluster.front = cluster.start()
            again = await _send(http, url, wait, returnImmediately=True)
            assert again["id"] == running["id"]
            assert await _count(http, url) == 1
            if kind == "workers":
                # The worker still runs the turn: the retry's stream follows it.
                items = []
                async for item in _stream(http, url, wait):
                    if not items:
                        (cluster.log.parent / "release").touch()
                    items.append(item)
                state = items[-1]["statusUpdate"]["status"]["state"]
                assert state == "TASK_STATE_INPUT_REQUIRED"
        turns = cluster.turns()
        assert turns[0] == (running["id"], "wait")
        if kind == "workers":
            assert turns == [(running["id"], "wait")]
        else:
            # The new process knew nothing of the message: its agent started, and the
            # store refused its task (nothing it did was recorded; see docs/server.md).
            assert len(turns) == 2 and turns[1][0] != running["id"]
