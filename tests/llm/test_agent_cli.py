"""``a2a-models agent``: init, doctor, print-config, bundle, run (from a bundle, with MCP)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import socket
import sys
from pathlib import Path

import httpx
import pytest

from a2a_models._cli import main as cli_main
from a2a_models._cli._agent import main as agent_main


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = agent_main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("OPENAI_BASE_URL", "A2A_MODELS_PROVIDER", "A2A_MODELS_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli")
    root = tmp_path / "agent"
    code, out, _ = run_cli("init", str(root))
    assert code == 0 and "agent.md" in out
    return root


def test_init_refuses_to_overwrite(workspace: Path) -> None:
    code, _, err = run_cli("init", str(workspace))
    assert code == 1 and "--force" in err
    assert run_cli("init", str(workspace), "--force")[0] == 0


def test_doctor_reports_configuration_and_tool_graph(workspace: Path) -> None:
    code, out, err = run_cli("doctor", str(workspace))
    assert code == 0, err
    assert "Agent: Research assistant 0.1.0" in out
    assert "Model: openai gpt-4o-mini (api key <set from OPENAI_API_KEY>" in out
    assert "Policies: capabilities=union tools=union guardrails=tightest" in out
    assert "brief (skills/brief.md)" in out
    assert '- dispatch_workflow_outline  [workflow outline 1.0.0, overrides {"sections": 3}]' in out
    assert out.rstrip().endswith("OK")

    code, out, _ = run_cli("doctor", str(workspace), "--json")
    report = json.loads(out)
    assert report["problems"] == []
    assert report["toolGraph"]["brief"][0].startswith("dispatch_workflow_outline")


def test_doctor_fails_on_problems(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    code, out, _ = run_cli("doctor", str(workspace))
    assert code == 1
    assert "problem: model: no API key for model provider 'openai'" in out

    skill = workspace / "skills" / "brief.md"
    skill.write_text(skill.read_text().replace("tags: [writing, research]\n", ""))
    code, _, err = run_cli("doctor", str(workspace))
    assert code == 1
    assert "skills/brief.md: tags: is required" in err


def test_print_config(workspace: Path) -> None:
    code, out, _ = run_cli("print-config", str(workspace))
    assert code == 0
    assert out.startswith("# Composed prompt\n\nYou are a careful research assistant.")
    assert '"name": "Research assistant"' in out
    assert "brief: dispatch_workflow_outline" in out
    code, out, _ = run_cli("print-config", str(workspace), "--json")
    data = json.loads(out)
    assert data["card"]["skills"][0]["id"] == "brief"
    assert data["skills"][0]["workflows"] == [
        {"id": "outline", "version": "1.0.0", "overrides": {"sections": 3}}
    ]


def test_main_delegates_to_agent(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["agent", "print-config", str(workspace), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["card"]["name"] == "Research assistant"
    with pytest.raises(SystemExit):
        cli_main(["agent", "--help"])
    assert "doctor" in capsys.readouterr().out


def test_run_stops_at_once_when_its_store_cannot_be_opened(workspace: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "tasks.db"
    code, out, err = run_cli(
        "run", str(workspace), "--port", "0", "--store", f"sqlite:///{missing}"
    )
    assert code == 1
    assert "serving" not in out
    assert err.strip() == (
        f"a2a-models agent run: cannot open the task store sqlite:///{missing}: "
        f"unable to open database file (the folder {missing.parent} does not exist)"
    )


def test_run_refuses_bad_targets_and_overrides_in_one_line(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli("run", str(workspace / "agent.md"), "--store", "memory:")
    assert (code, out) == (1, "")
    assert err.strip() == (
        f"a2a-models agent run: {workspace / 'agent.md'}: "
        "expected a workspace directory or an agent bundle (a .json file)"
    )
    for option, value, problem in (
        ("--provider", "gemini", "expected openai or anthropic, got 'gemini'"),
        ("--model", " ", "expected a model name, got an empty one"),
    ):
        with pytest.raises(SystemExit) as info:
            run_cli("run", str(workspace), option, value)
        assert info.value.code == 2
        assert f"error: argument {option}: {problem}" in capsys.readouterr().err


def test_run_says_which_address_it_cannot_listen_on(workspace: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run_cli("run", str(workspace), "--port", str(port), "--store", "memory:")
    assert code == 1
    assert "serving" not in out
    assert err.strip() == (
        f"a2a-models agent run: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


async def test_bundle_then_run_it_with_mcp(workspace: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "out" / "agent.json"
    bundle.parent.mkdir()
    code, _out, err = run_cli("bundle", str(workspace), "-o", str(bundle))
    assert code == 0, err
    data = json.loads(bundle.read_text())
    assert data["sources"]["files"]["workflows/outline.py"].startswith('"""An example workflow')
    assert "sk-cli" not in bundle.read_text()

    env = {**os.environ, "OPENAI_API_KEY": "sk-cli"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_models",
        "agent",
        "run",
        str(bundle),
        "--port",
        "0",
        "--store",
        "memory:",
        "--mcp",
        "--allowed-host",
        "127.0.0.1",
        "--allowed-host",
        "agent.example.com",
        "--log-level",
        "warning",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(20):
            line = (await proc.stdout.readline()).decode()
        match = re.search(r"serving Research assistant at (http://\S+) \(MCP at (\S+)\)", line)
        assert match, line + ((await proc.stderr.read()).decode() if proc.stderr else "")
        url, mcp_url = match.groups()
        async with httpx.AsyncClient(timeout=10) as http:
            card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            assert card["skills"][0]["id"] == "brief"
            assert card["supportedInterfaces"][0]["url"] == url
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
            reply = await http.post(
                mcp_url,
                json=initialize,
                headers={"Accept": "application/json, text/event-stream"},
            )
            assert reply.status_code == 200
            assert "Research assistant" in reply.text
            # The MCP endpoint answers only the allowed Host names (DNS rebinding guard).
            accept = {"Accept": "application/json, text/event-stream"}
            named = await http.post(
                mcp_url, json=initialize, headers={**accept, "Host": "agent.example.com"}
            )
            assert named.status_code == 200
            rebound = await http.post(
                mcp_url, json=initialize, headers={**accept, "Host": "evil.example"}
            )
            assert rebound.status_code == 421
    finally:
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(10):
            await proc.wait()
