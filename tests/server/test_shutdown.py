"""Shutting a server down ends its running tasks instead of leaving them working forever."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    GetTaskRequest,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a_models.server import Agent, AgentEvent, InMemoryTaskStore, RequestContext, RequestHandler

CARD = AgentCard(
    name="slow",
    description="never finishes on its own",
    version="1",
    skills=[AgentSkill(id="s", name="s", description="a skill", tags=["t"])],
    supported_interfaces=[AgentInterface(url="inproc://", protocol_binding="JSONRPC")],
    capabilities=AgentCapabilities(streaming=True),
)


class Slow(Agent):
    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.working("started")
        await asyncio.sleep(3600)
        yield context.complete()


async def test_a_running_task_is_failed_when_the_handler_closes() -> None:
    store = InMemoryTaskStore()
    handler = RequestHandler(Slow(), CARD, store=store)
    task = await handler.on_send_message(
        SendMessageRequest(
            message=Message.user("go"),
            configuration=SendMessageConfiguration(return_immediately=True),
        )
    )
    assert task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
    await asyncio.wait_for(handler.aclose(), 10)
    # A second handler on the same store (another replica, or after a restart).
    other = RequestHandler(Slow(), CARD, store=store)
    final = await other.on_get_task(GetTaskRequest(id=task.id))
    assert final.status.state is TaskState.FAILED
    assert final.status.message is not None
    assert "stopped" in final.status.message.text
    await other.aclose()


async def test_an_interrupted_task_is_left_waiting_for_its_client() -> None:
    class Asks(Agent):
        async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
            yield context.ask("which one?")

    store = InMemoryTaskStore()
    handler = RequestHandler(Asks(), CARD, store=store)
    task = await handler.on_send_message(SendMessageRequest(message=Message.user("go")))
    assert task.status.state is TaskState.INPUT_REQUIRED
    await handler.aclose()
    again = await RequestHandler(Asks(), CARD, store=store).on_get_task(GetTaskRequest(id=task.id))
    assert again.status.state is TaskState.INPUT_REQUIRED
