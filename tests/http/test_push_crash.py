"""Push notifications survive a crash: real ``a2a-models`` processes, ``kill -9``.

A webhook answers 503 while a task completes; the process that ran it is
SIGKILLed (its notifications were only in its memory before), the webhook
recovers, and a process started on the same store delivers the task's latest
status, ``completed`` (once: the older ones are coalesced into it). Once with
``serve`` on SQLite restarted on its file, once with a front end and a worker
on PostgreSQL, a second worker started after the first was killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _client_support import serve_in_thread
from _pg_support import fresh_schema, store_url
from _procs import CliProcess, cli_env, free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_models import (
    Message,
    SendMessageConfiguration,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    codec,
)
from a2a_models.adapters.http import HTTPClient, Reconnect

HERE = Path(__file__).resolve().parent
TTL = "1"
#: The lease TTL plus its check interval, with room for a loaded machine.
DELIVERY_TIMEOUT = 20.0


class Hook:
    """A webhook answering ``status``; ``received``: the states it accepted (2xx)."""

    def __init__(self) -> None:
        self.status = 503
        self.requests = 0
        self.received: list[str] = []

    async def endpoint(self, request: Request) -> Response:
        body = await request.body()
        self.requests += 1
        if self.status < 300:
            item = codec.decode(StreamResponse, body, "1.0")
            status = getattr(item, "status", None)
            self.received.append(status.state.name if status is not None else "?")
        return Response(status_code=self.status)

    async def wait_for(self, state: str, procs: list[CliProcess]) -> None:
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        while state not in self.received:
            logs = "\n".join(p.log() for p in procs)
            assert time.monotonic() < deadline, f"no {state}: {self.received}\n{logs}"
            await asyncio.sleep(0.05)


@pytest.fixture
def hook() -> Iterator[tuple[Hook, str]]:
    hook = Hook()
    app = Starlette(routes=[Route("/hook", hook.endpoint, methods=["POST"])])
    with serve_in_thread(app) as url:
        yield hook, f"{url}/hook"


def _env() -> dict[str, str]:
    return cli_env(pythonpath=HERE)


def _serve(store: str, *extra: str) -> CliProcess:
    args = ["serve", "--host", "127.0.0.1", "--port", str(free_port()), "--store", store]
    args += ["--agent", "worker_agent:WorkerAgent", "--push-allow", "127.0.0.1"]
    args += ["--log-level", "warning", *extra]
    return CliProcess(args, name="serve", env=_env()).wait_ready()


def _worker(store: str) -> CliProcess:
    args = ["worker", "--store", store, "--agent", "worker_agent:WorkerAgent"]
    args += ["--lease-ttl", TTL, "--push-allow", "127.0.0.1", "--log-level", "warning"]
    return CliProcess(
        args, name="worker", env=_env(), ready=r"a2a-models: worker .* running"
    ).wait_ready()


async def _complete_a_task(url: str, hook_url: str) -> Task:
    push = TaskPushNotificationConfig(url=hook_url, token="t0k")
    config = SendMessageConfiguration(task_push_notification_config=push)
    async with HTTPClient(url, timeout=30, reconnect=Reconnect(attempts=0)) as client:
        task = await client.send_message(Message.user("work 2 0.01"), configuration=config)
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    return task


async def _tried(webhook: Hook, requests: int, procs: list[CliProcess]) -> None:
    """Wait until the webhook was called (and failed) ``requests`` times."""
    deadline = time.monotonic() + DELIVERY_TIMEOUT
    while webhook.requests < requests:
        logs = "\n".join(p.log() for p in procs)
        assert time.monotonic() < deadline, f"{webhook.requests} requests\n{logs}"
        await asyncio.sleep(0.02)


@contextlib.contextmanager
def _stopped(procs: list[CliProcess]) -> Iterator[list[CliProcess]]:
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()


async def test_serve_on_sqlite_delivers_completed_after_kill_9_and_restart(
    tmp_path: Path, hook: tuple[Hook, str]
) -> None:
    webhook, hook_url = hook
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    with _stopped([_serve(store, "--lease-ttl", TTL)]) as procs:
        await _complete_a_task(procs[0].url, hook_url)
        await _tried(webhook, 1, procs)
        procs[0].kill()
        assert webhook.received == []
        webhook.status = 200
        procs.append(_serve(store, "--lease-ttl", TTL))
        await webhook.wait_for("COMPLETED", procs)
        await asyncio.sleep(1.0)  # a second resume round: nothing more is owed
    # Only the latest status, once: submitted and working were coalesced into it.
    assert webhook.received == ["COMPLETED"]


async def test_a_second_worker_delivers_completed_after_the_first_is_killed(
    hook: tuple[Hook, str],
) -> None:
    webhook, hook_url = hook
    with fresh_schema("a2a_push_crash", "push crash") as schema:
        store = store_url(schema)
        front = _serve(store, "--front-end")
        with _stopped([front, _worker(store)]) as procs:
            await _complete_a_task(front.url, hook_url)
            await _tried(webhook, 2, procs)
            procs[1].kill()
            webhook.status = 200
            procs.append(_worker(store))
            await webhook.wait_for("COMPLETED", procs)
            await asyncio.sleep(1.0)
        assert webhook.received.count("COMPLETED") == 1, webhook.received
        assert "WORKING" not in webhook.received  # coalesced into completed
