"""Agent workspaces: the files that describe an LLM agent, and their deterministic composition.

A workspace is a folder::

    agent.md              YAML front matter (card fields, model, tools, guardrails,
                          settings, hooks, contextProvider) + the agent's base prompt
    agent.manifest.json   skills (in order), registries, merge policies
    skills/<id>.md        front matter (A2A skill fields, input/output schemas, model
                          override, MCP servers with allowedTools, workflows with
                          overrides, capabilities, tools, guardrails) + the skill's prompt
    mcp.json              Claude-compatible MCP servers
    workflow.json         the workflow allowlist (module:object entries)
    .env                  secrets (KEY=VALUE), never copied into a bundle

:func:`read_sources` reads the files (:class:`WorkspaceSources`, also what a
bundle holds; ``_workspace_files``); :func:`compose_workspace` turns them into a
:class:`ComposedWorkspace` (``_workspace_model``) - the card (validated against
the A2A schema), the prompts, each skill's tool selection, model settings and
guardrails, the effective MCP servers and workflows - or raises
:class:`WorkspaceError` naming the file and the field (each field is checked in
``_workspace_fields``). :func:`load_workspace` does both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ... import codec
from ...models import AgentCapabilities, AgentCard, AgentProvider, AgentSkill
from ...schema import validate_wire
from ._skills import RESERVED_TOOL_NAMES, Guardrails
from ._workflows import WorkflowEntry, WorkflowError, parse_workflow_registry, workflow_tool_name
from ._workspace_fields import (
    _AGENT_KEYS,
    _MANIFEST_KEYS,
    _SKILL_KEYS,
    _capabilities,
    _check_keys,
    _effective_patterns,
    _entry,
    _guardrails,
    _hooks,
    _interfaces,
    _mapping,
    _mcp_selections,
    _mcp_servers,
    _model_config,
    _policies,
    _provider,
    _server_pattern,
    _settings,
    _string,
    _strings,
    _workflow_selections,
)
from ._workspace_files import (
    AGENT_FILE,
    DEFAULT_URL,
    MANIFEST_FILE,
    SkillSource,
    WorkspaceError,
    WorkspaceSources,
    parse_front_matter,
    read_dotenv,
    read_sources,
)
from ._workspace_model import ComposedSkill, ComposedWorkspace, MergePolicies

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

    composer = _SkillComposer(
        sources,
        environment=environment,
        agent_model=agent_model,
        agent_tools=agent_tools,
        agent_guard=agent_guard,
        policies=policies,
        registry=registry,
    )
    composer.declared_caps.append((AGENT_FILE, agent_caps))
    for source in sources.skills:
        composer.add(source)
    skills, agent_skills = composer.skills, composer.agent_skills
    declared_caps, mcp_selected, mcp_inline = (
        composer.declared_caps,
        composer.mcp_selected,
        composer.mcp_inline,
    )
    effective_workflows = composer.effective_workflows
    prompt_parts = [sources.prompt.strip()] if sources.prompt.strip() else []
    prompt_parts.extend(composer.prompt_parts)
    servers, missing = _mcp_servers(sources, mcp_selected, environment, mcp_inline)
    capabilities = _capabilities(declared_caps, policies.capabilities)
    card = _card(agent, capabilities, agent_skills, name or "", description or "", version, url)
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


class _SkillComposer:
    """Composes the skills of a workspace in manifest order, checking what they share:
    MCP servers configured inline, workflow pins, the agent's tool policy."""

    def __init__(
        self,
        sources: WorkspaceSources,
        *,
        environment: Mapping[str, str],
        agent_model: dict[str, Any] | None,
        agent_tools: tuple[str, ...] | None,
        agent_guard: Guardrails,
        policies: MergePolicies,
        registry: Mapping[str, WorkflowEntry],
    ) -> None:
        self.sources = sources
        self.environment = environment
        self.agent_model = agent_model
        self.agent_tools = agent_tools
        self.agent_guard = agent_guard
        self.policies = policies
        self.registry = registry
        self.skills: list[ComposedSkill] = []
        self.agent_skills: list[AgentSkill] = []
        self.prompt_parts: list[str] = []
        self.declared_caps: list[tuple[str, Mapping[str, Any] | None]] = []
        self.mcp_selected: dict[str, str] = {}
        self.mcp_inline: dict[str, tuple[dict[str, Any], str]] = {}
        self.workflow_pins: dict[str, tuple[str | None, str]] = {}
        self.effective_workflows: dict[str, WorkflowEntry] = {}

    def add(self, source: SkillSource) -> None:
        """Compose one skill file (raises :class:`WorkspaceError`)."""
        sources, environment, registry = self.sources, self.environment, self.registry
        agent_model, agent_tools, policies = self.agent_model, self.agent_tools, self.policies
        agent_guard = self.agent_guard
        skills, agent_skills, declared_caps = self.skills, self.agent_skills, self.declared_caps
        mcp_selected, mcp_inline = self.mcp_selected, self.mcp_inline
        workflow_pins, effective_workflows = self.workflow_pins, self.effective_workflows
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
            self.prompt_parts.append(source.body.strip())


def _card(
    agent: Mapping[str, Any],
    capabilities: AgentCapabilities,
    agent_skills: list[AgentSkill],
    name: str,
    description: str,
    version: str,
    url: str | None,
) -> AgentCard:
    """The agent card of ``agent.md``, validated against the A2A schema."""
    provider = _mapping(agent.get("provider"), AGENT_FILE, "provider")
    card_url = url or _string(agent, "url", AGENT_FILE, required=False) or DEFAULT_URL
    try:
        card = AgentCard(
            name=name,
            description=description,
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
    return card


def load_workspace(
    directory: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    url: str | None = None,
) -> ComposedWorkspace:
    """:func:`read_sources` then :func:`compose_workspace`."""
    return compose_workspace(read_sources(directory), env=env, url=url)
