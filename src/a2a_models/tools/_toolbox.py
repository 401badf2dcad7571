"""An agent's tools in one place: :class:`Toolbox` (local tools, providers, adapters, context)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ..models import JSONObject
from ._errors import ToolNameError
from ._tool import Tool, ToolContext, ToolOutput

__all__ = ["Adapter", "ToolProvider", "Toolbox", "adapt_tools", "check_unique", "select_tools"]

#: Turns a tool into another (typically ``lambda t: with_hooks(t, ...)``).
Adapter: TypeAlias = Callable[[Tool], Tool]


@runtime_checkable
class ToolProvider(Protocol):
    """Anything that offers a changing set of tools (e.g. the MCP client hub).

    ``tools`` is read on every use, so a provider that refreshes its list
    (an MCP server announcing a change) is seen at once.
    """

    @property
    def tools(self) -> Sequence[Tool]: ...


def _matches(name: str, pattern: str) -> bool:
    return name == pattern or fnmatch.fnmatchcase(name, pattern)


def check_unique(tools: Iterable[Tool]) -> dict[str, Tool]:
    """The tools by name; raises :class:`ToolNameError` naming both sources on a clash."""
    by_name: dict[str, Tool] = {}
    for tool in tools:
        other = by_name.get(tool.name)
        if other is not None and other is not tool:
            raise ToolNameError(
                f"two tools are named {tool.name!r}: {other.source} and {tool.source}"
            )
        by_name[tool.name] = tool
    return by_name


def adapt_tools(tools: Iterable[Tool], adapters: Iterable[tuple[str, Adapter]]) -> tuple[Tool, ...]:
    """Apply ``adapters`` (``(pattern, adapter)`` pairs, in order) to ``tools``.

    A pattern is an exact tool name or a shell-style wildcard (``*`` matches
    every tool, ``github__*`` every tool of the ``github`` server). Every
    matching adapter applies, in the order given; the adapted tool replaces
    the original under the original's name (an adapter that renames is
    overruled), so the unadapted tool is no longer exposed.
    """
    pairs = list(adapters)
    out: list[Tool] = []
    for tool in tools:
        adapted = tool
        for pattern, adapter in pairs:
            if _matches(tool.name, pattern):
                adapted = adapter(adapted)
                if not isinstance(adapted, Tool):
                    raise TypeError(
                        f"the adapter for {pattern!r} returned {type(adapted).__name__} "
                        f"for tool {tool.name!r}, not a Tool"
                    )
        if adapted.name != tool.name:
            adapted = adapted.evolve(name=tool.name)
        out.append(adapted)
    return tuple(out)


def select_tools(
    tools: Iterable[Tool], allowed: Sequence[str] | None, *, strict: bool = False
) -> tuple[Tool, ...]:
    """The tools an ``allowed`` list lets through (``None``: all of them).

    Each entry is an exact name or a shell-style wildcard (``github__*``).
    With ``strict``, an entry that matches nothing raises :class:`KeyError`.
    """
    pool = tuple(tools)
    if allowed is None:
        return pool
    if isinstance(allowed, str):
        raise TypeError("allowed must be a list of names or patterns, not a string")
    if strict:
        unknown = [p for p in allowed if not any(_matches(t.name, p) for t in pool)]
        if unknown:
            raise KeyError(f"allowed tools match no tool: {', '.join(map(repr, unknown))}")
    return tuple(t for t in pool if any(_matches(t.name, p) for p in allowed))


class Toolbox:
    """The tools of an agent: local tools, tool providers, adapters and the custom context.

    >>> box = Toolbox([lookup], providers=[hub], adapters={"*": audit})  # doctest: +SKIP
    >>> await box.call("github__create_issue", {...}, skill_id="triage")  # doctest: +SKIP

    * :attr:`tools` - every tool, adapted (see :func:`adapt_tools`); names are
      unique (a clash raises :class:`ToolNameError` naming both sources).
      Providers are read on each access, so refreshed lists show at once.
    * :meth:`select` / :meth:`for_skill` - per-skill ``allowed_tools`` filtering.
    * :attr:`context` - the agent's custom context handed to every tool in its
      :class:`ToolContext`: a fixed value, or ``context_source()`` read at
      each call (e.g. the value an MCP context provider built at start-up).
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        providers: Iterable[ToolProvider] = (),
        adapters: Mapping[str, Adapter] | Iterable[tuple[str, Adapter]] = (),
        context: Any = None,
        context_source: Callable[[], Any] | None = None,
    ) -> None:
        self._local: list[Tool] = []
        self._providers: list[ToolProvider] = list(providers)
        self._adapters: list[tuple[str, Adapter]] = []
        self._context = context
        self._context_source = context_source
        self._cache: tuple[tuple[Any, ...], tuple[Tool, ...]] | None = None
        self.add(*tools)
        pairs = adapters.items() if isinstance(adapters, Mapping) else adapters
        for pattern, adapter in pairs:
            self.adapt(pattern, adapter)

    # ----------------------------------------------------------------- building

    def add(self, *tools: Tool) -> Toolbox:
        """Add local tools; returns the toolbox."""
        for tool in tools:
            if not isinstance(tool, Tool):
                raise TypeError(f"expected a Tool, got {type(tool).__name__}")
            self._local.append(tool)
        self._cache = None
        return self

    def add_provider(self, provider: ToolProvider) -> Toolbox:
        """Add a tool provider; returns the toolbox."""
        self._providers.append(provider)
        self._cache = None
        return self

    def adapt(self, pattern: str, adapter: Adapter) -> Toolbox:
        """Attach ``adapter`` to the tools matching ``pattern`` (exact name or wildcard)."""
        if not isinstance(pattern, str) or not pattern:
            raise ValueError("an adapter pattern must be a non-empty string")
        if not callable(adapter):
            raise TypeError(f"the adapter for {pattern!r} is not callable")
        self._adapters.append((pattern, adapter))
        self._cache = None
        return self

    # ----------------------------------------------------------------- reading

    @property
    def context(self) -> Any:
        """The agent's custom context."""
        if self._context_source is not None:
            return self._context_source()
        return self._context

    @context.setter
    def context(self, value: Any) -> None:
        self._context = value
        self._context_source = None

    def _raw(self) -> tuple[tuple[Any, ...], list[Tool]]:
        snapshot: list[Sequence[Tool]] = [tuple(self._local)]
        snapshot.extend(p.tools for p in self._providers)
        raw = [t for group in snapshot for t in group]
        return tuple(snapshot), raw

    @property
    def tools(self) -> tuple[Tool, ...]:
        """Every tool, adapted, in order (local tools first, then each provider's)."""
        key, raw = self._raw()
        cached = self._cache
        if (
            cached is not None
            and len(cached[0]) == len(key)
            and all(a is b or a == b for a, b in zip(cached[0], key, strict=True))
        ):
            return cached[1]
        check_unique(raw)
        adapted = adapt_tools(raw, self._adapters)
        self._cache = (key, adapted)
        return adapted

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in order."""
        return tuple(t.name for t in self.tools)

    def get(self, name: str) -> Tool:
        """The (adapted) tool called ``name``; :class:`KeyError` if there is none."""
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(f"no tool named {name!r}")

    def __contains__(self, name: object) -> bool:
        return any(t.name == name for t in self.tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __repr__(self) -> str:
        return f"Toolbox({', '.join(self.names)})"

    def select(self, allowed: Sequence[str] | None, *, strict: bool = False) -> tuple[Tool, ...]:
        """The tools ``allowed`` lets through (see :func:`select_tools`)."""
        return select_tools(self.tools, allowed, strict=strict)

    def for_skill(self, skill: Any) -> tuple[Tool, ...]:
        """The tools of a :class:`~a2a_models.tools.SkillDefinition`: its own ``tools``
        (adapted like the others) plus the toolbox's tools its ``allowed_tools``
        lets through (all of them when it is ``None``). Names must be unique."""
        own = adapt_tools(getattr(skill, "tools", ()), self._adapters)
        shared = self.select(getattr(skill, "allowed_tools", None))
        return tuple(check_unique((*own, *shared)).values())

    # ----------------------------------------------------------------- calling

    def context_for(
        self, *, skill_id: str | None = None, skill_input: JSONObject | None = None
    ) -> ToolContext:
        """The :class:`ToolContext` for a call made while fulfilling ``skill_id``."""
        return ToolContext(
            skill_id=skill_id,
            skill_input=skill_input if skill_input is not None else {},
            custom=self.context,
        )

    async def call(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        skill_id: str | None = None,
        skill_input: JSONObject | None = None,
    ) -> ToolOutput:
        """Call the tool ``name`` (validated first; see :meth:`Tool.call`)."""
        tool = self.get(name)
        return await tool.call(
            arguments, self.context_for(skill_id=skill_id, skill_input=skill_input)
        )
