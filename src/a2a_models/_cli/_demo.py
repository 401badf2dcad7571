"""The built-in demo agent (``a2a-models serve --agent demo``).

* Any message is answered with one agent :class:`~a2a_models.Message`
  echoing its text (no task is created).
* The text ``task`` (the trigger, case-insensitive, surrounding spaces
  ignored) starts a multi-step task instead: three ``working`` status
  updates, an artifact sent in two chunks, then ``completed``. Stream it to
  watch the steps arrive (``a2a-models send URL task --stream``).
* Canceling the task stops it between steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Final

from ..models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    DataPart,
    FilePart,
)
from ..server import Agent, AgentEvent, RequestContext

__all__ = ["TASK_TRIGGER", "DemoAgent", "demo_card"]

#: The text that makes the demo agent run a task.
TASK_TRIGGER: Final = "task"


class DemoAgent(Agent):
    """Echoes messages; runs a short multi-step task for :data:`TASK_TRIGGER`.

    ``step_delay`` is the pause in seconds between the task's steps.
    """

    def __init__(self, step_delay: float = 0.5) -> None:
        self.step_delay = step_delay

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text.strip()
        if text.lower() != TASK_TRIGGER:
            yield context.reply(_echo(context))
            return
        steps = ("Planning", "Working", "Checking")
        for number, step in enumerate(steps[:2], 1):
            yield context.working(f"{step} (step {number} of {len(steps)})")
            await asyncio.sleep(self.step_delay)
        yield context.artifact("The demo task ", name="report", description="what the task made")
        await asyncio.sleep(self.step_delay)
        yield context.artifact("is done.", append=True, last_chunk=True, name="report")
        yield context.working(f"{steps[2]} (step 3 of {len(steps)})")
        await asyncio.sleep(self.step_delay)
        yield context.complete("Demo task complete")


def _echo(context: RequestContext) -> str:
    text = context.message.text
    others = [p for p in context.message.parts if isinstance(p, DataPart | FilePart)]
    if not text and not others:
        return "echo: (empty message)"
    reply = f"echo: {text}" if text else "echo:"
    if others:
        reply += f" (+{len(others)} non-text part{'s' if len(others) > 1 else ''})"
    return reply


def demo_card(
    url: str,
    *,
    bindings: Sequence[str] = ("JSONRPC",),
    versions: Sequence[str] = ("1.0", "0.3"),
    streaming: bool = True,
    push_notifications: bool = True,
) -> AgentCard:
    """The demo agent's card, with one interface per binding and version at ``url``."""
    return AgentCard(
        name="a2a-models demo agent",
        description=(
            f"Echoes what you send. Send {TASK_TRIGGER!r} to run a short multi-step task "
            "with status updates and an artifact."
        ),
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
            for version in versions
            for binding in bindings
        ],
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push_notifications),
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Answers with the text it was sent.",
                tags=["demo", "echo"],
                examples=["hello"],
            ),
            AgentSkill(
                id="task",
                name="Demo task",
                description="A multi-step task with status updates and an artifact.",
                tags=["demo", "task", "streaming"],
                examples=[TASK_TRIGGER],
            ),
        ],
    )
