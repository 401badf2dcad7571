"""The curated public surface: unique names, one exception hierarchy."""

from __future__ import annotations

import importlib
import inspect

import pytest

from a2a_models.errors import A2AError

#: Public modules whose ``__all__`` is the package's API (extras included).
PUBLIC = [
    "a2a_models",
    "a2a_models.errors",
    "a2a_models.models",
    "a2a_models.codec",
    "a2a_models.protocol",
    "a2a_models.server",
    "a2a_models.server.paging",
    "a2a_models.client",
    "a2a_models.stores",
    "a2a_models.tools",
    "a2a_models.testing",
    "a2a_models.conformance",
    "a2a_models.adapters.http",
    "a2a_models.adapters.mcp",
    "a2a_models.adapters.llm",
]


def _exports() -> dict[str, list[tuple[str, object]]]:
    names: dict[str, list[tuple[str, object]]] = {}
    for module_name in PUBLIC:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # pragma: no cover - an extra is missing
            pytest.skip(f"{module_name}: {exc}")
        for name in getattr(module, "__all__", ()):
            names.setdefault(name, []).append((module_name, getattr(module, name)))
    return names


def test_a_public_name_means_one_thing() -> None:
    clashes = {
        name: [m for m, _ in found]
        for name, found in _exports().items()
        if len({id(obj) for _, obj in found}) > 1
    }
    assert not clashes, clashes


def test_the_llm_tool_message_keeps_its_old_name_with_a_warning() -> None:
    llm = importlib.import_module("a2a_models.adapters.llm")
    tools = importlib.import_module("a2a_models.tools")
    with pytest.warns(DeprecationWarning, match="ToolMessage"):
        old = llm.ToolResult
    assert old is llm.ToolMessage and old is not tools.ToolResult
    assert "ToolResult" not in llm.__all__


def test_every_public_exception_is_an_a2a_error() -> None:
    outside = sorted(
        f"{found[0][0]}.{name}"
        for name, found in _exports().items()
        for _, obj in found[:1]
        if inspect.isclass(obj) and issubclass(obj, BaseException) and not issubclass(obj, A2AError)
    )
    assert not outside, outside


def test_the_adapter_surfaces_are_curated() -> None:
    llm = importlib.import_module("a2a_models.adapters.llm")
    tools = importlib.import_module("a2a_models.tools")
    assert len(llm.__all__) < 60 and len(tools.__all__) < 35
    # What is no longer in __all__ still imports, for existing code.
    assert llm.read_dotenv is not None and tools.check_schema is not None
