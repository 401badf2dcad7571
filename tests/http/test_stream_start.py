"""A stream whose first event is slow to come starts its answer anyway.

The engine knows a stream's first item (a Message, or the Task) only when the
agent yields it. Until then the server sent nothing, so a proxy or client
allowing a minute of silence (nginx's default, the CLI's) cut an agent slower
than that. After ``A2AServer.stream_start_wait`` the answer starts: headers,
then keep-alive comments until the first event; a start that fails later is
the stream's error event.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from _server_support import V10, SSEReader, make_server, message_v10, rpc, running

from a2a_models.adapters.http import create_app
from a2a_models.errors import TaskNotFoundError
from a2a_models.server import A2AServer, StreamingReply

REQUESTS = {
    "jsonrpc": lambda text: ("/", rpc("SendStreamingMessage", {"message": message_v10(text)})),
    "rest": lambda text: ("/message:stream", {"message": message_v10(text)}),
}


async def _comment(lines: Any) -> str:
    async for line in lines:
        if line.startswith(":"):
            return str(line)
    return ""


@pytest.mark.parametrize("binding", list(REQUESTS))
async def test_a_stream_slow_to_start_answers_and_keeps_alive_meanwhile(binding: str) -> None:
    server, agent = make_server()
    server.stream_start_wait = 0.05
    path, body = REQUESTS[binding]("late")
    async with running(create_app(server, sse_keepalive=0.05)) as (_, client):
        opening = client.stream("POST", path, json=body, headers=V10)
        # Before, the answer (even its headers) waited for the agent's first event.
        response = await asyncio.wait_for(opening.__aenter__(), 5)
        try:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            reader = SSEReader(response)
            assert await asyncio.wait_for(_comment(reader._lines), 5) == ": keep-alive"
            assert not agent.gate.is_set()
            agent.gate.set()
            events = await reader.read(limit=1)
        finally:
            await opening.__aexit__(None, None, None)
    data = events[0]["data"]
    message = data["result"]["message"] if binding == "jsonrpc" else data["message"]
    assert message["parts"] == [{"text": "late"}]


class _LateFailing(A2AServer):
    """Refuses a stream, but only after a while (as a store failing at creation would)."""

    def __init__(self) -> None:
        super().__init__()
        self.stream_start_wait = 0.05
        self.gate = asyncio.Event()

    async def on_send_streaming_message(self, request: Any, call: Any = None) -> Any:
        await self.gate.wait()
        raise TaskNotFoundError("task 'x' not found")


async def test_a_start_that_fails_after_the_answer_started_is_its_error_event() -> None:
    server = _LateFailing()
    body = json.dumps(rpc("SendStreamingMessage", {"message": message_v10("hi")}, id=7)).encode()
    # Before, handle() waited for the start (for ever here: the gate is still shut).
    reply = await asyncio.wait_for(server.handle(body, {"a2a-version": "1.0"}), 5)
    assert isinstance(reply, StreamingReply)  # the answer started: the error is its event
    server.gate.set()
    (event,) = [e async for e in reply.events]
    assert json.loads(event.data) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32001,
            "message": "task 'x' not found",
            "data": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "TASK_NOT_FOUND",
                    "domain": "a2a-protocol.org",
                }
            ],
        },
    }
    server.gate.clear()
    rest_body = json.dumps({"message": message_v10("hi")}).encode()
    rest = await asyncio.wait_for(
        server.handle_rest("POST", "/message:stream", [], {"a2a-version": "1.0"}, rest_body), 5
    )
    assert isinstance(rest, StreamingReply)
    server.gate.set()
    (event,) = [e async for e in rest.events]
    assert event.event == "error"
    assert json.loads(event.data)["error"]["status"] == "NOT_FOUND"


async def test_a_stream_closed_before_its_start_releases_it() -> None:
    server, agent = make_server()
    server.stream_start_wait = 0.05
    body = json.dumps(rpc("SendStreamingMessage", {"message": message_v10("late")})).encode()
    reply = await asyncio.wait_for(server.handle(body, {"a2a-version": "1.0"}), 5)
    assert isinstance(reply, StreamingReply)
    await agent.waiting.wait()
    await reply.aclose()  # the client went away while the agent had not answered
    agent.gate.set()
    await asyncio.wait_for(server.handler.idle(), 5)
    # A quick start is answered as before: no stream until its first event.
    body = json.dumps(rpc("SendStreamingMessage", {"message": message_v10("echo hi")})).encode()
    quick = await server.handle(body, {"a2a-version": "1.0"})
    assert isinstance(quick, StreamingReply)
    events = [e async for e in quick.events]
    assert json.loads(events[0].data)["result"]["message"]["parts"] == [{"text": "echo hi"}]
