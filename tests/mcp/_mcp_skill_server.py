"""The project's MCP server over stdio, serving the test skills (run as a subprocess)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
# The checkout's code, not an installed copy (the SDK gives stdio servers a minimal env).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from _mcp_skills import AGENT_NAME, SKILLS, TAG_DATE

from a2a_models.adapters.mcp import MCPSkillServer

if __name__ == "__main__":
    server = MCPSkillServer(SKILLS, name=AGENT_NAME, version="1.2.3", tag_date=TAG_DATE)
    asyncio.run(server.run_stdio())
