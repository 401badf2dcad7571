"""A workspace, composed: :class:`ComposedWorkspace` and its :class:`ComposedSkill` s,
the merge policies and the MCP / workflow selections of a skill."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from ... import codec
from ...models import (
    AgentCard,
    AgentSkill,
)
from ._config import ModelConfig
from ._hooks import HookDeclaration, entry_problems
from ._skills import Guardrails
from ._workflows import WorkflowEntry
from ._workspace_files import WorkspaceSources

__all__ = [
    "ComposedSkill",
    "ComposedWorkspace",
    "MCPSelection",
    "MergePolicies",
    "WorkflowSelection",
    "matches_any",
]


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

    def entry_problems(self) -> list[str]:
        """Hooks and context provider that do not import, one line each (``[]``: all
        import). ``agent doctor`` reports these; the provider is imported, not run."""
        return entry_problems(self.hooks, self.context_provider, base_dir=self.root)

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


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    return any(name == p or fnmatch.fnmatchcase(name, p) for p in patterns)
