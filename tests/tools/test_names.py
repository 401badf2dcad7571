"""Tool naming: canonical snake_case, namespaced names, LLM-valid names."""

from __future__ import annotations

import pytest

from a2a_models.tools import (
    NAMESPACED_TOOL_NAME,
    ToolNameError,
    canonical_name,
    check_tool_name,
    namespaced_name,
)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("createIssue", "create_issue"),
        ("CreateIssue", "create_issue"),
        ("get-HTTPStatus.v2", "get_http_status_v2"),
        ("HTTPServer", "http_server"),
        ("getV2Data", "get_v2_data"),
        ("files/read file", "files_read_file"),
        ("ns:tool", "ns_tool"),
        ("__already__snake__", "already_snake"),
        ("a--b..c", "a_b_c"),
        ("simple", "simple"),
    ],
)
def test_canonical_name(raw: str, canonical: str) -> None:
    assert canonical_name(raw) == canonical


def test_namespaced_names_match_the_llm_pattern() -> None:
    name = namespaced_name("GitHub-Server", "createIssue")
    assert name == "git_hub_server__create_issue"
    assert NAMESPACED_TOOL_NAME.fullmatch(name)
    assert namespaced_name("fs", "read.file") == "fs__read_file"


@pytest.mark.parametrize(
    ("namespace", "tool", "fragment"),
    [
        ("srv", "3d.render", "the tool name '3d.render' has no valid snake_case form"),
        ("srv", "café", "the tool name 'café'"),
        ("srv", "!!!", "the tool name '!!!'"),
        ("9lives", "x", "the namespace name '9lives'"),
        ("srv", "x" * 70, "longer than 64 characters"),
    ],
)
def test_invalid_names_name_their_source(namespace: str, tool: str, fragment: str) -> None:
    with pytest.raises(ToolNameError) as info:
        namespaced_name(namespace, tool, source="MCP server 'srv', tool 'x'")
    assert str(info.value).startswith("MCP server 'srv', tool 'x': ")
    assert fragment in str(info.value)


def test_check_tool_name() -> None:
    assert check_tool_name("lookup-city_2") == "lookup-city_2"
    for bad in ("", "2fast", "has space", "dot.ted", "x" * 65):
        with pytest.raises(ToolNameError, match="invalid tool name"):
            check_tool_name(bad, source="function m.f")
