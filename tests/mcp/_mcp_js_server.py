"""An MCP server (SDK low-level, stdio) whose tool schema reads as a JavaScript server
writes it: ECMA-262 regexes, a named group and Unicode property escapes (zod's
``.emoji()``), which Python's ``re`` does not take as they are.

The tool ``log_day`` answers with the arguments it received, as JSON.
"""

from __future__ import annotations

import asyncio
import json

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

DATE = r"^(?<year>\d{4})-(?<month>\d{2})$"
EMOJI = r"^(\p{Extended_Pictographic}|\p{Emoji_Component})+$"

LOG_DAY_SCHEMA = {
    "type": "object",
    "properties": {
        "day": {"type": "string", "pattern": DATE},
        "mood": {"type": "string", "pattern": EMOJI},
    },
    "patternProperties": {r"^\p{Lu}": {"type": "string"}},
    "required": ["day"],
}


async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[types.Tool(name="log_day", description="Logs a day.", input_schema=LOG_DAY_SCHEMA)]
    )


async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = json.dumps(params.arguments, sort_keys=True, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    server: Server[object] = Server("js-server", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
