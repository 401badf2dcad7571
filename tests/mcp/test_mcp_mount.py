"""One process, one port: the A2A endpoints and the MCP endpoint in the same ASGI app."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import mcp_types as types
from _mcp_skills import AGENT_NAME, SKILLS
from _procs import free_port
from mcp import Client

from a2a_models import AgentCard, Message, Task, TaskState, codec
from a2a_models.adapters.http import HTTPClient, HTTPServer, create_app
from a2a_models.adapters.mcp import MCPSkillServer
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext
from a2a_models.tools import build_card

TIMEOUT = 20.0


class EchoAgent(Agent):
    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        yield context.reply(f"a2a: {context.message.text}")


async def test_a2a_and_mcp_share_one_app_and_port() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = build_card(
        SKILLS, name=AGENT_NAME, description="Skills over A2A and MCP", version="1.2.3", url=url
    )
    app = create_app(AgentServer(EchoAgent(), card))
    MCPSkillServer.from_card(card, SKILLS, tag_date="2024-05-01").mount(app, "/mcp")
    http = HTTPServer(app, port=port)
    async with asyncio.timeout(TIMEOUT):
        for _round in range(2):  # the app (and its MCP session manager) restarts cleanly
            async with http:
                async with httpx.AsyncClient() as web:
                    response = await web.get(f"{url}/.well-known/agent-card.json")
                    served = codec.decode(AgentCard, response.content, "1.0")
                assert [s.id for s in served.skills] == [s.id for s in SKILLS]

                a2a = HTTPClient(url)
                try:
                    reply = await a2a.send_message(Message.user("hello"))
                finally:
                    await a2a.aclose()
                assert isinstance(reply, Message) and reply.text == "a2a: hello"

                async with Client(f"{url}/mcp", read_timeout_seconds=TIMEOUT) as mcp:
                    tools = (await mcp.list_tools()).tools
                    assert [t.name for t in tools] == [s.id for s in SKILLS]
                    result = await mcp.call_tool("add", {"a": 1, "b": 2})
                item = result.content[-1]  # after the plain-text item
                assert isinstance(item, types.EmbeddedResource)
                assert isinstance(item.resource, types.TextResourceContents)
                task = codec.decode(Task, item.resource.text, "1.0")
                assert task.state is TaskState.COMPLETED
                assert item.resource.uri.startswith("tag:test-agent-mcp,2024-05-01:")
