"""From a composed workspace to a running agent: :class:`AgentRuntime`.

:meth:`AgentRuntime.start` imports the allowlisted workflows (checking the
skills' version pins), makes the models (the agent's, and one per distinct
skill configuration), connects the effective MCP servers, and builds the
:class:`~a2a_models.adapters.llm.LLMAgent` whose skills see exactly the tools
their files select (under the workspace's tool policy). Every skill's tool
list is checked once before serving: duplicate names are an error naming both
sources. :meth:`AgentRuntime.stop` closes the MCP servers and the models.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._closing import AsyncRunning
from ...models import AgentCard
from ...tools import Adapter, Tool, Toolbox, adapt_tools, check_unique, define_skill
from ._agent import LLMAgent
from ._config import ModelConfig, make_model, resolve_model_config
from ._entries import EntryError
from ._errors import ModelConfigError
from ._hooks import load_context_provider, load_hook_adapters
from ._model import Model
from ._skills import LLMSkill
from ._workflows import (
    Workflow,
    WorkflowError,
    load_workflow_registry,
    override_problems,
    workflow_tool,
)
from ._workspace_fields import card_for_url
from ._workspace_files import AGENT_FILE, WorkspaceError
from ._workspace_model import ComposedWorkspace, matches_any

if TYPE_CHECKING:
    from ..mcp import MCPSkillServer, MCPToolHub

__all__ = ["AgentRuntime", "build_runtime"]


class AgentRuntime(AsyncRunning):
    """A composed workspace brought to life (an async context manager).

    ``url`` is where the agent is served (the card's interfaces); ``override``
    model settings win over everything (``{"provider": ..., "model": ...}``,
    e.g. from the command line); ``env`` adds to the workspace environment
    (process environment over ``.env``). ``model_factory`` makes a model of a
    :class:`ModelConfig` (tests may substitute one).
    """

    def __init__(
        self,
        composed: ComposedWorkspace,
        *,
        url: str | None = None,
        override: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        model_factory: Callable[[ModelConfig], Model] = make_model,
        agent_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.composed = composed
        self.card: AgentCard = card_for_url(composed.card, url) if url else composed.card
        self.override = {k: v for k, v in (override or {}).items() if v is not None}
        self.env = {**composed.env, **(env or {})}
        self.model_factory = model_factory
        self.agent_options = dict(agent_options or {})
        self.hub: MCPToolHub | None = None
        self.workflows: dict[str, Workflow] = {}
        self.toolbox = Toolbox()
        self._adapters: list[tuple[str, Adapter]] = []
        self._agent: LLMAgent | None = None
        self._models: list[Model] = []

    @property
    def agent(self) -> LLMAgent:
        if self._agent is None:
            raise RuntimeError("the agent runtime is not started")
        return self._agent

    # ---------------------------------------------------------------- start / stop

    async def start(self) -> None:
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        composed = self.composed
        self.workflows = self._load_workflows()
        models = self._make_models()
        adapters, provider = self._load_hooks()
        self._adapters = adapters
        if composed.mcp_servers:
            from ..mcp import MCPToolHub, parse_mcp_config

            servers = parse_mcp_config(
                {"mcpServers": composed.mcp_servers},
                env=self.env,
                origin=composed.sources.mcp_file,
            )
            self.hub = MCPToolHub(servers, context_provider=provider)
            await self.hub.start()
            self.toolbox = self.hub.toolbox(adapters=adapters)
        else:
            context = await provider({}) if provider is not None else None
            self.toolbox = Toolbox(adapters=adapters, context=context)
        skills = []
        for cs in composed.skills:
            own = [
                workflow_tool(
                    self.workflows[w.id], w.overrides, source=f"{cs.file}: workflows.{w.id}"
                )
                for w in cs.workflows
            ]
            definition = define_skill(
                cs.id,
                name=cs.agent_skill.name,
                description=cs.agent_skill.description,
                tags=cs.agent_skill.tags,
                examples=cs.agent_skill.examples,
                input_modes=cs.agent_skill.input_modes,
                output_modes=cs.agent_skill.output_modes,
                input_schema=cs.input_schema,
                output_schema=cs.output_schema,
                tools=own,
                allowed_tools=list(cs.tool_patterns),
            )
            model = models[cs.model_config]
            skills.append(
                LLMSkill(
                    definition=definition,
                    prompt=cs.prompt,
                    model=None if model is models[composed.model_config] else model,
                    guardrails=cs.guardrails,
                )
            )
        # The agent's own time limit bounds routing (no skill is chosen yet).
        options = {
            "routing_timeout": composed.guardrails.timeout,
            **composed.settings,
            **self.agent_options,
        }
        self._agent = LLMAgent(
            models[composed.model_config],
            skills,
            prompt=composed.agent_prompt,
            toolbox=self.toolbox,
            tools_resolver=self._resolve_tools,
            **options,
        )
        for cs in composed.skills:
            try:
                self._agent.tools_for(cs.id)
            except (ValueError, KeyError) as exc:
                raise WorkspaceError(cs.file, "tools", str(exc)) from None

    async def stop(self) -> None:
        if self.hub is not None:
            await self.hub.stop()
            self.hub = None
        for model in self._models:
            await model.aclose()
        self._models.clear()
        self._agent = None

    # ---------------------------------------------------------------- pieces

    def _load_hooks(self) -> tuple[list[tuple[str, Adapter]], Any]:
        """The workspace's hook adapters and context provider, imported."""
        composed = self.composed
        try:
            adapters = load_hook_adapters(composed.hooks, base_dir=composed.root)
            provider = (
                load_context_provider(composed.context_provider, base_dir=composed.root)
                if composed.context_provider is not None
                else None
            )
        except EntryError as exc:
            field, _, problem = str(exc).partition(": ")
            raise WorkspaceError(AGENT_FILE, field, problem) from None
        return adapters, provider

    def _load_workflows(self) -> dict[str, Workflow]:
        composed = self.composed
        if not composed.workflows:
            return {}
        file = composed.sources.workflow_file
        try:
            loaded = load_workflow_registry(
                composed.sources.workflows or {},
                base_dir=composed.root,
                only=list(composed.workflows),
                origin=file,
            )
        except WorkflowError as exc:
            text = str(exc).removeprefix(f"{file}: ")
            field, _, problem = text.partition(": ")
            raise WorkspaceError(file, field, problem or text) from None
        for cs in composed.skills:
            for i, selection in enumerate(cs.workflows):
                version = loaded[selection.id].version
                if selection.version is not None and selection.version != version:
                    raise WorkspaceError(
                        cs.file,
                        f"workflows[{i}].version",
                        f"pins {selection.version!r} but the workflow {selection.id!r} is "
                        f"version {version!r}",
                    )
                for where, problem in override_problems(loaded[selection.id], selection.overrides):
                    raise WorkspaceError(cs.file, f"workflows[{i}].overrides.{where}", problem)
        return loaded

    def _config(self, cs_model: Mapping[str, Any] | None, file: str | None) -> ModelConfig:
        return resolve_model_config(
            self.override,
            workspace=self.composed.model_settings,
            skill=cs_model,
            env=self.env,
            workspace_source=f"{AGENT_FILE}: model",
            skill_source=f"{file}: model" if file else "skill: model",
        )

    def _make_models(self) -> dict[ModelConfig, Model]:
        """A model per distinct configuration, keyed by the composed (keyless) configs."""
        out: dict[ModelConfig, Model] = {}
        made: dict[ModelConfig, Model] = {}
        pairs: list[tuple[ModelConfig, Mapping[str, Any] | None, str | None]] = [
            (self.composed.model_config, None, None)
        ]
        pairs.extend((cs.model_config, cs.model_settings, cs.file) for cs in self.composed.skills)
        for composed_config, settings, file in pairs:
            if composed_config in out:
                continue
            try:
                config = self._config(settings, file)
            except ModelConfigError:
                raise
            model = made.get(config)
            if model is None:
                model = self.model_factory(config)
                made[config] = model
                self._models.append(model)
            out[composed_config] = model
        return out

    def _resolve_tools(self, skill: LLMSkill) -> Sequence[Tool]:
        """The tools of ``skill``: its selection, under the workspace's tool policy."""
        composed = self.composed
        cs = composed.skill(skill.id)
        pool = self.toolbox.tools
        # The workspace's hooks apply to a skill's own tools (workflows) too.
        selected: list[Tool] = [*adapt_tools(skill.definition.tools, self._adapters)]
        selected.extend(t for t in pool if matches_any(t.name, cs.tool_patterns))
        agent_tools = composed.agent_tools
        if agent_tools is not None:
            if composed.policies.tools == "intersect":
                selected = [t for t in selected if matches_any(t.name, agent_tools)]
            else:
                names = {t.name for t in selected}
                defaults = [workflow_tool(w) for w in self.workflows.values()]
                for tool in (*pool, *defaults):
                    if tool.name not in names and matches_any(tool.name, agent_tools):
                        selected.append(tool)
                        names.add(tool.name)
        return tuple(check_unique(selected).values())

    def mcp_server(self) -> MCPSkillServer:
        """The agent's skills as an MCP server (each skill a tool the LLM fulfils)."""
        from ..mcp import MCPSkillServer

        agent = self.agent
        definitions = [s.definition for s in agent.skills.values()]

        async def runner(skill: Any, args: Any, context: Any) -> Any:
            return await agent.fulfil(skill.id, args, task=context.task, message=context.message)

        return MCPSkillServer.from_card(
            self.card,
            definitions,
            instructions=self.composed.prompt or None,
            runner=runner,
        )


def build_runtime(composed: ComposedWorkspace, **options: Any) -> AgentRuntime:
    """An :class:`AgentRuntime` for ``composed`` (not started; see its options)."""
    return AgentRuntime(composed, **options)
