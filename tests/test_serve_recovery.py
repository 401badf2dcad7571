"""Crash recovery with real processes: ``kill -9`` of ``a2a-models serve`` while its
agent works; the tasks it ran are taken over through their lapsed leases (SQLite and
PostgreSQL): failed with a clear status message, or re-run for a restartable agent.
Subscribers on another replica receive that final event."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _procs import PG_DSN, CliProcess, cli_env, free_port

from a2a_models.server import STOPPED_MESSAGE

AGENT = '''
import asyncio, os
from a2a_models.server import Agent


class Slow(Agent):
    """Works for $SLOW seconds, then completes."""

    async def execute(self, context):
        yield context.working("started by " + str(os.getpid()))
        await asyncio.sleep(float(os.environ.get("SLOW", "60")))
        yield context.complete("done by " + str(os.getpid()))


class Restartable(Slow):
    restartable = True
'''
V10 = {"A2A-Version": "1.0"}
TTL = 2.0
#: Lease time + one check interval + start-up, with room for a loaded machine.
RECOVERY_TIMEOUT = TTL + TTL / 3 + 20


class Proc(CliProcess):
    """``a2a-models serve`` of ``slow_agent:AGENT`` on ``store``, ready (see :class:`CliProcess`)."""

    def __init__(self, tmp: Path, store: str, agent: str, slow: float) -> None:
        self.port = free_port()
        args = ["serve", "--port", str(self.port), "--log-level", "warning", "--store", store]
        args += ["--agent", f"slow_agent:{agent}", "--lease-ttl", str(TTL)]
        env = cli_env({"SLOW": str(slow)}, pythonpath=tmp)
        super().__init__(args, name="serve", cwd=tmp, env=env)
        self.wait_ready()


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Any]:
    (tmp_path / "slow_agent.py").write_text(AGENT)
    started: list[Proc] = []

    def start(store: str, agent: str = "Slow", slow: float = 60) -> Proc:
        proc = Proc(tmp_path, store, agent, slow)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _send_waiting(url: str, n: int) -> list[str]:
    ids = []
    with httpx.Client(headers=V10, timeout=10) as http:
        for i in range(n):
            body = _rpc(
                "SendMessage",
                {
                    "message": {
                        "messageId": f"m{i}-{uuid.uuid4()}",
                        "role": "ROLE_USER",
                        "parts": [{"text": "work"}],
                    },
                    "configuration": {"returnImmediately": True},
                },
            )
            task = http.post(url + "/", json=body).json()["result"]["task"]
            ids.append(task["id"])
        # Acknowledged and running: each has its 'working' update stored.
        deadline = time.monotonic() + 20
        for task_id in ids:
            while _state(http, url, task_id)["state"] != "TASK_STATE_WORKING":
                assert time.monotonic() < deadline
                time.sleep(0.05)
    return ids


def _state(http: httpx.Client, url: str, task_id: str) -> dict[str, Any]:
    answer = http.post(url + "/", json=_rpc("GetTask", {"id": task_id, "historyLength": 0}))
    result: dict[str, Any] = answer.json()["result"]["status"]
    return result


def _wait_terminal(url: str, ids: list[str], timeout: float) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    with httpx.Client(headers=V10, timeout=10) as http:
        while len(done) < len(ids) and time.monotonic() < deadline:
            for task_id in ids:
                if task_id not in done:
                    status = _state(http, url, task_id)
                    if status["state"] in ("TASK_STATE_FAILED", "TASK_STATE_COMPLETED"):
                        done[task_id] = status
            time.sleep(0.1)
    assert len(done) == len(ids), f"{len(ids) - len(done)} tasks still running"
    return done


def _text(status: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in status.get("message", {}).get("parts", []))


@pytest.fixture
def pg_store() -> Iterator[str]:
    """A store URL on a fresh schema (and broker channel), dropped afterwards."""
    psycopg = pytest.importorskip("psycopg")
    try:
        with psycopg.connect(PG_DSN, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        if os.environ.get("A2A_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL at {PG_DSN} is unreachable: {exc}")
        pytest.skip(f"PostgreSQL at {PG_DSN} is unreachable: {exc}")
    schema = f"a2a_test_{uuid.uuid4().hex[:12]}"
    yield f"{PG_DSN}?schema={schema}&channel=a2a_{schema}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _stores(tmp_path: Path, request: pytest.FixtureRequest, kind: str) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path}/tasks.db"
    return str(request.getfixturevalue("pg_store"))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_killed_server_tasks_fail_with_a_clear_message_after_restart(
    procs: Any, tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    store = _stores(tmp_path, request, kind)
    first = procs(store)
    ids = _send_waiting(first.url, 5)
    first.kill()
    t0 = time.monotonic()
    second = procs(store, slow=0.1)
    done = _wait_terminal(second.url, ids, RECOVERY_TIMEOUT)
    assert {s["state"] for s in done.values()} == {"TASK_STATE_FAILED"}
    assert {_text(s) for s in done.values()} == {STOPPED_MESSAGE}
    assert time.monotonic() - t0 < RECOVERY_TIMEOUT


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_restartable_agent_runs_the_turn_again(
    procs: Any, tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    store = _stores(tmp_path, request, kind)
    first = procs(store, agent="Restartable")
    ids = _send_waiting(first.url, 3)
    first.kill()
    second = procs(store, agent="Restartable", slow=0.1)
    done = _wait_terminal(second.url, ids, RECOVERY_TIMEOUT)
    assert {s["state"] for s in done.values()} == {"TASK_STATE_COMPLETED"}
    # Finished by the second process, not the killed one.
    assert {_text(s) for s in done.values()} == {f"done by {second.proc.pid}"}


def test_a_subscriber_on_another_replica_gets_the_final_event(procs: Any, pg_store: str) -> None:
    runner = procs(pg_store)
    watcher = procs(pg_store)  # a second replica: it takes the task over
    (task_id,) = _send_waiting(runner.url, 1)
    events: list[dict[str, Any]] = []
    opened = threading.Event()

    def subscribe() -> None:
        body = _rpc("SubscribeToTask", {"id": task_id})
        headers = {**V10, "Accept": "text/event-stream"}
        with httpx.stream(
            "POST",
            watcher.url + "/",
            json=body,
            headers=headers,
            timeout=httpx.Timeout(10, read=60),
        ) as response:
            opened.set()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    events.append(json.loads(line[5:])["result"])

    thread = threading.Thread(target=subscribe, daemon=True)
    thread.start()
    assert opened.wait(10)
    time.sleep(0.3)
    runner.kill()
    thread.join(RECOVERY_TIMEOUT)
    assert not thread.is_alive(), f"the stream did not end: {events}"
    final = events[-1]["statusUpdate"]["status"]
    assert final["state"] == "TASK_STATE_FAILED"
    assert _text(final) == STOPPED_MESSAGE
