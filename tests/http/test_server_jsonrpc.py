"""The JSON-RPC endpoint of create_app: both versions, errors, limits, SSE."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from _server_support import (
    EXT_URI,
    V10,
    SSEReader,
    asgi_client,
    make_card,
    make_server,
    message_v03,
    message_v10,
    read_sse,
    rpc,
    running,
    stream_item,
    wait_until,
)

from a2a_models import AgentExtension
from a2a_models.adapters.http import create_app
from a2a_models.adapters.http._app import gateway_of


async def test_send_message_v10() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        response = await client.post(
            "/", json=rpc("SendMessage", {"message": message_v10("hi")}), headers=V10
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == 1
    task = body["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "done: hi"}]


async def test_send_message_v03_without_version_header() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        response = await client.post("/", json=rpc("message/send", {"message": message_v03("hi")}))
        echo = await client.post("/", json=rpc("message/send", {"message": message_v03("echo x")}))
    result = response.json()["result"]
    assert result["kind"] == "task"
    assert result["status"]["state"] == "completed"
    assert echo.json()["result"]["kind"] == "message"


async def test_version_as_query_parameter() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        response = await client.post(
            "/?A2A-Version=1.0", json=rpc("SendMessage", {"message": message_v10("echo q")})
        )
    assert response.json()["result"]["message"]["parts"] == [{"text": "echo q"}]


async def test_protocol_errors_are_200_with_jsonrpc_error() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        parse = await client.post(
            "/", content=b"{nope", headers={**V10, "content-type": "application/json"}
        )
        missing = await client.post("/", json=rpc("GetTask", {"id": "nope"}), headers=V10)
        unknown = await client.post("/", json=rpc("Nope", {}), headers=V10)
        version = await client.post(
            "/", json=rpc("GetTask", {"id": "x"}), headers={"A2A-Version": "9.9"}
        )
        legacy_name = await client.post("/", json=rpc("GetTask", {"id": "x"}))
    assert parse.status_code == 200
    assert parse.json()["error"]["code"] == -32700
    error = missing.json()["error"]
    assert error["code"] == -32001
    assert error["data"][0]["reason"] == "TASK_NOT_FOUND"
    assert unknown.json()["error"]["code"] == -32601
    assert version.json()["error"]["code"] == -32009
    # A 1.0 method without the header is read as 0.3 and not found there.
    assert legacy_name.json()["error"]["code"] == -32601


async def test_notification_gets_204() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        response = await client.post("/", json=rpc("GetTask", {"id": "nope"}, id=None), headers=V10)
    assert response.status_code == 204
    assert response.content == b""


async def test_batch() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        response = await client.post(
            "/",
            json=[rpc("GetTask", {"id": "a"}, id=1), rpc("GetTask", {"id": "b"}, id=2)],
            headers=V10,
        )
    assert [r["id"] for r in response.json()] == [1, 2]


async def test_wrong_content_type_is_415() -> None:
    server, _ = make_server()
    async with asgi_client(create_app(server)) as client:
        response = await client.post(
            "/", content=b"a=b", headers={"content-type": "application/x-www-form-urlencoded"}
        )
    assert response.status_code == 415
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["message"] == (
        "Unsupported Content-Type 'application/x-www-form-urlencoded': send application/json"
    )


async def test_body_limit_is_413_declared_and_streamed() -> None:
    server, _ = make_server()
    app = create_app(server, max_body_bytes=200)
    big = rpc("SendMessage", {"message": message_v10("x" * 500)})

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b" " * 50

    async with asgi_client(app) as client:
        declared = await client.post("/", json=big, headers=V10)
        streamed = await client.post(
            "/", content=chunks(), headers={**V10, "content-type": "application/json"}
        )
    for response in (declared, streamed):
        assert response.status_code == 413
        assert "too large" in response.json()["error"]["message"]


async def test_activated_extensions_are_echoed() -> None:
    card = make_card(extensions=[AgentExtension(uri=EXT_URI)])
    server, _ = make_server(card)
    async with asgi_client(create_app(server)) as client:
        v10 = await client.post(
            "/",
            json=rpc("GetTask", {"id": "x"}),
            headers={**V10, "A2A-Extensions": f"{EXT_URI}, https://unknown.example/x"},
        )
        v03 = await client.post(
            "/", json=rpc("tasks/get", {"id": "x"}), headers={"X-A2A-Extensions": EXT_URI}
        )
    assert v10.headers["A2A-Extensions"] == EXT_URI
    assert v03.headers["X-A2A-Extensions"] == EXT_URI


async def test_base_path_is_normalised() -> None:
    server, _ = make_server()
    app = create_app(server, base_path="/a2a/")
    body = rpc("SendMessage", {"message": message_v10("echo b")})
    async with asgi_client(app) as client:
        plain = await client.post("/a2a", json=body, headers=V10)
        slash = await client.post("/a2a/", json=body, headers=V10)
        root = await client.post("/", json=body, headers=V10)
    assert plain.status_code == slash.status_code == 200
    assert "message" in plain.json()["result"]
    assert root.status_code == 404


async def test_sse_framing_and_order() -> None:
    server, _ = make_server()
    async with running(server) as (_, client):
        body = rpc("SendStreamingMessage", {"message": message_v10("go")}, id="s1")
        async with client.stream("POST", "/", json=body, headers=V10) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            events = await read_sse(response)
    kinds = [stream_item(e)[0] for e in events]
    assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert [e["id"] for e in events] == ["1", "2", "3", "4"]
    assert all(e["data"]["id"] == "s1" and e["data"]["jsonrpc"] == "2.0" for e in events)
    assert stream_item(events[-1])[1]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_sse_v03_marks_final() -> None:
    server, _ = make_server()
    async with running(server) as (_, client):
        body = rpc("message/stream", {"message": message_v03("go")})
        async with client.stream("POST", "/", json=body) as response:
            events = await read_sse(response)
    results = [e["data"]["result"] for e in events]
    assert [r["kind"] for r in results] == [
        "task",
        "status-update",
        "artifact-update",
        "status-update",
    ]
    assert [r.get("final") for r in results if r["kind"] == "status-update"] == [False, True]


async def test_sse_events_are_flushed_one_by_one() -> None:
    server, agent = make_server()
    async with running(server) as (_, client):
        body = rpc("SendStreamingMessage", {"message": message_v10("wait")})
        async with client.stream("POST", "/", json=body, headers=V10) as response:
            reader = SSEReader(response)
            first = await reader.read(limit=2)
            # The agent is still blocked: these events were sent before it finished.
            assert agent.waiting.is_set() and not agent.gate.is_set()
            assert [stream_item(e)[0] for e in first] == ["task", "statusUpdate"]
            agent.gate.set()
            rest = await reader.read()
    assert stream_item(rest[-1])[1]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_last_event_id_resumes_a_subscription() -> None:
    server, _ = make_server()
    async with running(server) as (_, client):
        sent = await client.post(
            "/", json=rpc("SendMessage", {"message": message_v10("r")}), headers=V10
        )
        task_id = sent.json()["result"]["task"]["id"]
        body = rpc("SubscribeToTask", {"id": task_id})
        headers = {**V10, "Last-Event-ID": "2"}
        async with client.stream("POST", "/", json=body, headers=headers) as response:
            events = await read_sse(response)
    assert [e["id"] for e in events] == ["3", "4"]


async def test_client_disconnect_closes_the_stream() -> None:
    server, agent = make_server()
    async with running(server) as (http, client):
        gateway = gateway_of(http.app)
        assert gateway is not None
        body = rpc("SendStreamingMessage", {"message": message_v10("wait")})
        async with client.stream("POST", "/", json=body, headers=V10) as response:
            await SSEReader(response).read(limit=1)
            assert gateway.streams.open_streams == 1
        await wait_until(lambda: gateway.streams.open_streams == 0)
        agent.gate.set()
        await asyncio.sleep(0)


async def test_keepalive_comments_while_idle() -> None:
    server, agent = make_server()
    async with running(create_app(server, sse_keepalive=0.05)) as (_, client):
        body = rpc("SendStreamingMessage", {"message": message_v10("wait")})
        async with client.stream("POST", "/", json=body, headers=V10) as response:
            lines = response.aiter_lines()

            async def first_comment() -> str:
                async for line in lines:
                    if line.startswith(":"):
                        return line
                return ""

            assert await asyncio.wait_for(first_comment(), 2) == ": keep-alive"
            assert not agent.gate.is_set()
            agent.gate.set()
