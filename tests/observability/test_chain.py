"""Agent A -> agent B -> MCP tool: one trace across two real HTTP servers and an MCP server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from _otel_support import Telemetry, card
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from a2a_models import Message, Task
from a2a_models.adapters.http import HTTPClient, HTTPServer, RESTClient
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext

pytest.importorskip("mcp")

from a2a_models.adapters.mcp import MCPToolHub

SEND = "lf.a2a.v1.A2AService/SendMessage"


class WeatherAgent(Agent):
    """Agent B: answers with an MCP tool's result."""

    def __init__(self, hub: MCPToolHub) -> None:
        self.hub = hub

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        result = await self.hub.call("tools__get_weather", {"city": context.message.text})
        yield context.artifact(str(getattr(result, "text", result)))
        yield context.complete()


class Caller(Agent):
    """Agent A: asks agent B with the project's client."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        async with RESTClient(self.url) as client:
            answer = await client.send_message(Message.user(context.message.text))
        assert isinstance(answer, Task)
        yield context.artifact(f"A heard: {answer.artifacts[0].parts[0].text}")
        yield context.complete()


def _parent(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None, f"{span.name} has no parent"
    (parent,) = [s for s in spans if s.context.span_id == span.parent.span_id]
    return parent


async def test_agent_a_calls_b_calls_an_mcp_tool_in_one_trace(
    telemetry: Telemetry, tmp_path: Path
) -> None:
    from mcp.server.mcpserver import MCPServer

    tool_server = MCPServer("tools", version="1.0")

    @tool_server.tool(name="getWeather", description="The weather in a city.")
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    async with asyncio.timeout(60), HTTPServer(tool_server.streamable_http_app()) as mcp_http:
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps({"mcpServers": {"tools": {"type": "http", "url": f"{mcp_http.url}/mcp"}}})
        )
        async with MCPToolHub.from_config(config, call_timeout=30) as hub:
            async with (
                HTTPServer(AgentServer(WeatherAgent(hub), card("b"))) as b,
                HTTPServer(AgentServer(Caller(b.url), card("a"))) as a,
                HTTPClient(a.url + "/") as client,
            ):
                task = await client.send_message(Message.user("Oslo"))
    assert isinstance(task, Task)
    assert task.artifacts[0].parts[0].text == "A heard: sunny in Oslo"

    spans = telemetry.spans()
    root = next(s for s in telemetry.named(SEND) if s.parent is None)
    trace_spans = [s for s in spans if s.context.trace_id == root.context.trace_id]
    mcp_client = next(s for s in trace_spans if s.name == "MCP send tools/call getWeather")
    mcp_server = next(s for s in trace_spans if s.name == "tools/call getWeather")
    # MCP server <- MCP client <- B turn <- B server <- A client <- A turn <- A server <- test client
    assert _parent(mcp_server, trace_spans) is mcp_client
    b_turn = _parent(mcp_client, trace_spans)
    assert b_turn.name == "a2a.agent.turn"
    b_server = _parent(b_turn, trace_spans)
    assert (b_server.name, b_server.kind) == (SEND, SpanKind.SERVER)
    assert b_server.attributes["rpc.system"] == "http"  # type: ignore[index]
    a_client = _parent(b_server, trace_spans)
    assert (a_client.kind, a_client.attributes["rpc.system"]) == (SpanKind.CLIENT, "http")  # type: ignore[index]
    a_turn = _parent(a_client, trace_spans)
    assert a_turn.name == "a2a.agent.turn"
    a_server = _parent(a_turn, trace_spans)
    assert (a_server.kind, a_server.attributes["rpc.system"]) == (SpanKind.SERVER, "jsonrpc")  # type: ignore[index]
    assert _parent(a_server, trace_spans) is root
    assert a_server.attributes["a2a.task.id"] == task.id  # type: ignore[index]
    assert b_server.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]

    (mcp_point,) = telemetry.points("mcp.client.operation.duration")
    assert mcp_point.count == 1
    assert mcp_point.attributes["gen_ai.tool.name"] == "getWeather"
    assert mcp_point.attributes["outcome"] == "ok"
