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
from a2a_models.adapters.llm import ARTIFACT_TOOL, ASK_USER_TOOL, AgentRuntime, load_workspace
from a2a_models.adapters.mcp import INTERRUPTION_SCHEMA
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
            plan_input = tools["plan"].input_schema
            assert plan_input["required"] == TEXT_INPUT_SCHEMA["required"]
            assert set(plan_input["properties"]) == {"text", "taskId", "contextId"}
            assert tools["plan"].output_schema is None
            assert tools["forecast"].output_schema == {
                "type": "object",
                "anyOf": [FORECAST_OUT, INTERRUPTION_SCHEMA],
            }

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


async def test_mcp_host_answers_the_models_question_and_the_task_goes_on(
    tmp_path: Path, scripted_server: ScriptedModelServer
) -> None:
    root = write_workspace(
        tmp_path / "ws",
        agent={"settings": {"statusInterval": None}},
        skills={"plan": skill_front("plan")},
    )
    env = {**ENV, "OPENAI_BASE_URL": scripted_server.openai_base_url}
    async with AgentRuntime(load_workspace(root, env=env)) as runtime:
        mcp = runtime.mcp_server()
        async with (
            HTTPServer(mcp.streamable_http_app()) as http,
            Client(f"{http.url}/mcp", read_timeout_seconds=20) as client,
        ):
            scripted_server.script(
                Turn(tool_calls=[ScriptedToolCall(ASK_USER_TOOL, {"question": "How many days?"})])
            )
            asked = await client.call_tool("plan", {"text": "Plan a trip to Oslo"})
            assert not asked.is_error
            sc = asked.structured_content
            assert sc is not None
            assert (sc["state"], sc["message"]) == ("TASK_STATE_INPUT_REQUIRED", "How many days?")
            text = asked.content[0].text  # type: ignore[union-attr]
            assert f'"taskId": "{sc["taskId"]}"' in text
            assert 'and the answer as "text"' in text
            requests = len(scripted_server.requests)

            scripted_server.script(
                Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "Day 1-3: fjords"})])
            )
            done = await client.call_tool("plan", {"taskId": sc["taskId"], "text": "Three"})
            assert not done.is_error
            assert done.content[0].text == "Day 1-3: fjords"  # type: ignore[union-attr]
            # one model call continued the same conversation: request, question, answer
            assert len(scripted_server.requests) == requests + 1
            body = scripted_server.last.body
            assert _user_messages(body) == ["Plan a trip to Oslo", "Three"]
            assert "How many days?" in json.dumps(body["messages"])
            task = codec.decode(Task, done.content[1].resource.text, "1.0")  # type: ignore[union-attr]
            assert (task.id, task.state) == (sc["taskId"], TaskState.COMPLETED)
