"""Tools and skills: the uniform definitions agents, MCP and LLM orchestration share.

No MCP, no LLM SDK, no web framework here: everything builds on the models
and :mod:`jsonschema`.

Tools
-----
A :class:`Tool` is a name (a valid LLM function name), a description, a
JSON-Schema input and an async implementation ``fn(arguments, context)``.
:meth:`Tool.call` validates the arguments with :mod:`jsonschema` first
(:class:`ToolInputError`, the implementation is not called) and returns a
:data:`ToolOutput`: a :class:`ToolResult` (parts, data, ``is_error``), or an
A2A Task or Message. Every tool gets a :class:`ToolContext` with the current
skill's id and input and the agent's custom context.

* :func:`function_tool` - a tool from a Python function; the schema comes from
  the type hints (:func:`schema_from_type`) or is given explicitly.
* :func:`with_hooks` - ``before``/``after`` hooks around any tool, local or
  remote; a before-hook may rewrite the arguments or answer with a Task or
  Message (short-circuit); hooks compose in order.
* :class:`Toolbox` - local tools plus :class:`ToolProvider` s (the MCP client
  hub), adapters by exact name or wildcard (``"*"``, ``"github__*"``) that
  replace the tool under the same name, per-skill ``allowed_tools``
  filtering, and the custom context.
* :func:`canonical_name`, :func:`namespaced_name`, :func:`check_tool_name` -
  the naming rules (``<server>__<tool>`` in snake_case for MCP tools).

Skills
------
A :class:`SkillDefinition` (:func:`define_skill`) is an A2A skill's card
metadata plus its implementation: a handler ``async (input, SkillContext) ->
Task | Message``, or tools for an LLM to fulfil it with. Definitions are
validated when built (:class:`SkillDefinitionError` names the skill and the
field: empty tags or examples, a non-object input schema, ...).
:func:`success_task` and :func:`error_task` build the usual results;
:func:`build_card` and :func:`card_with_skills` assemble the agent card (no
handlers in it) and validate it against the A2A schema.

>>> from a2a_models.tools import define_skill, success_task
>>> async def add(args, ctx):
...     return success_task(data={"sum": args["a"] + args["b"]})
>>> skill = define_skill(
...     "add", description="Adds two numbers", tags=["math"], examples=["add 2 and 3"],
...     input_schema={"type": "object", "properties": {"a": {"type": "number"},
...                   "b": {"type": "number"}}, "required": ["a", "b"]},
...     handler=add)
>>> skill.agent_skill.tags
('math',)
"""

from ._errors import (
    SkillDefinitionError,
    ToolError,
    ToolExecutionError,
    ToolInputError,
    ToolNameError,
)
from ._hooks import AfterHook, BeforeHook, with_hooks
from ._names import (
    MAX_TOOL_NAME_LENGTH,
    NAMESPACE_SEPARATOR,
    NAMESPACED_TOOL_NAME,
    TOOL_NAME,
    canonical_name,
    check_tool_name,
    namespaced_name,
)
from ._schema import (
    EMPTY_OBJECT_SCHEMA,
    TEXT_INPUT_SCHEMA,
    ArgumentValidator,
    check_object_schema,
    check_schema,
    declares_inputs,
    schema_from_function,
    schema_from_type,
)
from ._skills import (
    SkillContext,
    SkillDefinition,
    SkillHandler,
    build_card,
    card_with_skills,
    define_skill,
    error_task,
    success_task,
)
from ._tool import (
    RESULT_FORMS,
    ResultForm,
    Tool,
    ToolContext,
    ToolFunction,
    ToolOutput,
    ToolResult,
    as_output,
    function_tool,
)
from ._toolbox import Adapter, Toolbox, ToolProvider, adapt_tools, check_unique, select_tools

__all__ = [
    "RESULT_FORMS",
    "ResultForm",
    "EMPTY_OBJECT_SCHEMA",
    "MAX_TOOL_NAME_LENGTH",
    "NAMESPACED_TOOL_NAME",
    "NAMESPACE_SEPARATOR",
    "TOOL_NAME",
    "Adapter",
    "AfterHook",
    "ArgumentValidator",
    "BeforeHook",
    "SkillContext",
    "SkillDefinition",
    "SkillDefinitionError",
    "SkillHandler",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolExecutionError",
    "ToolFunction",
    "ToolInputError",
    "ToolNameError",
    "ToolOutput",
    "ToolProvider",
    "ToolResult",
    "Toolbox",
    "adapt_tools",
    "as_output",
    "build_card",
    "canonical_name",
    "card_with_skills",
    "TEXT_INPUT_SCHEMA",
    "check_object_schema",
    "check_schema",
    "declares_inputs",
    "check_tool_name",
    "check_unique",
    "define_skill",
    "error_task",
    "function_tool",
    "namespaced_name",
    "schema_from_function",
    "schema_from_type",
    "select_tools",
    "success_task",
    "with_hooks",
]
