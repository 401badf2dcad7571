"""gRPC: a first message (no taskId) sent again with its messageId gets the task it
started (no second task, the agent runs once); other content under that id is
``INVALID_ARGUMENT``. On SQLite, as ``a2a-models serve`` runs by default."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from a2a_models import Message
from a2a_models import models as m
from a2a_models.adapters.grpc import GrpcClient, GrpcServer
from a2a_models.errors import InvalidParamsError
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext
from a2a_models.stores import SQLiteTaskStore
from tests.http._server_support import make_card

pytestmark = pytest.mark.asyncio


class _Counting(Agent):
    def __init__(self) -> None:
        self.runs = 0
        self.gate = asyncio.Event()

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.runs += 1
        yield context.working()
        await self.gate.wait()
        yield context.complete(f"done: {context.message.text}")


def _message(text: str, message_id: str = "m-1") -> Message:
    return attrs.evolve(Message.user(text), message_id=message_id)


async def test_a_retried_first_message_gets_its_task_over_grpc(tmp_path: Path) -> None:
    store = await SQLiteTaskStore(tmp_path / "grpc.db").open()
    agent = _Counting()
    grpc_server = GrpcServer(AgentServer(agent, make_card(), store=store))
    await grpc_server.start()
    try:
        async with GrpcClient(grpc_server.url, timeout=10) as client:
            immediately = m.SendMessageConfiguration(return_immediately=True)
            running = await client.send_message(_message("hello"), configuration=immediately)
            assert isinstance(running, m.Task)
            # Sent again while it runs: a blocking send and a stream wait on that run.
            blocking = asyncio.ensure_future(client.send_message(_message("hello")))
            stream = client.send_streaming_message(_message("hello"))
            opening: Any = await anext(stream)
            assert isinstance(opening, m.Task) and opening.id == running.id
            agent.gate.set()
            done = await blocking
            assert isinstance(done, m.Task) and done.id == running.id
            assert done.state is m.TaskState.COMPLETED
            rest = [item async for item in stream]
            assert rest[-1].status.state is m.TaskState.COMPLETED  # type: ignore[union-attr]
            # Once it ended: the task as it is.
            again = await client.send_message(_message("hello"))
            assert isinstance(again, m.Task) and again == done
            with pytest.raises(InvalidParamsError, match="messageId"):
                await client.send_message(_message("something else"))
            assert [t.id for t in (await client.list_tasks()).tasks] == [running.id]
        assert agent.runs == 1
    finally:
        await grpc_server.stop()
        await store.aclose()
