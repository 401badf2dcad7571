"""Agent workspaces: composition, merge policies, errors that name the file and field, bundles."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from a2a_models import AgentCard, Message, TaskArtifactUpdateEvent, TaskState, codec
from a2a_models.adapters.llm import (
    ARTIFACT_TOOL,
    START_TASK_TOOL,
    AgentRuntime,
    WorkflowError,
    WorkspaceError,
    load_bundle,
    load_workflow_registry,
    load_workspace,
    write_bundle,
)
from a2a_models.client import InProcessClient
from a2a_models.schema import validate_wire
from a2a_models.server import AgentServer

from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn

ENV = {"OPENAI_API_KEY": "sk-test"}
MCP_SERVER = Path(__file__).parent.parent / "mcp" / "_mcp_tool_server.py"

WORKFLOW_PY = """
from a2a_models.adapters.llm import WorkflowResult, workflow

def _make(wid, version):
    @workflow(id=wid, version=version, description=f"workflow {wid}",
              input_schema={"type": "object", "properties": {"topic": {"type": "string"},
                            "depth": {"type": "integer"}}, "required": ["topic"]})
    async def run(input, context):
        yield f"{wid} on {input['topic']}"
        yield WorkflowResult({"workflow": wid, "input": input})
    return run

alpha = _make("alpha", "1.0.0")
beta = _make("beta", "2.0.0")

IMPORTED = True
"""


def md(front: dict[str, Any], body: str = "") -> str:
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + body + "\n"


def skill_front(sid: str, **extra: Any) -> dict[str, Any]:
    front: dict[str, Any] = {
        "name": sid.capitalize(),
        "description": f"The {sid} skill",
        "tags": [sid],
        "examples": [f"do {sid}"],
        "workflows": ["alpha"],
    }
    front.update(extra)
    return {k: v for k, v in front.items() if v is not None}


def write_workspace(
    root: Path,
    *,
    agent: dict[str, Any] | None = None,
    skills: dict[str, dict[str, Any]] | None = None,
    manifest: dict[str, Any] | None = None,
    mcp: dict[str, Any] | None = None,
    workflows: dict[str, Any] | None = None,
    dotenv: str | None = None,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    front = {
        "name": "Test agent",
        "description": "An agent for tests",
        "version": "1.0.0",
        "capabilities": {"streaming": True},
        "model": {"provider": "openai", "model": "gpt-test"},
    }
    front.update(agent or {})
    (root / "agent.md").write_text(
        md({k: v for k, v in front.items() if v is not None}, "You are the agent.")
    )
    skills = (
        skills if skills is not None else {"one": skill_front("one"), "two": skill_front("two")}
    )
    (root / "skills").mkdir(exist_ok=True)
    for sid, sfront in skills.items():
        (root / "skills" / f"{sid}.md").write_text(md(sfront, f"Prompt of {sid}."))
    manifest = manifest if manifest is not None else {"skills": list(skills)}
    (root / "agent.manifest.json").write_text(json.dumps(manifest))
    (root / "mcp.json").write_text(json.dumps(mcp or {"mcpServers": {}}))
    (root / "workflows").mkdir(exist_ok=True)
    (root / "workflows" / "flows.py").write_text(WORKFLOW_PY)
    (root / "workflow.json").write_text(
        json.dumps(
            workflows
            or {
                "workflows": {
                    "alpha": "workflows/flows.py:alpha",
                    "beta": "workflows/flows.py:beta",
                }
            }
        )
    )
    if dotenv is not None:
        (root / ".env").write_text(dotenv)
    return root


# ----------------------------------------------------------------------- composition


def test_composition_is_deterministic_and_the_card_validates(tmp_path: Path) -> None:
    root = write_workspace(
        tmp_path / "ws",
        skills={
            "two": skill_front("two"),
            "one": skill_front("one"),
        },
        manifest={"skills": ["two", "one"]},
    )
    first = load_workspace(root, env=ENV)
    again = load_workspace(root, env=ENV)
    assert first.to_dict() == again.to_dict()
    # final prompt: the agent's, then each skill body in manifest order
    assert first.prompt == "You are the agent.\n\nPrompt of two.\n\nPrompt of one."
    assert [s.id for s in first.card.skills] == ["two", "one"]
    validate_wire(codec.to_wire(first.card, "1.0"), AgentCard)
    two = first.skill("two")
    assert "The two skill" in two.system_prompt and "Prompt of two." in two.system_prompt
    assert "dispatch_workflow" not in two.system_prompt  # tools go through the tool API
    assert first.tool_graph() == {
        "two": ["dispatch_workflow_alpha"],
        "one": ["dispatch_workflow_alpha"],
    }
    assert list(first.workflows) == ["alpha"]  # only what skills select


def test_model_settings_per_skill_and_dotenv(tmp_path: Path) -> None:
    root = write_workspace(
        tmp_path / "ws",
        skills={
            "one": skill_front("one", model={"temperature": 0.9, "max_tokens": 100}),
            "two": skill_front("two"),
        },
        dotenv='OPENAI_API_KEY="from-dotenv"\nexport OTHER=1 # comment\n',
    )
    composed = load_workspace(root, env={})
    assert composed.env["OPENAI_API_KEY"] == "from-dotenv"
    assert composed.env["OTHER"] == "1"
    one = composed.skill("one").model_config
    assert (one.temperature, one.max_tokens, one.model) == (0.9, 100, "gpt-test")
    assert composed.skill("two").model_config.temperature == 0.2
    assert one.sources["temperature"] == "skills/one.md: model"
    # the process environment wins over .env
    assert load_workspace(root, env={"OPENAI_API_KEY": "env"}).env["OPENAI_API_KEY"] == "env"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda w: w.update(agent={"colour": "red"}), "agent.md: colour: unknown field"),
        (lambda w: w.update(agent={"name": None}), "agent.md: name: is required"),
        (lambda w: w["skills"]["one"].pop("tags"), "skills/one.md: tags: is required"),
        (lambda w: w["skills"]["one"].update(examples=[]), "skills/one.md: examples: must not"),
        (
            lambda w: w["skills"]["one"].update(model={"temperature": "hot"}),
            "skills/one.md: model.temperature: must be a number",
        ),
        (lambda w: w.update(agent={"model": {"provider": "gemini"}}), "agent.md: model.provider:"),
        (
            lambda w: w["skills"]["one"].update(workflows=["gamma"]),
            "skills/one.md: workflows[0]: no workflow 'gamma' in workflow.json",
        ),
        (
            lambda w: w["skills"]["one"].update(mcp=["nowhere"]),
            "skills/one.md: mcp: no server 'nowhere' in mcp.json",
        ),
        (
            lambda w: (
                w["skills"]["one"].update(mcp=["files"]),
                w.update(mcp={"mcpServers": {"files": {"command": 5}}}),
            ),
            "mcp.json: mcpServers.files.command: expected a string, got int",
        ),
        (lambda w: w["skills"]["one"].update(id="other"), "skills/one.md: id: is 'other'"),
        (
            lambda w: w["skills"]["one"].update(tools=[ARTIFACT_TOOL]),
            "skills/one.md: tools: 'write_artifact' is reserved",
        ),
        (
            lambda w: w["skills"]["one"].update(workflows=None),
            "skills/one.md: mcp: the skill has no tools",
        ),
        (
            lambda w: w["skills"]["one"].update(guardrails={"max_steps": 0}),
            "skills/one.md: guardrails: max_steps must be a positive number",
        ),
        (
            lambda w: w.update(manifest={"skills": ["one"], "policies": {"tools": "all"}}),
            "agent.manifest.json: policies.tools: expected union or intersect",
        ),
        (
            lambda w: w.update(manifest={"skills": ["one", "missing"]}),
            "agent.manifest.json: skills[1]: the skill file skills/missing.md does not exist",
        ),
        (
            lambda w: w.update(agent={"settings": {"maxSteps": -1}}),
            "agent.md: settings.maxSteps: expected a positive integer",
        ),
        (
            lambda w: w.update(agent={"settings": {"toolResultLimit": 0}}),
            "agent.md: settings.toolResultLimit: expected a positive number of characters or null",
        ),
        (
            lambda w: w.update(agent={"settings": {"toolResultLimit": "100k"}}),
            "agent.md: settings.toolResultLimit: expected a positive number of characters or null",
        ),
        (
            # NaN: a status timer due at once, for ever (a busy loop while the model works)
            lambda w: w.update(agent={"settings": {"statusInterval": float("nan")}}),
            "agent.md: settings.statusInterval: expected a positive number of seconds or null",
        ),
        (
            lambda w: w.update(agent={"guardrails": {"timeout": float("nan")}}),
            "agent.md: guardrails: timeout must be a positive number, not nan",
        ),
        (
            lambda w: w.update(agent={"provider": {"organization": "x"}}),
            "agent.md: provider.url: expected a non-empty string",
        ),
    ],
)
def test_errors_name_the_file_and_field(tmp_path: Path, change: Any, expected: str) -> None:
    spec: dict[str, Any] = {"skills": {"one": skill_front("one"), "two": skill_front("two")}}
    change(spec)
    write_workspace(tmp_path / "ws", **spec)
    with pytest.raises(WorkspaceError) as info:
        load_workspace(tmp_path / "ws", env=ENV)
    assert expected in str(info.value)


def test_bad_yaml_and_bad_json(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws")
    (root / "skills" / "one.md").write_text("---\nname: [unclosed\n---\nbody\n")
    with pytest.raises(WorkspaceError) as info:
        load_workspace(root, env=ENV)
    # One line, PyYAML's words without its multi-line excerpts of the text.
    assert str(info.value) == (
        "skills/one.md: front matter: invalid YAML at line 3: while parsing a flow sequence, "
        "expected ',' or ']', but got '<stream end>'"
    )
    root = write_workspace(tmp_path / "ws2")
    (root / "workflow.json").write_text("{nope")
    with pytest.raises(WorkspaceError, match=r"workflow.json: line 1 column 2: invalid JSON"):
        load_workspace(root, env=ENV)


@pytest.mark.parametrize("name", ["agent.md", "skills/one.md", "agent.manifest.json", ".env"])
def test_a_file_that_is_not_utf8_is_named(tmp_path: Path, name: str) -> None:
    root = write_workspace(tmp_path / "ws")
    (root / name).write_bytes(b"---\nname: caf\xe9\n")  # Latin-1, not UTF-8
    with pytest.raises(WorkspaceError) as info:
        load_workspace(root, env=ENV)
    assert str(info.value) == f"{name}: not UTF-8 text (byte 0xe9 at offset 13)"


def test_a_workflow_registry_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    registry = tmp_path / "workflow.json"
    registry.write_bytes(b"\xff{}")
    with pytest.raises(WorkflowError, match=r"workflow\.json: not UTF-8 text \(byte 0x"):
        load_workflow_registry(registry)


def test_a_bundle_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    bundle = tmp_path / "agent.bundle.json"
    bundle.write_bytes(b'{"format": "\xff"}')
    with pytest.raises(WorkspaceError) as info:
        load_bundle(bundle)
    assert str(info.value) == "agent.bundle.json: not UTF-8 text (byte 0xff at offset 12)"


# ----------------------------------------------------------------------- merge policies


@pytest.mark.parametrize(
    ("policy", "streaming", "push"), [("union", True, True), ("intersect", False, True)]
)
def test_capabilities_union_or_intersect(
    tmp_path: Path, policy: str, streaming: bool, push: bool
) -> None:
    root = write_workspace(
        tmp_path / "ws",
        skills={
            "one": skill_front("one", capabilities={"pushNotifications": True}),
            "two": skill_front("two", capabilities={"streaming": False}),
        },
        manifest={"skills": ["one", "two"], "policies": {"capabilities": policy}},
    )
    caps = load_workspace(root, env=ENV).card.capabilities
    assert (caps.streaming, caps.push_notifications) == (streaming, push)


def test_extensions_merge_by_uri_and_conflicts_fail(tmp_path: Path) -> None:
    ext = {"uri": "https://ext.example/v1", "description": "An extension", "required": False}
    root = write_workspace(
        tmp_path / "ws",
        agent={"capabilities": {"streaming": True, "extensions": [ext]}},
        skills={
            "one": skill_front("one", capabilities={"extensions": [ext]}),
            "two": skill_front(
                "two", capabilities={"extensions": [{"uri": "https://other.example/v1"}]}
            ),
        },
    )
    caps = load_workspace(root, env=ENV).card.capabilities
    assert [e.uri for e in caps.extensions] == [
        "https://ext.example/v1",
        "https://other.example/v1",
    ]

    different = {**ext, "required": True}
    root = write_workspace(
        tmp_path / "ws2",
        agent={"capabilities": {"extensions": [ext]}},
        skills={
            "one": skill_front("one"),
            "two": skill_front("two", capabilities={"extensions": [different]}),
        },
    )
    with pytest.raises(WorkspaceError) as info:
        load_workspace(root, env=ENV)
    assert str(info.value) == (
        "skills/two.md: capabilities.extensions: the extension 'https://ext.example/v1' is "
        "defined differently in agent.md"
    )


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("tightest", {"max_steps": 5, "max_tool_calls": 3, "timeout": 300}),
        ("loosest", {"max_steps": 8}),
    ],
)
def test_guardrails_tightest_or_loosest(
    tmp_path: Path, policy: str, expected: dict[str, Any]
) -> None:
    root = write_workspace(
        tmp_path / "ws",
        agent={"guardrails": {"max_steps": 8, "timeout": 300}},
        skills={"one": skill_front("one", guardrails={"max_steps": 5, "max_tool_calls": 3})},
        manifest={"skills": ["one"], "policies": {"guardrails": policy}},
    )
    assert load_workspace(root, env=ENV).skill("one").guardrails.to_dict() == expected


@pytest.mark.parametrize(
    ("policy", "agent_tools", "one", "two"),
    [
        (
            "union",
            ["dispatch_workflow_beta"],
            ["dispatch_workflow_alpha", "dispatch_workflow_beta"],
            ["dispatch_workflow_alpha", "dispatch_workflow_beta"],
        ),
        (
            "intersect",
            ["dispatch_workflow_alpha"],
            ["dispatch_workflow_alpha"],
            ["dispatch_workflow_alpha"],
        ),
    ],
)
async def test_tool_policies_union_or_intersect(
    tmp_path: Path, policy: str, agent_tools: list[str], one: list[str], two: list[str]
) -> None:
    root = write_workspace(
        tmp_path / "ws",
        agent={"tools": agent_tools},
        skills={"one": skill_front("one"), "two": skill_front("two", workflows=["alpha", "beta"])},
        manifest={"skills": ["one", "two"], "policies": {"tools": policy}},
    )
    composed = load_workspace(root, env=ENV)
    async with AgentRuntime(composed) as runtime:
        assert [t.name for t in runtime.agent.tools_for("one")] == one
        assert [t.name for t in runtime.agent.tools_for("two")] == two


@pytest.mark.parametrize(("agent_guardrails", "expected"), [({"timeout": 45}, 45), ({}, None)])
async def test_the_agents_own_timeout_bounds_routing(
    tmp_path: Path, agent_guardrails: dict[str, Any], expected: float | None
) -> None:
    # A skill's looser limit does not apply: no skill is chosen while routing.
    root = write_workspace(
        tmp_path / "ws",
        agent={"guardrails": agent_guardrails},
        skills={"one": skill_front("one", guardrails={"timeout": 600})},
        manifest={"skills": ["one"], "policies": {"guardrails": "loosest"}},
    )
    async with AgentRuntime(load_workspace(root, env=ENV)) as runtime:
        assert runtime.agent.routing_timeout == expected


# ----------------------------------------------------------------------- conflicts


def test_conflicting_workflow_pins_and_server_settings(tmp_path: Path) -> None:
    root = write_workspace(
        tmp_path / "ws",
        skills={
            "one": skill_front("one", workflows=[{"id": "alpha", "version": "1.0.0"}]),
            "two": skill_front("two", workflows=[{"id": "alpha", "version": "2.0.0"}]),
        },
    )
    with pytest.raises(WorkspaceError) as info:
        load_workspace(root, env=ENV)
    assert str(info.value).startswith(
        "skills/two.md: workflows[0].version: the workflow 'alpha' is pinned to '1.0.0' in "
        "skills/one.md"
    )

    server = {"command": "python3", "args": ["a.py"]}
    root = write_workspace(
        tmp_path / "ws2",
        skills={
            "one": skill_front("one", mcp=[{"server": "tools", "config": server}]),
            "two": skill_front("two", mcp=[{"server": "tools", "config": {**server, "args": []}}]),
        },
    )
    with pytest.raises(
        WorkspaceError,
        match=r"skills/two.md: mcp\[0\].config: the MCP server "
        r"'tools' is configured differently in skills/one.md",
    ):
        load_workspace(root, env=ENV)

    root = write_workspace(
        tmp_path / "ws3",
        skills={"one": skill_front("one", mcp=[{"server": "tools", "config": server}])},
        mcp={"mcpServers": {"tools": {"command": "node"}}},
    )
    with pytest.raises(
        WorkspaceError,
        match=r"skills/one.md: mcp: the MCP server 'tools' is "
        r"configured differently in mcp.json",
    ):
        load_workspace(root, env=ENV)


def test_duplicate_tool_prefixes_are_an_error(tmp_path: Path) -> None:
    root = write_workspace(
        tmp_path / "ws",
        skills={
            "one": skill_front("one", mcp=["my-tools"]),
            "two": skill_front("two", mcp=["my_tools"]),
        },
        mcp={"mcpServers": {"my-tools": {"command": "a"}, "my_tools": {"command": "b"}}},
    )
    with pytest.raises(
        WorkspaceError,
        match=r"mcp.json: mcpServers.my_tools: the servers "
        r"'my-tools' and 'my_tools' both name their tools",
    ):
        load_workspace(root, env=ENV)


async def test_workflow_overrides_are_checked_on_load(tmp_path: Path) -> None:
    # The model never sees an overridden parameter: a bad value would fail every call.
    root = write_workspace(
        tmp_path / "ws",
        skills={
            "one": skill_front(
                "one", workflows=["alpha", {"id": "beta", "overrides": {"depth": "deep"}}]
            )
        },
    )
    composed = load_workspace(root, env=ENV)
    with pytest.raises(WorkspaceError) as info:
        await AgentRuntime(composed).start()
    assert str(info.value) == (
        "skills/one.md: workflows[1].overrides.depth: 'deep' is not of type 'integer'"
    )
    # A parameter the workflow does not declare is passed on (its schema allows more).
    root = write_workspace(
        tmp_path / "ws2",
        skills={"one": skill_front("one", workflows=[{"id": "beta", "overrides": {"x": 1}}])},
    )
    runtime = AgentRuntime(load_workspace(root, env=ENV))
    await runtime.start()
    await runtime.stop()


async def test_workflow_version_pin_is_checked_on_load(tmp_path: Path) -> None:
    root = write_workspace(
        tmp_path / "ws",
        skills={"one": skill_front("one", workflows=[{"id": "beta", "version": "1.0.0"}])},
    )
    composed = load_workspace(root, env=ENV)
    with pytest.raises(
        WorkspaceError,
        match=r"skills/one.md: workflows\[0\].version: pins "
        r"'1.0.0' but the workflow 'beta' is version",
    ):
        await AgentRuntime(composed).start()


def test_missing_mcp_variables_are_reported_not_fatal(tmp_path: Path) -> None:
    root = write_workspace(
        tmp_path / "ws",
        skills={"one": skill_front("one", mcp=["gh"])},
        mcp={"mcpServers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "$env:GH_TOKEN"}}}},
    )
    composed = load_workspace(root, env=ENV)
    assert composed.mcp_missing_env == ("GH_TOKEN",)
    assert composed.tool_graph()["one"] == ["gh__*", "dispatch_workflow_alpha"]


# ----------------------------------------------------------------------- bundles


async def test_bundle_roundtrip(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", dotenv="SECRET_TOKEN=do-not-bundle\n")
    composed = load_workspace(root, env=ENV)
    target = write_bundle(composed, tmp_path / "agent.bundle.json")
    text = target.read_text()
    assert "do-not-bundle" not in text and "sk-test" not in text
    data = json.loads(text)
    assert data["format"] == "a2a-models/agent-bundle@1"
    assert data["composed"]["card"]["name"] == "Test agent"
    assert "workflows/flows.py" in data["sources"]["files"]
    loaded = load_bundle(target, env=ENV)
    assert loaded.to_dict() == composed.to_dict()
    async with AgentRuntime(loaded) as runtime:
        assert [t.name for t in runtime.agent.tools_for("one")] == ["dispatch_workflow_alpha"]


# ----------------------------------------------------------------------- with MCP and a model


async def test_runtime_with_an_mcp_server_and_the_scripted_model(
    tmp_path: Path, scripted_server: ScriptedModelServer
) -> None:
    root = write_workspace(
        tmp_path / "ws",
        agent={"settings": {"statusInterval": None}},
        skills={
            "one": skill_front(
                "one",
                workflows=None,
                mcp=[{"server": "weather-tools", "allowedTools": ["getWeather", "add-numbers"]}],
            )
        },
        mcp={
            "mcpServers": {"weather-tools": {"command": sys.executable, "args": [str(MCP_SERVER)]}}
        },
    )
    env = {**ENV, "OPENAI_BASE_URL": scripted_server.openai_base_url}
    composed = load_workspace(root, env=env)
    assert composed.tool_graph()["one"] == [
        "weather_tools__get_weather",
        "weather_tools__add_numbers",
    ]
    async with AgentRuntime(composed, url="http://127.0.0.1:9/") as runtime:
        names = [t.name for t in runtime.agent.tools_for("one")]
        assert names == ["weather_tools__get_weather", "weather_tools__add_numbers"]
        assert runtime.card.supported_interfaces[0].url == "http://127.0.0.1:9/"
        scripted_server.script(
            Turn(tool_calls=[ScriptedToolCall(START_TASK_TOOL, {"skill": "one"})]),
            Turn(tool_calls=[ScriptedToolCall("weather_tools__get_weather", {"city": "Oslo"})]),
            Turn(tool_calls=[ScriptedToolCall(ARTIFACT_TOOL, {"content": "Oslo is sunny"})]),
        )
        server = AgentServer(runtime.agent, runtime.card)
        client = InProcessClient(server, timeout=15)
        events = [e async for e in client.send_streaming_message(Message.user("Oslo?"))]
        assert events[-1].status.state is TaskState.COMPLETED
        assert "sunny in Oslo" in json.dumps(scripted_server.bodies()[2])
        assert [
            p.text
            for e in events
            if isinstance(e, TaskArtifactUpdateEvent)
            for p in e.artifact.parts
        ] == ["Oslo is sunny"]
        await server.aclose()
