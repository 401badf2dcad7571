"""Skills an LLM fulfils: :class:`LLMSkill`, :class:`Guardrails` and the system prompts.

The prompt of a skill is built from the agent's prompt, the skill's card
metadata (name, description, tags, examples) and the skill's own prompt.
Tools are never listed in a prompt: they reach the model through the
provider's tool API, with their names, descriptions and schemas.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ...tools import SkillDefinition
from ._model import Model

__all__ = [
    "ARTIFACT_TOOL",
    "ASK_USER_TOOL",
    "RESERVED_TOOL_NAMES",
    "START_TASK_TOOL",
    "Guardrails",
    "LLMSkill",
    "routing_system_prompt",
    "skill_system_prompt",
]

#: The tool through which the model delivers an artifact (streamed as it writes).
ARTIFACT_TOOL = "write_artifact"
#: The tool through which the model asks the user for input (the task becomes input-required).
ASK_USER_TOOL = "ask_user"
#: The routing tool: the model calls it to start a task instead of answering directly.
START_TASK_TOOL = "start_task"
#: Names no skill tool may take.
RESERVED_TOOL_NAMES = frozenset({ARTIFACT_TOOL, ASK_USER_TOOL, START_TASK_TOOL})


def _limit(inst: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    # Not 0 < NaN: a NaN limit would be no limit at all, silently.
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"guardrails: {attribute.name} must be a positive number, not {value!r}")
    if attribute.name != "timeout" and not isinstance(value, int):
        raise ValueError(f"guardrails: {attribute.name} must be an integer, not {value!r}")


@attrs.frozen(slots=True, kw_only=True)
class Guardrails:
    """Limits on one task: ``max_steps`` (model calls of the tool loop),
    ``max_tool_calls`` (tool executions) and ``timeout`` (seconds for the whole
    task). ``None`` means no limit (``max_steps`` then takes the agent's default).
    Hitting a limit fails the task with a status message that says which."""

    max_steps: int | None = attrs.field(default=None, validator=_limit)
    max_tool_calls: int | None = attrs.field(default=None, validator=_limit)
    timeout: float | None = attrs.field(default=None, validator=_limit)

    FIELDS = ("max_steps", "max_tool_calls", "timeout")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> Guardrails:
        if not data:
            return cls()
        unknown = sorted(set(data) - set(cls.FIELDS))
        if unknown:
            raise ValueError(f"unknown guardrail(s): {', '.join(unknown)}")
        return cls(**{k: data[k] for k in cls.FIELDS if k in data})

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.FIELDS if getattr(self, k) is not None}

    def combine(self, other: Guardrails, policy: str) -> Guardrails:
        """Both sets of limits: ``tightest`` keeps the smaller of two limits (a limit
        set on one side only applies), ``loosest`` the larger (a side without a
        limit lifts it)."""
        values: dict[str, Any] = {}
        for key in self.FIELDS:
            a, b = getattr(self, key), getattr(other, key)
            if policy == "tightest":
                present = [v for v in (a, b) if v is not None]
                values[key] = min(present) if present else None
            elif policy == "loosest":
                values[key] = None if a is None or b is None else max(a, b)
            else:
                raise ValueError(f"unknown guardrails policy {policy!r} (tightest or loosest)")
        return Guardrails(**values)


@attrs.frozen(slots=True, kw_only=True, eq=False)
class LLMSkill:
    """A skill the :class:`~a2a_models.adapters.llm.LLMAgent` offers.

    ``definition`` is the skill's :class:`~a2a_models.tools.SkillDefinition`
    (card metadata, tools, ``allowed_tools`` over the agent's toolbox, and an
    optional handler: a skill with a handler is run by it, not by the model).
    ``prompt`` is the skill's own instructions (the body of ``skills/<id>.md``),
    ``model`` an optional model of its own (per-skill model settings), and
    ``guardrails`` its limits.
    """

    definition: SkillDefinition
    prompt: str = ""
    model: Model | None = None
    guardrails: Guardrails = attrs.field(factory=Guardrails)

    @property
    def id(self) -> str:
        return self.definition.id

    @property
    def name(self) -> str:
        return self.definition.name


def _section(title: str, body: str) -> str:
    return f"## {title}\n\n{body.strip()}"


def skill_system_prompt(agent_prompt: str, skill: SkillDefinition, skill_prompt: str = "") -> str:
    """The system prompt for fulfilling ``skill``: the agent's prompt, the skill's name,
    description, tags and examples, the skill's own prompt, and how to finish."""
    parts: list[str] = []
    if agent_prompt.strip():
        parts.append(agent_prompt.strip())
    about = [skill.description.strip()]
    if skill.tags:
        about.append("Tags: " + ", ".join(skill.tags))
    if skill.examples:
        about.append("Example requests:\n" + "\n".join(f"- {e}" for e in skill.examples))
    parts.append(_section(f"Skill: {skill.name} ({skill.id})", "\n\n".join(about)))
    if skill_prompt.strip():
        parts.append(skill_prompt.strip())
    parts.append(
        _section(
            "How to work",
            "Fulfil the request using the tools you are given when they help. Deliver the "
            "final result as an artifact through the artifact tool: its content is what the "
            "user receives. If you cannot go on without information only the user can give, "
            "ask through the ask-user tool instead of guessing.",
        )
    )
    if skill.output_schema is not None:
        schema = json.dumps(skill.output_schema, ensure_ascii=False, sort_keys=True)
        parts.append(
            _section(
                "Result format",
                "The artifact's content must be one JSON object (no prose, no code fence) "
                f"matching this JSON Schema:\n{schema}",
            )
        )
    return "\n\n".join(parts)


def routing_system_prompt(agent_prompt: str, skills: Sequence[SkillDefinition]) -> str:
    """The system prompt of the routing stage: answer directly, or start a task with a skill."""
    parts: list[str] = []
    if agent_prompt.strip():
        parts.append(agent_prompt.strip())
    listing = "\n".join(f"- {s.id}: {s.name} - {s.description.strip()}" for s in skills)
    parts.append(
        _section(
            "Routing",
            "If the message is simple - a greeting, a question about you, anything you can "
            "answer well right away - answer it directly with text. If it needs work, call "
            f"the {START_TASK_TOOL} tool with the skill that fits best; the work then runs "
            f"as a task.\n\nSkills:\n{listing}",
        )
    )
    return "\n\n".join(parts)


def remaining(deadline: float | None, now: float) -> float:
    return math.inf if deadline is None else deadline - now
