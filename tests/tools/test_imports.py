"""The tools package is core-level: no MCP, no web framework, no LLM SDK."""

from __future__ import annotations

import subprocess
import sys


def test_tools_and_the_mcp_package_import_lazily() -> None:
    code = (
        "import sys, a2a_models, a2a_models.tools, a2a_models.adapters.mcp\n"
        "heavy = ('mcp', 'mcp_types', 'starlette', 'uvicorn', 'httpx', 'httpx2', 'pydantic',"
        " 'anyio', 'openai', 'anthropic')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
        "from a2a_models.adapters.mcp import MCPToolHub\n"
        "print('mcp' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "[]", out
    assert out[1] == "True"
