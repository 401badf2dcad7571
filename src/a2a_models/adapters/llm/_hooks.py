"""Tool hooks and the context provider, declared in a workspace by ``module:object``.

In ``agent.md``::

    hooks:
      - tools: ["github__*"]          # tool-name patterns (default: every tool)
        before: hooks.py:audit        # one entry or a list, run in order
        after: [hooks.py:redact]
      - tools: "*"
        adapter: mypkg.tools:retrying # any Tool -> Tool adapter
    contextProvider: hooks.py:make_context

Each declaration becomes Toolbox adapters exactly as from Python:
``before``/``after`` wrap the matching tools with
:func:`~a2a_models.tools.with_hooks`, ``adapter`` is applied as a
:class:`~a2a_models.tools.Toolbox` adapter; declarations apply in order.
``contextProvider`` is the :class:`~a2a_models.adapters.mcp.MCPToolHub`
context provider (``async def provider(connections) -> context``; it runs
once at start-up, with no connections when the workspace has no MCP server).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from ...tools import Adapter, Tool, with_hooks
from ._entries import EntryError, import_object

__all__ = ["HookDeclaration", "entry_problems", "load_context_provider", "load_hook_adapters"]


@attrs.frozen(slots=True, kw_only=True)
class HookDeclaration:
    """One ``hooks`` item of a workspace: entries, not yet imported."""

    tools: tuple[str, ...] = ("*",)
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    adapter: str | None = None

    def entries(self) -> list[tuple[str, str]]:
        """``(field, entry)`` pairs, for messages and checks."""
        out = [("before", e) for e in self.before] + [("after", e) for e in self.after]
        if self.adapter is not None:
            out.append(("adapter", self.adapter))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "tools": list(self.tools),
            "before": list(self.before),
            "after": list(self.after),
            "adapter": self.adapter,
        }


def _callable(entry: str, base_dir: Path | None, where: str) -> Callable[..., Any]:
    try:
        obj = import_object(entry, base_dir=base_dir)
    except EntryError as exc:
        raise EntryError(f"{where}: {exc}") from exc.__cause__
    if not callable(obj):
        raise EntryError(f"{where}: {entry!r} is {type(obj).__name__}, not a callable")
    return obj  # type: ignore[no-any-return]


def load_hook_adapters(
    declarations: Sequence[HookDeclaration], *, base_dir: str | Path | None = None
) -> list[tuple[str, Adapter]]:
    """The ``(pattern, adapter)`` pairs of ``declarations`` (imported now; raises
    :class:`EntryError` naming ``hooks[i].field`` when an entry does not import)."""
    root = Path(base_dir) if base_dir is not None else None
    pairs: list[tuple[str, Adapter]] = []
    for i, declaration in enumerate(declarations):
        befores = [
            _callable(e, root, f"hooks[{i}].before[{j}]") for j, e in enumerate(declaration.before)
        ]
        afters = [
            _callable(e, root, f"hooks[{i}].after[{j}]") for j, e in enumerate(declaration.after)
        ]
        adapters: list[Adapter] = []
        if befores or afters:

            def hooked(tool: Tool, _b: Any = tuple(befores), _a: Any = tuple(afters)) -> Tool:
                return with_hooks(tool, before=list(_b), after=list(_a))

            adapters.append(hooked)
        if declaration.adapter is not None:
            adapters.append(_callable(declaration.adapter, root, f"hooks[{i}].adapter"))
        for pattern in declaration.tools:
            pairs.extend((pattern, adapter) for adapter in adapters)
    return pairs


def load_context_provider(entry: str, *, base_dir: str | Path | None = None) -> Any:
    """The context provider an entry names (an async function of the connections)."""
    root = Path(base_dir) if base_dir is not None else None
    provider = _callable(entry, root, "contextProvider")
    if not inspect.iscoroutinefunction(provider) and not inspect.iscoroutinefunction(
        getattr(provider, "__call__", None)  # noqa: B004 - an async callable object
    ):
        raise EntryError(
            f"contextProvider: {entry!r} must be an async function "
            "(async def provider(connections) -> context)"
        )
    return provider


def entry_problems(
    hooks: Sequence[HookDeclaration],
    context_provider: str | None,
    *,
    base_dir: str | Path | None = None,
) -> list[str]:
    """What fails to import among the hooks and the context provider, one line per
    entry (``agent.md: hooks[i].field: ...``); the provider is imported, not run."""
    problems: list[str] = []
    for i, hook in enumerate(hooks):
        for field, entry in hook.entries():
            if field == "adapter":
                single = HookDeclaration(adapter=entry)
            elif field == "before":
                single = HookDeclaration(before=(entry,))
            else:
                single = HookDeclaration(after=(entry,))
            try:
                load_hook_adapters([single], base_dir=base_dir)
            except EntryError as exc:
                problem = str(exc).split(": ", 1)[1]
                problems.append(f"agent.md: hooks[{i}].{field}: {problem}")
    if context_provider is not None:
        try:
            load_context_provider(context_provider, base_dir=base_dir)
        except EntryError as exc:
            problems.append(f"agent.md: {exc}")
    return problems
