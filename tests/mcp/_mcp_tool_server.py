"""An MCP server written with the official SDK (``MCPServer``), consumed through mcp.json.

Run as ``python _mcp_tool_server.py [variant]`` (stdio); :func:`build` also
serves the streamable-HTTP tests in-process. Variants: ``plain`` (default),
``collide`` (two tools with the same canonical name), ``badname`` (a tool
name with no snake_case form), ``exit`` (exits before speaking MCP, saying
why on stderr),
``once`` (serves the first time; exits at once when the file named by
``ONCE_MARKER`` exists, which the first run creates).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

if __name__ == "__main__" and sys.argv[1:2] == ["exit"]:
    print("starting the weather server", file=sys.stderr)
    print("fatal: WEATHER_API_KEY is not set", file=sys.stderr)
    sys.exit(5)

if __name__ == "__main__" and sys.argv[1:2] == ["once"]:
    # Checked before the SDK import, so that the refused restarts are quick.
    if os.path.exists(os.environ["ONCE_MARKER"]):
        sys.exit(6)
    open(os.environ["ONCE_MARKER"], "w").close()

from mcp.server.mcpserver import Context, MCPServer


def build(variant: str = "plain") -> MCPServer:
    server = MCPServer("tool-server", version="1.0")

    @server.tool(name="getWeather", description="The weather in a city.")
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    @server.tool(name="add-numbers", description="Adds two integers.")
    def add_numbers(a: int, b: int) -> dict[str, int]:
        return {"sum": a + b}

    @server.tool(name="pid", description="The server's process id.")
    def pid() -> int:
        return os.getpid()

    @server.tool(name="env", description="An environment variable of the server process.")
    def env(name: str) -> str:
        return os.environ.get(name, "<unset>")

    @server.tool(name="header", description="A request header (HTTP only).")
    def header(name: str, ctx: Context) -> str:
        request: Any = ctx.request_context.request
        return "<no request>" if request is None else request.headers.get(name, "<unset>")

    @server.tool(name="crash", description="Exits the process in the middle of the call.")
    async def crash() -> str:
        await asyncio.sleep(0.05)
        os._exit(3)

    @server.tool(name="sleep", description="Sleeps.")
    async def sleep(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "awake"

    @server.tool(name="block", description="Answers nothing else meanwhile (a blocking tool).")
    async def block(seconds: float) -> str:
        time.sleep(seconds)  # holds the event loop, as a server serving one request at a time
        return "unblocked"

    @server.tool(name="enable.extra", description="Adds the tool extra-tool and announces it.")
    async def enable_extra(ctx: Context) -> str:
        def extra_tool(word: str) -> str:
            return word.upper()

        server.add_tool(extra_tool, name="extra-tool", description="Shouts a word.")
        await ctx.notify_tools_changed()  # 2026-era clients (subscriptions/listen)
        try:  # 2025-era clients (a plain notification on the session)
            await ctx.request_context.session.send_tool_list_changed()
        except Exception:
            pass
        return "enabled"

    if variant == "collide":

        @server.tool(name="get_weather", description="A second weather tool.")
        def get_weather_2(city: str) -> str:
            return city

    if variant == "badname":

        @server.tool(name="3d.render", description="Starts with a digit.")
        def render() -> str:
            return ""

    return server


if __name__ == "__main__":
    variant = sys.argv[1] if len(sys.argv) > 1 else "plain"
    asyncio.run(build(variant).run_stdio_async())
