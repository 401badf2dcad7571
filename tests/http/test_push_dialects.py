"""A webhook gets the body of the protocol its push config was set through: real
``a2a-models serve`` processes (SQLite, PostgreSQL) and a real webhook on 127.0.0.1.

A 0.3 receiver (0.3 §9.5; the a2a-sdk 0.3 line parses a Task) is posted the Task
itself, ``"kind": "task"``, valid against the 0.3 JSON schema's Task, as
``application/json``, its token in ``X-A2A-Notification-Token``; whether the config
came with a 0.3 ``message/send``, ``tasks/pushNotificationConfig/set`` or the 0.3
HTTP+JSON route. A 1.0 config of the same task still gets 1.0 StreamResponses. A
config replaced through the other dialect takes the new one. Before, every webhook
got 1.0 StreamResponses, which a 0.3 receiver cannot read.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from _client_support import serve_in_thread
from _pg_support import fresh_schema, store_url
from _procs import CliProcess, cli_env, free_port
from contract.protoschema import require_spec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_models import (
    Message,
    SendMessageConfiguration,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
    codec,
)
from a2a_models.adapters.http import HTTPClient

HERE = Path(__file__).resolve().parent
DELIVERY_TIMEOUT = 30.0


@functools.cache
def _task_schema() -> jsonschema.Draft7Validator:
    spec = json.loads((require_spec() / "0.3.0" / "a2a.json").read_text())
    schema = {"$ref": "#/definitions/Task", "definitions": spec["definitions"]}
    return jsonschema.Draft7Validator(schema)


class Hooks:
    """Webhooks at ``/{name}``: every POST kept as (name, headers, body)."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        #: What the webhooks answer; the posts answered with an error are in ``refused``.
        self.status = 204
        self.refused: list[tuple[str, bytes]] = []

    async def endpoint(self, request: Request) -> Response:
        name, body = request.path_params["name"], await request.body()
        if self.status >= 300:
            self.refused.append((name, body))
        else:
            self.posts.append((name, dict(request.headers), body))
        return Response(status_code=self.status)

    def of(self, name: str) -> list[tuple[dict[str, str], bytes]]:
        return [(headers, body) for hook, headers, body in self.posts if hook == name]

    async def wait_completed(self, names: list[str], proc: CliProcess) -> None:
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        while not all(any(b"completed" in body.lower() for _, body in self.of(n)) for n in names):
            assert time.monotonic() < deadline, f"{self.posts}\n{proc.log()}"
            await asyncio.sleep(0.05)


@pytest.fixture
def hooks() -> Iterator[tuple[Hooks, str]]:
    hooks = Hooks()
    app = Starlette(routes=[Route("/{name}", hooks.endpoint, methods=["POST"])])
    with serve_in_thread(app) as url:
        yield hooks, url


def _serve(store: str, *extra: str) -> CliProcess:
    args = ["serve", "--host", "127.0.0.1", "--port", str(free_port()), "--store", store]
    args += ["--agent", "worker_agent:WorkerAgent", "--push-allow", "127.0.0.1"]
    args += ["--log-level", "warning", *extra]
    return CliProcess(args, name="serve", env=cli_env(pythonpath=HERE)).wait_ready()


async def _rpc(client: httpx.AsyncClient, method: str, params: dict[str, Any], version: str) -> Any:
    answer = await client.post(
        "/",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"A2A-Version": version},
    )
    body = answer.json()
    assert "result" in body, body
    return body["result"]


async def _run_a_task_with_configs_of_both_dialects(url: str, hook: str) -> str:
    """A 0.3 task (``message/send``, not blocking) with five configs; its id."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        message = {
            "kind": "message",
            "role": "user",
            "messageId": "m1",
            "parts": [{"kind": "text", "text": "work 4 0.3"}],
        }
        push = {"id": "rpc03", "url": f"{hook}/rpc03", "token": "tok-rpc03"}
        config = {"blocking": False, "pushNotificationConfig": push}
        task = await _rpc(
            client, "message/send", {"message": message, "configuration": config}, "0.3"
        )
        task_id = task["id"]
        set03 = {
            "taskId": task_id,
            "pushNotificationConfig": {"id": "set03", "url": f"{hook}/set03"},
        }
        await _rpc(client, "tasks/pushNotificationConfig/set", set03, "0.3")
        v10 = {"taskId": task_id, "id": "v10", "url": f"{hook}/v10", "token": "tok-v10"}
        await _rpc(client, "CreateTaskPushNotificationConfig", v10, "1.0")
        # Created through 1.0, then replaced through 0.3 (and the other way round).
        to03 = {"taskId": task_id, "id": "to03", "url": f"{hook}/to03", "token": "tok-to03"}
        await _rpc(client, "CreateTaskPushNotificationConfig", to03, "1.0")
        body = {
            "pushNotificationConfig": {"id": "to03", "url": f"{hook}/to03", "token": "tok-to03"}
        }
        answer = await client.post(f"/v1/tasks/{task_id}/pushNotificationConfigs", json=body)
        assert answer.status_code == 200, answer.text
        to10 = {"id": "to10", "url": f"{hook}/to10"}
        await _rpc(
            client,
            "tasks/pushNotificationConfig/set",
            {"taskId": task_id, "pushNotificationConfig": to10},
            "0.3",
        )
        await _rpc(client, "CreateTaskPushNotificationConfig", {"taskId": task_id, **to10}, "1.0")
    return str(task_id)


def _dialect_of(headers: dict[str, str], body: bytes, task_id: str) -> str:
    """The dialect of one post, checked: a 0.3 Task valid against the 0.3 schema, as
    ``application/json``, or a 1.0 StreamResponse as ``application/a2a+json``."""
    data = json.loads(body)
    if headers["content-type"] == "application/json":
        errors = [e.message for e in _task_schema().iter_errors(data)]
        assert errors == [], (errors, data)
        assert data["kind"] == "task" and data["id"] == task_id
        assert "history" not in data  # a notification does not grow with the conversation
        assert isinstance(codec.decode(Task, body, "0.3"), Task)
        return "0.3"
    assert headers["content-type"] == "application/a2a+json", headers
    assert "kind" not in data
    codec.decode(StreamResponse, body, "1.0")
    return "1.0"


def _check(hooks: Hooks, task_id: str) -> None:
    tokens = {"rpc03": "tok-rpc03", "set03": None, "to03": "tok-to03", "v10": "tok-v10"}
    for name, dialect in (("rpc03", "0.3"), ("set03", "0.3"), ("to03", "0.3"), ("v10", "1.0")):
        posts = hooks.of(name)
        assert posts, name
        shapes = [_dialect_of(headers, body, task_id) for headers, body in posts]
        assert all(h.get("x-a2a-notification-token") == tokens[name] for h, _ in posts)
        # A replaced config got the old dialect's body for the changes made before.
        assert shapes == [dialect] * len(shapes) or name == "to03", (name, shapes)
        assert shapes[-1] == dialect, (name, shapes)
        if dialect == "0.3":
            last = json.loads(posts[-1][1])
            assert last["status"]["state"] == "completed"
            assert [a["parts"][0]["text"] for a in last["artifacts"]][-1].startswith("ran by")
        else:
            assert b"TASK_STATE_COMPLETED" in posts[-1][1]
    # Set through 0.3, then replaced through 1.0: its last notification is 1.0.
    to10 = hooks.of("to10")
    assert to10 and _dialect_of(*to10[-1], task_id) == "1.0"
    assert b"TASK_STATE_COMPLETED" in to10[-1][1]


async def test_serve_on_sqlite_posts_each_webhook_its_own_dialect(
    tmp_path: Path, hooks: tuple[Hooks, str]
) -> None:
    webhooks, hook = hooks
    proc = _serve(f"sqlite:///{tmp_path / 'tasks.db'}")
    try:
        task_id = await _run_a_task_with_configs_of_both_dialects(proc.url, hook)
        await webhooks.wait_completed(["rpc03", "set03", "to03", "v10", "to10"], proc)
    finally:
        proc.kill()
    _check(webhooks, task_id)


async def test_serve_on_postgres_posts_each_webhook_its_own_dialect(
    hooks: tuple[Hooks, str],
) -> None:
    webhooks, hook = hooks
    with fresh_schema("a2a_push_dialects", "push dialects") as schema:
        proc = _serve(store_url(schema))
        try:
            task_id = await _run_a_task_with_configs_of_both_dialects(proc.url, hook)
            await webhooks.wait_completed(["rpc03", "set03", "to03", "v10", "to10"], proc)
        finally:
            proc.kill()
    _check(webhooks, task_id)


async def test_after_kill_9_each_dialect_gets_the_latest_status_once_in_its_own_shape(
    tmp_path: Path, hooks: tuple[Hooks, str]
) -> None:
    # The owed status is taken up from the store by the next process: a 0.3 webhook
    # gets it as a Task, a 1.0 one as a status update; older ones coalesced into it.
    webhooks, hook = hooks
    webhooks.status = 503
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    procs = [_serve(store, "--lease-ttl", "1")]
    try:
        task_id = await _run_a_task_with_configs_of_both_dialects(procs[0].url, hook)
        deadline = time.monotonic() + DELIVERY_TIMEOUT
        marks = {"rpc03": b'"completed"', "v10": b"TASK_STATE_COMPLETED"}

        def refused_completed() -> bool:
            return all(
                any(hook == name and mark in body for hook, body in webhooks.refused)
                for name, mark in marks.items()
            )

        while not refused_completed():
            assert time.monotonic() < deadline, f"{webhooks.refused}\n{procs[0].log()}"
            await asyncio.sleep(0.05)
        procs[0].kill()
        webhooks.status = 204
        procs.append(_serve(store, "--lease-ttl", "1"))
        await webhooks.wait_completed(["rpc03", "set03", "to03", "v10", "to10"], procs[1])
        await asyncio.sleep(1.0)  # a second resume round: nothing more is owed
    finally:
        for proc in procs:
            proc.kill()
    for name in ("rpc03", "set03", "to03"):
        [(headers, body)] = webhooks.of(name)
        assert _dialect_of(headers, body, task_id) == "0.3"
        assert json.loads(body)["status"]["state"] == "completed"
    assert webhooks.of("rpc03")[0][0]["x-a2a-notification-token"] == "tok-rpc03"
    for name in ("v10", "to10"):
        [(headers, body)] = webhooks.of(name)
        assert _dialect_of(headers, body, task_id) == "1.0"
        item = codec.decode(StreamResponse, body, "1.0")
        assert isinstance(item, TaskStatusUpdateEvent)
        assert item.status.state.name == "COMPLETED"


async def test_a_1_0_webhook_gets_a_streamed_artifact_in_order_in_fewer_requests_than_chunks(
    tmp_path: Path, hooks: tuple[Hooks, str]
) -> None:
    # A 1.0 webhook got the status updates only, never the artifact (§4.3.3: a push
    # delivers the event types of a stream). Chunks that wait for the rate limit
    # (5 a second, bursts of 20) go as one request: 400 chunks are not 400 requests.
    webhooks, hook = hooks
    proc = _serve(f"sqlite:///{tmp_path / 'tasks.db'}")
    push = TaskPushNotificationConfig(url=f"{hook}/v10", token="tok")
    try:
        async with HTTPClient(proc.url, timeout=30) as client:
            task = await client.send_message(
                Message.user("chunks 400"),
                configuration=SendMessageConfiguration(task_push_notification_config=push),
            )
        assert isinstance(task, Task)
        await webhooks.wait_completed(["v10"], proc)
    finally:
        proc.kill()
    items = [codec.decode(StreamResponse, body, "1.0") for _, body in webhooks.of("v10")]
    kinds = [type(item).__name__ for item in items]
    assert kinds[-1] == "TaskStatusUpdateEvent"  # completed, after every chunk
    chunks = [item for item in items if isinstance(item, TaskArtifactUpdateEvent)]
    assert chunks and len(chunks) < 100, kinds
    text = "".join(part.text for item in chunks for part in item.artifact.parts)  # type: ignore[union-attr]
    assert text == "".join(f"c{i} " for i in range(400))
    assert [item.append for item in chunks] == [False] + [True] * (len(chunks) - 1)
    assert chunks[-1].last_chunk
    assert task.artifacts[0].parts[0].text == text  # type: ignore[union-attr]
