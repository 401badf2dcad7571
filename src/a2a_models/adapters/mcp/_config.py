"""``mcp.json``: the Claude-compatible list of MCP servers an agent uses.

::

    {"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "search": {"transport": {"type": "http", "url": "https://search.example/mcp",
                                 "headers": {"Authorization": "Bearer $env:SEARCH_TOKEN"}}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse"}
    }}

A server is a subprocess spoken to over stdio (``command``, ``args``,
``env``, optional ``cwd``), a streamable-HTTP endpoint (``transport:
{type: "http", url, headers}``; Claude Code's flat ``{"type": "http", "url",
"headers"}`` is accepted too) or a legacy HTTP+SSE endpoint (``"type":
"sse"``, same members).

Environment variables are substituted inside every string value (command,
args, env, cwd, url, headers): ``${VAR}``, ``${VAR:-default}`` (the default
when ``VAR`` is unset or empty) and ``$env:VAR`` (the form other hosts
accept), e.g. ``"Bearer ${TOKEN}"``. Every missing variable is reported in
one :class:`MCPConfigError` naming the server and key
(``mcpServers.search.transport.headers.Authorization``); nothing is ever
sent with a reference left in it. Unknown members are ignored.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

import attrs

from ..._textfiles import unreadable
from ...errors import A2AError

__all__ = [
    "HTTPServerConfig",
    "MCPConfigError",
    "MCPServerConfig",
    "StdioServerConfig",
    "load_mcp_config",
    "parse_mcp_config",
    "resolve_env",
]

_ENV_REF = re.compile(
    r"\$env:(?P<ps>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}"
)
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamablehttp"})
_SSE_TYPES = frozenset({"sse"})


class MCPConfigError(A2AError, ValueError):
    """``mcp.json`` is malformed or references missing environment variables.

    The message names the file, the server and the field (and, for missing
    variables, every one of them); ``missing`` lists the missing variable names.
    """

    def __init__(self, message: str, *, missing: tuple[str, ...] = ()) -> None:
        self.missing = missing
        super().__init__(message)


def _str_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _frozen_dict(value: Mapping[str, str] | None) -> dict[str, str]:
    return dict(value or {})


@attrs.frozen(slots=True, kw_only=True)
class StdioServerConfig:
    """A server run as a subprocess, spoken to over stdin/stdout.

    The subprocess gets ``env`` on top of a minimal safe environment (``PATH``,
    ``HOME``, ``USER``, ``SHELL``, ``TERM``, ``LOGNAME``): not the parent's
    whole environment.
    """

    name: str
    command: str
    args: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    env: dict[str, str] = attrs.field(factory=dict, converter=_frozen_dict, hash=False)
    cwd: str | None = None
    #: The command line as the configuration file wrote it (``${VAR}`` references
    #: unexpanded), for messages: an argument like ``--token=${TOKEN}`` stays a reference.
    written: str | None = attrs.field(default=None, eq=False, repr=False)

    def command_line(self) -> str:
        """The command line to show in a message (never with a variable's value in it)."""
        return self.written or shlex.join([self.command, *self.args])


@attrs.frozen(slots=True, kw_only=True)
class HTTPServerConfig:
    """A server reached over HTTP at ``url``, with extra ``headers``: streamable HTTP
    (``transport="http"``) or the legacy HTTP+SSE transport (``transport="sse"``,
    ``url`` being its SSE endpoint)."""

    name: str
    url: str
    headers: dict[str, str] = attrs.field(factory=dict, converter=_frozen_dict, hash=False)
    transport: Literal["http", "sse"] = attrs.field(
        default="http", validator=attrs.validators.in_(("http", "sse"))
    )


MCPServerConfig: TypeAlias = StdioServerConfig | HTTPServerConfig


class _Resolver:
    """Substitutes ``${VAR}``, ``${VAR:-default}`` and ``$env:VAR`` inside strings,
    remembering every missing variable and where it was referenced."""

    def __init__(self, env: Mapping[str, str], origin: str) -> None:
        self.env = env
        self.origin = origin
        self.missing: dict[str, list[str]] = {}

    def fail(self, where: str, problem: str) -> MCPConfigError:
        return MCPConfigError(f"{self.origin}: {where}: {problem}")

    def string(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {type(value).__name__}")
        if "$" not in value:
            return value

        def substitute(match: re.Match[str]) -> str:
            name = match.group("ps") or match.group("name")
            resolved = self.env.get(name)
            default = match.group("default")
            if default is not None and not resolved:
                return default
            if resolved is None:
                self.missing.setdefault(name, []).append(where)
                return ""
            return resolved

        return _ENV_REF.sub(substitute, value)

    def strings(self, value: Any, where: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            raise self.fail(where, f"expected a list of strings, got {type(value).__name__}")
        return tuple(self.string(item, f"{where}[{i}]") for i, item in enumerate(value))

    def mapping(self, value: Any, where: str) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected an object of strings, got {type(value).__name__}")
        out: dict[str, str] = {}
        for key, item in value.items():
            if not isinstance(key, str) or not key:
                raise self.fail(where, f"keys must be non-empty strings, got {key!r}")
            out[key] = self.string(item, f"{where}.{key}")
        return out


def resolve_env(value: str, env: Mapping[str, str] | None = None) -> str:
    """``value`` with its ``${VAR}``, ``${VAR:-default}`` and ``$env:VAR`` references
    substituted (:class:`MCPConfigError` naming every missing variable)."""
    resolver = _Resolver(os.environ if env is None else env, "value")
    out = resolver.string(value, "value")
    if resolver.missing:
        names = tuple(resolver.missing)
        plural = "s" if len(names) > 1 else ""
        raise MCPConfigError(
            f"missing environment variable{plural} {', '.join(names)}", missing=names
        )
    return out


def _server(name: str, raw: Any, r: _Resolver) -> MCPServerConfig:
    where = f"mcpServers.{name}"
    if not isinstance(raw, Mapping):
        raise r.fail(where, f"expected an object, got {type(raw).__name__}")
    transport = raw.get("transport")
    kind = raw.get("type")
    if transport is not None:
        if not isinstance(transport, Mapping):
            raise r.fail(f"{where}.transport", "expected an object")
        kind = transport.get("type")
        spec: Mapping[str, Any] = transport
        twhere = f"{where}.transport"
    else:
        spec, twhere = raw, where
    if isinstance(kind, str) and kind.lower() in _HTTP_TYPES | _SSE_TYPES:
        if "url" not in spec:
            raise r.fail(twhere, "an HTTP server needs a 'url'")
        url = r.string(spec["url"], f"{twhere}.url")
        if url and not url.startswith(("http://", "https://")):
            raise r.fail(f"{twhere}.url", f"expected an http(s) URL, got {url!r}")
        return HTTPServerConfig(
            name=name,
            url=url,
            headers=r.mapping(spec.get("headers"), f"{twhere}.headers"),
            transport="sse" if kind.lower() in _SSE_TYPES else "http",
        )
    if kind is not None and kind != "stdio":
        raise r.fail(
            f"{twhere}.type", f"unsupported transport {kind!r} (use 'stdio', 'http' or 'sse')"
        )
    if "command" not in raw:
        raise r.fail(where, "expected 'command' (a stdio server) or 'transport' (an HTTP server)")
    command = r.string(raw["command"], f"{where}.command")
    if not command and _ENV_REF.search(str(raw["command"])) is None:
        raise r.fail(f"{where}.command", "must not be empty")
    cwd = raw.get("cwd")
    args = r.strings(raw.get("args"), f"{where}.args")
    return StdioServerConfig(
        name=name,
        command=command,
        args=args,
        env=r.mapping(raw.get("env"), f"{where}.env"),
        cwd=None if cwd is None else r.string(cwd, f"{where}.cwd"),
        # args were checked to be strings above.
        written=shlex.join([raw["command"], *(raw.get("args") or ())]),
    )


def parse_mcp_config(
    data: Any, *, env: Mapping[str, str] | None = None, origin: str = "mcp.json"
) -> dict[str, MCPServerConfig]:
    """The servers of an already-parsed ``mcp.json`` document, by name (in order).

    ``env`` defaults to :data:`os.environ`; ``origin`` names the document in
    error messages. Raises :class:`MCPConfigError`.
    """
    resolver = _Resolver(os.environ if env is None else env, origin)
    if not isinstance(data, Mapping):
        raise MCPConfigError(f"{origin}: expected a JSON object with 'mcpServers'")
    servers = data.get("mcpServers")
    if not isinstance(servers, Mapping):
        raise MCPConfigError(f"{origin}: expected 'mcpServers' to be an object of servers")
    out: dict[str, MCPServerConfig] = {}
    for name, raw in servers.items():
        if not isinstance(name, str) or not name.strip():
            raise MCPConfigError(f"{origin}: mcpServers: server names must be non-empty strings")
        out[name] = _server(name, raw, resolver)
    if resolver.missing:
        names = tuple(resolver.missing)
        detail = ", ".join(f"{n} (at {', '.join(resolver.missing[n])})" for n in names)
        raise MCPConfigError(
            f"{origin}: missing environment variable{'s' if len(names) > 1 else ''}: {detail}",
            missing=names,
        )
    return out


def load_mcp_config(
    path: str | os.PathLike[str], *, env: Mapping[str, str] | None = None
) -> dict[str, MCPServerConfig]:
    """The servers of the ``mcp.json`` file at ``path`` (see :func:`parse_mcp_config`)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MCPConfigError(f"{file}: {unreadable(exc)}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MCPConfigError(f"{file}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    return parse_mcp_config(data, env=env, origin=str(file))
