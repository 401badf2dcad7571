"""The LLM agent: an A2A :class:`~a2a_models.server.Agent` whose skills a model fulfils.

::

    agent = LLMAgent(
        model,
        [LLMSkill(definition=define_skill("report", description=..., tags=[...],
                                          examples=[...], tools=[lookup]),
                  prompt="Write short reports.")],
        prompt="You are a research assistant.",
    )
    server = AgentServer(agent, card)

A turn goes through three stages:

1. **routing** - a new request is shown to the model with the skills' names and
   descriptions and one tool, ``start_task``: a plain-text answer is sent as a
   direct :class:`~a2a_models.Message` (no task); a ``start_task`` call picks a
   skill and starts a task. Skipped when routing is off, when the request
   names a skill (message or request metadata ``skillId``) and for a task
   that continues after input-required;
2. **execution** - ``submitted`` -> ``working``, the tool loop with the skill's
   tools, streamed artifacts and periodic status updates (see
   :class:`~a2a_models.adapters.llm._handler.TaskRun`);
3. **forced artifact** - without an artifact, the artifact tool is forced;
   then ``completed``.

A skill with a handler is run by its handler (its Task or Message is the result).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import Any

from ..._state import TaskState
from ...models import (
    DataPart,
    JSONObject,
    Message,
    Role,
    SendMessageRequest,
    Task,
    new_id,
)
from ...server import Agent, AgentEvent, RequestContext, apply_event
from ...tools import (
    RESULT_FORMS,
    ResultForm,
    SkillDefinition,
    Tool,
    Toolbox,
    ToolNameError,
    check_unique,
    declares_inputs,
)
from ._errors import ModelError
from ._handler import (
    DEFAULT_TOOL_RESULT_LIMIT,
    KIND_METADATA_KEY,
    SKILL_METADATA_KEY,
    Activity,
    TaskRun,
    default_status_text,
    render_parts,
)
from ._model import (
    AssistantMessage,
    ChatMessage,
    Model,
    ModelRequest,
    SystemMessage,
    ToolSpec,
    UserMessage,
)
from ._skills import (
    RESERVED_TOOL_NAMES,
    START_TASK_TOOL,
    LLMSkill,
    routing_system_prompt,
    skill_system_prompt,
)

__all__ = ["SKILL_REQUEST_KEYS", "LLMAgent"]

log = logging.getLogger("a2a_models.adapters.llm")

#: Message or request metadata keys naming the skill to run (routing is skipped).
SKILL_REQUEST_KEYS = ("skillId", "skill_id", SKILL_METADATA_KEY)


def _skill(value: LLMSkill | SkillDefinition) -> LLMSkill:
    if isinstance(value, LLMSkill):
        return value
    if isinstance(value, SkillDefinition):
        return LLMSkill(definition=value)
    raise TypeError(f"expected an LLMSkill or a SkillDefinition, got {type(value).__name__}")


class LLMAgent(Agent):
    """An agent whose skills a language model fulfils by calling tools.

    * ``model`` - the agent's :class:`~a2a_models.adapters.llm.Model` (routing, and
      every skill without a model of its own).
    * ``skills`` - :class:`LLMSkill` s (or bare :class:`~a2a_models.tools.SkillDefinition` s).
    * ``prompt`` - the agent's base prompt.
    * ``toolbox`` - the agent's shared tools (MCP tools, local tools, adapters and
      the custom context); each skill gets ``toolbox.for_skill(definition)``:
      its own tools plus the shared ones its ``allowed_tools`` lets through.
    * ``context`` - the custom context handed to tools (default: the toolbox's).
    * ``max_steps`` - model calls of the tool loop per turn (a skill's
      guardrails may set its own); reaching it fails the task.
    * ``status_interval`` - seconds between periodic status updates (``None``:
      none); ``status_memory`` - how many recent texts are not repeated;
      ``status_text(activity)`` - the text for an :class:`Activity`.
    * ``routing`` - stage 1 on (default) or off (every request is a task);
      ``routing_timeout`` - seconds stage 1 may take (``None``: only the
      model's own timeouts); reaching it fails the request.
    * ``finish_on_artifact`` - a model turn that only writes artifacts ends
      the loop (no further model call); off: the model is called again.
    * ``artifact_media_type`` - the media type of streamed artifact parts.
    * ``tool_results`` - how a tool result carrying both text and structured
      data reaches the model: ``"structured"`` (default: the data as JSON),
      ``"text"`` or ``"both"`` (see :meth:`~a2a_models.tools.ToolResult.as_text`).
    * ``tool_result_limit`` - the most characters of one tool result (or tool
      failure) the model is given (``None``: no limit): a longer one is cut to
      its start, followed by a note telling the model how much was left out.
      A provider refuses a request past its context window, which would fail
      the task as the model's error when the tool's output is to blame. The
      tool's after-hooks and adapters still see the whole result.
    * ``tools_resolver(skill)`` - replaces the toolbox selection: the tools of a
      skill (used by workspaces for their tool policies).
    """

    def __init__(
        self,
        model: Model,
        skills: Iterable[LLMSkill | SkillDefinition],
        *,
        prompt: str = "",
        toolbox: Toolbox | None = None,
        context: Any = None,
        max_steps: int = 8,
        status_interval: float | None = 2.0,
        status_memory: int = 8,
        status_text: Callable[[Activity], str | None] | None = None,
        routing: bool = True,
        routing_timeout: float | None = None,
        finish_on_artifact: bool = True,
        artifact_media_type: str | None = None,
        tool_results: ResultForm = "structured",
        tool_result_limit: int | None = DEFAULT_TOOL_RESULT_LIMIT,
        tools_resolver: Callable[[LLMSkill], Sequence[Tool]] | None = None,
    ) -> None:
        self.model = model
        self.skills: dict[str, LLMSkill] = {}
        for item in skills:
            skill = _skill(item)
            if skill.id in self.skills:
                raise ValueError(f"two skills have the id {skill.id!r}")
            self.skills[skill.id] = skill
        if not self.skills:
            raise ValueError("an LLM agent needs at least one skill")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, not {max_steps!r}")
        if status_interval is not None and not 0 < status_interval < math.inf:  # NaN too
            raise ValueError(
                f"status_interval must be a positive number (or None), not {status_interval!r}"
            )
        self.prompt = prompt
        self.toolbox = toolbox
        self._context = context
        self.max_steps = max_steps
        self.status_interval = status_interval
        self.status_memory = max(1, status_memory)
        self.status_text: Callable[[Activity], str | None] = status_text or default_status_text
        self.routing = routing
        if routing_timeout is not None and (
            isinstance(routing_timeout, bool)
            or not isinstance(routing_timeout, int | float)
            or not 0 < routing_timeout < math.inf
        ):
            raise ValueError(
                f"routing_timeout must be a positive number (or None), not {routing_timeout!r}"
            )
        self.routing_timeout = routing_timeout
        self.finish_on_artifact = finish_on_artifact
        self.artifact_media_type = artifact_media_type
        if tool_results not in RESULT_FORMS:
            raise ValueError(
                f"tool_results must be one of {', '.join(RESULT_FORMS)}, not {tool_results!r}"
            )
        self.tool_results: ResultForm = tool_results
        if tool_result_limit is not None and (
            isinstance(tool_result_limit, bool)
            or not isinstance(tool_result_limit, int)
            or tool_result_limit < 1
        ):
            raise ValueError(
                "tool_result_limit must be a positive number of characters (or None), "
                f"not {tool_result_limit!r}"
            )
        self.tool_result_limit = tool_result_limit
        self.tools_resolver = tools_resolver
        self._pumps: dict[str, set[asyncio.Task[Any]]] = {}

    def __repr__(self) -> str:
        return f"LLMAgent(model={self.model!r}, skills={list(self.skills)})"

    # ---------------------------------------------------------------- configuration

    @property
    def custom_context(self) -> Any:
        """The custom context handed to every tool."""
        if self._context is not None:
            return self._context
        return self.toolbox.context if self.toolbox is not None else None

    def tools_for(self, skill_id: str) -> tuple[Tool, ...]:
        """The tools the model gets for ``skill_id`` (names unique, none reserved)."""
        skill = self.skills[skill_id]
        if self.tools_resolver is not None:
            tools = tuple(check_unique(self.tools_resolver(skill)).values())
        elif self.toolbox is not None:
            tools = self.toolbox.for_skill(skill.definition)
        else:
            tools = tuple(check_unique(skill.definition.tools).values())
        for tool in tools:
            if tool.name in RESERVED_TOOL_NAMES:
                raise ToolNameError(
                    f"skill {skill_id!r}: the tool name {tool.name!r} ({tool.source}) is "
                    "reserved by the LLM agent"
                )
        return tools

    def system_prompt(self, skill_id: str) -> str:
        """The system prompt of ``skill_id``."""
        skill = self.skills[skill_id]
        return skill_system_prompt(self.prompt, skill.definition, skill.prompt)

    def model_for(self, skill_id: str) -> Model:
        return self.skills[skill_id].model or self.model

    async def aclose(self) -> None:
        """Close the models (the agent's and the skills' own)."""
        seen: set[int] = set()
        for model in (self.model, *(s.model for s in self.skills.values())):
            if model is not None and id(model) not in seen:
                seen.add(id(model))
                await model.aclose()

    # ---------------------------------------------------------------- cancellation

    def _register(self, task_id: str, task: asyncio.Task[Any]) -> None:
        self._pumps.setdefault(task_id, set()).add(task)

    def _unregister(self, task_id: str, task: asyncio.Task[Any]) -> None:
        tasks = self._pumps.get(task_id)
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                del self._pumps[task_id]

    async def cancel(self, context: RequestContext) -> None:
        """Abort the model stream (or tool) of ``context.task_id`` at once."""
        for task in list(self._pumps.get(context.task_id, ())):
            task.cancel()

    # ---------------------------------------------------------------- execution

    async def execute(self, context: RequestContext) -> AsyncGenerator[AgentEvent, None]:
        try:
            if context.task is not None:
                skill_id = self._continued_skill(context.task)
                async with contextlib.aclosing(self._run_task(context, skill_id)) as events:
                    async for event in events:
                        yield event
                return
            requested = self._requested_skill(context)
            if requested is None and self.routing:
                limit = asyncio.timeout(self.routing_timeout)
                try:
                    async with limit:
                        routed = await self._route(context)
                except ModelError as exc:
                    yield context.fail(f"The model failed: {exc}")
                    return
                except TimeoutError:
                    if not limit.expired():
                        raise
                    yield context.fail(
                        f"Choosing a skill exceeded the time limit of {self.routing_timeout:g} s."
                    )
                    return
                if isinstance(routed, Message):
                    yield routed
                    return
                requested = routed
            chosen = requested if requested is not None else next(iter(self.skills))
            async with contextlib.aclosing(self._run_task(context, chosen)) as events:
                async for event in events:
                    yield event
        finally:
            for task in list(self._pumps.pop(context.task_id, ())):
                task.cancel()

    def _requested_skill(self, context: RequestContext) -> str | None:
        for metadata in (context.message.metadata, context.metadata):
            if not metadata:
                continue
            for key in SKILL_REQUEST_KEYS:
                value = metadata.get(key)
                if isinstance(value, str) and value in self.skills:
                    return value
        return None

    def _continued_skill(self, task: Task) -> str:
        for message in reversed(task.history):
            value = (message.metadata or {}).get(SKILL_METADATA_KEY)
            if isinstance(value, str) and value in self.skills:
                return value
        return next(iter(self.skills))

    async def _route(self, context: RequestContext) -> Message | str:
        """Stage 1: a direct reply, or the id of the skill to run as a task."""
        definitions = [s.definition for s in self.skills.values()]
        tool = ToolSpec(
            START_TASK_TOOL,
            "Start a task that fulfils the request with one of the agent's skills.",
            {
                "type": "object",
                "properties": {
                    "skill": {
                        "type": "string",
                        "enum": list(self.skills),
                        "description": "the id of the skill to use",
                    },
                    "summary": {"type": "string", "description": "the task in one line"},
                },
                "required": ["skill"],
            },
        )
        request = ModelRequest(
            (
                SystemMessage(routing_system_prompt(self.prompt, definitions)),
                UserMessage(_user_text(context.message)),
            ),
            tools=(tool,),
            tool_choice="auto",
        )
        response = await self.model.complete(request)
        for call in response.tool_calls:
            if call.name == START_TASK_TOOL:
                chosen = call.arguments.get("skill")
                if isinstance(chosen, str) and chosen in self.skills:
                    return chosen
                return next(iter(self.skills))
        if response.finish.reason == "error":
            raise _RoutingError(response.finish.message or "the model ended its answer abnormally")
        text = response.text.strip()
        if not text:
            return next(iter(self.skills))
        return context.reply(text, metadata={KIND_METADATA_KEY: "answer"})

    async def _run_task(
        self, context: RequestContext, skill_id: str
    ) -> AsyncGenerator[AgentEvent, None]:
        skill = self.skills[skill_id]
        skill_input = _skill_input(context)
        if skill.definition.handler is not None:
            async for event in self._run_handler(context, skill, skill_input):
                yield event
            return
        try:
            tools = self.tools_for(skill_id)
        except Exception as exc:
            yield context.fail(f"The skill {skill_id!r} cannot run: {exc}")
            return
        messages: list[ChatMessage] = [SystemMessage(self.system_prompt(skill_id))]
        messages.extend(_conversation(context))
        run = TaskRun(
            self,
            context,
            skill,
            tools=tools,
            model=self.model_for(skill_id),
            messages=messages,
            skill_input=skill_input,
        )
        async with contextlib.aclosing(run.run()) as events:
            async for event in events:
                yield event

    async def _run_handler(
        self, context: RequestContext, skill: LLMSkill, skill_input: JSONObject
    ) -> AsyncGenerator[AgentEvent, None]:
        yield context.working()
        try:
            tools = self.toolbox.for_skill(skill.definition) if self.toolbox else ()
            continued = context.task is not None
            result = await skill.definition.run(
                skill_input,
                custom=self.custom_context,
                tools=tools,
                task=context.task,
                message=context.message if continued else None,
            )
        except Exception as exc:
            log.warning("the handler of skill %s failed", skill.id, exc_info=True)
            yield context.fail(f"The skill {skill.id!r} failed: {exc}")
            return
        if isinstance(result, Message):
            reply = context.agent_message(*result.parts, metadata=result.metadata)
            yield context.status(TaskState.COMPLETED, message=reply)
            return
        for artifact in result.artifacts:
            yield context.artifact(
                artifact.parts,
                name=artifact.name,
                description=artifact.description,
                last_chunk=True,
            )
        state = result.status.state
        if not (state.is_terminal or state.is_interrupted):
            state = TaskState.COMPLETED
        status = result.status.message
        message = None
        if status is not None:
            # Marked with the skill, so that a continuation of the task comes back here.
            marked = {**(status.metadata or {}), SKILL_METADATA_KEY: skill.id}
            message = context.agent_message(*status.parts, metadata=marked)
        yield context.status(state, message=message)

    # ---------------------------------------------------------------- outside A2A

    async def fulfil(
        self,
        skill_id: str,
        skill_input: JSONObject | None = None,
        *,
        text: str | None = None,
        task: Task | None = None,
        message: Message | None = None,
    ) -> Task | Message:
        """Run ``skill_id`` outside an A2A server (e.g. as an MCP tool) and return the
        final Task (or the skill handler's Message). Routing is skipped.

        The input reaches the model once, in the form the skill declares: a
        skill that declares no inputs gets ``text`` (or ``skill_input["text"]``,
        what its MCP tool takes) as the user message; any other skill gets
        ``skill_input`` as one data part (and ``text``, if given, before it).

        ``task`` continues a task this method returned waiting for input
        (``input-required`` or ``auth-required``) with the caller's ``message``,
        the last message of ``task``'s history (``skill_input`` and ``text``
        are then not used: the task's first message holds the input).
        """
        if skill_id not in self.skills:
            raise KeyError(f"no skill {skill_id!r}")
        if task is not None:
            if message is None:
                raise ValueError("continuing a task needs the caller's message")
            return await self._fulfilled(
                RequestContext(
                    message=message,
                    task_id=task.id,
                    context_id=task.context_id or task.id,
                    task=task,
                    metadata={"skillId": skill_id},
                ),
                task,
            )
        definition = self.skills[skill_id].definition
        if (
            text is None
            and skill_input is not None
            and not declares_inputs(definition.input_schema)
            and set(skill_input) == {"text"}
            and isinstance(skill_input["text"], str)
        ):
            text, skill_input = skill_input["text"], None
        parts: list[Any] = []
        if text is not None:
            parts.append(text)
        if skill_input or text is None:
            parts.append(DataPart(skill_input or {}))
        message = Message.user(*parts, metadata={"skillId": skill_id})
        task_id, context_id = new_id(), new_id()
        context = RequestContext(
            message=message,
            task_id=task_id,
            context_id=context_id,
            metadata={"skillId": skill_id},
        )
        return await self._fulfilled(context, None)

    async def _fulfilled(self, context: RequestContext, task: Task | None) -> Task | Message:
        """Run ``context``'s turn to its end (or its next interruption)."""
        async with contextlib.aclosing(self.execute(context)) as events:
            async for event in events:
                if isinstance(event, Message) and task is None:
                    return event
                if task is None:
                    task = Task.submitted(
                        context.message, task_id=context.task_id, context_id=context.context_id
                    )
                task = apply_event(task, event)
                if task.status.state.is_terminal or task.status.state.is_interrupted:
                    break
        if task is None:
            raise RuntimeError(f"the turn of task {context.task_id!r} produced no result")
        return task

    def send_request(self, text: str, **metadata: Any) -> SendMessageRequest:
        """A request for this agent (``metadata`` e.g. ``skillId=...``)."""
        return SendMessageRequest(message=Message.user(text, metadata=metadata or None))


class _RoutingError(ModelError):
    """The routing answer ended abnormally (content filter, a stream cut short)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, provider="model")

    def __str__(self) -> str:
        # As the tool loop says it ("The model failed: <why>"), without a made-up
        # provider name ("model: ...").
        return self.message


def _user_text(message: Message) -> str:
    return render_parts(message.parts) or "(empty message)"


def _skill_input(context: RequestContext) -> JSONObject:
    """The skill's input: the first data part holding an object, else ``{"text": ...}``."""
    source = context.message
    if context.task is not None:
        users = [m for m in context.task.history if m.role is Role.USER]
        if users:
            source = users[0]
    for part in source.parts:
        if isinstance(part, DataPart) and isinstance(part.data, dict):
            return dict(part.data)
    return {"text": source.text}


def _conversation(context: RequestContext) -> list[ChatMessage]:
    """The user/assistant turns of this task (progress updates left out)."""
    if context.task is None:
        return [UserMessage(_user_text(context.message))]
    out: list[ChatMessage] = []
    for message in context.task.history:
        if message.role is Role.USER:
            text = _user_text(message)
            if out and isinstance(out[-1], UserMessage):
                out[-1] = UserMessage(out[-1].text + "\n\n" + text)
            else:
                out.append(UserMessage(text))
            continue
        kind = (message.metadata or {}).get(KIND_METADATA_KEY)
        if kind in ("progress", "workflow"):
            continue
        text = render_parts(message.parts)
        if not text:
            continue
        if out and isinstance(out[-1], AssistantMessage):
            out[-1] = AssistantMessage(out[-1].text + "\n\n" + text)
        elif out:
            out.append(AssistantMessage(text))
    if not out or not isinstance(out[-1], UserMessage):
        out.append(UserMessage(_user_text(context.message)))
    return out
