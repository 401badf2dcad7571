"""Fixtures: the scripted model server, and models of both providers pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from a2a_models.adapters.llm import AnthropicModel, Model, OpenAIChatModel, OpenAIResponsesModel

from .scripted_server import ScriptedModelServer

# "responses" is the OpenAI provider speaking the Responses API.
PROVIDERS = ("openai", "anthropic", "responses")
MODEL_NAMES = {"openai": "gpt-scripted", "anthropic": "claude-scripted", "responses": "gpt-resp"}
API_KEYS = {"openai": "sk-test-openai", "anthropic": "sk-ant-test", "responses": "sk-test-openai"}

ModelFactory = Callable[..., Model]


@pytest.fixture
async def scripted_server() -> AsyncIterator[ScriptedModelServer]:
    """A running scripted server, stopped after the test."""
    async with ScriptedModelServer() as server:
        yield server


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    """Each test using it runs once per provider API."""
    value: str = request.param
    return value


def build_model(provider: str, server: ScriptedModelServer, **options: Any) -> Model:
    """A model of ``provider`` talking to ``server``: no retries, short timeouts."""
    options.setdefault("max_retries", 0)
    options.setdefault("timeout", 5.0)
    options.setdefault("api_key", API_KEYS[provider])
    model = options.pop("model", MODEL_NAMES[provider])
    if provider == "openai":
        return OpenAIChatModel(model, base_url=server.openai_base_url, **options)
    if provider == "responses":
        for chat_only in ("stream_usage", "max_tokens_field"):
            options.pop(chat_only, None)
        return OpenAIResponsesModel(model, base_url=server.openai_base_url, **options)
    return AnthropicModel(model, base_url=server.anthropic_base_url, **options)


@pytest.fixture
async def make_model(
    scripted_server: ScriptedModelServer, provider: str
) -> AsyncIterator[ModelFactory]:
    """``make_model(**options)``: a model of the test's provider; closed after the test."""
    made: list[Model] = []

    def factory(**options: Any) -> Model:
        model = build_model(provider, scripted_server, **options)
        made.append(model)
        return model

    yield factory
    for model in made:
        await model.aclose()
