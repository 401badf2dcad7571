"""Which provider, which model, which key: configuration with a documented precedence.

Every setting is resolved from, in order (the first that sets it wins):

1. the explicit ``override`` mapping (a command-line flag, a test);
2. environment variables - ``A2A_MODELS_PROVIDER``, ``A2A_MODELS_MODEL``, and
   per provider ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL`` (sampling
   settings have no variables);
3. the workspace configuration: the agent's ``model`` mapping with the skill's
   overrides merged in by :func:`merge_model_settings`;
4. the defaults: provider ``openai``, model ``gpt-4o-mini`` (``claude-sonnet-4-5``
   for ``anthropic``), temperature 0.2, max_tokens 4096, timeout 60 s, 2 retries.

Settings that belong to one provider (``model``, ``base_url``,
``api_key_env``) are only taken from a layer that names no provider or the
chosen one, so ``A2A_MODELS_PROVIDER=anthropic`` never sends an OpenAI model
name to Anthropic. The API key is the ``api_key`` override or the environment
variable ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` (or the variable named by
``api_key_env``); workspace files may not hold keys. A missing key raises
:class:`MissingAPIKeyError` naming the provider and the variable.

For ``openai``, ``api: responses`` speaks OpenAI's Responses API
(:class:`~a2a_models.adapters.llm.OpenAIResponsesModel`) instead of Chat
Completions (``api: chat``, the default).

This module imports no provider SDK; :func:`make_model` imports the one it needs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypedDict

from ._errors import MissingAPIKeyError, ModelConfigError

if TYPE_CHECKING:
    from ._model import Model

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODELS",
    "DEFAULT_PROVIDER",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TIMEOUT",
    "MODEL_ENV",
    "PROVIDERS",
    "PROVIDER_ENV",
    "SETTINGS",
    "ModelConfig",
    "make_model",
    "merge_model_settings",
    "resolve_model_config",
]

PROVIDERS: Final = ("openai", "anthropic")
DEFAULT_PROVIDER: Final = "openai"
DEFAULT_MODELS: Final[Mapping[str, str]] = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
}
DEFAULT_TEMPERATURE: Final = 0.2
DEFAULT_MAX_TOKENS: Final = 4096
DEFAULT_TIMEOUT: Final = 60.0
DEFAULT_MAX_RETRIES: Final = 2

PROVIDER_ENV: Final = "A2A_MODELS_PROVIDER"
MODEL_ENV: Final = "A2A_MODELS_MODEL"
API_KEY_ENV: Final[Mapping[str, str]] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
BASE_URL_ENV: Final[Mapping[str, str]] = {
    "openai": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
}

SETTINGS: Final = (
    "provider",
    "model",
    "base_url",
    "api_key",
    "api_key_env",
    "temperature",
    "max_tokens",
    "timeout",
    "max_retries",
    "streaming",
    "stream_usage",
    "max_tokens_field",
    "headers",
    "api",
)
"""The keys a settings mapping (override, agent, skill) may hold."""

# Settings that only make sense for one provider: a skill that switches the
# provider does not inherit them from the agent.
_PROVIDER_BOUND: Final = frozenset(
    {"model", "base_url", "api_key", "api_key_env", "max_tokens_field", "stream_usage", "api"}
)
_MAX_TOKENS_FIELDS: Final = ("auto", "max_tokens", "max_completion_tokens")
#: The OpenAI APIs a model may speak: Chat Completions (default) or Responses.
OPENAI_APIS: Final = ("chat", "responses")


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """The effective model configuration of an agent or one of its skills.

    ``api_key`` is kept out of ``repr``; ``api_key_env`` names the variable it
    came from (``None`` when it was given explicitly). ``sources`` maps each
    setting to where its value came from: ``"override"``,
    ``"env:VARIABLE"``, the workspace/skill source labels given to
    :func:`resolve_model_config`, or ``"default"``. Hashable, so models can be
    cached per configuration.
    """

    provider: str
    model: str
    api_key: str = field(repr=False)
    base_url: str | None = None
    temperature: float | None = DEFAULT_TEMPERATURE
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    streaming: bool = True
    stream_usage: bool = True
    max_tokens_field: str = "auto"
    headers: tuple[tuple[str, str], ...] = ()
    api_key_env: str | None = None
    #: ``"chat"`` (Chat Completions) or ``"responses"`` (OpenAI's Responses API).
    api: str = "chat"
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def describe(self) -> dict[str, Any]:
        """The configuration as a plain dict for display, the key replaced by where it came from."""
        key = (
            f"<set from {self.api_key_env}>"
            if self.api_key and self.api_key_env
            else "<set>"
            if self.api_key
            else f"<missing: set {self.api_key_env}>"
        )
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "api_key": key,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "streaming": self.streaming,
            "stream_usage": self.stream_usage,
            "max_tokens_field": self.max_tokens_field,
            "api": self.api,
            "headers": sorted(name for name, _ in self.headers),
            "sources": dict(sorted(self.sources.items())),
        }


# ----------------------------------------------------------------- validation


def _fail(source: str, key: str, problem: str) -> ModelConfigError:
    where = f"environment variable {source[4:]}" if source.startswith("env:") else source
    return ModelConfigError(f"{where}: {key} {problem}", field=key, source=source)


def _check_settings(settings: Mapping[str, Any] | None, source: str, *, keys_allowed: bool) -> None:
    if settings is None:
        return
    if not isinstance(settings, Mapping):
        raise ModelConfigError(
            f"{source}: the model settings must be a mapping, not {type(settings).__name__}",
            source=source,
        )
    for key, value in settings.items():
        if key not in SETTINGS:
            raise _fail(
                source, str(key), f"is not a model setting (expected one of: {', '.join(SETTINGS)})"
            )
        if key == "api_key" and not keys_allowed and value is not None:
            raise _fail(
                source,
                key,
                "is not allowed here: keep keys out of workspace files and name the variable "
                "that holds it with api_key_env",
            )


def _provider(value: Any, source: str) -> str:
    if not isinstance(value, str) or value not in PROVIDERS:
        raise _fail(
            source,
            "provider",
            f"must be one of {', '.join(repr(p) for p in PROVIDERS)}, not {value!r}",
        )
    return value


def _string(value: Any, source: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(source, key, f"must be a non-empty string, not {value!r}")
    return value.strip()


def _number(value: Any, source: str, key: str, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(source, key, f"must be a number, not {value!r}")
    if value < 0 or (positive and value == 0):
        raise _fail(source, key, f"must be {'> 0' if positive else '>= 0'}, not {value!r}")
    return float(value)


def _integer(value: Any, source: str, key: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(source, key, f"must be an integer, not {value!r}")
    if value < minimum:
        raise _fail(source, key, f"must be >= {minimum}, not {value!r}")
    return value


def _boolean(value: Any, source: str, key: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(source, key, f"must be true or false, not {value!r}")
    return value


def _headers(value: Any, source: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _fail(source, "headers", f"must map header names to string values, not {value!r}")
    return tuple(sorted(value.items()))


# -------------------------------------------------------------------- merging


def merge_model_settings(
    agent: Mapping[str, Any] | None, skill: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The agent's model settings with a skill's overrides, merged deterministically.

    Key by key, the skill wins; a skill value of ``None`` inherits the agent's.
    Mappings (``headers``) are replaced, not deep-merged. A skill that names a
    ``provider`` other than the agent's (an agent that names none included)
    does not inherit the agent's provider-specific settings (``model``,
    ``base_url``, ``api_key_env``, ``max_tokens_field``, ``stream_usage``).
    """
    merged: dict[str, Any] = dict(agent or {})
    if not skill:
        return merged
    skill_provider = skill.get("provider")
    if skill_provider is not None and skill_provider != merged.get("provider"):
        for key in _PROVIDER_BOUND:
            merged.pop(key, None)
    for key, value in skill.items():
        if value is not None:
            merged[key] = value
    return merged


def _merged_sources(
    agent: Mapping[str, Any] | None,
    skill: Mapping[str, Any] | None,
    agent_source: str,
    skill_source: str,
) -> dict[str, str]:
    sources = {key: agent_source for key in (agent or {})}
    if skill:
        skill_provider = skill.get("provider")
        if skill_provider is not None and skill_provider != (agent or {}).get("provider"):
            for key in _PROVIDER_BOUND:
                sources.pop(key, None)
        sources.update({key: skill_source for key, value in skill.items() if value is not None})
    return sources


# ------------------------------------------------------------------ resolving


def resolve_model_config(
    override: Mapping[str, Any] | None = None,
    *,
    workspace: Mapping[str, Any] | None = None,
    skill: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    workspace_source: str = "workspace model settings",
    skill_source: str = "skill model settings",
    require_api_key: bool = True,
) -> ModelConfig:
    """The effective :class:`ModelConfig` (see the module documentation for the precedence).

    ``override``, ``workspace`` (the agent's settings) and ``skill`` (that
    skill's overrides) are plain mappings with keys from :data:`SETTINGS`.
    ``env`` defaults to ``os.environ`` (the workspace layer may pass the
    process environment merged with its ``.env`` secrets). The source labels
    name the files in error messages (e.g. ``"agent.md: model"``). With
    ``require_api_key=False`` a missing key leaves ``api_key`` empty instead of
    raising :class:`MissingAPIKeyError` (for ``agent doctor``-style reports).

    Raises :class:`ModelConfigError` naming the setting and where it came from.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    _check_settings(override, "override", keys_allowed=True)
    _check_settings(workspace, workspace_source, keys_allowed=False)
    _check_settings(skill, skill_source, keys_allowed=False)
    explicit: Mapping[str, Any] = {k: v for k, v in (override or {}).items() if v is not None}
    ws_raw = merge_model_settings(workspace, skill)
    ws = {k: v for k, v in ws_raw.items() if v is not None}
    ws_sources = _merged_sources(workspace, skill, workspace_source, skill_source)
    sources: dict[str, str] = {}

    def env_value(name: str) -> str | None:
        value = environ.get(name)
        return value.strip() if value is not None and value.strip() else None

    # provider
    env_provider = env_value(PROVIDER_ENV)
    if "provider" in explicit:
        provider = _provider(explicit["provider"], "override")
        sources["provider"] = "override"
    elif env_provider is not None:
        provider = _provider(env_provider, f"env:{PROVIDER_ENV}")
        sources["provider"] = f"env:{PROVIDER_ENV}"
    elif "provider" in ws:
        provider = _provider(ws["provider"], ws_sources.get("provider", workspace_source))
        sources["provider"] = ws_sources.get("provider", workspace_source)
    else:
        provider = DEFAULT_PROVIDER
        sources["provider"] = "default"

    def applies(layer_provider: Any) -> bool:
        return layer_provider is None or layer_provider == provider

    override_applies = applies(explicit.get("provider"))
    env_applies = applies(env_provider)
    ws_applies = applies(ws.get("provider"))

    def ws_source(key: str) -> str:
        return ws_sources.get(key, workspace_source)

    # model
    env_model = env_value(MODEL_ENV)
    if override_applies and "model" in explicit:
        model = _string(explicit["model"], "override", "model")
        sources["model"] = "override"
    elif env_applies and env_model is not None:
        model = env_model
        sources["model"] = f"env:{MODEL_ENV}"
    elif ws_applies and "model" in ws:
        model = _string(ws["model"], ws_source("model"), "model")
        sources["model"] = ws_source("model")
    else:
        model = DEFAULT_MODELS[provider]
        sources["model"] = "default"

    # base URL
    base_url: str | None = None
    url_env = BASE_URL_ENV[provider]
    if override_applies and "base_url" in explicit:
        base_url = _string(explicit["base_url"], "override", "base_url")
        sources["base_url"] = "override"
    elif env_value(url_env) is not None:
        base_url = env_value(url_env)
        sources["base_url"] = f"env:{url_env}"
    elif ws_applies and "base_url" in ws:
        base_url = _string(ws["base_url"], ws_source("base_url"), "base_url")
        sources["base_url"] = ws_source("base_url")
    else:
        sources["base_url"] = "default"

    # API key
    if override_applies and "api_key_env" in explicit:
        key_env = _string(explicit["api_key_env"], "override", "api_key_env")
    elif ws_applies and "api_key_env" in ws:
        key_env = _string(ws["api_key_env"], ws_source("api_key_env"), "api_key_env")
    else:
        key_env = API_KEY_ENV[provider]
    api_key_env: str | None
    if "api_key" in explicit:
        api_key = _string(explicit["api_key"], "override", "api_key")
        api_key_env = None
        sources["api_key"] = "override"
    else:
        api_key = env_value(key_env) or ""
        api_key_env = key_env
        sources["api_key"] = f"env:{key_env}"
        if not api_key and require_api_key:
            raise MissingAPIKeyError(provider, key_env)

    # everything else: override, then workspace, then default
    def pick(key: str, default: Any, *, bound: bool = False) -> tuple[Any, str]:
        if key in explicit and (override_applies or not bound):
            sources[key] = "override"
            return explicit[key], "override"
        if key in ws and (ws_applies or not bound):
            sources[key] = ws_source(key)
            return ws[key], ws_source(key)
        sources[key] = "default"
        return default, "default"

    # temperature: an explicit null (override, or the agent's settings) sends none at all
    temperature: float | None
    if "temperature" in (override or {}) and (override or {})["temperature"] is None:
        temperature = None
        sources["temperature"] = "override"
    elif (
        "temperature" not in explicit and "temperature" in ws_raw and ws_raw["temperature"] is None
    ):
        temperature = None
        sources["temperature"] = ws_source("temperature")
    else:
        value, src = pick("temperature", DEFAULT_TEMPERATURE)
        temperature = _number(value, src, "temperature", positive=False)
    value, src = pick("max_tokens", DEFAULT_MAX_TOKENS)
    max_tokens = _integer(value, src, "max_tokens", minimum=1)
    value, src = pick("timeout", DEFAULT_TIMEOUT)
    timeout = _number(value, src, "timeout", positive=True)
    value, src = pick("max_retries", DEFAULT_MAX_RETRIES)
    max_retries = _integer(value, src, "max_retries", minimum=0)
    value, src = pick("streaming", True)
    streaming = _boolean(value, src, "streaming")
    value, src = pick("stream_usage", True, bound=True)
    stream_usage = _boolean(value, src, "stream_usage")
    value, src = pick("max_tokens_field", "auto", bound=True)
    if value not in _MAX_TOKENS_FIELDS:
        raise _fail(
            src,
            "max_tokens_field",
            f"must be one of {', '.join(_MAX_TOKENS_FIELDS)}, not {value!r}",
        )
    max_tokens_field = str(value)
    value, src = pick("headers", {})
    headers = _headers(value, src)
    value, src = pick("api", "chat", bound=True)
    if value not in OPENAI_APIS:
        raise _fail(src, "api", f"must be one of {', '.join(OPENAI_APIS)}, not {value!r}")
    if value != "chat" and provider != "openai":
        raise _fail(src, "api", f"the {value!r} API is OpenAI's; the provider is {provider!r}")
    api = str(value)

    return ModelConfig(
        provider=provider,
        model=model,
        api_key=api_key,
        base_url=base_url,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout,
        max_retries=max_retries,
        streaming=streaming,
        stream_usage=stream_usage,
        max_tokens_field=max_tokens_field,
        headers=headers,
        api_key_env=api_key_env,
        api=api,
        sources=sources,
    )


class _ProviderOptions(TypedDict):
    """The constructor options every provider's model takes."""

    api_key: str | None
    base_url: str | None
    temperature: float | None
    max_tokens: int
    timeout: float
    max_retries: int
    streaming: bool
    default_headers: dict[str, str] | None


def make_model(config: ModelConfig) -> Model:
    """The :class:`Model` for ``config`` (imports that provider's SDK on first use).

    Raises :class:`MissingAPIKeyError` when the configuration has no key.
    """
    if not config.api_key:
        raise MissingAPIKeyError(
            config.provider, config.api_key_env or API_KEY_ENV.get(config.provider, "API key")
        )
    options = _ProviderOptions(
        api_key=config.api_key,
        base_url=config.base_url,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout=config.timeout,
        max_retries=config.max_retries,
        streaming=config.streaming,
        default_headers=dict(config.headers) or None,
    )
    if config.provider == "openai" and config.api == "responses":
        from ._openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel(config.model, **options)
    if config.provider == "openai":
        from ._openai import OpenAIChatModel

        max_tokens_field: Any = config.max_tokens_field
        return OpenAIChatModel(
            config.model,
            stream_usage=config.stream_usage,
            max_tokens_field=max_tokens_field,
            **options,
        )
    if config.provider == "anthropic":
        from ._anthropic import AnthropicModel

        return AnthropicModel(config.model, **options)
    raise ModelConfigError(
        f"unknown model provider {config.provider!r} (expected one of: {', '.join(PROVIDERS)})",
        provider=config.provider,
        field="provider",
    )
