"""Skill definitions: A2A skill metadata plus its implementation, and the card built from them."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import attrs

from .._state import TaskState
from ..models import (
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    DataPart,
    JSONObject,
    JSONValue,
    Message,
    Part,
    ProtocolBinding,
    SecurityRequirement,
    Task,
    TaskStatus,
    TextPart,
    new_id,
    utc_now,
)
from ._errors import SkillDefinitionError, ToolInputError
from ._names import MAX_TOOL_NAME_LENGTH, TOOL_NAME
from ._schema import EMPTY_OBJECT_SCHEMA, ArgumentValidator, check_object_schema, check_schema
from ._tool import Tool, ToolContext, ToolOutput

__all__ = [
    "SkillContext",
    "SkillDefinition",
    "SkillHandler",
    "build_card",
    "card_with_skills",
    "define_skill",
    "error_task",
    "success_task",
]

#: ``await handler(input, context)`` -> a Task or a Message. Handlers report
#: operational problems with :func:`error_task` instead of raising.
SkillHandler: TypeAlias = Callable[[JSONObject, "SkillContext"], Awaitable[Task | Message]]


class SkillContext:
    """What a skill handler gets besides its input (never a transport's own context).

    ``custom`` is the agent's custom context; ``tools`` are the tools this
    skill may use (its own plus the agent's tools its ``allowed_tools`` lets
    through), callable with :meth:`call_tool`, which hands each tool a
    :class:`ToolContext` carrying this skill's id and input.

    When the caller continues a task the skill left waiting (``input-required``
    or ``auth-required``), ``task`` is that task (its history ending with the
    caller's reply), ``message`` the reply, and ``input`` the input of the call
    that started it; both are ``None`` on a first call.
    """

    __slots__ = ("custom", "input", "message", "skill", "task", "tools")

    def __init__(
        self,
        skill: SkillDefinition,
        input: JSONObject,
        *,
        custom: Any = None,
        tools: Iterable[Tool] = (),
        task: Task | None = None,
        message: Message | None = None,
    ) -> None:
        self.skill = skill
        self.input = input
        self.custom = custom
        self.tools: Mapping[str, Tool] = {t.name: t for t in tools}
        self.task = task
        self.message = message

    def __repr__(self) -> str:
        return f"SkillContext(skill={self.skill.id!r}, tools={sorted(self.tools)})"

    @property
    def tool_context(self) -> ToolContext:
        """The context handed to the tools this skill calls."""
        return ToolContext(skill_id=self.skill.id, skill_input=self.input, custom=self.custom)

    async def call_tool(self, name: str, arguments: JSONObject | None = None) -> ToolOutput:
        """Call one of :attr:`tools` (``KeyError`` if the skill may not use ``name``)."""
        tool = self.tools.get(name)
        if tool is None:
            raise KeyError(f"skill {self.skill.id!r} has no tool named {name!r}")
        return await tool.call(arguments, self.tool_context)


def _tuple(value: Iterable[Any] | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _optional_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else _tuple(value)


_ID = TOOL_NAME


@attrs.frozen(slots=True, kw_only=True, eq=False)
class SkillDefinition:
    """An A2A skill (its :class:`~a2a_models.AgentSkill` metadata) and its implementation.

    * ``id`` - stable identifier; also the MCP tool name, so it must be a
      valid tool name (a letter, then letters, digits, ``_``, ``-``; 64 at most).
    * ``name``, ``description``, ``tags``, ``examples`` - the card metadata;
      ``tags`` and ``examples`` must not be empty.
    * ``input_schema`` - a JSON Schema for the skill's input, which must be an
      object schema (``"type": "object"``); ``output_schema`` is optional.
    * ``handler`` - ``async (input, context) -> Task | Message``; or, for a
      skill an LLM fulfils, no handler but ``tools`` (its own tools) and/or
      ``allowed_tools`` (names or wildcards of the agent's tools it may use;
      ``None`` means all of them).
    * ``metadata`` - free-form settings for whatever runs the skill.

    Every problem raises :class:`SkillDefinitionError` naming the skill and
    the field. Build one with :func:`define_skill`.
    """

    id: str
    name: str
    description: str
    tags: tuple[str, ...] = attrs.field(converter=_tuple)
    examples: tuple[str, ...] = attrs.field(converter=_tuple)
    input_schema: JSONObject = attrs.field(factory=lambda: dict(EMPTY_OBJECT_SCHEMA))
    output_schema: JSONObject | None = None
    input_modes: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    output_modes: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    handler: SkillHandler | None = None
    tools: tuple[Tool, ...] = attrs.field(default=(), converter=_tuple)
    allowed_tools: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    security_requirements: tuple[SecurityRequirement, ...] = attrs.field(
        default=(), converter=_tuple
    )
    metadata: JSONObject | None = None
    _validator: ArgumentValidator = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        sid = self.id if isinstance(self.id, str) else repr(self.id)

        def fail(field: str, problem: str) -> None:
            raise SkillDefinitionError(sid, field, problem)

        if not isinstance(self.id, str) or not self.id:
            fail("id", "must be a non-empty string")
        if not _ID.fullmatch(self.id) or len(self.id) > MAX_TOOL_NAME_LENGTH:
            fail(
                "id",
                "must start with a letter and use only ASCII letters, digits, '_' and '-' "
                f"({MAX_TOOL_NAME_LENGTH} characters at most): it is the MCP tool name",
            )
        for field in ("name", "description"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value.strip():
                fail(field, "must be a non-empty string")
        for field in ("tags", "examples"):
            values = getattr(self, field)
            if not values:
                fail(field, "must not be empty")
            for i, item in enumerate(values):
                if not isinstance(item, str) or not item.strip():
                    fail(field, f"item {i} must be a non-empty string, got {item!r}")
        for field in ("input_modes", "output_modes"):
            for i, item in enumerate(getattr(self, field)):
                if not isinstance(item, str) or not item:
                    fail(field, f"item {i} must be a media type string, got {item!r}")
        problem = check_object_schema(self.input_schema)
        if problem is not None:
            fail("input_schema", problem)
        if self.output_schema is not None:
            problem = check_schema(self.output_schema)
            if problem is not None:
                fail("output_schema", problem)
        if self.handler is not None and not callable(self.handler):
            fail("handler", f"must be an async callable, got {type(self.handler).__name__}")
        for i, tool in enumerate(self.tools):
            if not isinstance(tool, Tool):
                fail("tools", f"item {i} must be a Tool, got {type(tool).__name__}")
        if self.allowed_tools is not None:
            for i, item in enumerate(self.allowed_tools):
                if not isinstance(item, str) or not item:
                    fail("allowed_tools", f"item {i} must be a tool name or pattern, got {item!r}")
        if self.handler is None and not self.tools and not self.allowed_tools:
            fail("handler", "a skill needs a handler, or tools for an LLM to fulfil it with")
        for i, req in enumerate(self.security_requirements):
            if not isinstance(req, SecurityRequirement):
                fail("security_requirements", f"item {i} must be a SecurityRequirement")
        if self.metadata is not None and not isinstance(self.metadata, dict):
            fail("metadata", "must be a dict")
        object.__setattr__(self, "_validator", ArgumentValidator(self.input_schema))

    @property
    def agent_skill(self) -> AgentSkill:
        """The A2A :class:`~a2a_models.AgentSkill` (the card entry: no handler, no tools)."""
        return AgentSkill(
            id=self.id,
            name=self.name,
            description=self.description,
            tags=self.tags,
            examples=self.examples,
            input_modes=self.input_modes,
            output_modes=self.output_modes,
            security_requirements=self.security_requirements,
        )

    def problems(self, arguments: Any) -> list[str]:
        """What is wrong with ``arguments`` as this skill's input (empty when valid)."""
        return self._validator.problems(arguments)

    def validate_input(self, arguments: Any) -> None:
        """Raise :class:`ToolInputError` unless ``arguments`` match ``input_schema``."""
        problems = self._validator.problems(arguments)
        if problems:
            raise ToolInputError(self.id, problems, kind="skill")

    def evolve(self, **changes: Any) -> SkillDefinition:
        """A copy with ``changes`` (validated again)."""
        return attrs.evolve(self, **changes)

    async def run(
        self,
        arguments: JSONObject | None = None,
        *,
        custom: Any = None,
        tools: Iterable[Tool] = (),
        task: Task | None = None,
        message: Message | None = None,
    ) -> Task | Message:
        """Validate ``arguments`` and run the handler (``task`` and ``message``: a
        continued task and the caller's reply, see :class:`SkillContext`).

        Raises :class:`ToolInputError` for invalid input,
        :class:`NotImplementedError` for a skill without a handler and
        :class:`TypeError` when the handler returns something else than a
        Task or a Message; whatever the handler raises propagates.
        """
        args: JSONObject = {} if arguments is None else arguments
        self.validate_input(args)
        if self.handler is None:
            raise NotImplementedError(
                f"skill {self.id!r} has no handler: an LLM orchestrator fulfils it with its tools"
            )
        context = SkillContext(self, args, custom=custom, tools=tools, task=task, message=message)
        result = await self.handler(args, context)
        if not isinstance(result, Task | Message):
            raise TypeError(
                f"the handler of skill {self.id!r} returned {type(result).__name__}, "
                "expected a Task or a Message"
            )
        return result


def _humanize(skill_id: str) -> str:
    words = re.split(r"[_\-]+", skill_id)
    return " ".join(w for w in words if w).capitalize() or skill_id


def define_skill(
    id: str,
    *,
    description: str,
    tags: Sequence[str],
    examples: Sequence[str],
    name: str | None = None,
    input_schema: JSONObject | None = None,
    output_schema: JSONObject | None = None,
    input_modes: Sequence[str] = (),
    output_modes: Sequence[str] = (),
    handler: SkillHandler | None = None,
    tools: Sequence[Tool] = (),
    allowed_tools: Sequence[str] | None = None,
    security_requirements: Sequence[SecurityRequirement] = (),
    metadata: JSONObject | None = None,
) -> SkillDefinition:
    """A validated :class:`SkillDefinition` (``name`` defaults to the id, humanised;
    ``input_schema`` to an object with no properties)."""
    return SkillDefinition(
        id=id,
        name=name if name is not None else (_humanize(id) if isinstance(id, str) else id),
        description=description,
        tags=tags,
        examples=examples,
        input_schema=dict(EMPTY_OBJECT_SCHEMA) if input_schema is None else input_schema,
        output_schema=output_schema,
        input_modes=input_modes,
        output_modes=output_modes,
        handler=handler,
        tools=tools,
        allowed_tools=allowed_tools,
        security_requirements=security_requirements,
        metadata=metadata,
    )


# ----------------------------------------------------------------------------- results


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()


def _content(parts: Sequence[Part | str], data: JSONValue) -> list[Part]:
    out: list[Part] = [TextPart(p) if isinstance(p, str) else p for p in parts]
    for i, part in enumerate(out):
        if not isinstance(part, Part):
            raise TypeError(f"content item {i}: expected a Part or a string, got {part!r}")
    if data is not _UNSET:
        out.append(DataPart(data))
    return out


def success_task(
    *content: Part | str,
    data: JSONValue = _UNSET,
    message: str | None = None,
    artifact_name: str | None = None,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: JSONObject | None = None,
) -> Task:
    """A completed Task whose artifact holds ``content`` (strings become text parts)
    and ``data`` (a data part), with an optional status ``message``.

    >>> success_task("4", data={"sum": 4}).state.name
    'COMPLETED'
    """
    tid = task_id or new_id()
    cid = context_id or new_id()
    parts = _content(content, data)
    artifacts = (Artifact(parts=parts, name=artifact_name),) if parts else ()
    status_message = (
        Message.agent(message, task_id=tid, context_id=cid) if message is not None else None
    )
    return Task(
        id=tid,
        context_id=cid,
        status=TaskStatus(state=TaskState.COMPLETED, message=status_message, timestamp=utc_now()),
        artifacts=artifacts,
        metadata=metadata,
    )


_ERROR_STATES = (TaskState.FAILED, TaskState.REJECTED)


def error_task(
    reason: str,
    *,
    state: TaskState = TaskState.FAILED,
    data: JSONValue = _UNSET,
    task_id: str | None = None,
    context_id: str | None = None,
    metadata: JSONObject | None = None,
) -> Task:
    """A failed (or, with ``state=TaskState.REJECTED``, rejected) Task whose status
    message says ``reason`` (plus a data part with ``data`` when given).

    >>> error_task("the city is unknown").status.message.text
    'the city is unknown'
    """
    if state not in _ERROR_STATES:
        raise ValueError(f"error_task state must be FAILED or REJECTED, got {state.name}")
    if not isinstance(reason, str) or not reason:
        raise ValueError("error_task needs a non-empty reason")
    tid = task_id or new_id()
    cid = context_id or new_id()
    parts: list[Part] = [TextPart(reason)]
    if data is not _UNSET:
        parts.append(DataPart(data))
    return Task(
        id=tid,
        context_id=cid,
        status=TaskStatus(
            state=state,
            message=Message.agent(*parts, task_id=tid, context_id=cid),
            timestamp=utc_now(),
        ),
        metadata=metadata,
    )


# ----------------------------------------------------------------------------- the card


def _agent_skills(skills: Iterable[SkillDefinition | AgentSkill]) -> tuple[AgentSkill, ...]:
    out: list[AgentSkill] = []
    seen: set[str] = set()
    for skill in skills:
        entry = skill.agent_skill if isinstance(skill, SkillDefinition) else skill
        if not isinstance(entry, AgentSkill):
            raise TypeError(f"expected a SkillDefinition or an AgentSkill, got {skill!r}")
        if entry.id in seen:
            raise SkillDefinitionError(entry.id, "id", "two skills have this id")
        seen.add(entry.id)
        out.append(entry)
    return tuple(out)


def _validated(card: AgentCard) -> AgentCard:
    from .. import codec
    from ..schema import validate_wire

    validate_wire(codec.to_wire(card, "1.0"), AgentCard)
    return card


def card_with_skills(card: AgentCard, skills: Iterable[SkillDefinition | AgentSkill]) -> AgentCard:
    """``card`` with its skills replaced by ``skills``, validated against the A2A schema."""
    return _validated(attrs.evolve(card, skills=_agent_skills(skills)))


def build_card(
    skills: Iterable[SkillDefinition | AgentSkill],
    *,
    name: str,
    description: str,
    version: str,
    url: str | None = None,
    supported_interfaces: Sequence[AgentInterface] = (),
    **fields: Any,
) -> AgentCard:
    """The agent's :class:`~a2a_models.AgentCard` assembled from skill definitions.

    Handlers and tools never appear in it. ``url`` is shorthand for one
    JSON-RPC interface; ``fields`` are the card's other attributes
    (``capabilities``, ``provider``, ``default_input_modes``, ...). The card
    is validated against the A2A 1.0 JSON Schema
    (:class:`~a2a_models.errors.DecodeError` if it does not conform);
    duplicate skill ids raise :class:`SkillDefinitionError`.
    """
    interfaces = list(supported_interfaces)
    if url is not None:
        interfaces.insert(0, AgentInterface(url=url, protocol_binding=ProtocolBinding.JSONRPC))
    if not interfaces:
        raise ValueError("build_card needs a url or supported_interfaces")
    card = AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=interfaces,
        skills=_agent_skills(skills),
        **fields,
    )
    return _validated(card)
