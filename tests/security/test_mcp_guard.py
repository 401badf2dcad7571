"""The MCP endpoint mounted in the A2A app, in a real process on 127.0.0.1: ``Host`` and
``Origin`` checked (DNS rebinding), and the A2A endpoints' authentication applied."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _procs import free_port

MCP_TESTS = Path(__file__).resolve().parent.parent / "mcp"
TOKEN = "mcp-guard-token-7f3a"

SCRIPT = """
import asyncio, sys
sys.path.insert(0, {skills!r})
from _mcp_skills import AGENT_NAME, SKILLS
from a2a_models.adapters.http import (
    BearerTokenAuthenticator, HTTPServer, MCPGuard, authenticator_for_card, create_app)
from a2a_models.adapters.mcp import MCPSkillServer
from a2a_models.server import Agent, AgentServer
from a2a_models.tools import build_card
import attrs
from a2a_models import models as m


class Echo(Agent):
    async def execute(self, context):
        yield context.reply("a2a: " + context.message.text)


async def main(port, mode):
    url = f"http://127.0.0.1:{{port}}"
    card = build_card(SKILLS, name=AGENT_NAME, description="guarded", version="1", url=url)
    card = attrs.evolve(card,
        security_schemes={{"bearer": m.HTTPAuthSecurityScheme(scheme="Bearer")}},
        security_requirements=(m.SecurityRequirement(schemes={{"bearer": ()}}),))
    auth = authenticator_for_card(card, bearer_tokens={{{token!r}: "alice"}})
    app = create_app(AgentServer(Echo(), card), authenticator=auth)
    mcp = MCPSkillServer.from_card(card, SKILLS, tag_date="2024-05-01")
    if mode == "allowlist":
        mcp.mount(app, "/mcp", guard=MCPGuard(
            allowed_hosts=("agent.example.com",), allowed_origins=("https://app.example.com",)))
    else:
        mcp.mount(app, "/mcp")
    async with HTTPServer(app, port=port):
        print("ready", flush=True)
        await asyncio.Event().wait()


asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
"""


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []

    def start(mode: str) -> str:
        script = tmp_path / "mcp_app.py"
        script.write_text(SCRIPT.format(skills=str(MCP_TESTS), token=TOKEN))
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, str(script), str(port), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", line + proc.stdout.read()
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "guard-test", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url + "/mcp", json=INIT, headers={**ACCEPT, **headers}, timeout=10)


def test_loopback_server_refuses_foreign_host_and_origin(guarded: Any) -> None:
    url = guarded("default")
    rebinding = _post(url, Host="evil.example", **AUTH)
    assert rebinding.status_code == 421 and "not a loopback name" in rebinding.text
    cross = _post(url, Origin="http://evil.example", **AUTH)
    assert cross.status_code == 403 and "not a loopback origin" in cross.text
    null = _post(url, Origin="null", **AUTH)
    assert null.status_code == 403
    ok = _post(url, Origin=f"http://localhost:{url.rsplit(':', 1)[1]}", **AUTH)
    assert ok.status_code == 200, ok.text
    assert _post(url, Host="localhost:1234", **AUTH).status_code == 200


def test_mcp_takes_the_a2a_authentication(guarded: Any) -> None:
    url = guarded("default")
    missing = _post(url)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    wrong = _post(url, Authorization="Bearer nope")
    assert wrong.status_code == 401 and "nope" not in wrong.text
    assert _post(url, **AUTH).status_code == 200
    # ...and the A2A endpoint still answers the same credentials.
    card = httpx.get(url + "/.well-known/agent-card.json", timeout=10)
    assert card.status_code == 200


async def test_mcp_client_works_through_the_guard(guarded: Any) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    url = guarded("default")
    async with httpx.AsyncClient(headers=AUTH, timeout=20) as http:
        transport = streamable_http_client(url + "/mcp", http_client=http)
        async with Client(transport) as mcp:
            tools = (await mcp.list_tools()).tools
    assert "add" in [t.name for t in tools]


def test_allowlist(guarded: Any) -> None:
    url = guarded("allowlist")
    assert (
        _post(url, Host="agent.example.com", Origin="https://app.example.com", **AUTH).status_code
        == 200
    )
    assert _post(url, **AUTH).status_code == 421  # 127.0.0.1 is not in the list
    refused = _post(url, Host="agent.example.com", Origin="https://evil.example", **AUTH)
    assert refused.status_code == 403
