"""Provider and model configuration: precedence, per-skill merging, keys, errors."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_models.adapters.llm import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODELS,
    DEFAULT_TEMPERATURE,
    AnthropicModel,
    MissingAPIKeyError,
    ModelConfig,
    ModelConfigError,
    ModelError,
    ModelRequest,
    OpenAIChatModel,
    UserMessage,
    make_model,
    merge_model_settings,
    resolve_model_config,
)

from .scripted_server import ScriptedModelServer, Turn

ENV_VARS = (
    "A2A_MODELS_PROVIDER",
    "A2A_MODELS_MODEL",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "OPENROUTER_API_KEY",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Every test starts without any of the variables the configuration reads."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


KEYS = {"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-anthropic"}


def set_env(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, value)


# ------------------------------------------------------------------ defaults


def test_documented_defaults(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, OPENAI_API_KEY="sk-openai")
    config = resolve_model_config()
    assert config.provider == "openai"
    assert config.model == DEFAULT_MODELS["openai"] == "gpt-4o-mini"
    assert config.temperature == DEFAULT_TEMPERATURE == 0.2
    assert config.max_tokens == DEFAULT_MAX_TOKENS == 4096
    assert (config.timeout, config.max_retries, config.streaming) == (60.0, 2, True)
    assert config.base_url is None
    assert config.api_key == "sk-openai"
    assert config.api_key_env == "OPENAI_API_KEY"
    assert config.sources["provider"] == config.sources["model"] == "default"
    assert config.sources["api_key"] == "env:OPENAI_API_KEY"


def test_anthropic_default_model(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, ANTHROPIC_API_KEY="sk-anthropic")
    config = resolve_model_config({"provider": "anthropic"})
    assert config.model == DEFAULT_MODELS["anthropic"]
    assert config.api_key == "sk-anthropic"


# ---------------------------------------------------------------- precedence

WORKSPACE = {"provider": "anthropic", "model": "claude-workspace"}


@pytest.mark.parametrize(
    ("override", "env", "expected", "source"),
    [
        ({"provider": "openai"}, {"A2A_MODELS_PROVIDER": "anthropic"}, "openai", "override"),
        ({}, {"A2A_MODELS_PROVIDER": "openai"}, "openai", "env:A2A_MODELS_PROVIDER"),
        ({}, {}, "anthropic", "agent.md: model"),
    ],
)
def test_provider_precedence(
    clean_env: pytest.MonkeyPatch,
    override: dict[str, Any],
    env: dict[str, str],
    expected: str,
    source: str,
) -> None:
    set_env(clean_env, **KEYS, **env)
    config = resolve_model_config(
        override, workspace={"provider": "anthropic"}, workspace_source="agent.md: model"
    )
    assert config.provider == expected
    assert config.sources["provider"] == source


@pytest.mark.parametrize(
    ("override", "env", "expected", "source"),
    [
        (
            {"model": "claude-override"},
            {"A2A_MODELS_MODEL": "claude-env"},
            "claude-override",
            "override",
        ),
        ({}, {"A2A_MODELS_MODEL": "claude-env"}, "claude-env", "env:A2A_MODELS_MODEL"),
        ({}, {}, "claude-workspace", "workspace model settings"),
    ],
)
def test_model_precedence(
    clean_env: pytest.MonkeyPatch,
    override: dict[str, Any],
    env: dict[str, str],
    expected: str,
    source: str,
) -> None:
    set_env(clean_env, **KEYS, **env)
    config = resolve_model_config(override, workspace=WORKSPACE)
    assert (config.provider, config.model) == ("anthropic", expected)
    assert config.sources["model"] == source


def test_a_model_for_another_provider_is_never_used(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, **KEYS, A2A_MODELS_PROVIDER="openai")
    # The workspace's model belongs to its provider (anthropic), not to openai.
    config = resolve_model_config(workspace=WORKSPACE)
    assert (config.provider, config.model) == ("openai", "gpt-4o-mini")
    assert config.sources["model"] == "default"

    # Same for the environment's model when an override switches the provider.
    set_env(clean_env, A2A_MODELS_PROVIDER="anthropic", A2A_MODELS_MODEL="claude-env")
    config = resolve_model_config({"provider": "openai"})
    assert (config.provider, config.model) == ("openai", "gpt-4o-mini")

    # A layer that names no provider applies to whichever is chosen.
    config = resolve_model_config({"model": "my-local-model"}, workspace=WORKSPACE)
    assert (config.provider, config.model) == ("anthropic", "my-local-model")


def test_base_url_precedence(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, **KEYS)
    workspace = {"provider": "openai", "base_url": "http://workspace:11434/v1"}
    assert resolve_model_config(workspace=workspace).base_url == "http://workspace:11434/v1"
    set_env(clean_env, OPENAI_BASE_URL="http://env:8000/v1", ANTHROPIC_BASE_URL="http://a:1")
    config = resolve_model_config(workspace=workspace)
    assert (config.base_url, config.sources["base_url"]) == (
        "http://env:8000/v1",
        "env:OPENAI_BASE_URL",
    )
    config = resolve_model_config({"base_url": "http://override/v1"}, workspace=workspace)
    assert config.base_url == "http://override/v1"
    assert resolve_model_config({"provider": "anthropic"}).base_url == "http://a:1"


def test_sampling_settings_come_from_override_then_workspace(
    clean_env: pytest.MonkeyPatch,
) -> None:
    set_env(clean_env, **KEYS)
    workspace = {"temperature": 0.7, "max_tokens": 1000, "timeout": 30, "max_retries": 0}
    config = resolve_model_config({"max_tokens": 50}, workspace=workspace)
    assert (config.temperature, config.max_tokens, config.timeout, config.max_retries) == (
        0.7,
        50,
        30.0,
        0,
    )
    assert config.sources["max_tokens"] == "override"
    assert config.sources["temperature"] == "workspace model settings"


def test_a_null_temperature_sends_none(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, **KEYS)
    assert resolve_model_config({"temperature": None}).temperature is None
    assert resolve_model_config(workspace={"temperature": None}).temperature is None
    # A skill's null inherits the agent's value.
    config = resolve_model_config(workspace={"temperature": 0.4}, skill={"temperature": None})
    assert config.temperature == 0.4


# ----------------------------------------------------------- per-skill merge


AGENT = {
    "provider": "openai",
    "model": "gpt-4o",
    "base_url": "http://vllm:8000/v1",
    "temperature": 0.1,
    "max_tokens": 2000,
}


def test_skill_overrides_merge_key_by_key(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, **KEYS)
    skill = {"temperature": 0.9, "max_tokens": None}
    config = resolve_model_config(
        workspace=AGENT,
        skill=skill,
        workspace_source="agent.md: model",
        skill_source="skills/report.md: model",
    )
    assert (config.model, config.base_url, config.temperature, config.max_tokens) == (
        "gpt-4o",
        "http://vllm:8000/v1",
        0.9,
        2000,
    )
    assert config.sources["temperature"] == "skills/report.md: model"
    assert config.sources["max_tokens"] == "agent.md: model"
    # Deterministic and pure: same inputs, same result; inputs untouched.
    again = resolve_model_config(workspace=AGENT, skill=skill)
    assert again == config
    assert AGENT["temperature"] == 0.1 and skill == {"temperature": 0.9, "max_tokens": None}


def test_a_skill_switching_provider_drops_the_agents_provider_settings() -> None:
    merged = merge_model_settings(AGENT, {"provider": "anthropic", "max_tokens": 500})
    assert merged == {"provider": "anthropic", "temperature": 0.1, "max_tokens": 500}
    merged = merge_model_settings(AGENT, {"provider": "openai", "model": "gpt-4.1"})
    assert merged["base_url"] == "http://vllm:8000/v1" and merged["model"] == "gpt-4.1"
    assert merge_model_settings(None, None) == {}
    assert merge_model_settings({"model": "x"}, {"provider": "anthropic"}) == {
        "provider": "anthropic"
    }


def test_skill_switching_provider_resolves_that_providers_defaults(
    clean_env: pytest.MonkeyPatch,
) -> None:
    set_env(clean_env, **KEYS)
    config = resolve_model_config(workspace=AGENT, skill={"provider": "anthropic"})
    assert (config.provider, config.model, config.base_url) == (
        "anthropic",
        DEFAULT_MODELS["anthropic"],
        None,
    )
    assert config.temperature == 0.1


# ---------------------------------------------------------------- API keys


def test_missing_key_names_the_provider_and_the_variable(
    clean_env: pytest.MonkeyPatch,
) -> None:
    set_env(clean_env, OPENAI_API_KEY="sk-openai")  # the other provider's key does not help
    with pytest.raises(MissingAPIKeyError) as caught:
        resolve_model_config(workspace={"provider": "anthropic"})
    error = caught.value
    assert "'anthropic'" in str(error) and "ANTHROPIC_API_KEY" in str(error)
    assert (error.provider, error.env_var, error.field) == (
        "anthropic",
        "ANTHROPIC_API_KEY",
        "api_key",
    )
    assert isinstance(error, ModelConfigError) and isinstance(error, ModelError)
    assert isinstance(error, ValueError)


def test_an_empty_key_counts_as_missing(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, OPENAI_API_KEY="  ")
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        resolve_model_config()


def test_api_key_env_names_another_variable(clean_env: pytest.MonkeyPatch) -> None:
    workspace = {
        "provider": "openai",
        "model": "meta-llama/llama-3.3-70b-instruct",
        "base_url": "https://openrouter.ai/api/v1",
        "api_key_env": "OPENROUTER_API_KEY",
    }
    with pytest.raises(MissingAPIKeyError, match="OPENROUTER_API_KEY"):
        resolve_model_config(workspace=workspace)
    set_env(clean_env, OPENROUTER_API_KEY="sk-or")
    config = resolve_model_config(workspace=workspace)
    assert (config.api_key, config.api_key_env) == ("sk-or", "OPENROUTER_API_KEY")


def test_explicit_key_and_explicit_env_mapping(clean_env: pytest.MonkeyPatch) -> None:
    config = resolve_model_config({"api_key": "sk-explicit"})
    assert (config.api_key, config.api_key_env, config.sources["api_key"]) == (
        "sk-explicit",
        None,
        "override",
    )
    # An explicit env mapping replaces os.environ (e.g. os.environ merged with .env).
    set_env(clean_env, OPENAI_API_KEY="from-process")
    config = resolve_model_config(env={"OPENAI_API_KEY": "from-dotenv"})
    assert config.api_key == "from-dotenv"


def test_keys_are_not_allowed_in_workspace_files(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_model_config(workspace={"api_key": "sk-leak"}, workspace_source="agent.md: model")
    assert caught.value.field == "api_key"
    assert str(caught.value).startswith("agent.md: model: api_key is not allowed here")


def test_the_key_never_shows(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, OPENAI_API_KEY="sk-secret-value")
    config = resolve_model_config()
    assert "sk-secret-value" not in repr(config)
    described = config.describe()
    assert "sk-secret-value" not in str(described)
    assert described["api_key"] == "<set from OPENAI_API_KEY>"
    assert hash(config) == hash(resolve_model_config())


def test_a_report_without_a_key(clean_env: pytest.MonkeyPatch) -> None:
    config = resolve_model_config(require_api_key=False)
    assert config.api_key == ""
    assert config.describe()["api_key"] == "<missing: set OPENAI_API_KEY>"
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        make_model(config)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("settings", "field", "problem"),
    [
        ({"temperature": "hot"}, "temperature", "must be a number"),
        ({"temperature": -1}, "temperature", "must be >= 0"),
        ({"max_tokens": 0}, "max_tokens", "must be >= 1"),
        ({"max_tokens": True}, "max_tokens", "must be an integer"),
        ({"max_tokens": 10.5}, "max_tokens", "must be an integer"),
        ({"max_retries": -1}, "max_retries", "must be >= 0"),
        ({"timeout": 0}, "timeout", "must be > 0"),
        ({"streaming": "yes"}, "streaming", "must be true or false"),
        ({"model": ""}, "model", "must be a non-empty string"),
        ({"provider": "gemini"}, "provider", "must be one of 'openai', 'anthropic'"),
        ({"headers": {"x": 1}}, "headers", "must map header names"),
        ({"max_tokens_field": "n"}, "max_tokens_field", "must be one of"),
        ({"temprature": 0.3}, "temprature", "is not a model setting"),
    ],
)
def test_invalid_settings_name_the_file_and_field(
    clean_env: pytest.MonkeyPatch, settings: dict[str, Any], field: str, problem: str
) -> None:
    set_env(clean_env, **KEYS)
    with pytest.raises(ModelConfigError) as caught:
        resolve_model_config(
            workspace={"temperature": 0.3},
            skill=settings,
            skill_source="skills/report.md: model",
        )
    assert caught.value.field == field
    assert caught.value.source == "skills/report.md: model"
    assert str(caught.value).startswith(f"skills/report.md: model: {field} {problem}")


def test_invalid_environment_value_names_the_variable(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, A2A_MODELS_PROVIDER="gemini")
    with pytest.raises(ModelConfigError) as caught:
        resolve_model_config()
    assert str(caught.value).startswith("environment variable A2A_MODELS_PROVIDER: provider")


def test_settings_must_be_a_mapping() -> None:
    with pytest.raises(ModelConfigError, match=r"agent\.md: model: the model settings must be"):
        resolve_model_config(workspace=["gpt-4o"], workspace_source="agent.md: model")  # type: ignore[arg-type]


# ------------------------------------------------------------------ make_model


def test_make_model_builds_the_configured_implementation(clean_env: pytest.MonkeyPatch) -> None:
    set_env(clean_env, **KEYS)
    openai_model = make_model(
        resolve_model_config(
            workspace={"model": "llama3.1", "base_url": "http://127.0.0.1:11434/v1"}
        )
    )
    assert isinstance(openai_model, OpenAIChatModel)
    assert (openai_model.provider, openai_model.model) == ("openai", "llama3.1")
    assert openai_model.base_url.startswith("http://127.0.0.1:11434/v1")
    assert openai_model.max_tokens_field == "max_tokens"  # not api.openai.com
    official = make_model(resolve_model_config())
    assert isinstance(official, OpenAIChatModel)
    assert official.max_tokens_field == "max_completion_tokens"

    anthropic_model = make_model(
        resolve_model_config({"provider": "anthropic", "temperature": 0.0, "max_tokens": 99})
    )
    assert isinstance(anthropic_model, AnthropicModel)
    assert (anthropic_model.temperature, anthropic_model.max_tokens) == (0.0, 99)


def test_make_model_rejects_an_unknown_provider() -> None:
    config = ModelConfig(provider="gemini", model="g", api_key="k")
    with pytest.raises(ModelConfigError, match="unknown model provider 'gemini'"):
        make_model(config)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_configured_from_the_environment_end_to_end(
    clean_env: pytest.MonkeyPatch, scripted_server: ScriptedModelServer, provider: str
) -> None:
    base = scripted_server.openai_base_url if provider == "openai" else scripted_server.url
    set_env(
        clean_env,
        A2A_MODELS_PROVIDER=provider,
        A2A_MODELS_MODEL="env-model",
        OPENAI_API_KEY="sk-o",
        ANTHROPIC_API_KEY="sk-a",
        OPENAI_BASE_URL=base,
        ANTHROPIC_BASE_URL=base,
    )
    config = resolve_model_config(
        workspace={"temperature": 0.3, "max_tokens": 321, "max_retries": 0},
        skill={"temperature": 0.6},
    )
    scripted_server.script(Turn(text=["configured"]))
    async with make_model(config) as model:
        response = await model.complete(ModelRequest((UserMessage("hi"),)))
    assert response.text == "configured"
    body = scripted_server.last.body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("env-model", 0.6, 321)
