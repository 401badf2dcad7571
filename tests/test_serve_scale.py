"""``a2a-models serve`` flags for serving at scale, on a real process:
``--max-active-tasks-per-owner`` (JSON-RPC -32603 / HTTP 429) and ``--retain-terminal``."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _procs import CliProcess, a2a_command, cli_env, free_port

AGENT = '''
import asyncio
from a2a_models.server import Agent


class Waits(Agent):
    """Works until cancelled ('wait'); replies at once otherwise."""

    async def execute(self, context):
        if context.message.text == "wait":
            yield context.working("waiting")
            await asyncio.sleep(60)
            yield context.complete()
            return
        yield context.complete("done")
'''
V10 = {"A2A-Version": "1.0"}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[object]:
    (tmp_path / "waits_agent.py").write_text(AGENT)
    procs: list[CliProcess] = []

    def start(*args: str) -> str:
        port = free_port()
        args = (
            "serve",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--agent",
            "waits_agent:Waits",
            *args,
        )
        proc = CliProcess(args, name="serve", cwd=tmp_path, env=cli_env(pythonpath=tmp_path))
        procs.append(proc)
        return proc.wait_ready(20).url

    yield start
    for proc in procs:
        proc.stop()


def _rpc(text: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": f"m-{time.monotonic_ns()}",
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            },
            "configuration": {"returnImmediately": True},
        },
    }


def test_active_task_limit_answers_32603_and_429(serve: object, tmp_path: Path) -> None:
    url = serve("--store", f"sqlite:///{tmp_path}/t.db", "--max-active-tasks-per-owner", "2")  # type: ignore[operator]
    with httpx.Client(base_url=url, headers=V10, timeout=10) as http:
        for _ in range(2):
            answer = http.post("/", json=_rpc("wait")).json()
            assert answer["result"]["task"]["status"]["state"] in (
                "TASK_STATE_SUBMITTED",
                "TASK_STATE_WORKING",
            )
        refused = http.post("/", json=_rpc("wait")).json()
        assert refused["error"]["code"] == -32603
        assert "2 active tasks" in refused["error"]["message"]
        rest = http.post("/message:send", json=_rpc("wait")["params"])
        assert rest.status_code == 429, rest.text
        assert rest.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
        # A task that finishes at once is still refused: the limit is checked at creation.
        listed = http.post(
            "/", json={"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}}
        )
        assert listed.json()["result"]["totalSize"] == 2


def test_bad_retain_terminal_exits_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [*a2a_command(), "serve", "--port", "0", "--store", "memory:", "--retain-terminal", "soon"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "not an age" in done.stderr


def test_retain_terminal_deletes_finished_tasks_while_serving(
    serve: object, tmp_path: Path
) -> None:
    url = serve("--store", f"sqlite:///{tmp_path}/r.db", "--retain-terminal", "1s")  # type: ignore[operator]
    with httpx.Client(base_url=url, headers=V10, timeout=10) as http:
        body = _rpc("finish")
        body["params"]["configuration"] = {"returnImmediately": False}  # type: ignore[index]
        task = http.post("/", json=body).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        # Passes run every 10 s at the shortest; the first one ran at start-up. Wait for the next.
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline:
            got = http.post(
                "/",
                json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task["id"]}},
            ).json()
            if "error" in got:
                break
            time.sleep(0.5)
        assert got["error"]["code"] == -32001
