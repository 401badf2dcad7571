"""Test agents, cards and helpers shared by the server tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    TaskPushNotificationConfig,
)
from a2a_models.server import (
    Agent,
    AgentEvent,
    EventStream,
    PushNotificationSender,
    RequestContext,
    StreamItem,
)

Execute = Callable[[RequestContext], AsyncIterator[AgentEvent]]


def make_card(
    *,
    streaming: bool = True,
    push: bool = True,
    extended: bool | None = None,
    extensions: tuple[AgentExtension, ...] = (),
) -> AgentCard:
    """A minimal valid card with the given capabilities."""
    return AgentCard(
        name="test agent",
        description="an agent for tests",
        version="1.0.0",
        skills=[AgentSkill(id="s", name="s", description="a skill", tags=["t"])],
        supported_interfaces=[AgentInterface(url="http://test/a2a", protocol_binding="JSONRPC")],
        capabilities=AgentCapabilities(
            streaming=streaming,
            push_notifications=push,
            extended_agent_card=extended,
            extensions=extensions,
        ),
    )


class FuncAgent(Agent):
    """An agent made of an async generator function (and an optional cancel)."""

    def __init__(
        self,
        execute: Execute,
        cancel: Callable[[RequestContext], Awaitable[None]] | None = None,
    ) -> None:
        self._execute = execute
        self._cancel = cancel
        self.contexts: list[RequestContext] = []
        self.canceled: list[RequestContext] = []

    def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        self.contexts.append(context)
        return self._execute(context)

    async def cancel(self, context: RequestContext) -> None:
        self.canceled.append(context)
        if self._cancel is not None:
            await self._cancel(context)


class RecordingSender(PushNotificationSender):
    """Records every notification; fails on demand."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.sent: list[tuple[TaskPushNotificationConfig, StreamResponse]] = []

    async def send(self, config: TaskPushNotificationConfig, item: StreamResponse) -> None:
        self.sent.append((config, item))
        if self.fail:
            raise ConnectionError("webhook unreachable")


def send(
    text: str = "hello",
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    return_immediately: bool = False,
    history_length: int | None = None,
    push: TaskPushNotificationConfig | None = None,
) -> SendMessageRequest:
    """A SendMessageRequest with a user text message."""
    return SendMessageRequest(
        message=Message.user(text, task_id=task_id, context_id=context_id),
        configuration=SendMessageConfiguration(
            return_immediately=return_immediately,
            history_length=history_length,
            task_push_notification_config=push,
        ),
    )


async def collect(stream: EventStream, timeout: float = 2.0) -> list[StreamItem]:
    """Every item of ``stream`` (fails the test if it does not end in time)."""

    async def run() -> list[StreamItem]:
        return [item async for item in stream]

    return await asyncio.wait_for(run(), timeout)


async def settle(rounds: int = 20) -> None:
    """Let background runs make progress."""
    for _ in range(rounds):
        await asyncio.sleep(0)
