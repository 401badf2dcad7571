"""The conformance agent: a deterministic agent whose behaviour the harness can drive.

The contract (``docs/conformance.md``): the card advertises the skill
:data:`CONTRACT_SKILL_ID`; the text of a user message picks the behaviour.

==================  ======================================================================
message text        behaviour
==================  ======================================================================
``complete``        working, one artifact (``"conformance artifact"``), completed
``message``         a direct Message reply (``"conformance reply"``), no task
``input``           input-required (the question is the status message); the next
                    message on that task adds an artifact echoing it and completes
``auth``            auth-required, then like ``input``
``stream N``        N working status updates, then one artifact in N chunks
                    (``append``/``lastChunk``; chunk *i* is the text ``"chunk-i"``), then
                    completed (1 <= N <= 20; a missing N means 3)
``slow``            working, then stays working until canceled (gives up after 5 minutes)
``fail``            working, then failed
``reject``          rejected
anything else       like ``complete``, the artifact echoing the text
==================  ======================================================================

Matching ignores case and surrounding whitespace and reads the message's text parts.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from ..models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    ProtocolBinding,
)
from ..server import Agent, AgentEvent, RequestContext

__all__ = [
    "ARTIFACT_TEXT",
    "CONTRACT_SKILL_ID",
    "REPLY_TEXT",
    "ConformanceAgent",
    "conformance_card",
    "parse_command",
]

#: The skill id a card advertises to say "I implement the conformance contract".
CONTRACT_SKILL_ID = "a2a-conformance"
#: The text of the artifact ``complete`` produces.
ARTIFACT_TEXT = "conformance artifact"
#: The text of the direct reply ``message`` produces.
REPLY_TEXT = "conformance reply"
#: How long ``slow`` waits for a cancel before giving up (failing the task).
SLOW_LIMIT_SECONDS = 300.0
_MAX_CHUNKS = 20
_STEP_DELAY = 0.005


def parse_command(text: str) -> tuple[str, int]:
    """``(command, n)`` for a message text: ``"stream 4"`` → ``("stream", 4)``.

    Unknown texts give ``("echo", 0)``; ``stream`` without a count means 3.
    """
    words = text.strip().lower().split()
    if not words:
        return "echo", 0
    head = words[0]
    if head == "stream":
        count = 3
        if len(words) > 1:
            try:
                count = int(words[1])
            except ValueError:
                count = 3
        return "stream", max(1, min(_MAX_CHUNKS, count))
    if len(words) == 1 and head in {
        "complete",
        "message",
        "input",
        "auth",
        "slow",
        "fail",
        "reject",
    }:
        return head, 0
    return "echo", 0


class ConformanceAgent(Agent):
    """The agent behind ``a2a-models serve --agent conformance`` (see the module docstring)."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text
        if context.is_continuation:
            # The answer to an input-required / auth-required question.
            yield context.working()
            yield context.artifact(f"received: {text}", name="answer")
            yield context.complete()
            return
        command, count = parse_command(text)
        if command == "message":
            yield context.reply(REPLY_TEXT)
            return
        if command == "reject":
            yield context.reject("rejected on request (conformance contract)")
            return
        yield context.working()
        if command in {"complete", "echo"}:
            body = ARTIFACT_TEXT if command == "complete" else text
            yield context.artifact(body, name="result")
            yield context.complete()
        elif command == "input":
            yield context.ask("input required: send any text to complete the task")
        elif command == "auth":
            yield context.require_auth("authorization required: send any text to complete")
        elif command == "fail":
            yield context.fail("failed on request (conformance contract)")
        elif command == "stream":
            for i in range(count):
                await asyncio.sleep(_STEP_DELAY)
                yield context.working(f"step {i + 1} of {count}")
            for i in range(count):
                await asyncio.sleep(_STEP_DELAY)
                yield context.artifact(
                    f"chunk-{i}",
                    append=i > 0,
                    last_chunk=i == count - 1,
                    name="stream" if i == 0 else None,
                )
            yield context.complete()
        elif command == "slow":
            await asyncio.sleep(SLOW_LIMIT_SECONDS)
            yield context.fail("slow: no cancel arrived in time")


def conformance_card(
    url: str,
    *,
    versions: Sequence[str] = ("1.0", "0.3"),
    bindings: Sequence[str] = (ProtocolBinding.JSONRPC, ProtocolBinding.HTTP_JSON),
    rest_url: str | None = None,
    streaming: bool = True,
    push_notifications: bool = True,
    name: str = "a2a-models conformance agent",
) -> AgentCard:
    """The card of a :class:`ConformanceAgent` served at ``url``.

    Declares one interface per (binding, version): JSON-RPC at ``url`` and
    HTTP+JSON at ``rest_url`` (default: ``url`` too; 0.3 REST routes carry
    their ``/v1`` prefix below it). The skill :data:`CONTRACT_SKILL_ID` tells
    the harness to run the contract checks.
    """
    interfaces = []
    for binding in bindings:
        target = rest_url if (binding == ProtocolBinding.HTTP_JSON and rest_url) else url
        for version in versions:
            interfaces.append(
                AgentInterface(url=target, protocol_binding=binding, protocol_version=version)
            )
    return AgentCard(
        name=name,
        description="Deterministic agent for the A2A conformance harness (see docs/conformance.md).",
        version="1.0.0",
        supported_interfaces=interfaces,
        provider=AgentProvider(organization="a2a-models", url="https://github.com/a2a-models"),
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push_notifications),
        default_input_modes=("text/plain",),
        default_output_modes=("text/plain",),
        skills=(
            AgentSkill(
                id=CONTRACT_SKILL_ID,
                name="A2A conformance contract",
                description=(
                    "Message texts select behaviours: complete, message, input, auth, "
                    "stream N, slow, fail, reject."
                ),
                tags=("conformance", "testing"),
                examples=("complete", "stream 3", "input"),
            ),
        ),
    )
