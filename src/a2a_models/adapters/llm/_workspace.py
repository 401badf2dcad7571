"""Agent workspaces: the files that describe an LLM agent, and their deterministic composition.

A workspace is a folder::

    agent.md              YAML front matter (card fields, model, tools, guardrails,
                          settings) + the agent's base prompt
    agent.manifest.json   skills (in order), registries, merge policies
    skills/<id>.md        front matter (A2A skill fields, model override, MCP
                          servers with allowedTools, workflows with overrides,
                          capabilities, tools, guardrails) + the skill's prompt
    mcp.json              Claude-compatible MCP servers
    workflow.json         the workflow allowlist (module:object entries)
    .env                  secrets (KEY=VALUE), never copied into a bundle

:func:`read_sources` reads the files (:class:`WorkspaceSources`, also what a
bundle holds); :func:`compose_workspace` turns them into a
:class:`ComposedWorkspace` - the card (validated against the A2A schema),
the prompts, each skill's tool selection, model settings and guardrails, the
effective MCP servers and workflows - or raises :class:`WorkspaceError`
naming the file and the field. :func:`load_workspace` does both.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import yaml  # type: ignore[import-untyped, unused-ignore]

from ... import codec
from ...models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    ProtocolBinding,
)
from ...schema import validate_wire
from ...tools import canonical_name
from ._config import ModelConfig, resolve_model_config
from ._errors import ModelConfigError
from ._hooks import HookDeclaration
from ._skills import RESERVED_TOOL_NAMES, Guardrails
from ._workflows import WorkflowEntry, WorkflowError, parse_workflow_registry, workflow_tool_name

__all__ = [
    "AGENT_FILE",
    "MANIFEST_FILE",
    "ComposedSkill",
    "ComposedWorkspace",
    "MergePolicies",
    "WorkspaceError",
    "WorkspaceSources",
    "compose_workspace",
    "load_workspace",
    "parse_front_matter",
    "read_dotenv",
    "read_sources",
]

AGENT_FILE: Final = "agent.md"
MANIFEST_FILE: Final = "agent.manifest.json"
DEFAULT_MCP_FILE: Final = "mcp.json"
DEFAULT_WORKFLOW_FILE: Final = "workflow.json"
DEFAULT_URL: Final = "http://127.0.0.1:8000"

_AGENT_KEYS = frozenset(
    {
        "name",
        "description",
        "version",
        "url",
        "provider",
        "documentationUrl",
        "iconUrl",
        "defaultInputModes",
        "defaultOutputModes",
        "capabilities",
        "model",
        "tools",
        "guardrails",
        "settings",
        "hooks",
        "contextProvider",
    }
)
_SKILL_KEYS = frozenset(
    {
        "id",
        "name",
        "description",
        "tags",
        "examples",
        "inputModes",
        "outputModes",
        "inputSchema",
        "outputSchema",
        "model",
        "mcp",
        "workflows",
        "tools",
        "capabilities",
        "guardrails",
    }
)
_MANIFEST_KEYS = frozenset({"$schema", "description", "skills", "registries", "policies"})
_SETTINGS = {
    "maxSteps": "max_steps",
    "statusInterval": "status_interval",
    "routing": "routing",
    "finishOnArtifact": "finish_on_artifact",
    "artifactMediaType": "artifact_media_type",
    "toolResults": "tool_results",
}
_CAPABILITY_FLAGS = {
    "streaming": "streaming",
    "pushNotifications": "push_notifications",
    "extendedAgentCard": "extended_agent_card",
}
_POLICIES = {
    "capabilities": ("union", "intersect"),
    "tools": ("union", "intersect"),
    "guardrails": ("tightest", "loosest"),
}


class WorkspaceError(ValueError):
    """A workspace is invalid; ``file`` and ``field`` say where (both in the message)."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {problem}")


# ----------------------------------------------------------------------------- reading


def parse_front_matter(text: str, file: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a Markdown file with a ``---`` YAML header."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith("---"):
        raise WorkspaceError(file, "front matter", "the file must start with a '---' YAML header")
    lines = stripped.splitlines(keepends=True)
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None or lines[0].strip() != "---":
        raise WorkspaceError(file, "front matter", "the '---' header is not closed by a '---' line")
    header = "".join(lines[1:end])
    try:
        data = yaml.safe_load(header) if header.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""
        raise WorkspaceError(file, "front matter", f"invalid YAML{at}: {exc}") from None
    if not isinstance(data, dict):
        raise WorkspaceError(file, "front matter", "expected a mapping of fields")
    body = "".join(lines[end + 1 :]).strip("\n")
    return _plain(data, file), body


def _plain(value: Any, file: str, where: str = "front matter") -> Any:
    """YAML values as JSON values (dates and the like become strings)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise WorkspaceError(file, where, f"keys must be strings, got {key!r}")
            out[key] = _plain(item, file, key)
        return out
    if isinstance(value, list):
        return [_plain(v, file, where) for v in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return str(value)


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read_dotenv(path: str | os.PathLike[str]) -> dict[str, str]:
    """The variables of a ``.env`` file (``KEY=VALUE``, ``export``, quotes, ``#`` comments);
    ``{}`` when there is no file."""
    file = Path(path)
    if not file.is_file():
        return {}
    out: dict[str, str] = {}
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _DOTENV_LINE.match(line)
        if match is None:
            raise WorkspaceError(file.name, f"line {number}", "expected KEY=VALUE")
        key, value = match.group(1), match.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0]
        out[key] = value
    return out


@attrs.frozen(slots=True, kw_only=True)
class SkillSource:
    """One skill file as read: its manifest id, label, front matter and body."""

    id: str
    file: str
    front: dict[str, Any] = attrs.field(hash=False)
    body: str


@attrs.frozen(slots=True, kw_only=True)
class WorkspaceSources:
    """The raw content of a workspace (what :func:`read_sources` reads and a bundle holds).

    ``root`` is the workspace directory (workflow ``.py`` entries are relative
    to it); ``dotenv`` the ``.env`` variables (never put in a bundle).
    """

    root: Path | None
    agent: dict[str, Any] = attrs.field(hash=False)
    prompt: str
    manifest: dict[str, Any] = attrs.field(hash=False)
    skills: tuple[SkillSource, ...]
    mcp: dict[str, Any] | None = attrs.field(default=None, hash=False)
    mcp_file: str = DEFAULT_MCP_FILE
    workflows: dict[str, Any] | None = attrs.field(default=None, hash=False)
    workflow_file: str = DEFAULT_WORKFLOW_FILE
    dotenv: dict[str, str] = attrs.field(factory=dict, hash=False, repr=False)


def _read_json(path: Path, label: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise WorkspaceError(label, "", f"cannot read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise WorkspaceError(
            label, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"
        ) from None


def _read_text(path: Path, label: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorkspaceError(label, "", f"cannot read: {exc.strerror or exc}") from None


def _registry_path(manifest: Mapping[str, Any], key: str, default: str) -> str:
    registries = manifest.get("registries")
    if registries is None:
        return default
    if not isinstance(registries, Mapping):
        raise WorkspaceError(MANIFEST_FILE, "registries", "expected an object")
    value = registries.get(key, default)
    if value is None:
        return ""
    if not isinstance(value, str) or not value:
        raise WorkspaceError(MANIFEST_FILE, f"registries.{key}", "expected a file name")
    return value


def _skill_entries(manifest: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(id, file, field)`` of each manifest skill, in order."""
    raw = manifest.get("skills")
    if not isinstance(raw, list) or not raw:
        raise WorkspaceError(MANIFEST_FILE, "skills", "expected a non-empty list of skill ids")
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        field = f"skills[{i}]"
        if isinstance(item, str):
            sid, file = item, f"skills/{item}.md"
        elif isinstance(item, Mapping) and isinstance(item.get("id"), str):
            sid = item["id"]
            file = item.get("file", f"skills/{sid}.md")
            if not isinstance(file, str) or not file:
                raise WorkspaceError(MANIFEST_FILE, f"{field}.file", "expected a file name")
        else:
            raise WorkspaceError(MANIFEST_FILE, field, "expected a skill id or {id, file}")
        if sid in seen:
            raise WorkspaceError(MANIFEST_FILE, field, f"the skill {sid!r} is listed twice")
        seen.add(sid)
        out.append((sid, file, field))
    return out


def read_sources(directory: str | os.PathLike[str]) -> WorkspaceSources:
    """Read the files of the workspace at ``directory`` (no validation beyond parsing)."""
    root = Path(directory).resolve()
    if not root.is_dir():
        raise WorkspaceError(str(directory), "", "not a directory")
    agent_path = root / AGENT_FILE
    if not agent_path.is_file():
        raise WorkspaceError(AGENT_FILE, "", f"missing (no {AGENT_FILE} in {root})")
    agent, prompt = parse_front_matter(_read_text(agent_path, AGENT_FILE), AGENT_FILE)
    manifest_path = root / MANIFEST_FILE
    if not manifest_path.is_file():
        raise WorkspaceError(MANIFEST_FILE, "", f"missing (no {MANIFEST_FILE} in {root})")
    manifest = _read_json(manifest_path, MANIFEST_FILE)
    if not isinstance(manifest, dict):
        raise WorkspaceError(MANIFEST_FILE, "", "expected a JSON object")
    skills = []
    for sid, file, field in _skill_entries(manifest):
        path = root / file
        if not path.is_file():
            raise WorkspaceError(MANIFEST_FILE, field, f"the skill file {file} does not exist")
        front, body = parse_front_matter(_read_text(path, file), file)
        skills.append(SkillSource(id=sid, file=file, front=front, body=body))
    mcp_file = _registry_path(manifest, "mcp", DEFAULT_MCP_FILE)
    mcp = None
    if mcp_file and (root / mcp_file).is_file():
        mcp = _read_json(root / mcp_file, mcp_file)
    workflow_file = _registry_path(manifest, "workflows", DEFAULT_WORKFLOW_FILE)
    workflows = None
    if workflow_file and (root / workflow_file).is_file():
        workflows = _read_json(root / workflow_file, workflow_file)
    return WorkspaceSources(
        root=root,
        agent=agent,
        prompt=prompt,
        manifest=manifest,
        skills=tuple(skills),
        mcp=mcp,
        mcp_file=mcp_file or DEFAULT_MCP_FILE,
        workflows=workflows,
        workflow_file=workflow_file or DEFAULT_WORKFLOW_FILE,
        dotenv=read_dotenv(root / ".env"),
    )


# ----------------------------------------------------------------------------- composing


@attrs.frozen(slots=True, kw_only=True)
class MergePolicies:
    """How agent-level and skill-level declarations combine (``agent.manifest.json: policies``).

    * ``capabilities`` - ``union`` (OR: a capability flag is on if the agent or
      any skill turns it on) or ``intersect`` (AND: on only if every file that
      declares it turns it on).
    * ``tools`` - ``union`` (a skill gets the tools it selects plus the agent's
      ``tools`` patterns) or ``intersect`` (a skill gets the tools it selects
      that the agent's ``tools`` patterns also allow).
    * ``guardrails`` - ``tightest`` (the smaller limit of agent and skill) or
      ``loosest`` (the larger; a side without the limit lifts it).

    Extensions are always merged by URI; the same URI with different
    definitions is an error.
    """

    capabilities: str = "union"
    tools: str = "union"
    guardrails: str = "tightest"


@attrs.frozen(slots=True, kw_only=True)
class MCPSelection:
    """A skill's use of one MCP server: ``allowed_tools`` (``None``: all of them)."""

    server: str
    allowed_tools: tuple[str, ...] | None = None
    config: dict[str, Any] | None = attrs.field(default=None, hash=False)


@attrs.frozen(slots=True, kw_only=True)
class WorkflowSelection:
    """A skill's use of one workflow: a version pin and parameter overrides."""

    id: str
    version: str | None = None
    overrides: dict[str, Any] = attrs.field(factory=dict, hash=False)


@attrs.frozen(slots=True, kw_only=True)
class ComposedSkill:
    """One skill, composed: card entry, prompt, tool selection, model settings, guardrails."""

    id: str
    file: str
    agent_skill: AgentSkill
    input_schema: dict[str, Any] | None = attrs.field(hash=False)
    prompt: str
    system_prompt: str
    model_settings: dict[str, Any] | None = attrs.field(hash=False)
    model_config: ModelConfig
    mcp: tuple[MCPSelection, ...]
    workflows: tuple[WorkflowSelection, ...]
    tool_patterns: tuple[str, ...]
    guardrails: Guardrails
    output_schema: dict[str, Any] | None = attrs.field(default=None, hash=False)

    @property
    def workflow_tools(self) -> tuple[str, ...]:
        return tuple(workflow_tool_name(w.id) for w in self.workflows)


@attrs.frozen(slots=True, kw_only=True)
class ComposedWorkspace:
    """A workspace, composed and validated. ``prompt`` is the final prompt (the agent's,
    then each skill body in manifest order); ``card`` the A2A card."""

    sources: WorkspaceSources = attrs.field(repr=False)
    card: AgentCard
    agent_prompt: str
    prompt: str
    skills: tuple[ComposedSkill, ...]
    model_settings: dict[str, Any] | None = attrs.field(hash=False)
    model_config: ModelConfig
    policies: MergePolicies
    agent_tools: tuple[str, ...] | None
    guardrails: Guardrails
    settings: dict[str, Any] = attrs.field(hash=False)
    mcp_servers: dict[str, dict[str, Any]] = attrs.field(hash=False)
    mcp_missing_env: tuple[str, ...]
    workflows: dict[str, WorkflowEntry] = attrs.field(hash=False)
    env: dict[str, str] = attrs.field(hash=False, repr=False)
    #: Tool hooks declared in ``agent.md`` (imported when the runtime starts).
    hooks: tuple[HookDeclaration, ...] = ()
    #: The ``module:object`` of the context provider, if declared.
    context_provider: str | None = None

    @property
    def root(self) -> Path | None:
        return self.sources.root

    def skill(self, skill_id: str) -> ComposedSkill:
        for skill in self.skills:
            if skill.id == skill_id:
                return skill
        raise KeyError(skill_id)

    def tool_graph(self) -> dict[str, list[str]]:
        """Each skill's tool selection: ``server__*`` / ``server__tool`` patterns,
        ``dispatch_workflow_<id>`` names and the agent's patterns, per the tool policy
        (``&`` marks patterns the agent's intersect policy applies)."""
        graph: dict[str, list[str]] = {}
        for skill in self.skills:
            entries = [*skill.tool_patterns]
            if self.agent_tools:
                if self.policies.tools == "union":
                    entries.extend(p for p in self.agent_tools if p not in entries)
                else:
                    entries.append("& " + " | ".join(self.agent_tools))
            graph[skill.id] = entries
        return graph

    def to_dict(self) -> dict[str, Any]:
        """The composed configuration as JSON (no secrets)."""
        return {
            "card": codec.to_wire(self.card, "1.0"),
            "prompt": self.prompt,
            "policies": attrs.asdict(self.policies),
            "model": self.model_config.describe(),
            "guardrails": self.guardrails.to_dict(),
            "settings": dict(self.settings),
            "agentTools": list(self.agent_tools) if self.agent_tools is not None else None,
            "mcpServers": sorted(self.mcp_servers),
            "mcpMissingEnv": list(self.mcp_missing_env),
            "workflows": {w: e.entry for w, e in self.workflows.items()},
            "hooks": [h.to_dict() for h in self.hooks],
            "contextProvider": self.context_provider,
            "skills": [
                {
                    "id": s.id,
                    "file": s.file,
                    "systemPrompt": s.system_prompt,
                    "model": s.model_config.describe(),
                    "guardrails": s.guardrails.to_dict(),
                    "mcp": [
                        {
                            "server": m.server,
                            "allowedTools": list(m.allowed_tools)
                            if m.allowed_tools is not None
                            else None,
                        }
                        for m in s.mcp
                    ],
                    "workflows": [
                        {"id": w.id, "version": w.version, "overrides": w.overrides}
                        for w in s.workflows
                    ],
                    "tools": self.tool_graph()[s.id],
                }
                for s in self.skills
            ],
        }


def _check_keys(
    data: Mapping[str, Any], allowed: frozenset[str], file: str, where: str = ""
) -> None:
    for key in data:
        if key not in allowed:
            field = f"{where}.{key}" if where else key
            raise WorkspaceError(
                file, field, f"unknown field (expected one of: {', '.join(sorted(allowed))})"
            )


def _string(data: Mapping[str, Any], key: str, file: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise WorkspaceError(file, key, "is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise WorkspaceError(file, key, f"expected a non-empty string, got {value!r}")
    return value


def _strings(value: Any, file: str, field: str, *, required: bool = False) -> tuple[str, ...]:
    if value is None:
        if required:
            raise WorkspaceError(file, field, "is required (a non-empty list of strings)")
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise WorkspaceError(file, field, f"expected a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise WorkspaceError(
                file, f"{field}[{i}]", f"expected a non-empty string, got {item!r}"
            )
    if required and not value:
        raise WorkspaceError(file, field, "must not be empty")
    return tuple(value)


def _mapping(value: Any, file: str, field: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise WorkspaceError(file, field, f"expected a mapping, got {type(value).__name__}")
    return value


def _policies(manifest: Mapping[str, Any]) -> MergePolicies:
    raw = _mapping(manifest.get("policies"), MANIFEST_FILE, "policies") or {}
    values: dict[str, str] = {}
    for key, value in raw.items():
        choices = _POLICIES.get(key)
        if choices is None:
            raise WorkspaceError(
                MANIFEST_FILE,
                f"policies.{key}",
                f"unknown policy (expected: {', '.join(_POLICIES)})",
            )
        if value not in choices:
            raise WorkspaceError(
                MANIFEST_FILE, f"policies.{key}", f"expected {' or '.join(choices)}, got {value!r}"
            )
        values[key] = value
    return MergePolicies(**values)


def _guardrails(value: Any, file: str) -> Guardrails:
    data = _mapping(value, file, "guardrails")
    try:
        return Guardrails.from_mapping(data)
    except (TypeError, ValueError) as exc:
        raise WorkspaceError(file, "guardrails", str(exc).removeprefix("guardrails: ")) from None


def _extensions(value: Any, file: str, field: str) -> list[AgentExtension]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WorkspaceError(file, field, "expected a list of extensions")
    out = []
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str) or not item["uri"]:
            raise WorkspaceError(file, where, "expected an object with a 'uri'")
        _check_keys(item, frozenset({"uri", "description", "required", "params"}), file, where)
        try:
            out.append(
                AgentExtension(
                    uri=item["uri"],
                    description=item.get("description"),
                    required=bool(item.get("required", False)),
                    params=item.get("params"),
                )
            )
        except Exception as exc:
            raise WorkspaceError(file, where, str(exc)) from None
    return out


def _capabilities(
    declared: Sequence[tuple[str, Mapping[str, Any] | None]], policy: str
) -> AgentCapabilities:
    flags: dict[str, bool | None] = {}
    extensions: dict[str, tuple[AgentExtension, str]] = {}
    for file, caps in declared:
        if caps is None:
            continue
        for key in caps:
            if key not in (*_CAPABILITY_FLAGS, "extensions"):
                raise WorkspaceError(
                    file,
                    f"capabilities.{key}",
                    f"unknown capability (expected: {', '.join([*_CAPABILITY_FLAGS, 'extensions'])})",
                )
        for key, attr in _CAPABILITY_FLAGS.items():
            if key not in caps:
                continue
            value = caps[key]
            if not isinstance(value, bool):
                raise WorkspaceError(file, f"capabilities.{key}", "expected true or false")
            current = flags.get(attr)
            if current is None:
                flags[attr] = value
            elif policy == "union":
                flags[attr] = current or value
            else:
                flags[attr] = current and value
        for ext in _extensions(caps.get("extensions"), file, "capabilities.extensions"):
            assert ext.uri is not None
            seen = extensions.get(ext.uri)
            if seen is None:
                extensions[ext.uri] = (ext, file)
            elif seen[0] != ext:
                raise WorkspaceError(
                    file,
                    "capabilities.extensions",
                    f"the extension {ext.uri!r} is defined differently in {seen[1]}",
                )
    return AgentCapabilities(**flags, extensions=tuple(e for e, _ in extensions.values()))


def _mcp_selections(value: Any, file: str) -> tuple[MCPSelection, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise WorkspaceError(
            file, "mcp", "expected a list of server names or {server, allowedTools}"
        )
    out = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        where = f"mcp[{i}]"
        if isinstance(item, str):
            selection = MCPSelection(server=item)
        elif isinstance(item, dict):
            _check_keys(item, frozenset({"server", "allowedTools", "config"}), file, where)
            server = item.get("server")
            if not isinstance(server, str) or not server:
                raise WorkspaceError(file, f"{where}.server", "expected a server name")
            allowed = item.get("allowedTools")
            selection = MCPSelection(
                server=server,
                allowed_tools=None
                if allowed is None
                else _strings(allowed, file, f"{where}.allowedTools", required=True),
                config=_mapping(item.get("config"), file, f"{where}.config"),
            )
        else:
            raise WorkspaceError(file, where, "expected a server name or {server, allowedTools}")
        if selection.server in seen:
            raise WorkspaceError(file, where, f"the server {selection.server!r} is listed twice")
        seen.add(selection.server)
        out.append(selection)
    return tuple(out)


def _workflow_selections(value: Any, file: str) -> tuple[WorkflowSelection, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise WorkspaceError(
            file, "workflows", "expected a list of workflow ids or {id, overrides}"
        )
    out = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        where = f"workflows[{i}]"
        if isinstance(item, str):
            selection = WorkflowSelection(id=item)
        elif isinstance(item, dict):
            _check_keys(item, frozenset({"id", "version", "overrides"}), file, where)
            wid = item.get("id")
            if not isinstance(wid, str) or not wid:
                raise WorkspaceError(file, f"{where}.id", "expected a workflow id")
            version = item.get("version")
            if version is not None and not isinstance(version, str):
                raise WorkspaceError(file, f"{where}.version", "expected a version string")
            overrides = _mapping(item.get("overrides"), file, f"{where}.overrides") or {}
            selection = WorkflowSelection(id=wid, version=version, overrides=overrides)
        else:
            raise WorkspaceError(file, where, "expected a workflow id or {id, version, overrides}")
        if selection.id in seen:
            raise WorkspaceError(file, where, f"the workflow {selection.id!r} is listed twice")
        seen.add(selection.id)
        out.append(selection)
    return tuple(out)


def _server_pattern(server: str, tool: str | None) -> str:
    prefix = canonical_name(server)
    if tool is None:
        return f"{prefix}__*"
    if any(c in tool for c in "*?["):
        return f"{prefix}__{tool}"
    return f"{prefix}__{canonical_name(tool)}"


def _model_config(
    agent: Mapping[str, Any] | None,
    skill: Mapping[str, Any] | None,
    env: Mapping[str, str],
    skill_file: str | None,
) -> ModelConfig:
    try:
        return resolve_model_config(
            workspace=agent,
            skill=skill,
            env=env,
            workspace_source=f"{AGENT_FILE}: model",
            skill_source=f"{skill_file}: model" if skill_file else "skill: model",
            require_api_key=False,
        )
    except ModelConfigError as exc:
        source = exc.source or ""
        if source.startswith(f"{AGENT_FILE}: "):
            file = AGENT_FILE
        elif skill_file and source.startswith(f"{skill_file}: "):
            file = skill_file
        else:  # the environment
            raise WorkspaceError(skill_file or AGENT_FILE, "model", str(exc)) from None
        field = f"model.{exc.field}" if exc.field else "model"
        problem = str(exc).removeprefix(f"{source}: ")
        if exc.field and problem.startswith(f"{exc.field} "):
            problem = problem[len(exc.field) + 1 :]
        raise WorkspaceError(file, field, problem) from None


def _interfaces(url: str) -> list[AgentInterface]:
    return [
        AgentInterface(url=url, protocol_binding=ProtocolBinding.JSONRPC, protocol_version="1.0"),
        AgentInterface(url=url, protocol_binding=ProtocolBinding.HTTP_JSON, protocol_version="1.0"),
    ]


def card_for_url(card: AgentCard, url: str) -> AgentCard:
    """``card`` served at ``url`` (its interfaces replaced)."""
    return attrs.evolve(card, supported_interfaces=_interfaces(url))


def _settings(value: Any) -> dict[str, Any]:
    raw = _mapping(value, AGENT_FILE, "settings") or {}
    out: dict[str, Any] = {}
    for key, item in raw.items():
        name = _SETTINGS.get(key)
        field = f"settings.{key}"
        if name is None:
            raise WorkspaceError(
                AGENT_FILE, field, f"unknown setting (expected: {', '.join(_SETTINGS)})"
            )
        if name == "max_steps" and (
            isinstance(item, bool) or not isinstance(item, int) or item < 1
        ):
            raise WorkspaceError(AGENT_FILE, field, "expected a positive integer")
        if (
            name == "status_interval"
            and item is not None
            and (isinstance(item, bool) or not isinstance(item, int | float) or item <= 0)
        ):
            raise WorkspaceError(AGENT_FILE, field, "expected a positive number of seconds or null")
        if name in ("routing", "finish_on_artifact") and not isinstance(item, bool):
            raise WorkspaceError(AGENT_FILE, field, "expected true or false")
        if name == "artifact_media_type" and item is not None and not isinstance(item, str):
            raise WorkspaceError(AGENT_FILE, field, "expected a media type")
        if name == "tool_results" and item not in ("structured", "text", "both"):
            raise WorkspaceError(AGENT_FILE, field, "expected 'structured', 'text' or 'both'")
        out[name] = item
    return out


def _mcp_servers(
    sources: WorkspaceSources,
    selected: Mapping[str, str],
    env: Mapping[str, str],
    inline: Mapping[str, tuple[dict[str, Any], str]],
) -> tuple[dict[str, dict[str, Any]], tuple[str, ...]]:
    """The raw configs of the selected servers, checked; and missing env variables.

    A skill may define a server inline (``mcp: [{server, config}]``); the same
    server defined differently in ``mcp.json`` (or another skill) is an error.
    """
    if not selected:
        return {}, ()
    file = sources.mcp_file
    data = sources.mcp if sources.mcp is not None else {"mcpServers": {}}
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise WorkspaceError(file, "mcpServers", "expected an object of servers")
    servers: dict[str, Any] = data["mcpServers"]
    out: dict[str, dict[str, Any]] = {}
    prefixes: dict[str, str] = {}
    for name, where in selected.items():
        defined = inline.get(name)
        if defined is not None:
            if name in servers and servers[name] != defined[0]:
                raise WorkspaceError(
                    defined[1],
                    "mcp",
                    f"the MCP server {name!r} is configured differently in {file} "
                    f"(mcpServers.{name})",
                )
            raw = defined[0]
        elif name not in servers:
            raise WorkspaceError(where, "mcp", f"no server {name!r} in {file}")
        else:
            raw = servers[name]
        if not isinstance(raw, dict):
            raise WorkspaceError(file, f"mcpServers.{name}", "expected an object")
        prefix = canonical_name(name)
        other = prefixes.get(prefix)
        if other is not None:
            raise WorkspaceError(
                file,
                f"mcpServers.{name}",
                f"the servers {other!r} and {name!r} both name their tools {prefix}__*",
            )
        prefixes[prefix] = name
        out[name] = copy.deepcopy(raw)
    missing: tuple[str, ...] = ()
    try:
        from ..mcp._config import MCPConfigError, parse_mcp_config
    except ImportError:  # pragma: no cover - the mcp extra is missing
        return out, ()
    try:
        parse_mcp_config({"mcpServers": out}, env=env, origin=file)
    except MCPConfigError as exc:
        if not exc.missing:
            raise WorkspaceError(file, "mcpServers", str(exc).removeprefix(f"{file}: ")) from None
        missing = exc.missing
    return out, missing


def compose_workspace(
    sources: WorkspaceSources, *, env: Mapping[str, str] | None = None, url: str | None = None
) -> ComposedWorkspace:
    """Compose and validate ``sources``; :class:`WorkspaceError` names the file and field.

    ``env`` defaults to the process environment over the ``.env`` variables (the
    process wins). ``url`` replaces the card's URL (``agent.md: url``, default
    ``http://127.0.0.1:8000``).
    """
    environment = {**sources.dotenv, **(os.environ if env is None else env)}
    agent = sources.agent
    _check_keys(agent, _AGENT_KEYS, AGENT_FILE)
    _check_keys(sources.manifest, _MANIFEST_KEYS, MANIFEST_FILE)
    policies = _policies(sources.manifest)
    name = _string(agent, "name", AGENT_FILE)
    description = _string(agent, "description", AGENT_FILE)
    version = str(agent.get("version") or "")
    if not version:
        raise WorkspaceError(AGENT_FILE, "version", "is required")
    agent_model = _mapping(agent.get("model"), AGENT_FILE, "model")
    agent_config = _model_config(agent_model, None, environment, None)
    agent_tools = (
        _strings(agent["tools"], AGENT_FILE, "tools") if agent.get("tools") is not None else None
    )
    agent_guard = _guardrails(agent.get("guardrails"), AGENT_FILE)
    settings = _settings(agent.get("settings"))
    hooks = _hooks(agent.get("hooks"))
    context_provider = _entry(agent.get("contextProvider"), "contextProvider")
    agent_caps = _mapping(agent.get("capabilities"), AGENT_FILE, "capabilities")

    # workflows: the registry (parsed, not imported)
    registry: dict[str, WorkflowEntry] = {}
    if sources.workflows is not None:
        try:
            registry = parse_workflow_registry(sources.workflows, origin=sources.workflow_file)
        except WorkflowError as exc:
            text = str(exc).removeprefix(f"{sources.workflow_file}: ")
            field, _, problem = text.partition(": ")
            raise WorkspaceError(sources.workflow_file, field, problem or text) from None

    skills: list[ComposedSkill] = []
    declared_caps: list[tuple[str, Mapping[str, Any] | None]] = [(AGENT_FILE, agent_caps)]
    mcp_selected: dict[str, str] = {}
    mcp_inline: dict[str, tuple[dict[str, Any], str]] = {}
    workflow_pins: dict[str, tuple[str | None, str]] = {}
    effective_workflows: dict[str, WorkflowEntry] = {}
    agent_skills: list[AgentSkill] = []
    prompt_parts = [sources.prompt.strip()] if sources.prompt.strip() else []
    for source in sources.skills:
        file, front = source.file, source.front
        _check_keys(front, _SKILL_KEYS, file)
        sid = front.get("id", source.id)
        if sid != source.id:
            raise WorkspaceError(
                file, "id", f"is {sid!r} but {MANIFEST_FILE} lists this file as {source.id!r}"
            )
        if not isinstance(sid, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,63}", sid):
            raise WorkspaceError(
                file, "id", "must start with a letter and use letters, digits, '_', '-'"
            )
        skill_name = (
            _string(front, "name", file, required=False) or sid.replace("_", " ").capitalize()
        )
        skill_description = _string(front, "description", file)
        tags = _strings(front.get("tags"), file, "tags", required=True)
        examples = _strings(front.get("examples"), file, "examples", required=True)
        input_schema = _mapping(front.get("inputSchema"), file, "inputSchema")
        if input_schema is not None:
            from ...tools import check_object_schema

            schema_problem = check_object_schema(input_schema)
            if schema_problem is not None:
                raise WorkspaceError(file, "inputSchema", schema_problem)
        output_schema = _mapping(front.get("outputSchema"), file, "outputSchema")
        if output_schema is not None:
            from ...tools import check_object_schema

            schema_problem = check_object_schema(output_schema)
            if schema_problem is not None:
                raise WorkspaceError(file, "outputSchema", schema_problem)
        try:
            entry = AgentSkill(
                id=sid,
                name=skill_name,
                description=skill_description or "",
                tags=tags,
                examples=examples,
                input_modes=_strings(front.get("inputModes"), file, "inputModes"),
                output_modes=_strings(front.get("outputModes"), file, "outputModes"),
            )
        except Exception as exc:
            raise WorkspaceError(file, "", str(exc)) from None
        skill_model = _mapping(front.get("model"), file, "model")
        config = _model_config(agent_model, skill_model, environment, file)
        mcp = _mcp_selections(front.get("mcp"), file)
        for i, selection in enumerate(mcp):
            mcp_selected.setdefault(selection.server, file)
            if selection.config is not None:
                seen_inline = mcp_inline.get(selection.server)
                if seen_inline is not None and seen_inline[0] != selection.config:
                    raise WorkspaceError(
                        file,
                        f"mcp[{i}].config",
                        f"the MCP server {selection.server!r} is configured differently in "
                        f"{seen_inline[1]}",
                    )
                mcp_inline[selection.server] = (selection.config, file)
        workflows = _workflow_selections(front.get("workflows"), file)
        for i, wsel in enumerate(workflows):
            where = f"workflows[{i}]"
            entry_ = registry.get(wsel.id)
            if entry_ is None:
                raise WorkspaceError(
                    file, where, f"no workflow {wsel.id!r} in {sources.workflow_file}"
                )
            if not entry_.enabled:
                raise WorkspaceError(
                    file,
                    where,
                    f"the workflow {wsel.id!r} is disabled in {sources.workflow_file}",
                )
            pinned = workflow_pins.get(wsel.id)
            if (
                pinned is not None
                and wsel.version is not None
                and pinned[0] is not None
                and pinned[0] != wsel.version
            ):
                raise WorkspaceError(
                    file,
                    f"{where}.version",
                    f"the workflow {wsel.id!r} is pinned to {pinned[0]!r} in {pinned[1]} "
                    f"and to {wsel.version!r} here",
                )
            if pinned is None or pinned[0] is None:
                workflow_pins[wsel.id] = (wsel.version, file)
            effective_workflows[wsel.id] = entry_
        patterns: list[str] = []
        for selection in mcp:
            if selection.allowed_tools is None:
                patterns.append(_server_pattern(selection.server, None))
            else:
                patterns.extend(
                    _server_pattern(selection.server, t) for t in selection.allowed_tools
                )
        patterns.extend(workflow_tool_name(w.id) for w in workflows)
        patterns.extend(_strings(front.get("tools"), file, "tools"))
        for pattern in patterns:
            if pattern in RESERVED_TOOL_NAMES:
                raise WorkspaceError(file, "tools", f"{pattern!r} is reserved by the LLM agent")
        effective_patterns = _effective_patterns(patterns, agent_tools, policies.tools)
        if not effective_patterns:
            raise WorkspaceError(
                file,
                "mcp",
                "the skill has no tools: select MCP servers (mcp), workflows (workflows) or tools"
                + (" allowed by the agent's tools (intersect policy)" if patterns else ""),
            )
        guard = agent_guard.combine(_guardrails(front.get("guardrails"), file), policies.guardrails)
        declared_caps.append((file, _mapping(front.get("capabilities"), file, "capabilities")))
        from ...tools import define_skill
        from ._skills import skill_system_prompt

        definition = define_skill(
            sid,
            description=skill_description or "",
            tags=tags,
            examples=examples,
            name=skill_name,
            input_schema=input_schema,
            output_schema=output_schema,
            allowed_tools=patterns or ["*"],
        )
        skills.append(
            ComposedSkill(
                id=sid,
                file=file,
                agent_skill=entry,
                input_schema=input_schema,
                output_schema=output_schema,
                prompt=source.body,
                system_prompt=skill_system_prompt(sources.prompt, definition, source.body),
                model_settings=skill_model,
                model_config=config,
                mcp=mcp,
                workflows=workflows,
                tool_patterns=tuple(patterns),
                guardrails=guard,
            )
        )
        agent_skills.append(entry)
        if source.body.strip():
            prompt_parts.append(source.body.strip())

    servers, missing = _mcp_servers(sources, mcp_selected, environment, mcp_inline)
    capabilities = _capabilities(declared_caps, policies.capabilities)
    provider = _mapping(agent.get("provider"), AGENT_FILE, "provider")
    card_url = url or _string(agent, "url", AGENT_FILE, required=False) or DEFAULT_URL
    try:
        card = AgentCard(
            name=name or "",
            description=description or "",
            version=version,
            supported_interfaces=_interfaces(card_url),
            capabilities=capabilities,
            default_input_modes=_strings(
                agent.get("defaultInputModes"), AGENT_FILE, "defaultInputModes"
            )
            or ("text/plain",),
            default_output_modes=_strings(
                agent.get("defaultOutputModes"), AGENT_FILE, "defaultOutputModes"
            )
            or ("text/plain",),
            skills=agent_skills,
            provider=AgentProvider(**_provider(provider)) if provider is not None else None,
            documentation_url=_string(agent, "documentationUrl", AGENT_FILE, required=False),
            icon_url=_string(agent, "iconUrl", AGENT_FILE, required=False),
        )
    except WorkspaceError:
        raise
    except Exception as exc:
        raise WorkspaceError(AGENT_FILE, "", f"the agent card is invalid: {exc}") from None
    try:
        validate_wire(codec.to_wire(card, "1.0"), AgentCard)
    except Exception as exc:
        raise WorkspaceError(
            AGENT_FILE, "", f"the composed card is not a valid A2A card: {exc}"
        ) from None
    return ComposedWorkspace(
        sources=sources,
        card=card,
        agent_prompt=sources.prompt,
        prompt="\n\n".join(prompt_parts),
        skills=tuple(skills),
        model_settings=agent_model,
        model_config=agent_config,
        policies=policies,
        agent_tools=agent_tools,
        guardrails=agent_guard,
        settings=settings,
        mcp_servers=servers,
        mcp_missing_env=missing,
        workflows=effective_workflows,
        env=dict(environment),
        hooks=hooks,
        context_provider=context_provider,
    )


_ENTRY = re.compile(r"[^:\s]+:[A-Za-z_][A-Za-z0-9_.]*")
_HOOK_KEYS = frozenset({"tools", "before", "after", "adapter"})


def _entry(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _ENTRY.fullmatch(value):
        raise WorkspaceError(
            AGENT_FILE, field, f"expected 'module:object' (or 'file.py:object'), got {value!r}"
        )
    return value


def _entries(value: Any, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise WorkspaceError(AGENT_FILE, field, "expected an entry or a list of entries")
    return tuple(_entry(item, f"{field}[{i}]") or "" for i, item in enumerate(items))


def _hooks(value: Any) -> tuple[HookDeclaration, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise WorkspaceError(AGENT_FILE, "hooks", "expected a list of hook declarations")
    out = []
    for i, item in enumerate(value):
        where = f"hooks[{i}]"
        if not isinstance(item, Mapping):
            raise WorkspaceError(AGENT_FILE, where, "expected an object")
        _check_keys(item, _HOOK_KEYS, AGENT_FILE, where)
        tools = item.get("tools", "*")
        patterns = (tools,) if isinstance(tools, str) else _strings(tools, AGENT_FILE, f"{where}.tools")
        declaration = HookDeclaration(
            tools=patterns or ("*",),
            before=_entries(item.get("before"), f"{where}.before"),
            after=_entries(item.get("after"), f"{where}.after"),
            adapter=_entry(item.get("adapter"), f"{where}.adapter"),
        )
        if not declaration.entries():
            raise WorkspaceError(AGENT_FILE, where, "declares no 'before', 'after' or 'adapter'")
        out.append(declaration)
    return tuple(out)


def _provider(value: Mapping[str, Any]) -> dict[str, str]:
    _check_keys(value, frozenset({"organization", "url"}), AGENT_FILE, "provider")
    out = {}
    for key in ("organization", "url"):
        item = value.get(key)
        if not isinstance(item, str) or not item:
            raise WorkspaceError(AGENT_FILE, f"provider.{key}", "expected a non-empty string")
        out[key] = item
    return out


def _effective_patterns(
    patterns: Sequence[str], agent_tools: Sequence[str] | None, policy: str
) -> list[str]:
    """The statically known selection (for the 'has tools' check)."""
    if agent_tools is None:
        return list(patterns)
    if policy == "union":
        return [*patterns, *(p for p in agent_tools if p not in patterns)]
    return [
        p
        for p in patterns
        if any(
            fnmatch.fnmatchcase(p, a) or fnmatch.fnmatchcase(a, p) or _overlap(p, a)
            for a in agent_tools
        )
    ]


def _overlap(a: str, b: str) -> bool:
    # Two patterns may select a common name (a conservative check: same prefix up to a '*').
    pa, pb = a.split("*", 1)[0], b.split("*", 1)[0]
    return pa.startswith(pb) or pb.startswith(pa)


def load_workspace(
    directory: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    url: str | None = None,
) -> ComposedWorkspace:
    """:func:`read_sources` then :func:`compose_workspace`."""
    return compose_workspace(read_sources(directory), env=env, url=url)


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    return any(name == p or fnmatch.fnmatchcase(name, p) for p in patterns)
