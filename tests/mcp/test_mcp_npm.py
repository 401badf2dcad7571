"""The reference npm MCP servers (``server-everything``, ``server-memory``), run with ``npx``.

They need Node and the npm registry (or npx's cache); every test here is
skipped, saying so, when ``npx`` is absent.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from a2a_models.adapters.mcp import MCPToolHub, from_call_result
from a2a_models.tools import ToolResult

pytestmark = pytest.mark.skipif(
    shutil.which("npx") is None, reason="npx is absent: install Node (apt-get install nodejs npm)"
)
TIMEOUT = 180.0  # the first npx run may download the package


def npx(package: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"command": "npx", "args": ["-y", f"@modelcontextprotocol/{package}"], "env": env or {}}


async def _hub(servers: dict[str, Any], env: dict[str, str]) -> MCPToolHub:
    hub = MCPToolHub.from_config(
        {"mcpServers": servers}, env=env, connect_timeout=TIMEOUT, call_timeout=60
    )
    await hub.start()
    return hub


# One event loop for the module: the two read-only tests of server-everything share one
# hub (an npx start costs seconds; the connections live in tasks of their own).
pytestmark = [pytestmark, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def everything(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[MCPToolHub]:
    env = {
        "A2A_GREETING": "hello ${WHO}",
        "A2A_TOKEN": "Bearer $env:TOK",
        "A2A_DEFAULT": "${UNSET_VAR:-fallback}",
        "HOME": str(tmp_path_factory.mktemp("everything")),
    }
    async with asyncio.timeout(TIMEOUT):
        hub = await _hub({"everything": npx("server-everything", env)}, {"WHO": "ana", "TOK": "t1"})
    try:
        yield hub
    finally:
        await hub.stop()


async def test_env_references_are_substituted_inside_strings(everything: MCPToolHub) -> None:
    result = await everything.call("everything__get_env", {})
    assert isinstance(result, ToolResult)
    seen = json.loads(result.text)
    assert seen["A2A_GREETING"] == "hello ana"
    assert seen["A2A_TOKEN"] == "Bearer t1"
    assert seen["A2A_DEFAULT"] == "fallback"


async def test_text_and_structured_content_reach_the_model_once(everything: MCPToolHub) -> None:
    connection = everything.connections["everything"]
    raw = await connection.call_tool("get-structured-content", {"location": "Chicago"})
    assert raw.structured_content is not None and raw.content  # both, as the server sends them
    output = from_call_result(raw)
    assert isinstance(output, ToolResult)
    data = json.dumps(raw.structured_content, ensure_ascii=False)
    assert output.as_text() == data  # structured preferred: once, not twice
    assert output.as_text("text") == output.text
    assert output.as_text("both") == output.text + "\n" + data


async def test_memory_server_structured_results(tmp_path: Path) -> None:
    memory = npx("server-memory", {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})
    async with asyncio.timeout(TIMEOUT):
        hub = await _hub({"memory": memory}, {})
        try:
            await hub.call(
                "memory__create_entities",
                {"entities": [{"name": "Oslo", "entityType": "city", "observations": ["cold"]}]},
            )
            graph = await hub.call("memory__read_graph", {})
            assert isinstance(graph, ToolResult) and isinstance(graph.data, dict)
            assert [e["name"] for e in graph.data["entities"]] == ["Oslo"]
            assert graph.as_text().count("Oslo") == 1
            assert graph.as_text("both").count("Oslo") == 2
        finally:
            await hub.stop()
