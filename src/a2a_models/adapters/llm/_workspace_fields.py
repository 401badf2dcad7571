"""The fields of a workspace's front matter and manifest, checked one by one: each
helper returns the value in its composed form or raises :class:`WorkspaceError`
naming the file and the field."""

from __future__ import annotations

import copy
import fnmatch
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ...models import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    ProtocolBinding,
)
from ...tools import canonical_name
from ._config import ModelConfig, resolve_model_config
from ._errors import ModelConfigError
from ._hooks import HookDeclaration
from ._skills import Guardrails
from ._workspace_files import AGENT_FILE, MANIFEST_FILE, WorkspaceError, WorkspaceSources
from ._workspace_model import MCPSelection, MergePolicies, WorkflowSelection

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
    "toolResultLimit": "tool_result_limit",
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
            and (
                isinstance(item, bool)
                or not isinstance(item, int | float)
                or not 0 < item < math.inf  # NaN too: a timer due at once, for ever
            )
        ):
            raise WorkspaceError(AGENT_FILE, field, "expected a positive number of seconds or null")
        if name in ("routing", "finish_on_artifact") and not isinstance(item, bool):
            raise WorkspaceError(AGENT_FILE, field, "expected true or false")
        if name == "artifact_media_type" and item is not None and not isinstance(item, str):
            raise WorkspaceError(AGENT_FILE, field, "expected a media type")
        if name == "tool_results" and item not in ("structured", "text", "both"):
            raise WorkspaceError(AGENT_FILE, field, "expected 'structured', 'text' or 'both'")
        if (
            name == "tool_result_limit"
            and item is not None
            and (isinstance(item, bool) or not isinstance(item, int) or item < 1)
        ):
            raise WorkspaceError(
                AGENT_FILE, field, "expected a positive number of characters or null"
            )
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
        from ..mcp import MCPConfigError, parse_mcp_config
    except ImportError:  # pragma: no cover - the mcp extra is missing
        return out, ()
    try:
        parse_mcp_config({"mcpServers": out}, env=env, origin=file)
    except MCPConfigError as exc:
        if not exc.missing:
            # "<file>: mcpServers.<name>.<key>: <problem>": the field once, not twice.
            text = str(exc).removeprefix(f"{file}: ")
            field, _, problem = text.partition(": ")
            if not (field.startswith("mcpServers") and problem):
                field, problem = "mcpServers", text
            raise WorkspaceError(file, field, problem) from None
        missing = exc.missing
    return out, missing


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
        patterns = (
            (tools,) if isinstance(tools, str) else _strings(tools, AGENT_FILE, f"{where}.tools")
        )
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
