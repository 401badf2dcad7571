"""Hooks around a tool call: :func:`with_hooks`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from ..models import JSONObject, Message, Task
from ._tool import Tool, ToolContext, ToolOutput, ToolResult, as_output

__all__ = ["AfterHook", "BeforeHook", "with_hooks"]

#: ``before(arguments, context)``, sync or async. Return ``None`` to go on
#: unchanged, a new arguments dict to go on with it, or a Task or Message to
#: answer without calling the tool (the later hooks do not run either).
BeforeHook: TypeAlias = Callable[[JSONObject, ToolContext], Any]
#: ``after(arguments, result, context)``, sync or async. Return ``None`` to keep
#: the result, or a replacement (a ToolResult, Task, Message, or a plain value).
AfterHook: TypeAlias = Callable[[JSONObject, ToolOutput, ToolContext], Any]


def _as_list(hooks: Any) -> list[Any]:
    if hooks is None:
        return []
    if callable(hooks):
        return [hooks]
    return list(hooks)


async def _resolve(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def with_hooks(
    tool: Tool,
    *,
    before: BeforeHook | Sequence[BeforeHook] | None = None,
    after: AfterHook | Sequence[AfterHook] | None = None,
) -> Tool:
    """``tool`` with hooks around its calls; works the same on local and remote tools.

    The hooked tool keeps the name, description and schema of ``tool``. A
    call validates the arguments first (the hooks see valid arguments), runs
    the ``before`` hooks in order (each receives the arguments the previous
    one returned; a Task or Message short-circuits: neither the tool nor the
    ``after`` hooks run), calls ``tool`` (which validates the possibly
    modified arguments again), then runs the ``after`` hooks in order, each
    receiving the previous result. Hooking a hooked tool nests: the outer
    ``before`` hooks run first and its ``after`` hooks last.
    """
    befores: list[BeforeHook] = _as_list(before)
    afters: list[AfterHook] = _as_list(after)
    for each in (*befores, *afters):
        if not callable(each):
            raise TypeError(f"hooks must be callables, got {each!r}")
    if not befores and not afters:
        return tool

    async def run(arguments: JSONObject, context: ToolContext) -> ToolOutput:
        args = arguments
        for hook in befores:
            answer = await _resolve(hook(args, context))
            if answer is None:
                continue
            if isinstance(answer, Task | Message):
                return answer
            if isinstance(answer, ToolResult):
                # A before-hook may also answer with a ready result.
                return answer
            if not isinstance(answer, dict):
                raise TypeError(
                    f"before-hook {getattr(hook, '__qualname__', hook)!r} of tool {tool.name!r} "
                    f"returned {type(answer).__name__}: return None, an arguments dict, "
                    "a Task or a Message"
                )
            args = answer
        result = await tool.call(args, context)
        for after_hook in afters:
            replaced = await _resolve(after_hook(args, result, context))
            if replaced is not None:
                result = as_output(replaced)
        return result

    return tool.evolve(fn=run)
