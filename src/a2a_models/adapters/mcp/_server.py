"""The agent as an MCP server: each skill is an MCP tool."""

from __future__ import annotations

import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from datetime import date
from typing import Any
from xml.sax.saxutils import escape

import attrs
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..._state import TaskState
from ...models import AgentCard, DataPart, JSONObject, Message, Task
from ...tools import (
    TEXT_INPUT_SCHEMA,
    ArgumentValidator,
    SkillContext,
    SkillDefinition,
    SkillDefinitionError,
    Toolbox,
    declares_inputs,
)
from ..http import MCPGuard
from ._convert import CONTINUATION_KEYS, INTERRUPTION_SCHEMA, error_result, to_call_result

__all__ = ["MCPSkillServer", "SkillRunner", "skill_input_schema", "skill_tool_description"]

log = logging.getLogger("a2a_models.adapters.mcp")

#: Fulfils a skill that has no handler (an LLM orchestrator, typically).
SkillRunner = Callable[[SkillDefinition, JSONObject, SkillContext], Awaitable[Task | Message]]


def skill_tool_description(skill: SkillDefinition) -> str:
    """The MCP tool description of ``skill``: its description, then its tags and
    examples as ``<tags><tag>..</tag></tags><examples><example>..</example></examples>``."""
    tags = "".join(f"<tag>{escape(t)}</tag>" for t in skill.tags)
    examples = "".join(f"<example>{escape(e)}</example>" for e in skill.examples)
    return f"{skill.description}\n\n<tags>{tags}</tags><examples>{examples}</examples>"


def skill_input_schema(skill: SkillDefinition) -> JSONObject:
    """The MCP ``inputSchema`` of ``skill``: its own input schema, or
    :data:`~a2a_models.tools.TEXT_INPUT_SCHEMA` (``{"text": string}``, required)
    when it declares no inputs, so that a host has somewhere to put the request."""
    if declares_inputs(skill.input_schema):
        return skill.input_schema
    return dict(TEXT_INPUT_SCHEMA)


#: How many tasks an :class:`MCPSkillServer` remembers (for continuing them) by default.
DEFAULT_REMEMBERED_TASKS = 1000

_CONTINUATION_PROPERTIES: JSONObject = {
    "taskId": {
        "type": "string",
        "description": (
            "Only to continue a task this tool left waiting for an answer "
            "(input-required or auth-required): that task's taskId."
        ),
    },
    "contextId": {
        "type": "string",
        "description": "With taskId: the contextId the waiting task came with.",
    },
}


def _tool_input_schema(skill: SkillDefinition) -> JSONObject:
    """:func:`skill_input_schema` plus the optional ``taskId`` and ``contextId``
    that continue a task waiting for the caller."""
    schema = skill_input_schema(skill)
    properties = schema.get("properties")
    own = properties if isinstance(properties, dict) else {}
    taken = [key for key in CONTINUATION_KEYS if key in own]
    if taken:
        raise SkillDefinitionError(
            skill.id,
            "input_schema",
            f"{' and '.join(map(repr, taken))} are reserved: over MCP they continue a task",
        )
    return {**schema, "properties": {**own, **_CONTINUATION_PROPERTIES}}


def _reply_schema(skill: SkillDefinition, tool_schema: JSONObject) -> JSONObject:
    """What a continuation's arguments must satisfy: the tool's schema, but none of
    a declared input is required (the answer may be part of it); a skill without
    inputs still needs its ``text`` (the answer)."""
    if not declares_inputs(skill.input_schema):
        return tool_schema
    return {k: v for k, v in tool_schema.items() if k != "required"}


def _advertised_output_schema(schema: JSONObject | None) -> JSONObject | None:
    """The tool's ``outputSchema``: the skill's result, or a task waiting for the caller
    (MCP wants every non-error ``structuredContent`` to match the advertised schema)."""
    if schema is None:
        return None
    result = dict(schema)
    outer: JSONObject = {"type": "object"}
    if "$schema" in result:
        outer["$schema"] = result["$schema"]
    if "$id" not in result:
        if "$ref" in json.dumps(result):
            # Its own resource, so that "#/..." references still resolve in it once nested.
            result["$id"] = "urn:a2a-models:skill-output"
        else:
            result.pop("$schema", None)  # only a resource's root may name its dialect
    outer["anyOf"] = [result, INTERRUPTION_SCHEMA]
    return outer


@attrs.define(slots=True)
class _Remembered:
    """A task a skill returned: what continuing it needs while it waits, its state after."""

    skill_id: str
    input: JSONObject
    task: Task | None  # kept while it waits for the caller only
    state: TaskState
    busy: bool = False


def _output_schema(skill: SkillDefinition) -> JSONObject | None:
    schema = skill.output_schema
    if schema is None:
        return None
    if schema.get("type") != "object":
        # MCP output schemas describe an object (structuredContent is one).
        log.warning(
            "skill %r: its output schema is not an object schema; not advertised over MCP",
            skill.id,
        )
        return None
    return schema


class _Endpoint:
    """The ASGI endpoint of the streamable-HTTP transport; a fresh session manager
    per app lifespan (the SDK's manager runs only once), 503 outside it."""

    def __init__(self, factory: Callable[[], StreamableHTTPSessionManager]) -> None:
        self._factory = factory
        self.manager: StreamableHTTPSessionManager | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[StreamableHTTPSessionManager]:
        manager = self._factory()
        async with manager.run():
            self.manager = manager
            try:
                yield manager
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self.manager
        if manager is None:
            response = JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32603, "message": "MCP is not running"},
                },
                status_code=503,
            )
            await response(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)


class MCPSkillServer:
    """An agent's skills as MCP tools, over stdio or streamable HTTP (official ``mcp`` SDK).

    Each :class:`~a2a_models.tools.SkillDefinition` becomes a tool named by
    its id, titled by its name, described by :func:`skill_tool_description`,
    with the input schema of :func:`skill_input_schema` (a skill that declares
    no inputs takes ``{"text": string}``) and, when the skill has an object
    output schema, that schema as ``outputSchema``. A call is validated
    against the input schema first (an error result names the problems; the
    handler is not called), then the handler runs with the arguments and a
    :class:`~a2a_models.tools.SkillContext` (never MCP's request context).
    Its Task or Message comes back as a plain-text item (the artifact text)
    and an embedded ``resource`` item (``application/json``, the A2A 1.0
    JSON, a ``tag:<agent>,<date>:<id>`` URI), with ``structuredContent``
    validated against the ``outputSchema`` (see
    :func:`~a2a_models.adapters.mcp.to_call_result`); an exception becomes
    an error result ``[ErrorName]: message`` and is logged.

    ``name`` (the agent's name) identifies the server and is the tag URI's
    authority (slugged); ``tag_date`` is the tag's date (default: the day of
    each call, UTC). ``toolbox`` gives handlers their tools (filtered by each
    skill's ``allowed_tools``) and the custom context (``context`` overrides
    it). ``runner`` fulfils skills that have no handler.

    Serve with :meth:`run_stdio`, :meth:`streamable_http_app`, or
    :meth:`mount` next to the A2A endpoints in one ASGI app.
    """

    def __init__(
        self,
        skills: Iterable[SkillDefinition],
        *,
        name: str,
        version: str = "",
        description: str | None = None,
        instructions: str | None = None,
        toolbox: Toolbox | None = None,
        context: Any = None,
        runner: SkillRunner | None = None,
        tag_date: date | str | None = None,
        remembered_tasks: int = DEFAULT_REMEMBERED_TASKS,
    ) -> None:
        self.skills: dict[str, SkillDefinition] = {}
        for skill in skills:
            if not isinstance(skill, SkillDefinition):
                raise TypeError(f"expected a SkillDefinition, got {type(skill).__name__}")
            if skill.id in self.skills:
                raise SkillDefinitionError(skill.id, "id", "two skills have this id")
            self.skills[skill.id] = skill
        if not name:
            raise ValueError("the MCP server needs the agent's name")
        self.name = name
        self.toolbox = toolbox
        self.context = context
        self.runner = runner
        self.tag_date = tag_date
        if isinstance(remembered_tasks, bool) or not isinstance(remembered_tasks, int):
            raise TypeError(f"remembered_tasks must be an int, not {remembered_tasks!r}")
        if remembered_tasks < 1:
            raise ValueError(f"remembered_tasks must be at least 1, not {remembered_tasks}")
        self.remembered_tasks = remembered_tasks
        self._tasks: OrderedDict[str, _Remembered] = OrderedDict()
        schemas = {skill.id: _tool_input_schema(skill) for skill in self.skills.values()}
        self._inputs = {sid: ArgumentValidator(schema) for sid, schema in schemas.items()}
        self._replies = {
            skill.id: ArgumentValidator(_reply_schema(skill, schemas[skill.id]))
            for skill in self.skills.values()
        }
        self._outputs = {skill.id: _output_schema(skill) for skill in self.skills.values()}
        self._tools = [
            types.Tool(
                name=skill.id,
                title=skill.name,
                description=skill_tool_description(skill),
                input_schema=self._inputs[skill.id].schema,
                output_schema=_advertised_output_schema(self._outputs[skill.id]),
            )
            for skill in self.skills.values()
        ]
        self.lowlevel: Server[Any] = Server(
            name,
            version=version,
            description=description,
            instructions=instructions,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            get_tool_input_schema=self._input_schema,
        )

    @classmethod
    def from_card(
        cls, card: AgentCard, skills: Iterable[SkillDefinition], **options: Any
    ) -> MCPSkillServer:
        """A server named, versioned and described after ``card``."""
        options.setdefault("description", card.description)
        return cls(skills, name=card.name, version=card.version, **options)

    # ----------------------------------------------------------------- MCP handlers

    @property
    def tools(self) -> list[types.Tool]:
        """The MCP tool definitions (one per skill)."""
        return [tool.model_copy(deep=True) for tool in self._tools]

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        validator = self._inputs.get(name)
        return validator.schema if validator is not None else None

    async def _on_list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def _on_call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in self.skills:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        # MCP's request context stays here: handlers get a SkillContext only.
        return await self.call(params.name, params.arguments)

    async def call(self, name: str, arguments: JSONObject | None = None) -> types.CallToolResult:
        """Run skill ``name`` as an MCP tool call would (validation, handler, result).

        With ``taskId`` (and optionally ``contextId``) among the arguments, the
        call continues that task, which this server returned waiting for the
        caller: the other arguments are the caller's reply (a skill without
        inputs: its ``text``; else a data part), the handler gets the task and
        the reply in its :class:`~a2a_models.tools.SkillContext`. An unknown
        task, or one that does not wait, gives an error result saying so.
        """
        skill = self.skills.get(name)
        if skill is None:
            return error_result(f"[UnknownTool]: no skill named {name!r}")
        args: JSONObject = {} if arguments is None else arguments
        continuing = "taskId" in args
        validator = self._replies[name] if continuing else self._inputs[name]
        problems = validator.problems(args)
        if problems:
            return error_result(f"Invalid arguments for {name!r}: " + "; ".join(problems))
        if not continuing:
            if "contextId" in args:
                return error_result(
                    "[InvalidContinuation]: contextId continues a task; give the task's "
                    "taskId with it (or leave both out to start a new task)"
                )
            return await self._run(skill, args, None, None)
        task_id = args["taskId"]
        record = self._tasks.get(task_id)
        refused = self._refusal(skill, task_id, args.get("contextId"), record)
        if refused is not None:
            return refused
        assert record is not None and record.task is not None  # _refusal checked
        reply = _reply(skill, args, record.task)
        so_far = _with_history(record.task, reply)
        record.busy = True
        try:
            return await self._run(skill, record.input, so_far, reply)
        finally:
            record.busy = False

    def _refusal(
        self, skill: SkillDefinition, task_id: str, context_id: Any, record: _Remembered | None
    ) -> types.CallToolResult | None:
        """Why ``task_id`` cannot be continued through ``skill`` (``None``: it can)."""
        if record is None:
            return error_result(
                f"[UnknownTask]: there is no task {task_id!r} to continue: this server did "
                f"not start it, or no longer remembers it (it keeps its last "
                f"{self.remembered_tasks} tasks)"
            )
        if record.skill_id != skill.id:
            return error_result(
                f"[InvalidContinuation]: task {task_id!r} belongs to the tool "
                f"{record.skill_id!r}; continue it with that tool, not {skill.id!r}"
            )
        if record.busy:
            return error_result(
                f"[TaskNotWaiting]: task {task_id!r} is being continued by another call"
            )
        if record.task is None:
            state = record.state.name.lower().replace("_", "-")
            return error_result(
                f"[TaskNotWaiting]: task {task_id!r} is {state}: only a task waiting for "
                "the caller (input-required or auth-required) can be continued"
            )
        expected = record.task.context_id or record.task.id
        if context_id is not None and context_id != expected:
            return error_result(
                f"[InvalidContinuation]: task {task_id!r} belongs to context {expected!r}, "
                f"not {context_id!r}"
            )
        return None

    async def _run(
        self,
        skill: SkillDefinition,
        args: JSONObject,
        task: Task | None,
        reply: Message | None,
    ) -> types.CallToolResult:
        try:
            custom = self.context
            tools: tuple[Any, ...] = skill.tools
            if self.toolbox is not None:
                tools = self.toolbox.for_skill(skill)
                if custom is None:
                    custom = self.toolbox.context
            context = SkillContext(
                skill, args, custom=custom, tools=tools, task=task, message=reply
            )
            obj = await self._fulfil(skill, args, context)
        except Exception as exc:
            log.exception("MCP call of skill %r failed", skill.id)
            return error_result(f"[{type(exc).__name__}]: {exc}")
        if task is not None:
            obj = _continued(task, obj)
        self._remember(skill.id, args, obj, continued=task)
        return to_call_result(
            obj,
            agent_name=self.name,
            day=self.tag_date,
            output_schema=self._outputs[skill.id],
            answer_in=None if declares_inputs(skill.input_schema) else "text",
        )

    def _remember(
        self, skill_id: str, args: JSONObject, obj: Task | Message, *, continued: Task | None
    ) -> None:
        if isinstance(obj, Message):
            if continued is not None:  # a Message ends the continued task
                self._tasks[continued.id] = _Remembered(skill_id, args, None, TaskState.COMPLETED)
                self._tasks.move_to_end(continued.id)
            return
        waiting = obj.state.is_interrupted
        self._tasks[obj.id] = _Remembered(skill_id, args, obj if waiting else None, obj.state)
        self._tasks.move_to_end(obj.id)
        while len(self._tasks) > self.remembered_tasks:
            self._tasks.popitem(last=False)

    async def _fulfil(
        self, skill: SkillDefinition, args: JSONObject, context: SkillContext
    ) -> Task | Message:
        if skill.handler is not None:
            result = await skill.handler(args, context)
        elif self.runner is not None:
            result = await self.runner(skill, args, context)
        else:
            raise NotImplementedError(f"skill {skill.id!r} has no handler and the server no runner")
        if not isinstance(result, Task | Message):
            raise TypeError(
                f"the handler of skill {skill.id!r} returned {type(result).__name__}, "
                "expected a Task or a Message"
            )
        return result

    # ----------------------------------------------------------------- transports

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin/stdout until it disconnects."""
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await self.lowlevel.run(read, write, self.lowlevel.create_initialization_options())

    def session_manager(
        self,
        *,
        json_response: bool = False,
        stateless: bool = False,
        transport_security: TransportSecuritySettings | None = None,
        **options: Any,
    ) -> StreamableHTTPSessionManager:
        """A new SDK session manager for this server (run it once, in a lifespan).

        ``options`` go to :class:`~mcp.server.streamable_http_manager.StreamableHTTPSessionManager`
        (``session_idle_timeout``, ``max_sessions``, ``event_store``, ...).
        ``transport_security`` enables DNS-rebinding protection (off unless given).
        """
        return StreamableHTTPSessionManager(
            app=self.lowlevel,
            json_response=json_response,
            stateless=stateless,
            security_settings=transport_security,
            **options,
        )

    def _endpoint(self, options: dict[str, Any]) -> _Endpoint:
        return _Endpoint(lambda: self.session_manager(**options))

    def streamable_http_app(
        self, path: str = "/mcp", *, guard: MCPGuard | None = None, **options: Any
    ) -> Starlette:
        """A Starlette app serving MCP over streamable HTTP at ``path``
        (``options``: see :meth:`session_manager`). ``guard`` checks ``Host``,
        ``Origin`` and credentials (default: :class:`MCPGuard()`, loopback-only
        when bound to loopback)."""
        endpoint = self._endpoint(options)

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with endpoint.running():
                yield

        guarded = (guard or MCPGuard()).wrap(endpoint)
        return Starlette(routes=[Route(_path(path), endpoint=guarded)], lifespan=lifespan)

    def mount(
        self, app: Starlette, path: str = "/mcp", *, guard: MCPGuard | None = None, **options: Any
    ) -> None:
        """Serve MCP at ``path`` inside ``app`` (e.g. the A2A app of
        :func:`~a2a_models.adapters.http.create_app`): one process, one port, both
        protocols. The MCP session manager runs inside ``app``'s lifespan.
        Call before the app starts. ``guard`` (default: the A2A app's
        authenticator, ``Host``/``Origin`` loopback-only when bound to loopback)
        protects the endpoint."""
        endpoint = self._endpoint(options)
        if guard is None:
            guard = MCPGuard(authenticator=_app_authenticator(app))
        app.router.routes.insert(0, Route(_path(path), endpoint=guard.wrap(endpoint)))
        inner = app.router.lifespan_context

        @contextlib.asynccontextmanager
        async def lifespan(a: Any) -> AsyncIterator[Any]:
            async with endpoint.running(), inner(a) as state:
                yield state

        app.router.lifespan_context = lifespan


def _reply(skill: SkillDefinition, args: JSONObject, task: Task) -> Message:
    """The caller's reply to ``task``: a skill without inputs takes text, any other
    skill the arguments (the continuation ids left out) as one data part."""
    answer = {k: v for k, v in args.items() if k not in CONTINUATION_KEYS}
    context_id = task.context_id or task.id
    if not declares_inputs(skill.input_schema) and isinstance(answer.get("text"), str):
        return Message.user(answer["text"], task_id=task.id, context_id=context_id)
    return Message.user(DataPart(answer), task_id=task.id, context_id=context_id)


def _with_history(task: Task, reply: Message) -> Task:
    """``task`` as its continuation starts: its history ending with the question
    (the waiting status's message) and the reply."""
    history = list(task.history)
    question = task.status.message
    if question is not None and all(m.message_id != question.message_id for m in history):
        # Messages kept in a task carry its ids.
        history.append(
            attrs.evolve(question, task_id=task.id, context_id=task.context_id or task.id)
        )
    history.append(reply)
    return attrs.evolve(task, history=tuple(history))


def _continued(task: Task, obj: Task | Message) -> Task | Message:
    """A continuation's result as the same task: a handler that built a new Task
    (``success_task(...)``) gets the continued task's ids and history."""
    if isinstance(obj, Message) or obj.id == task.id:
        return obj
    context_id = task.context_id or task.id
    status = obj.status
    if status.message is not None:
        status = attrs.evolve(
            status,
            message=attrs.evolve(status.message, task_id=task.id, context_id=context_id),
        )
    return attrs.evolve(
        obj,
        id=task.id,
        context_id=context_id,
        status=status,
        history=(*task.history, *obj.history),
    )


def _app_authenticator(app: Any) -> Any:
    """The authenticator of an A2A app made by ``create_app`` (``None`` otherwise)."""
    # create_app keeps its Gateway in app.state.a2a_gateway (read, not imported:
    # no private import across the adapters).
    gateway = getattr(getattr(app, "state", None), "a2a_gateway", None)
    return getattr(gateway, "authenticator", None)


def _path(path: str) -> str:
    stripped = path.strip().rstrip("/")
    if not stripped.startswith("/"):
        stripped = "/" + stripped
    return stripped
