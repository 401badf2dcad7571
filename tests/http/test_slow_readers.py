"""A stream reader that stops reading holds a bounded number of the task's events in the
server, however many (and however large) follow; once it reads again it gets every event,
in order, from the store's log.

A real HTTP server (uvicorn, in process) on an SQLite store: the events live in the file,
so what the server holds for the stalled reader is only what the stream keeps (the
broker's buffer of the subscription, one page of the log). Before, the subscription held
the newest 1024 events: here what the kernel does not buffer of 200 chunks of 64 KiB.
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path

from _server_support import make_card

from a2a_models import StreamResponse, TaskState
from a2a_models.adapters.http import HTTPServer
from a2a_models.server import (
    SUBSCRIBER_BUFFER,
    Agent,
    AgentEvent,
    AgentServer,
    InMemoryEventBroker,
    RequestContext,
)
from a2a_models.server._streams import LOG_PAGE
from a2a_models.stores import SQLiteTaskStore

CHUNKS = 200
CHUNK = "x" * (64 * 1024)
EVENT_ID = re.compile(rb"(?m)^id: ?(\d+)\r?$")


class _PagedStore(SQLiteTaskStore):
    """Records the most events one read of the log returned."""

    largest = 0

    async def events_after(
        self, task_id: str, seq: int, *, limit: int | None = None
    ) -> list[tuple[int, StreamResponse]]:
        events = await super().events_after(task_id, seq, limit=limit)
        self.largest = max(self.largest, len(events))
        return events


class _Chunks(Agent):
    """One artifact in CHUNKS chunks of 64 KiB, then completed."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        for i in range(CHUNKS):
            last = i == CHUNKS - 1
            yield context.artifact(CHUNK, append=i > 0, last_chunk=last, artifact_id="a")
        yield context.complete()


async def _open_stream(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A SendStreamingMessage whose response headers are read, and nothing more."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=4096)
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":'
        b'{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}}'
    )
    writer.write(
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"A2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return reader, writer


async def test_a_stalled_sse_reader_holds_a_bounded_number_of_events(tmp_path: Path) -> None:
    store = _PagedStore(tmp_path / "tasks.db")
    broker = InMemoryEventBroker()
    server = AgentServer(_Chunks(), make_card(), store=store, broker=broker)
    async with HTTPServer(server, port=0) as http:
        reader, writer = await _open_stream(http.port)
        # The agent runs on while nobody reads: wait for its task to complete.
        task_id = None
        for _ in range(2000):
            listed = await store.list(None, history_length=0, include_artifacts=False)
            if listed.tasks and listed.tasks[0].status.state is TaskState.COMPLETED:
                task_id = listed.tasks[0].id
                break
            await asyncio.sleep(0.01)
        assert task_id is not None, "the agent did not finish"
        (subscription,) = broker._subscribers[task_id]
        held = subscription.held
        assert held <= SUBSCRIBER_BUFFER < CHUNKS  # before: every chunk the socket did not take
        # The reader reads again: every event, in order, ending with the completed status.
        data = b""
        while not data.endswith(b"\r\n0\r\n\r\n"):
            chunk = await reader.read(1 << 20)
            assert chunk, "the stream was cut"
            data += chunk
        writer.close()
    assert [int(n) for n in EVENT_ID.findall(data)] == list(range(1, CHUNKS + 3))
    assert b"TASK_STATE_COMPLETED" in data[-2000:]
    assert 0 < store.largest <= LOG_PAGE  # the log read a page at a time
    await server.aclose()
