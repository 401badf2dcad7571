"""Reading Claude-compatible ``mcp.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from a2a_models.adapters.mcp import (
    HTTPServerConfig,
    MCPConfigError,
    StdioServerConfig,
    load_mcp_config,
    parse_mcp_config,
    resolve_env,
)

DOC = {
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github", "$env:GH_ARG"],
            "env": {"GITHUB_TOKEN": "$env:GH_TOKEN", "GREETING": "hi ${WHO}, ${NOPE:-fine}"},
        },
        "search": {
            "transport": {
                "type": "http",
                "url": "$env:SEARCH_URL",
                "headers": {"Authorization": "Bearer $env:SEARCH_AUTH"},
            }
        },
        "flat": {"type": "http", "url": "https://flat.example/mcp"},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse", "headers": {"K": "${WHO}"}},
        "typed": {"type": "stdio", "command": "srv", "cwd": "/tmp", "autoApprove": ["x"]},
    }
}
ENV = {
    "GH_ARG": "--verbose",
    "GH_TOKEN": "ghp_123",
    "SEARCH_URL": "https://search.example/mcp",
    "SEARCH_AUTH": "abc",
    "WHO": "ana",
}


def test_parses_stdio_and_http_servers_resolving_env_references() -> None:
    servers = parse_mcp_config(DOC, env=ENV)
    assert list(servers) == ["github", "search", "flat", "legacy", "typed"]
    assert servers["github"] == StdioServerConfig(
        name="github",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-github", "--verbose"),
        env={"GITHUB_TOKEN": "ghp_123", "GREETING": "hi ana, fine"},
    )
    assert servers["search"] == HTTPServerConfig(
        name="search",
        url="https://search.example/mcp",
        headers={"Authorization": "Bearer abc"},
    )
    assert servers["flat"] == HTTPServerConfig(name="flat", url="https://flat.example/mcp")
    assert servers["legacy"] == HTTPServerConfig(
        name="legacy", url="http://127.0.0.1:3001/sse", headers={"K": "ana"}, transport="sse"
    )
    typed = servers["typed"]
    assert isinstance(typed, StdioServerConfig) and typed.cwd == "/tmp" and typed.args == ()


def test_every_missing_variable_is_named_in_one_error() -> None:
    with pytest.raises(MCPConfigError) as info:
        parse_mcp_config(DOC, env={"GH_ARG": "x"})
    message = str(info.value)
    assert info.value.missing == ("GH_TOKEN", "WHO", "SEARCH_URL", "SEARCH_AUTH")
    assert "missing environment variables" in message
    for name in info.value.missing:
        assert name in message
    assert "mcpServers.github.env.GITHUB_TOKEN" in message
    assert "mcpServers.search.transport.headers.Authorization" in message
    assert "WHO (at mcpServers.github.env.GREETING, mcpServers.legacy.headers.K)" in message


def test_resolve_env() -> None:
    assert resolve_env("$env:A", {"A": "1"}) == "1"
    assert resolve_env("Bearer $env:A!", {"A": "1"}) == "Bearer 1!"
    assert resolve_env("${A}/${B}", {"A": "x", "B": "y"}) == "x/y"
    assert resolve_env("${A:-dflt} ${B:-}", {"A": ""}) == "dflt "
    assert resolve_env("no refs: $5, ${, $env:", {}) == "no refs: $5, ${, $env:"
    with pytest.raises(MCPConfigError, match=r"missing environment variable B\Z"):
        resolve_env("$env:B", {})
    with pytest.raises(MCPConfigError, match="missing environment variables B, C"):
        resolve_env("${B}${C}", {})


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ([], "expected a JSON object with 'mcpServers'"),
        ({"servers": {}}, "expected 'mcpServers' to be an object"),
        ({"mcpServers": {"x": 3}}, "mcpServers.x: expected an object"),
        ({"mcpServers": {"x": {}}}, "mcpServers.x: expected 'command'"),
        ({"mcpServers": {"x": {"command": ""}}}, "mcpServers.x.command: must not be empty"),
        ({"mcpServers": {"x": {"command": 1}}}, "mcpServers.x.command: expected a string"),
        (
            {"mcpServers": {"x": {"command": "a", "args": "b"}}},
            "mcpServers.x.args: expected a list",
        ),
        ({"mcpServers": {"x": {"command": "a", "env": {"K": 1}}}}, "mcpServers.x.env.K: expected"),
        ({"mcpServers": {"x": {"transport": {"type": "http"}}}}, "an HTTP server needs a 'url'"),
        (
            {"mcpServers": {"x": {"transport": {"type": "websocket", "url": "u"}}}},
            "unsupported transport 'websocket' (use 'stdio', 'http' or 'sse')",
        ),
        ({"mcpServers": {"x": {"type": "http", "url": "ftp://x"}}}, "expected an http(s) URL"),
    ],
)
def test_malformed_documents_name_the_server_and_field(doc: object, expected: str) -> None:
    with pytest.raises(MCPConfigError) as info:
        parse_mcp_config(doc, env={})
    assert expected in str(info.value)
    assert str(info.value).startswith("mcp.json")


def test_load_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    assert list(load_mcp_config(path, env=ENV)) == ["github", "search", "flat", "legacy", "typed"]
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(MCPConfigError, match=r"mcp\.json: invalid JSON at line 1"):
        load_mcp_config(path, env=ENV)
    with pytest.raises(MCPConfigError, match="cannot read"):
        load_mcp_config(tmp_path / "missing.json")
    path.write_bytes(b"\xff{}")  # not UTF-8: the file is named
    with pytest.raises(MCPConfigError, match=r"mcp\.json: not UTF-8 text \(byte 0x"):
        load_mcp_config(path, env=ENV)
