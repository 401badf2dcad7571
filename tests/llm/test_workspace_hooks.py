"""Hooks and the context provider declared in a workspace, applied as from Python."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from a2a_models import Message, TaskState
from a2a_models._cli._agent import main as agent_main
from a2a_models.adapters.llm import ARTIFACT_TOOL, AgentRuntime, WorkspaceError, load_workspace
from a2a_models.client import InProcessClient
from a2a_models.server import AgentServer

from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn
from .test_workspace import ENV, MCP_SERVER, skill_front, write_workspace

HOOKS_PY = """
def audit(arguments, context):
    if "city" in arguments:
        return {**arguments, "city": "Bergen"}   # rewrite, as a before-hook may
    return None

async def stamp(arguments, result, context):
    return f"{result.as_text()} [tenant={context.custom['tenant']}]"

async def provide(connections):
    return {"tenant": "acme", "servers": sorted(connections)}

def not_async(connections):
    return {}
"""


def _workspace(tmp_path: Path, **agent: object) -> Path:
    root = write_workspace(
        tmp_path / "ws",
        agent={"settings": {"statusInterval": None, "routing": False}, **agent},
        skills={
            "one": skill_front(
                "one", mcp=[{"server": "weather-tools", "allowedTools": ["getWeather"]}]
            )
        },
        mcp={
            "mcpServers": {"weather-tools": {"command": sys.executable, "args": [str(MCP_SERVER)]}}
        },
    )
    (root / "hooks.py").write_text(HOOKS_PY)
    return root


HOOKS = [
    {"tools": "weather_tools__*", "before": "hooks.py:audit"},
    {"after": ["hooks.py:stamp"]},  # every tool, workflow tools included
]


async def test_declared_hooks_and_context_provider_apply_to_mcp_and_workflow_tools(
    tmp_path: Path, scripted_server: ScriptedModelServer
) -> None:
    root = _workspace(tmp_path, hooks=HOOKS, contextProvider="hooks.py:provide")
    env = {**ENV, "OPENAI_BASE_URL": scripted_server.openai_base_url}
    composed = load_workspace(root, env=env)
    assert composed.to_dict()["contextProvider"] == "hooks.py:provide"
    async with AgentRuntime(composed) as runtime:
        assert runtime.toolbox.context == {"tenant": "acme", "servers": ["weather-tools"]}
        scripted_server.script(
            Turn(tool_calls=[ScriptedToolCall("weather_tools__get_weather", {"city": "Oslo"})]),
            Turn(tool_calls=[ScriptedToolCall("dispatch_workflow_alpha", {"topic": "fjords"})]),
            Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "done"})]),
        )
        server = AgentServer(runtime.agent, runtime.card)
        client = InProcessClient(server, timeout=15)
        events = [e async for e in client.send_streaming_message(Message.user("Weather?"))]
        assert events[-1].status.state is TaskState.COMPLETED
        bodies = scripted_server.bodies()
        weather = bodies[1]["messages"][-1]["content"]
        # before rewrote the city, after stamped the result (structured content preferred)
        assert weather == '{"result": "sunny in Bergen"} [tenant=acme]'
        workflow = bodies[2]["messages"][-1]["content"]
        assert workflow == '{"workflow": "alpha", "input": {"topic": "fjords"}} [tenant=acme]'
        await server.aclose()


async def test_context_provider_without_mcp_servers(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", agent={"contextProvider": "hooks.py:provide"})
    (root / "hooks.py").write_text(HOOKS_PY)
    async with AgentRuntime(load_workspace(root, env=ENV)) as runtime:
        assert runtime.agent.custom_context == {"tenant": "acme", "servers": []}


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        (
            {"hooks": [{"before": "nocolon"}]},
            "agent.md: hooks[0].before[0]: expected 'module:object'",
        ),
        ({"hooks": [{"tools": "*"}]}, "agent.md: hooks[0]: declares no 'before', 'after'"),
        ({"hooks": [{"befor": "a:b"}]}, "agent.md: hooks[0].befor: unknown field"),
        ({"contextProvider": 3}, "agent.md: contextProvider: expected 'module:object'"),
    ],
)
def test_malformed_declarations_name_the_field(
    tmp_path: Path, agent: dict[str, object], expected: str
) -> None:
    root = write_workspace(tmp_path / "ws", agent=agent)
    with pytest.raises(WorkspaceError) as info:
        load_workspace(root, env=ENV)
    assert expected in str(info.value)


async def test_entries_that_do_not_import_fail_the_start(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", agent={"hooks": [{"after": "hooks.py:missing"}]})
    (root / "hooks.py").write_text(HOOKS_PY)
    with pytest.raises(WorkspaceError, match=r"hooks\[0\]\.after\[0\]: 'hooks.py' has no"):
        async with AgentRuntime(load_workspace(root, env=ENV)):
            pass


def test_doctor_checks_that_hooks_and_the_provider_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    hooks = [
        {"before": ["hooks.py:audit", "hooks.py:nope"]},
        {"adapter": "no_such_module_xyz:wrap"},
    ]
    root = write_workspace(
        tmp_path / "ws", agent={"hooks": hooks, "contextProvider": "hooks.py:not_async"}
    )
    (root / "hooks.py").write_text(HOOKS_PY)
    out, err = io.StringIO(), io.StringIO()
    code = agent_main(["doctor", str(root), "--json", "--no-connect"], out=out, err=err)
    assert code == 1, err.getvalue()
    problems = json.loads(out.getvalue())["problems"]
    assert len(problems) == 3, problems
    assert problems[0].startswith("agent.md: hooks[0].before: 'hooks.py' has no 'nope'")
    assert problems[1].startswith("agent.md: hooks[1].adapter: cannot import 'no_such_module_xyz'")
    assert problems[2].startswith(
        "agent.md: contextProvider: 'hooks.py:not_async' must be an async function"
    )

    (root / "agent.md").write_text((root / "agent.md").read_text().replace("not_async", "provide"))
    hooks_fixed = (root / "agent.md").read_text().replace("hooks.py:nope", "hooks.py:stamp")
    (root / "agent.md").write_text(hooks_fixed.replace("no_such_module_xyz:wrap", "hooks.py:audit"))
    out = io.StringIO()
    assert agent_main(["doctor", str(root), "--json", "--no-connect"], out=out, err=err) == 0
    assert json.loads(out.getvalue())["problems"] == []
