"""The HTTP+JSON routes: every 1.0 route (and its tenant variant) and 0.3's /v1 ones."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx
import pytest
from _server_support import (
    V10,
    GateAgent,
    SSEReader,
    asgi_client,
    make_card,
    make_server,
    message_v03_http,
    message_v10,
    read_sse,
    running,
    stream_item,
)

from a2a_models.adapters.http import create_app
from a2a_models.server import AgentServer, EventStream, StreamItem

A2A_JSON = "application/a2a+json"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    server, _ = make_server(make_card(extended=True), extended_card=make_card(url="http://private"))
    async with asgi_client(create_app(server), headers=V10) as c:
        yield c


def _assert_status(response: httpx.Response, code: int, status: str, reason: str | None) -> None:
    assert response.status_code == code, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["status"] == status
    details = error.get("details", [])
    assert all("@type" in d for d in details)
    if reason is not None:
        (info,) = [d for d in details if d["@type"].endswith("google.rpc.ErrorInfo")]
        assert info["reason"] == reason
        assert info["domain"] == "a2a-protocol.org"


async def _send(
    client: httpx.AsyncClient, text: str, prefix: str = "", **config: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message_v10(text)}
    if config:
        body["configuration"] = config
    response = await client.post(f"{prefix}/message:send", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def test_send_get_and_list(client: httpx.AsyncClient) -> None:
    sent = await _send(client, "one")
    task = sent["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    reply = await _send(client, "echo hello")
    assert reply["message"]["parts"] == [{"text": "echo hello"}]

    got = await client.get(f"/tasks/{task['id']}", params={"historyLength": 0})
    assert got.status_code == 200
    assert got.headers["content-type"] == A2A_JSON
    assert got.json()["id"] == task["id"] and "history" not in got.json()

    listed = await client.get(
        "/tasks",
        params={"contextId": task["contextId"], "pageSize": 10, "includeArtifacts": "true"},
    )
    body = listed.json()
    assert [t["id"] for t in body["tasks"]] == [task["id"]]
    assert body["tasks"][0]["artifacts"]
    assert body["nextPageToken"] == ""
    filtered = await client.get("/tasks", params={"status": "TASK_STATE_WORKING"})
    assert filtered.json()["tasks"] == []
    snake = await client.get("/tasks", params={"context_id": task["contextId"]})
    assert len(snake.json()["tasks"]) == 1


async def test_cancel(client: httpx.AsyncClient) -> None:
    waiting = (await _send(client, "wait", returnImmediately=True))["task"]
    canceled = await client.post(f"/tasks/{waiting['id']}:cancel")
    assert canceled.status_code == 200
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"
    done = (await _send(client, "quick"))["task"]
    refused = await client.post(f"/tasks/{done['id']}:cancel", json={})
    _assert_status(refused, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")


async def test_push_config_routes(client: httpx.AsyncClient) -> None:
    task = (await _send(client, "wait", returnImmediately=True))["task"]
    base = f"/tasks/{task['id']}/pushNotificationConfigs"
    created = await client.post(base, json={"url": "https://hooks.example/a2a", "token": "t"})
    assert created.status_code == 200, created.text
    config = created.json()
    assert config["taskId"] == task["id"] and config["id"]
    got = await client.get(f"{base}/{config['id']}")
    assert got.json() == config
    listed = await client.get(base)
    assert listed.json()["configs"] == [config]
    deleted = await client.delete(f"{base}/{config['id']}")
    assert deleted.status_code == 200 and deleted.json() == {}
    gone = await client.get(f"{base}/{config['id']}")
    _assert_status(gone, 404, "NOT_FOUND", "TASK_NOT_FOUND")
    mismatch = await client.post(base, json={"url": "https://h.example", "taskId": "other"})
    _assert_status(mismatch, 400, "INVALID_ARGUMENT", None)
    await client.post(f"/tasks/{task['id']}:cancel")


async def test_extended_card(client: httpx.AsyncClient) -> None:
    response = await client.get("/extendedAgentCard")
    assert response.status_code == 200
    assert response.json()["supportedInterfaces"][0]["url"] == "http://private"


async def test_errors(client: httpx.AsyncClient) -> None:
    _assert_status(await client.get("/tasks/nope"), 404, "NOT_FOUND", "TASK_NOT_FOUND")
    no_version = await client.get("/tasks/nope", headers={"A2A-Version": ""})
    _assert_status(no_version, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
    assert "A2A-Version: 1.0" in no_version.json()["error"]["message"]
    invalid = await client.post("/message:send", json={"configuration": {}})
    _assert_status(invalid, 400, "INVALID_ARGUMENT", None)
    violation = invalid.json()["error"]["details"][0]
    assert violation["fieldViolations"][0]["field"] == "message"
    malformed = await client.post(
        "/message:send", content=b"{", headers={"content-type": "application/json"}
    )
    _assert_status(malformed, 400, "INVALID_ARGUMENT", None)
    not_object = await client.post("/message:send", json=[1])
    _assert_status(not_object, 400, "INVALID_ARGUMENT", None)
    bad_query = await client.get("/tasks", params={"pageSize": "ten"})
    _assert_status(bad_query, 400, "INVALID_ARGUMENT", None)
    bad_bool = await client.get("/tasks", params={"includeArtifacts": "maybe"})
    _assert_status(bad_bool, 400, "INVALID_ARGUMENT", None)
    media = await client.post(
        "/message:send", content=b"hi", headers={"content-type": "text/plain"}
    )
    assert media.status_code == 415
    assert media.json()["error"]["code"] == 415
    assert media.json()["error"]["message"] == (
        "Unsupported Content-Type 'text/plain': send application/a2a+json"
        " (application/json is accepted too)"
    )
    a2a_json = await client.post(
        "/message:send",
        content=b'{"message": {"messageId": "x", "role": "ROLE_USER", "parts": [{"text": "echo"}]}}',
        headers={"content-type": "application/a2a+json"},
    )
    assert a2a_json.status_code == 200
    wrong_method = await client.delete("/tasks/x")
    _assert_status(wrong_method, 405, "UNIMPLEMENTED", "METHOD_NOT_FOUND")
    assert "GET" in wrong_method.headers["allow"]
    # google.rpc.Code's name for 404 is NOT_FOUND (UNIMPLEMENTED is 501's).
    unknown = await client.get("/no/such/route/here")
    _assert_status(unknown, 404, "NOT_FOUND", "METHOD_NOT_FOUND")
    v03_unknown = await client.get("/v1/nope")
    _assert_status(v03_unknown, 404, "NOT_FOUND", "METHOD_NOT_FOUND")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/tasks/"),
        ("GET", "/tasks/t1/"),
        ("GET", "/tasks/%2F"),  # the task "/": the path is /tasks//
        ("POST", "/message:send/"),
        ("POST", "/tasks/t1:cancel/"),
        ("GET", "/tasks/t1/pushNotificationConfigs/"),
        ("GET", "/extendedAgentCard/"),
        ("GET", "/acme/tasks/"),
        ("GET", "/v1/tasks/t1/"),
        ("GET", "/.well-known/agent-card.json/"),
    ],
)
async def test_a_trailing_slash_is_a_404_not_a_redirect(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    # Starlette redirected (307) to the path without the slash, its Location built
    # from the Host header; /tasks/%2F went to ListTasks.
    response = await client.request(method, path, json={} if method == "POST" else None)
    assert "location" not in response.headers
    _assert_status(response, 404, "NOT_FOUND", "METHOD_NOT_FOUND")
    assert response.json()["error"]["message"].endswith("(A2A paths have no trailing slash)")


async def test_head_answers_as_get_without_the_body(client: httpx.AsyncClient) -> None:
    task = (await _send(client, "headed"))["task"]
    for path in (f"/tasks/{task['id']}", "/tasks", "/tasks/unknown"):
        got, head = await client.get(path), await client.head(path)
        assert head.status_code == got.status_code
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.content == b""
    stream = await client.head(f"/tasks/{task['id']}:subscribe")
    assert stream.status_code == 405 and stream.headers["allow"] == "GET, POST"


async def test_body_limit_is_413() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server, max_body_bytes=64), headers=V10) as client:
        response = await client.post("/message:send", json={"message": message_v10("x" * 100)})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == 413


async def test_tenant_prefix(client: httpx.AsyncClient) -> None:
    task = (await _send(client, "tenanted", prefix="/acme"))["task"]
    assert (await client.get(f"/acme/tasks/{task['id']}")).status_code == 200
    assert (await client.get("/acme/tasks")).json()["tasks"][0]["id"] == task["id"]
    # Another tenant (or none) does not see it.
    _assert_status(
        await client.get(f"/other/tasks/{task['id']}"), 404, "NOT_FOUND", "TASK_NOT_FOUND"
    )
    _assert_status(await client.get(f"/tasks/{task['id']}"), 404, "NOT_FOUND", "TASK_NOT_FOUND")
    assert (await client.get("/tasks")).json()["tasks"] == []
    # A body naming another tenant is refused.
    clash = await client.post(
        "/acme/message:send", json={"message": message_v10("x"), "tenant": "other"}
    )
    _assert_status(clash, 400, "INVALID_ARGUMENT", None)
    waiting = (await _send(client, "wait", prefix="/acme", returnImmediately=True))["task"]
    base = f"/acme/tasks/{waiting['id']}/pushNotificationConfigs"
    created = await client.post(base, json={"url": "https://hooks.example/t"})
    assert created.json()["tenant"] == "acme"
    assert (await client.get(base)).status_code == 200
    assert (await client.get(f"{base}/{created.json()['id']}")).status_code == 200
    assert (await client.delete(f"{base}/{created.json()['id']}")).status_code == 200
    canceled = await client.post(f"/acme/tasks/{waiting['id']}:cancel")
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"
    assert (await client.get("/acme/extendedAgentCard")).status_code == 200


async def test_streaming_routes() -> None:
    server, agent = make_server()
    async with running(server) as (_, client):
        client.headers.update(V10)
        async with client.stream(
            "POST", "/message:stream", json={"message": message_v10("wait")}
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            reader = SSEReader(response)
            first = await reader.read(limit=2)
            kind, task = stream_item(first[0])
            assert kind == "task" and "jsonrpc" not in first[0]["data"]
            # Two more streams on the same task: GET (proto) and POST (spec text).
            async with client.stream("GET", f"/tasks/{task['id']}:subscribe") as sub_get:
                async with client.stream("POST", f"/acme/tasks/{task['id']}:subscribe") as other:
                    assert other.status_code == 404
                async with client.stream("POST", f"/tasks/{task['id']}:subscribe") as sub_post:
                    got = SSEReader(sub_get)
                    posted = SSEReader(sub_post)
                    assert stream_item((await got.read(limit=1))[0])[0] == "task"
                    assert stream_item((await posted.read(limit=1))[0])[0] == "task"
                    agent.gate.set()
                    for events in (await reader.read(), await got.read(), await posted.read()):
                        assert (
                            stream_item(events[-1])[1]["status"]["state"] == "TASK_STATE_COMPLETED"
                        )
        terminal = await client.post(f"/tasks/{task['id']}:subscribe")
        assert terminal.status_code == 400
        assert terminal.json()["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"
        resumed = await client.get(f"/tasks/{task['id']}:subscribe", headers={"Last-Event-ID": "3"})
        assert [e["id"] for e in await read_sse(resumed)] == ["4"]


async def test_stream_failure_after_start_is_an_error_event() -> None:
    class Broken(AgentServer):
        async def on_send_streaming_message(self, request: Any, call: Any) -> EventStream:
            stream = await super().on_send_streaming_message(request, call)

            async def items() -> AsyncGenerator[StreamItem, None]:
                async for item in stream:
                    yield item
                    raise RuntimeError("boom")

            return EventStream(items())

    broken = Broken(GateAgent(), make_card())
    async with running(broken) as (_, client):
        async with client.stream(
            "POST", "/message:stream", json={"message": message_v10("go")}, headers=V10
        ) as response:
            events = await read_sse(response)
    assert stream_item(events[0])[0] == "task"
    assert events[-1]["event"] == "error"
    assert events[-1]["data"]["error"]["status"] == "INTERNAL"
    assert "boom" not in str(events[-1]["data"])


# --------------------------------------------------------------------------- 0.3 /v1


async def test_v03_routes() -> None:
    server, _ = make_server(make_card(extended=True), extended_card=make_card(url="http://p"))
    async with asgi_client(create_app(server)) as client:
        sent = await client.post("/v1/message:send", json={"message": message_v03_http("v03")})
        assert sent.status_code == 200, sent.text
        assert sent.headers["content-type"] == "application/json"
        task = sent.json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": "done: v03"}]
        echo = await client.post("/v1/message:send", json={"message": message_v03_http("echo")})
        assert echo.json()["message"]["content"] == [{"text": "echo"}]

        got = await client.get(f"/v1/tasks/{task['id']}", params={"historyLength": 1})
        assert got.json()["id"] == task["id"] and len(got.json()["history"]) == 1
        missing = await client.get("/v1/tasks/nope")
        _assert_status(missing, 404, "NOT_FOUND", "TASK_NOT_FOUND")
        # The refusal names the query parameter sent (it said history_length).
        negative = await client.get(f"/v1/tasks/{task['id']}", params={"historyLength": -1})
        _assert_status(negative, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
        violation = negative.json()["error"]["details"][0]["fieldViolations"][0]
        assert violation == {
            "field": "historyLength",
            "description": "must not be negative, got -1",
        }
        unset = await client.get(f"/v1/tasks/{task['id']}", params={"historyLength": 0})
        assert unset.json()["history"] == got.json()["history"]  # 0: unset, the whole history

        waiting = await client.post(
            "/v1/message:send",
            json={"message": message_v03_http("wait"), "configuration": {"blocking": False}},
        )
        task_id = waiting.json()["task"]["id"]
        base = f"/v1/tasks/{task_id}/pushNotificationConfigs"
        proto_body = {"pushNotificationConfig": {"url": "https://h.example/1", "id": "c1"}}
        sdk_body = {
            "parent": f"tasks/{task_id}",
            "configId": "c2",
            "config": {"pushNotificationConfig": {"url": "https://h.example/2"}},
        }
        # What the a2a-sdk's 0.3 REST client really sends: MessageToDict with
        # preserving_proto_field_name=True, so proto field names throughout.
        sdk_client_body = {
            "parent": f"tasks/{task_id}",
            "config_id": "c3",
            "config": {
                "name": f"tasks/{task_id}/pushNotificationConfigs/c3",
                "push_notification_config": {"id": "c3", "url": "https://h.example/3"},
            },
        }
        for body, cfg in ((proto_body, "c1"), (sdk_body, "c2"), (sdk_client_body, "c3")):
            created = await client.post(base, json=body)
            assert created.status_code == 200, created.text
            assert created.json()["name"] == f"tasks/{task_id}/pushNotificationConfigs/{cfg}"
        got_cfg = await client.get(f"{base}/c1")
        assert got_cfg.json()["pushNotificationConfig"]["url"] == "https://h.example/1"
        got_cfg = await client.get(f"{base}/c3")
        assert got_cfg.json()["pushNotificationConfig"]["url"] == "https://h.example/3"
        listed = await client.get(base)
        assert len(listed.json()["configs"]) == 3
        assert (await client.delete(f"{base}/c1")).json() == {}

        canceled = await client.post(f"/v1/tasks/{task_id}:cancel")
        assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELLED"

        card = await client.get("/v1/card")
        assert card.json()["url"] == "http://p"

        as_v10 = await client.get(f"/v1/tasks/{task_id}", headers=V10)
        _assert_status(as_v10, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")


async def test_v03_stream_and_opt_out() -> None:
    server, _ = make_server()
    async with running(server) as (_, client):
        async with client.stream(
            "POST", "/v1/message:stream", json={"message": message_v03_http("s")}
        ) as response:
            events = await read_sse(response)
    kinds = [stream_item(e)[0] for e in events]
    assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert events[-1]["data"]["statusUpdate"]["final"] is True
    assert events[-1]["data"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"

    async with asgi_client(create_app(server, serve_v03_rest=False)) as client:
        assert (await client.get("/v1/card")).status_code == 404
