"""LLM models for the orchestration adapter: one small interface, two official SDKs.

Needs the ``llm`` extra (``pip install a2a-models[llm]``)::

    from a2a_models.adapters.llm import (
        ForceTool, ModelRequest, SystemMessage, ToolSpec, UserMessage,
        make_model, resolve_model_config,
    )

    config = resolve_model_config(workspace={"provider": "anthropic"})   # + env, defaults
    async with make_model(config) as model:
        request = ModelRequest(
            (SystemMessage("You write reports."), UserMessage("Summarise Q3.")),
            tools=(ToolSpec("emit_artifact", "Write the report", {"type": "object", ...}),),
            tool_choice=ForceTool("emit_artifact"),
        )
        async with model.stream(request) as events:
            async for event in events:      # TextDelta, ToolCallStart, ToolCallDelta,
                ...                         # ToolCallEnd | ToolCallError, Finish

* The interface (``_model``): messages (:class:`SystemMessage`,
  :class:`UserMessage`, :class:`AssistantMessage`, :class:`ToolMessage`,
  :class:`ToolCall`), :class:`ToolSpec`, :data:`ToolChoice` /
  :class:`ForceTool`, :class:`ModelRequest`, the events, :class:`ModelStream`,
  :class:`ModelResponse` and the :class:`Model` base class.
* Implementations: :class:`OpenAIChatModel` (``openai.AsyncOpenAI``; OpenAI,
  OpenRouter, Ollama, vLLM, llama.cpp, LM Studio), :class:`OpenAIResponsesModel`
  (OpenAI's Responses API) and :class:`AnthropicModel` (``anthropic.AsyncAnthropic``).
* Configuration: :func:`resolve_model_config` (override, environment,
  workspace, defaults), :func:`merge_model_settings`, :class:`ModelConfig`,
  :func:`make_model`.
* Errors: :class:`ModelError` and its subclasses.
* Orchestration: :class:`LLMAgent` (an A2A agent whose skills the model fulfils:
  routing, the streamed tool loop, the forced artifact), :class:`LLMSkill`,
  :class:`Guardrails`, workflows (:func:`workflow`, :class:`Workflow`,
  :func:`workflow_tool`, :func:`load_workflow_registry`).
* Agent workspaces: :func:`load_workspace` / :func:`compose_workspace`
  (``agent.md``, ``agent.manifest.json``, ``skills/*.md``, ``mcp.json``,
  ``workflow.json``, ``.env``), :func:`build_runtime`, bundles
  (:func:`write_bundle`, :func:`load_bundle`). See ``docs/agent-workspace.md``.

Names load on first use: importing this package imports neither ``openai``
nor ``anthropic``; only :class:`OpenAIChatModel`, :class:`AnthropicModel`
(or :func:`make_model` building one) do.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._agent import SKILL_REQUEST_KEYS as SKILL_REQUEST_KEYS
    from ._agent import LLMAgent as LLMAgent
    from ._anthropic import ANTHROPIC_DEFAULT_BASE_URL as ANTHROPIC_DEFAULT_BASE_URL
    from ._anthropic import AnthropicModel as AnthropicModel
    from ._bundle import BUNDLE_FORMAT as BUNDLE_FORMAT
    from ._bundle import load_bundle as load_bundle
    from ._bundle import write_bundle as write_bundle
    from ._compose import AgentRuntime as AgentRuntime
    from ._compose import build_runtime as build_runtime
    from ._config import API_KEY_ENV as API_KEY_ENV
    from ._config import BASE_URL_ENV as BASE_URL_ENV
    from ._config import DEFAULT_MAX_RETRIES as DEFAULT_MAX_RETRIES
    from ._config import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
    from ._config import DEFAULT_MODELS as DEFAULT_MODELS
    from ._config import DEFAULT_PROVIDER as DEFAULT_PROVIDER
    from ._config import DEFAULT_TEMPERATURE as DEFAULT_TEMPERATURE
    from ._config import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from ._config import MODEL_ENV as MODEL_ENV
    from ._config import PROVIDER_ENV as PROVIDER_ENV
    from ._config import PROVIDERS as PROVIDERS
    from ._config import ModelConfig as ModelConfig
    from ._config import make_model as make_model
    from ._config import merge_model_settings as merge_model_settings
    from ._config import resolve_model_config as resolve_model_config
    from ._errors import MissingAPIKeyError as MissingAPIKeyError
    from ._errors import ModelAuthenticationError as ModelAuthenticationError
    from ._errors import ModelBadRequestError as ModelBadRequestError
    from ._errors import ModelConfigError as ModelConfigError
    from ._errors import ModelConnectionError as ModelConnectionError
    from ._errors import ModelError as ModelError
    from ._errors import ModelRateLimitError as ModelRateLimitError
    from ._errors import ModelServerError as ModelServerError
    from ._errors import ModelTimeoutError as ModelTimeoutError
    from ._handler import KIND_METADATA_KEY as KIND_METADATA_KEY
    from ._handler import SKILL_METADATA_KEY as SKILL_METADATA_KEY
    from ._handler import Activity as Activity
    from ._handler import artifact_tool_spec as artifact_tool_spec
    from ._handler import ask_user_tool_spec as ask_user_tool_spec
    from ._handler import default_status_text as default_status_text
    from ._model import AssistantMessage as AssistantMessage
    from ._model import ChatMessage as ChatMessage
    from ._model import Finish as Finish
    from ._model import FinishReason as FinishReason
    from ._model import ForceTool as ForceTool
    from ._model import Model as Model
    from ._model import ModelEvent as ModelEvent
    from ._model import ModelRequest as ModelRequest
    from ._model import ModelResponse as ModelResponse
    from ._model import ModelStream as ModelStream
    from ._model import SystemMessage as SystemMessage
    from ._model import TextDelta as TextDelta
    from ._model import ToolCall as ToolCall
    from ._model import ToolCallDelta as ToolCallDelta
    from ._model import ToolCallEnd as ToolCallEnd
    from ._model import ToolCallError as ToolCallError
    from ._model import ToolCallStart as ToolCallStart
    from ._model import ToolChoice as ToolChoice
    from ._model import ToolMessage as ToolMessage
    from ._model import ToolSpec as ToolSpec
    from ._model import Usage as Usage
    from ._model import UserMessage as UserMessage
    from ._openai import OPENAI_DEFAULT_BASE_URL as OPENAI_DEFAULT_BASE_URL
    from ._openai import OpenAIChatModel as OpenAIChatModel
    from ._openai_responses import OpenAIResponsesModel as OpenAIResponsesModel
    from ._partial_json import StringFieldDecoder as StringFieldDecoder
    from ._skills import ARTIFACT_TOOL as ARTIFACT_TOOL
    from ._skills import ASK_USER_TOOL as ASK_USER_TOOL
    from ._skills import RESERVED_TOOL_NAMES as RESERVED_TOOL_NAMES
    from ._skills import START_TASK_TOOL as START_TASK_TOOL
    from ._skills import Guardrails as Guardrails
    from ._skills import LLMSkill as LLMSkill
    from ._skills import routing_system_prompt as routing_system_prompt
    from ._skills import skill_system_prompt as skill_system_prompt
    from ._workflows import WORKFLOW_TOOL_PREFIX as WORKFLOW_TOOL_PREFIX
    from ._workflows import Workflow as Workflow
    from ._workflows import WorkflowArtifact as WorkflowArtifact
    from ._workflows import WorkflowError as WorkflowError
    from ._workflows import WorkflowEvent as WorkflowEvent
    from ._workflows import WorkflowResult as WorkflowResult
    from ._workflows import WorkflowStatus as WorkflowStatus
    from ._workflows import load_workflow_registry as load_workflow_registry
    from ._workflows import parse_workflow_registry as parse_workflow_registry
    from ._workflows import workflow as workflow
    from ._workflows import workflow_tool as workflow_tool
    from ._workflows import workflow_tool_name as workflow_tool_name
    from ._workspace import ComposedSkill as ComposedSkill
    from ._workspace import ComposedWorkspace as ComposedWorkspace
    from ._workspace import MergePolicies as MergePolicies
    from ._workspace import WorkspaceError as WorkspaceError
    from ._workspace import compose_workspace as compose_workspace
    from ._workspace import load_workspace as load_workspace
    from ._workspace import read_dotenv as read_dotenv

#: The public surface (``__all__``): each name and the private module that defines it.
_PUBLIC: dict[str, str] = {
    "LLMAgent": "_agent",
    **dict.fromkeys(["Guardrails", "LLMSkill"], "_skills"),
    **dict.fromkeys(
        [
            "Workflow",
            "WorkflowArtifact",
            "WorkflowError",
            "WorkflowEvent",
            "WorkflowResult",
            "WorkflowStatus",
            "load_workflow_registry",
            "workflow",
            "workflow_tool",
        ],
        "_workflows",
    ),
    **dict.fromkeys(
        ["ComposedWorkspace", "WorkspaceError", "compose_workspace", "load_workspace"], "_workspace"
    ),
    **dict.fromkeys(["AgentRuntime", "build_runtime"], "_compose"),
    **dict.fromkeys(["load_bundle", "write_bundle"], "_bundle"),
    "AnthropicModel": "_anthropic",
    "OpenAIChatModel": "_openai",
    "OpenAIResponsesModel": "_openai_responses",
    **dict.fromkeys(
        ["ModelConfig", "make_model", "merge_model_settings", "resolve_model_config"], "_config"
    ),
    **dict.fromkeys(
        [
            "MissingAPIKeyError",
            "ModelAuthenticationError",
            "ModelBadRequestError",
            "ModelConfigError",
            "ModelConnectionError",
            "ModelError",
            "ModelRateLimitError",
            "ModelServerError",
            "ModelTimeoutError",
        ],
        "_errors",
    ),
    **dict.fromkeys(
        [
            "AssistantMessage",
            "ChatMessage",
            "Finish",
            "FinishReason",
            "ForceTool",
            "Model",
            "ModelEvent",
            "ModelRequest",
            "ModelResponse",
            "ModelStream",
            "SystemMessage",
            "TextDelta",
            "ToolCall",
            "ToolCallDelta",
            "ToolCallEnd",
            "ToolCallError",
            "ToolCallStart",
            "ToolChoice",
            "ToolMessage",
            "ToolSpec",
            "Usage",
            "UserMessage",
        ],
        "_model",
    ),
}

#: Importable here for existing code and tests, but not the public surface (not in
#: ``__all__``): tool names, metadata keys, prompt builders, defaults and constants
#: of the private modules. Depend on them from those modules, at your own risk.
_INTERNAL_EXPORTS: dict[str, str] = {
    "SKILL_REQUEST_KEYS": "_agent",
    **dict.fromkeys(
        [
            "KIND_METADATA_KEY",
            "SKILL_METADATA_KEY",
            "Activity",
            "artifact_tool_spec",
            "ask_user_tool_spec",
            "default_status_text",
        ],
        "_handler",
    ),
    "StringFieldDecoder": "_partial_json",
    **dict.fromkeys(
        [
            "ARTIFACT_TOOL",
            "ASK_USER_TOOL",
            "RESERVED_TOOL_NAMES",
            "START_TASK_TOOL",
            "routing_system_prompt",
            "skill_system_prompt",
        ],
        "_skills",
    ),
    **dict.fromkeys(
        ["WORKFLOW_TOOL_PREFIX", "parse_workflow_registry", "workflow_tool_name"], "_workflows"
    ),
    **dict.fromkeys(["ComposedSkill", "MergePolicies", "read_dotenv"], "_workspace"),
    "BUNDLE_FORMAT": "_bundle",
    "ANTHROPIC_DEFAULT_BASE_URL": "_anthropic",
    "OPENAI_DEFAULT_BASE_URL": "_openai",
    **dict.fromkeys(
        [
            "API_KEY_ENV",
            "BASE_URL_ENV",
            "DEFAULT_MAX_RETRIES",
            "DEFAULT_MAX_TOKENS",
            "DEFAULT_MODELS",
            "DEFAULT_PROVIDER",
            "DEFAULT_TEMPERATURE",
            "DEFAULT_TIMEOUT",
            "MODEL_ENV",
            "PROVIDER_ENV",
            "PROVIDERS",
        ],
        "_config",
    ),
}

_EXPORTS = {**_PUBLIC, **_INTERNAL_EXPORTS}
_INTERNAL = frozenset(_INTERNAL_EXPORTS)
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name == "ToolResult":
        # The chat message was called ToolResult, like tools.ToolResult (a tool's output).
        import warnings

        warnings.warn(
            "a2a_models.adapters.llm.ToolResult is now ToolMessage",
            DeprecationWarning,
            stacklevel=2,
        )
        name = "ToolMessage"
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
