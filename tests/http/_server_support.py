"""Agents, cards and clients for the HTTP server tests (``test_server_*.py``).

* :class:`GateAgent` answers by keyword: ``echo ...`` replies with a Message;
  ``ask`` stops at input-required; ``wait`` works until :attr:`GateAgent.gate`
  is set (or the task is canceled); ``late`` waits for the gate before its
  first event, then replies; anything else runs a short task.
* :func:`asgi_client` talks to an app in process (no sockets, no streaming);
  :func:`running` serves it with uvicorn on 127.0.0.1 and yields a client.
* :func:`read_sse` parses a streamed ``text/event-stream`` response.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    SecurityRequirement,
    SecurityScheme,
)
from a2a_models.adapters.http import HTTPServer
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext

V10 = {"A2A-Version": "1.0"}
EXT_URI = "https://example.com/ext/trace/v1"
_ids = itertools.count(1)


class GateAgent(Agent):
    """Behaviour chosen by the message text (see the module docstring)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text
        if text.startswith("echo"):
            yield context.reply(text)
            return
        if text == "ask":
            yield context.ask("which one?")
            return
        if text == "late":
            self.waiting.set()
            await self.gate.wait()
            yield context.reply("late")
            return
        yield context.working()
        if text == "wait":
            self.waiting.set()
            await self.gate.wait()
        yield context.artifact(f"done: {text}")
        yield context.complete()


def make_card(
    url: str = "http://testserver",
    *,
    interfaces: Sequence[tuple[str, str]] = (("JSONRPC", "1.0"), ("HTTP+JSON", "1.0")),
    streaming: bool = True,
    push: bool = True,
    extended: bool | None = None,
    extensions: Sequence[AgentExtension] = (),
    security_schemes: Mapping[str, SecurityScheme] | None = None,
    security_requirements: Sequence[SecurityRequirement] = (),
) -> AgentCard:
    """A valid card whose interfaces all point at ``url``."""
    return AgentCard(
        name="gate agent",
        description="an agent for the HTTP server tests",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
            for binding, version in interfaces
        ],
        capabilities=AgentCapabilities(
            streaming=streaming,
            push_notifications=push,
            extended_agent_card=extended,
            extensions=tuple(extensions),
        ),
        skills=[AgentSkill(id="gate", name="gate", description="does things", tags=["test"])],
        security_schemes=dict(security_schemes or {}),
        security_requirements=tuple(security_requirements),
    )


def make_server(card: AgentCard | None = None, **kwargs: Any) -> tuple[AgentServer, GateAgent]:
    agent = GateAgent()
    return AgentServer(agent, card or make_card(), **kwargs), agent


def asgi_client(app: Any, **kwargs: Any) -> httpx.AsyncClient:
    """An in-process client (bodies are buffered: not for streaming tests)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver", **kwargs
    )


@contextlib.asynccontextmanager
async def running(app: Any, **kwargs: Any) -> AsyncIterator[tuple[HTTPServer, httpx.AsyncClient]]:
    """``app`` (or an A2AServer) on uvicorn at 127.0.0.1:0, with a client for it."""
    http = HTTPServer(app, **kwargs)
    await http.start()
    try:
        async with httpx.AsyncClient(base_url=http.url, timeout=10) as client:
            yield http, client
    finally:
        await http.stop()


# --------------------------------------------------------------------------- wire builders


def message_v10(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": f"m{next(_ids)}", "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def message_v03(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": f"m{next(_ids)}",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


def message_v03_http(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "messageId": f"m{next(_ids)}",
        "role": "ROLE_USER",
        "content": [{"text": text}],
        **extra,
    }


def rpc(method: str, params: Any = None, id: Any = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        body["params"] = params
    if id is not None:
        body["id"] = id
    return body


# --------------------------------------------------------------------------- SSE


class SSEReader:
    """Reads the events of one streamed SSE response, a few at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()

    async def read(self, limit: int | None = None, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Events ``{"id", "event", "data"}`` (data parsed): ``limit`` of them, or all."""
        events: list[dict[str, Any]] = []

        async def collect() -> None:
            current: dict[str, Any] = {}
            data: list[str] = []
            async for line in self._lines:
                if line == "":
                    if data:
                        current["data"] = json.loads("\n".join(data))
                        events.append(current)
                        if limit is not None and len(events) >= limit:
                            return
                    current, data = {}, []
                    continue
                if line.startswith(":"):
                    continue
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "data":
                    data.append(value)
                elif field in ("id", "event"):
                    current[field] = value

        await asyncio.wait_for(collect(), timeout)
        return events


async def read_sse(response: httpx.Response, timeout: float = 5.0) -> list[dict[str, Any]]:
    """Every event of a streamed SSE response (see :class:`SSEReader`)."""
    return await SSEReader(response).read(timeout=timeout)


async def wait_until(predicate: Any, timeout: float = 3.0) -> None:
    """Poll ``predicate()`` until it is true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def stream_item(event: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``("task"|"statusUpdate"|..., payload)`` of a REST or 1.0 JSON-RPC SSE event."""
    data = event["data"]
    if "jsonrpc" in data:
        data = data["result"]
    ((kind, payload),) = data.items()
    return kind, payload


__all__ = [
    "EXT_URI",
    "V10",
    "GateAgent",
    "SSEReader",
    "asgi_client",
    "make_card",
    "make_server",
    "message_v03",
    "message_v03_http",
    "message_v10",
    "read_sse",
    "rpc",
    "running",
    "stream_item",
    "wait_until",
]
