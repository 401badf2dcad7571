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
    from ._agent import SKILL_REQUEST_KEYS, LLMAgent
    from ._anthropic import ANTHROPIC_DEFAULT_BASE_URL, AnthropicModel
    from ._bundle import BUNDLE_FORMAT, load_bundle, write_bundle
    from ._compose import AgentRuntime, build_runtime
    from ._config import (
        API_KEY_ENV,
        BASE_URL_ENV,
        DEFAULT_MAX_RETRIES,
        DEFAULT_MAX_TOKENS,
        DEFAULT_MODELS,
        DEFAULT_PROVIDER,
        DEFAULT_TEMPERATURE,
        DEFAULT_TIMEOUT,
        MODEL_ENV,
        PROVIDER_ENV,
        PROVIDERS,
        ModelConfig,
        make_model,
        merge_model_settings,
        resolve_model_config,
    )
    from ._errors import (
        MissingAPIKeyError,
        ModelAuthenticationError,
        ModelBadRequestError,
        ModelConfigError,
        ModelConnectionError,
        ModelError,
        ModelRateLimitError,
        ModelServerError,
        ModelTimeoutError,
    )
    from ._handler import (
        KIND_METADATA_KEY,
        SKILL_METADATA_KEY,
        Activity,
        artifact_tool_spec,
        ask_user_tool_spec,
        default_status_text,
    )
    from ._model import (
        AssistantMessage,
        ChatMessage,
        Finish,
        FinishReason,
        ForceTool,
        Model,
        ModelEvent,
        ModelRequest,
        ModelResponse,
        ModelStream,
        SystemMessage,
        TextDelta,
        ToolCall,
        ToolCallDelta,
        ToolCallEnd,
        ToolCallError,
        ToolCallStart,
        ToolChoice,
        ToolMessage,
        ToolSpec,
        Usage,
        UserMessage,
    )
    from ._openai import OPENAI_DEFAULT_BASE_URL, OpenAIChatModel
    from ._openai_responses import OpenAIResponsesModel
    from ._partial_json import StringFieldDecoder
    from ._skills import (
        ARTIFACT_TOOL,
        ASK_USER_TOOL,
        RESERVED_TOOL_NAMES,
        START_TASK_TOOL,
        Guardrails,
        LLMSkill,
        routing_system_prompt,
        skill_system_prompt,
    )
    from ._workflows import (
        WORKFLOW_TOOL_PREFIX,
        Workflow,
        WorkflowArtifact,
        WorkflowError,
        WorkflowEvent,
        WorkflowResult,
        WorkflowStatus,
        load_workflow_registry,
        parse_workflow_registry,
        workflow,
        workflow_tool,
        workflow_tool_name,
    )
    from ._workspace import (
        ComposedSkill,
        ComposedWorkspace,
        MergePolicies,
        WorkspaceError,
        compose_workspace,
        load_workspace,
        read_dotenv,
    )

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(["SKILL_REQUEST_KEYS", "LLMAgent"], "_agent"),
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
            "Guardrails",
            "LLMSkill",
            "routing_system_prompt",
            "skill_system_prompt",
        ],
        "_skills",
    ),
    **dict.fromkeys(
        [
            "WORKFLOW_TOOL_PREFIX",
            "Workflow",
            "WorkflowArtifact",
            "WorkflowError",
            "WorkflowEvent",
            "WorkflowResult",
            "WorkflowStatus",
            "load_workflow_registry",
            "parse_workflow_registry",
            "workflow",
            "workflow_tool",
            "workflow_tool_name",
        ],
        "_workflows",
    ),
    **dict.fromkeys(
        [
            "ComposedSkill",
            "ComposedWorkspace",
            "MergePolicies",
            "WorkspaceError",
            "compose_workspace",
            "load_workspace",
            "read_dotenv",
        ],
        "_workspace",
    ),
    **dict.fromkeys(["AgentRuntime", "build_runtime"], "_compose"),
    **dict.fromkeys(["BUNDLE_FORMAT", "load_bundle", "write_bundle"], "_bundle"),
    **dict.fromkeys(["ANTHROPIC_DEFAULT_BASE_URL", "AnthropicModel"], "_anthropic"),
    **dict.fromkeys(["OPENAI_DEFAULT_BASE_URL", "OpenAIChatModel"], "_openai"),
    "OpenAIResponsesModel": "_openai_responses",
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
            "ModelConfig",
            "make_model",
            "merge_model_settings",
            "resolve_model_config",
        ],
        "_config",
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

__all__ = [
    "ANTHROPIC_DEFAULT_BASE_URL",
    "API_KEY_ENV",
    "ARTIFACT_TOOL",
    "ASK_USER_TOOL",
    "Activity",
    "AgentRuntime",
    "AnthropicModel",
    "AssistantMessage",
    "BASE_URL_ENV",
    "BUNDLE_FORMAT",
    "ChatMessage",
    "ComposedSkill",
    "ComposedWorkspace",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODELS",
    "DEFAULT_PROVIDER",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TIMEOUT",
    "Finish",
    "FinishReason",
    "ForceTool",
    "Guardrails",
    "KIND_METADATA_KEY",
    "LLMAgent",
    "LLMSkill",
    "MODEL_ENV",
    "MergePolicies",
    "MissingAPIKeyError",
    "Model",
    "ModelAuthenticationError",
    "ModelBadRequestError",
    "ModelConfig",
    "ModelConfigError",
    "ModelConnectionError",
    "ModelError",
    "ModelEvent",
    "ModelRateLimitError",
    "ModelRequest",
    "ModelResponse",
    "ModelServerError",
    "ModelStream",
    "ModelTimeoutError",
    "OPENAI_DEFAULT_BASE_URL",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "PROVIDERS",
    "PROVIDER_ENV",
    "RESERVED_TOOL_NAMES",
    "SKILL_METADATA_KEY",
    "SKILL_REQUEST_KEYS",
    "START_TASK_TOOL",
    "StringFieldDecoder",
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
    "WORKFLOW_TOOL_PREFIX",
    "Workflow",
    "WorkflowArtifact",
    "WorkflowError",
    "WorkflowEvent",
    "WorkflowResult",
    "WorkflowStatus",
    "WorkspaceError",
    "artifact_tool_spec",
    "ask_user_tool_spec",
    "build_runtime",
    "compose_workspace",
    "default_status_text",
    "load_bundle",
    "load_workflow_registry",
    "load_workspace",
    "make_model",
    "merge_model_settings",
    "parse_workflow_registry",
    "read_dotenv",
    "resolve_model_config",
    "routing_system_prompt",
    "skill_system_prompt",
    "workflow",
    "workflow_tool",
    "workflow_tool_name",
    "write_bundle",
]


#: Importable here for existing code and tests, but not the public surface (not in
#: ``__all__``): tool names, metadata keys, prompt builders, defaults and constants
#: of the private modules. Depend on them from those modules, at your own risk.
_INTERNAL = frozenset(
    {
        "ANTHROPIC_DEFAULT_BASE_URL",
        "API_KEY_ENV",
        "ARTIFACT_TOOL",
        "ASK_USER_TOOL",
        "Activity",
        "BASE_URL_ENV",
        "BUNDLE_FORMAT",
        "ComposedSkill",
        "DEFAULT_MAX_RETRIES",
        "DEFAULT_MAX_TOKENS",
        "DEFAULT_MODELS",
        "DEFAULT_PROVIDER",
        "DEFAULT_TEMPERATURE",
        "DEFAULT_TIMEOUT",
        "KIND_METADATA_KEY",
        "MODEL_ENV",
        "MergePolicies",
        "OPENAI_DEFAULT_BASE_URL",
        "PROVIDERS",
        "PROVIDER_ENV",
        "RESERVED_TOOL_NAMES",
        "SKILL_METADATA_KEY",
        "SKILL_REQUEST_KEYS",
        "START_TASK_TOOL",
        "StringFieldDecoder",
        "WORKFLOW_TOOL_PREFIX",
        "artifact_tool_spec",
        "ask_user_tool_spec",
        "default_status_text",
        "parse_workflow_registry",
        "read_dotenv",
        "routing_system_prompt",
        "skill_system_prompt",
        "workflow_tool_name",
    }
)
__all__ = [name for name in __all__ if name not in _INTERNAL]


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
