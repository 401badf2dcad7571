"""MCP for a2a-models agents, on the official ``mcp`` SDK (``pip install a2a-models[mcp]``).

The agent as an MCP server:

* :class:`MCPSkillServer` - every :class:`~a2a_models.tools.SkillDefinition`
  becomes an MCP tool (description with ``<tags>``/``<examples>``, the skill's
  input schema, arguments validated with :mod:`jsonschema` before the handler
  runs, the Task or Message returned as an embedded ``application/json``
  resource with a ``tag:`` URI; a task left waiting for the caller is continued
  by calling the tool again with its ``taskId``); served over stdio (:meth:`~MCPSkillServer.run_stdio`)
  or streamable HTTP (:meth:`~MCPSkillServer.streamable_http_app`, or
  :meth:`~MCPSkillServer.mount` next to the A2A endpoints in one ASGI app).

The agent as an MCP client:

* :func:`load_mcp_config` / :func:`parse_mcp_config` - Claude-compatible
  ``mcp.json`` (stdio, streamable-HTTP and legacy SSE servers; ``${VAR}`` and
  ``$env:VAR`` substituted inside strings).
* :class:`MCPToolHub` - connects every server, exposes their tools as uniform
  :class:`~a2a_models.tools.Tool` s named ``<server>__<tool>``, refreshes them
  when a server announces a change, runs the context provider, and stops
  everything without leaving processes behind; restarts a crashed server with
  backoff (:class:`RestartPolicy`), its tools withdrawn while it is down;
  :class:`MCPConnection` is one server.
* :func:`to_call_result`, :func:`from_call_result`, :func:`tag_uri` - the
  conversions between A2A objects and MCP tool results.

Importing :mod:`a2a_models` never imports this package; names load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._client import (
        ConnectMode,
        ContextProvider,
        MCPConnection,
        MCPServerError,
        MCPToolHub,
        RestartPolicy,
        ToolsChangedCallback,
    )
    from ._config import (
        HTTPServerConfig,
        MCPConfigError,
        MCPServerConfig,
        StdioServerConfig,
        load_mcp_config,
        parse_mcp_config,
        resolve_env,
    )
    from ._convert import (
        A2A_JSON_MEDIA_TYPE,
        CONTINUATION_KEYS,
        INTERRUPTION_SCHEMA,
        a2a_resource,
        agent_slug,
        error_result,
        from_call_result,
        result_text,
        structured_result,
        tag_uri,
        to_call_result,
    )
    from ._server import MCPSkillServer, SkillRunner, skill_input_schema, skill_tool_description

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        [
            "ConnectMode",
            "ContextProvider",
            "MCPConnection",
            "MCPServerError",
            "MCPToolHub",
            "RestartPolicy",
            "ToolsChangedCallback",
        ],
        "_client",
    ),
    **dict.fromkeys(
        [
            "HTTPServerConfig",
            "MCPConfigError",
            "MCPServerConfig",
            "StdioServerConfig",
            "load_mcp_config",
            "parse_mcp_config",
            "resolve_env",
        ],
        "_config",
    ),
    **dict.fromkeys(
        [
            "A2A_JSON_MEDIA_TYPE",
            "CONTINUATION_KEYS",
            "INTERRUPTION_SCHEMA",
            "a2a_resource",
            "agent_slug",
            "error_result",
            "from_call_result",
            "result_text",
            "structured_result",
            "tag_uri",
            "to_call_result",
        ],
        "_convert",
    ),
    **dict.fromkeys(
        ["MCPSkillServer", "SkillRunner", "skill_input_schema", "skill_tool_description"], "_server"
    ),
}

__all__ = [
    "A2A_JSON_MEDIA_TYPE",
    "CONTINUATION_KEYS",
    "INTERRUPTION_SCHEMA",
    "ConnectMode",
    "ContextProvider",
    "HTTPServerConfig",
    "MCPConfigError",
    "MCPConnection",
    "MCPServerConfig",
    "MCPServerError",
    "MCPSkillServer",
    "MCPToolHub",
    "RestartPolicy",
    "SkillRunner",
    "StdioServerConfig",
    "ToolsChangedCallback",
    "a2a_resource",
    "agent_slug",
    "error_result",
    "from_call_result",
    "load_mcp_config",
    "parse_mcp_config",
    "resolve_env",
    "result_text",
    "skill_input_schema",
    "skill_tool_description",
    "structured_result",
    "tag_uri",
    "to_call_result",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
