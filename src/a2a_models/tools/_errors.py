"""The exceptions of :mod:`a2a_models.tools`."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import A2AError

__all__ = [
    "SkillDefinitionError",
    "ToolError",
    "ToolExecutionError",
    "ToolInputError",
    "ToolNameError",
]


class ToolError(A2AError):
    """Base class of the errors raised when defining or calling a tool."""


class ToolInputError(ToolError, ValueError):
    """The arguments of a call do not match the tool's input schema.

    ``problems`` lists every violation as ``"$.path: message"``; the message
    names the tool and the problems, so it can be shown to a caller (or a
    model) as it is.
    """

    def __init__(self, tool: str, problems: Sequence[str], *, kind: str = "tool") -> None:
        self.tool = tool
        self.problems = tuple(problems)
        super().__init__(f"invalid arguments for {kind} {tool!r}: " + "; ".join(self.problems))


class ToolExecutionError(ToolError):
    """A tool could not be run: its server is gone, the connection failed, it timed out.

    Raised for infrastructure failures, never for a tool that ran and reported
    an error (that is a :class:`~a2a_models.tools.ToolResult` with ``is_error``).
    """

    def __init__(self, tool: str, message: str) -> None:
        self.tool = tool
        super().__init__(message)


class ToolNameError(ToolError, ValueError):
    """A tool name is invalid, or two tools end up with the same name.

    The message names the source(s) of the offending tool(s).
    """


class SkillDefinitionError(A2AError, ValueError):
    """A skill definition is invalid; the message names the skill and the field."""

    def __init__(self, skill: str, field: str, problem: str) -> None:
        self.skill = skill
        self.field = field
        self.problem = problem
        super().__init__(f"skill {skill!r}: {field}: {problem}")
