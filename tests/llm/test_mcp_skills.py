"""A workspace agent served over MCP (official SDK client), fulfilled by the scripted model.

What a generic MCP host sees (a default ``{"text"}`` input for skills that
declare none, ``outputSchema``, a plain-text item, ``structuredContent``)
and what the model receives (the input once, in the skill's own form).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client

from a2a_models import Task, TaskState, codec
from a2a_models.adapters.http import HTTPServer
from a2a_models.adapters.llm import ARTIFACT_TOOL, AgentRuntime, load_workspace
from a2a_models.tools import TEXT_INPUT_SCHEMA

from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn
from .test_workspace import ENV, skill_front, write_workspace

FORECAST_OUT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "summary": {"type": "string"}},
    "required": ["city", "summary"],
}


def _user_messages(body: Any) -> list[Any]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def test_mcp_host_view_and_input_sent_once(
    tmp_path: Path, scripted_server: ScriptedModelServer
) -> None:
    root = write_workspace(
        tmp_path / "ws",
        agent={"settings": {"statusInterval": None}},
        skills={
            "plan": skill_front("plan"),
            "forecast": skill_front(
                "forecast",
                inputSchema={
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
                outputSchema=FORECAST_OUT,
            ),
        },
    )
    env = {**ENV, "OPENAI_BASE_URL": scripted_server.openai_base_url}
    async with AgentRuntime(load_workspace(root, env=env)) as runtime:
        mcp = runtime.mcp_server()
        async with (
            HTTPServer(mcp.streamable_http_app()) as http,
            Client(f"{http.url}/mcp", read_timeout_seconds=20) as client,
        ):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["plan"].input_schema == TEXT_INPUT_SCHEMA
            assert tools["plan"].output_schema is None
            assert tools["forecast"].output_schema == FORECAST_OUT

            # a skill without inputs: the text is the user message, once
            scripted_server.script(
                Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "Day 1: fjords"})])
            )
            result = await client.call_tool("plan", {"text": "Plan a trip to Oslo"})
            assert not result.is_error
            assert _user_messages(scripted_server.last.body) == ["Plan a trip to Oslo"]
            assert isinstance(result.content[0], types.TextContent)
            assert result.content[0].text == "Day 1: fjords"
            task = codec.decode(Task, result.content[1].resource.text, "1.0")  # type: ignore[union-attr]
            assert task.state is TaskState.COMPLETED
            assert task.history[0].parts[0].text == "Plan a trip to Oslo"  # type: ignore[union-attr]
            assert len(task.history[0].parts) == 1

            # a skill with an input schema: the arguments as one JSON object, once;
            # the JSON artifact becomes structuredContent (validated by the SDK client too)
            answer = {"city": "Oslo", "summary": "sunny"}
            scripted_server.script(
                Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": json.dumps(answer)})])
            )
            result = await client.call_tool("forecast", {"city": "Oslo"})
            body = scripted_server.last.body
            assert _user_messages(body) == ['{"city": "Oslo"}']
            assert json.dumps(body).count("Oslo") == 1
            assert "Result format" in body["messages"][0]["content"]
            assert not result.is_error
            assert result.structured_content == answer

            # an answer that breaks the output schema is an error result saying why
            scripted_server.script(
                Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "It is sunny."})])
            )
            result = await client.call_tool("forecast", {"city": "Oslo"})
            assert result.is_error
            assert result.content[0].text == (  # type: ignore[union-attr]
                "The result does not match the tool's outputSchema: "
                "the result carries no JSON object"
            )
