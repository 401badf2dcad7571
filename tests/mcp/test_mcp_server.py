"""The project's MCP server (skills as tools), driven by the official SDK's client.

Over stdio (a subprocess running ``_mcp_skill_server.py``) and over
streamable HTTP (uvicorn on 127.0.0.1, port 0, in this process); plus the
in-process details (logging, handlers not called) on the HTTP variant.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from _mcp_skills import ADD, AGENT_NAME, CALLS, ECHO, SKILLS, TAG_DATE
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from a2a_models import DataPart, Message, Role, Task, TaskState, codec
from a2a_models.adapters.http import HTTPServer
from a2a_models.adapters.mcp import INTERRUPTION_SCHEMA, MCPSkillServer, skill_tool_description
from a2a_models.schema import validate_wire
from a2a_models.tools import TEXT_INPUT_SCHEMA

SCRIPT = Path(__file__).with_name("_mcp_skill_server.py")
TIMEOUT = 20.0


@contextlib.asynccontextmanager
async def connected(kind: str) -> AsyncIterator[Client]:
    """An SDK client connected to the project's MCP server over ``kind``."""
    if kind == "stdio":
        params = StdioServerParameters(command=sys.executable, args=[str(SCRIPT)])
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            yield client
        return
    server = MCPSkillServer(SKILLS, name=AGENT_NAME, version="1.2.3", tag_date=TAG_DATE)
    async with (
        HTTPServer(server.streamable_http_app()) as http,
        Client(f"{http.url}/mcp", read_timeout_seconds=TIMEOUT) as client,
    ):
        yield client


class Background:
    """An SDK client held open by a task of its own.

    The SDK's ``Client`` must be entered and exited in one task, and a
    module-scoped fixture's setup and teardown may run in different ones;
    calls themselves may come from any task.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.client: Client | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        try:
            async with connected(self.kind) as client:
                self.client = client
                self._ready.set()
                await self._stop.wait()
        finally:
            self._ready.set()

    async def __aenter__(self) -> Client:
        self._task = asyncio.create_task(self._run())
        async with asyncio.timeout(TIMEOUT):
            await self._ready.wait()
        if self.client is None:
            await self._task  # raises what went wrong
        assert self.client is not None
        return self.client

    async def __aexit__(self, *exc_info: object) -> None:
        self._stop.set()
        assert self._task is not None
        async with asyncio.timeout(TIMEOUT):
            await self._task


# Every test of the module runs in one event loop, so the fixture below starts
# one server per transport for all of them.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["stdio", "http"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with Background(str(request.param)) as c:
        yield c


def _embedded(result: types.CallToolResult) -> types.TextResourceContents:
    """The A2A resource: the last content item (after the plain-text item, if any)."""
    assert 1 <= len(result.content) <= 2
    item = result.content[-1]
    assert isinstance(item, types.EmbeddedResource)
    assert item.type == "resource"
    assert isinstance(item.resource, types.TextResourceContents)
    return item.resource


def _error_text(result: types.CallToolResult) -> str:
    assert result.is_error
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    return result.content[0].text


async def test_list_tools(client: Client) -> None:
    listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [s.id for s in SKILLS]
    echo = listed[0]
    assert echo.title == "Echo"
    assert echo.description == (
        "Repeats the text.\n\n"
        "<tags><tag>text</tag><tag>a&lt;b &amp; c</tag></tags>"
        "<examples><example>echo hello</example><example>say &lt;this&gt;</example></examples>"
    )
    xml = echo.description.split("\n\n", 1)[1]
    root = ET.fromstring(f"<root>{xml}</root>")
    assert [t.text for t in root.find("tags") or []] == ["text", "a<b & c"]
    assert [e.text for e in root.find("examples") or []] == ["echo hello", "say <this>"]
    # the skill's schema, plus the optional ids that continue a waiting task
    ids = {"taskId", "contextId"}
    assert _without(echo.input_schema, ids) == ECHO.input_schema
    assert _without(listed[1].input_schema, ids) == ADD.input_schema
    # explode declares no inputs: it is offered the documented default, {"text": string}
    assert _without(listed[3].input_schema, ids) == TEXT_INPUT_SCHEMA
    for tool, skill in zip(listed, SKILLS, strict=True):
        assert tool.description == skill_tool_description(skill)
        assert set(tool.input_schema["properties"]) >= ids
        assert not ids & set(tool.input_schema.get("required", ()))
    # output schemas are advertised as MCP outputSchema (or a task waiting for the caller)
    assert listed[1].output_schema == {
        "type": "object",
        "anyOf": [ADD.output_schema, INTERRUPTION_SCHEMA],
    }
    assert listed[0].output_schema is None


def _without(schema: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    properties = {k: v for k, v in schema["properties"].items() if k not in keys}
    return {**schema, "properties": properties}


def _text_item(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


async def test_results_carry_plain_text_and_structured_content(client: Client) -> None:
    # The SDK client validates structuredContent against the listed outputSchema
    # itself (it raises on a mismatch), so this also checks the schema round trip.
    result = await client.call_tool("add", {"a": 2, "b": 3.5})
    assert not result.is_error
    assert _text_item(result) == '5.5\n{"sum": 5.5}'
    assert result.structured_content == {"sum": 5.5}
    assert isinstance(result.content[1], types.EmbeddedResource)
    message = await client.call_tool("echo", {"text": "hi"})
    assert _text_item(message) == "echo: hi"
    assert message.structured_content is None


async def test_structured_content_breaking_the_output_schema_is_an_error(client: Client) -> None:
    result = await client.call_tool("miscount", {"of": "sheep"})
    assert result.is_error
    assert _text_item(result) == (
        "The result does not match the tool's outputSchema: $.count: 'three' is not of type 'integer'"
    )
    task = codec.decode(Task, _embedded(result).text, "1.0")  # the A2A object still comes
    assert task.state is TaskState.COMPLETED


async def test_a_skill_without_inputs_takes_text(client: Client) -> None:
    missing = _error_text(await client.call_tool("explode", {}))
    assert "'text' is a required property" in missing


async def test_call_returns_a_message(client: Client) -> None:
    result = await client.call_tool("echo", {"text": "hi"})
    assert not result.is_error
    resource = _embedded(result)
    assert resource.mime_type == "application/json"
    message = codec.decode(Message, resource.text, "1.0")
    assert message.role is Role.AGENT and message.text == "echo: hi"
    assert resource.uri == f"tag:test-agent-mcp,{TAG_DATE}:{message.message_id}"
    validate_wire(codec.loads(resource.text), Message)


async def test_call_returns_a_task(client: Client) -> None:
    result = await client.call_tool("add", {"a": 2, "b": 3.5})
    assert not result.is_error
    resource = _embedded(result)
    task = codec.decode(Task, resource.text, "1.0")
    assert task.state is TaskState.COMPLETED
    assert task.artifacts[0].parts[1] == DataPart({"sum": 5.5})
    assert resource.uri == f"tag:test-agent-mcp,{TAG_DATE}:{task.id}"
    validate_wire(codec.loads(resource.text), Task)


async def test_error_task_is_an_error_result_carrying_the_task(client: Client) -> None:
    result = await client.call_tool("lookup", {"city": "Atlantis"})
    assert result.is_error
    task = codec.decode(Task, _embedded(result).text, "1.0")
    assert task.state is TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.text == "unknown city 'Atlantis'"


async def test_invalid_arguments_are_refused_before_the_handler(client: Client) -> None:
    missing = _error_text(await client.call_tool("echo", {}))
    assert missing == "Invalid arguments for 'echo': $: 'text' is a required property"
    wrong = _error_text(await client.call_tool("echo", {"text": 5, "extra": True}))
    assert wrong.startswith("Invalid arguments for 'echo': ")
    assert "$.text: 5 is not of type 'string'" in wrong
    assert "Additional properties are not allowed ('extra' was unexpected)" in wrong
    assert "number" in _error_text(await client.call_tool("add", {"a": 1, "b": "2"}))


async def test_handler_exception_becomes_an_error_result(client: Client) -> None:
    assert (
        _error_text(await client.call_tool("explode", {"text": "now"})) == "[RuntimeError]: kaboom"
    )


async def test_unknown_tool_is_a_protocol_error(client: Client) -> None:
    with pytest.raises(MCPError, match="Unknown tool: nope"):
        await client.call_tool("nope", {})


# ----------------------------------------------------------------------------- in process


async def test_in_process_handlers_are_not_called_on_invalid_input_and_errors_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = CALLS.copy()
    async with asyncio.timeout(TIMEOUT), connected("http") as client:
        await client.call_tool("echo", {"text": ""})  # minLength 1
        await client.call_tool("add", {"a": 1})
        assert CALLS == before
        with caplog.at_level(logging.ERROR, logger="a2a_models.adapters.mcp"):
            await client.call_tool("explode", {"text": "now"})
        assert CALLS["explode"] == before["explode"] + 1
    records = [r for r in caplog.records if r.name == "a2a_models.adapters.mcp"]
    assert records and records[0].exc_info is not None
    assert "explode" in records[0].getMessage()


async def test_handlers_get_a_skill_context_not_the_mcp_request_context() -> None:
    from a2a_models.tools import SkillContext, Toolbox, define_skill, function_tool, success_task

    seen: list[Any] = []

    @function_tool
    def double(n: int) -> int:
        """Doubles n."""
        return 2 * n

    async def handler(args: dict[str, Any], ctx: SkillContext) -> Task:
        seen.append(ctx)
        doubled = await ctx.call_tool("double", {"n": args["n"]})
        return success_task(data=doubled.data)  # type: ignore[union-attr]

    skill = define_skill(
        "twice",
        description="Doubles a number with a tool.",
        tags=["math"],
        examples=["twice 4"],
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        handler=handler,
        allowed_tools=["double"],
    )
    toolbox = Toolbox([double], context={"tenant": "acme"})
    server = MCPSkillServer([skill], name="ctx agent", toolbox=toolbox)
    async with Client(server.lowlevel, read_timeout_seconds=TIMEOUT) as client:
        result = await client.call_tool("twice", {"n": 4})
    task = codec.decode(Task, _embedded(result).text, "1.0")
    assert task.artifacts[0].parts[0] == DataPart(8)
    (ctx,) = seen
    assert isinstance(ctx, SkillContext)
    assert ctx.input == {"n": 4} and ctx.custom == {"tenant": "acme"}
    assert sorted(ctx.tools) == ["double"]


async def test_unknown_tool_in_process_call_and_skill_without_handler() -> None:
    from a2a_models.tools import define_skill, function_tool

    llm_skill = define_skill(
        "plan",
        description="Planned by an LLM.",
        tags=["llm"],
        examples=["plan a trip"],
        tools=[function_tool(lambda: "x", name="noop")],
    )
    server = MCPSkillServer([llm_skill], name="llm agent")
    assert _error_text(await server.call("missing")) == "[UnknownTool]: no skill named 'missing'"
    text = _error_text(await server.call("plan", {"text": "a trip"}))
    assert text.startswith("[NotImplementedError]: skill 'plan' has no handler")

    async def runner(skill: Any, args: Any, ctx: Any) -> Message:
        return Message.agent(f"planned by runner for {skill.id}: {args['text']}")

    server = MCPSkillServer([llm_skill], name="llm agent", runner=runner)
    result = await server.call("plan", {"text": "a trip"})
    message = codec.decode(Message, _embedded(result).text, "1.0")
    assert message.text == "planned by runner for plan: a trip"
