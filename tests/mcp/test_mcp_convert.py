"""A2A objects <-> MCP tool results."""

from __future__ import annotations

import base64
from datetime import UTC, date, datetime

import mcp_types as types

from a2a_models import FilePart, Message, Part, TextPart
from a2a_models.adapters.mcp import agent_slug, from_call_result, tag_uri, to_call_result
from a2a_models.tools import ToolResult, error_task, success_task


def test_agent_slug_and_tag_uri() -> None:
    assert agent_slug("Weather Agent 2") == "weather-agent-2"
    assert agent_slug("Ünïcode -- Bot!") == "n-code-bot"
    assert agent_slug("***") == "agent"
    message = Message.agent("hi")
    assert tag_uri("A", message, date(2024, 1, 2)) == f"tag:a,2024-01-02:{message.message_id}"
    task = success_task()
    assert tag_uri("A", task, "2024-03-04") == f"tag:a,2024-03-04:{task.id}"
    assert tag_uri("A", task, datetime(2024, 5, 6, 23, tzinfo=UTC)).startswith("tag:a,2024-05-06:")
    today = datetime.now(UTC).date().isoformat()
    assert tag_uri("A", task).startswith(f"tag:a,{today}:")


def test_round_trip_of_tasks_and_messages() -> None:
    task = success_task("done", data={"n": 1})
    result = to_call_result(task, agent_name="Agent", day="2024-01-01")
    assert not result.is_error
    back = from_call_result(result)
    assert back == task
    failed = error_task("no")
    result = to_call_result(failed, agent_name="Agent")
    assert result.is_error and from_call_result(result) == failed
    message = Message.agent("hello")
    assert from_call_result(to_call_result(message, agent_name="Agent")) == message


def test_other_results_become_tool_results() -> None:
    png = base64.b64encode(b"\x89PNG").decode()
    result = types.CallToolResult(
        content=[
            types.TextContent(text="hi"),
            types.ImageContent(data=png, mime_type="image/png"),
            types.AudioContent(data="!!notbase64", mime_type="audio/wav"),
            types.ResourceLink(
                uri="https://x/doc.pdf", name="doc.pdf", mime_type="application/pdf"
            ),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="file:///a.md", mime_type="text/markdown", text="# A"
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="file:///b", blob=png, mime_type="image/png"
                )
            ),
        ],
        structured_content={"k": "v"},
        is_error=True,
    )
    out = from_call_result(result)
    assert isinstance(out, ToolResult)
    assert out.is_error and out.data == {"k": "v"}
    assert out.parts == (
        TextPart("hi"),
        FilePart(raw=b"\x89PNG", media_type="image/png"),
        TextPart("[audio: undecodable base64 data]"),
        FilePart(url="https://x/doc.pdf", media_type="application/pdf", filename="doc.pdf"),
        Part.text("# A", media_type="text/markdown"),
        FilePart(raw=b"\x89PNG", media_type="image/png"),
    )
    # JSON that is not an A2A object, or not under a tag URI, stays a text part.
    plain = types.CallToolResult(
        content=[
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="tag:x,2024-01-01:1", mime_type="application/json", text='{"a": 1}'
                )
            )
        ]
    )
    assert from_call_result(plain) == ToolResult(
        parts=(Part.text('{"a": 1}', media_type="application/json"),)
    )
