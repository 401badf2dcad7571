"""One error hierarchy for every model provider.

The provider SDKs raise their own exception trees (``openai.APIStatusError``,
``anthropic.RateLimitError``, raw ``httpx2`` transport errors, ...). The model
implementations translate all of them into :class:`ModelError` subclasses that
carry the provider name, so the orchestration layer catches one family:

* :class:`ModelAuthenticationError` - 401 / 403: a bad, expired or unauthorised key;
* :class:`ModelRateLimitError` - 429 (``retry_after`` when the provider said);
* :class:`ModelBadRequestError` - other 4xx: the request itself is wrong
  (unknown model, invalid tool schema, context too long, ...);
* :class:`ModelServerError` - 5xx, "overloaded", an error event inside a
  stream, an unreadable response;
* :class:`ModelConnectionError` - the provider could not be reached or the
  connection broke; :class:`ModelTimeoutError` when a timeout expired;
* :class:`ModelConfigError` - the configuration is wrong (no provider call was
  made); :class:`MissingAPIKeyError` names the environment variable to set.

This module imports no SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import A2AError

__all__ = [
    "MissingAPIKeyError",
    "ModelAuthenticationError",
    "ModelBadRequestError",
    "ModelConfigError",
    "ModelConnectionError",
    "ModelError",
    "ModelRateLimitError",
    "ModelServerError",
    "ModelTimeoutError",
    "error_for_status",
    "error_for_type",
]


class ModelError(A2AError):
    """A model provider call failed (or could not be made).

    ``provider`` names the configured provider (``"openai"``, ``"anthropic"``
    or the label given to an OpenAI-compatible endpoint); ``status_code`` is the
    HTTP status when there was one; ``code`` the provider's machine-readable
    error type or code when it sent one.
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status_code: int | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status_code = status_code
        self.code = code

    def __str__(self) -> str:
        status = f" (HTTP {self.status_code})" if self.status_code is not None else ""
        return f"{self.provider}: {self.message}{status}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, provider={self.provider!r}, "
            f"status_code={self.status_code!r}, code={self.code!r})"
        )


class ModelAuthenticationError(ModelError):
    """The provider refused the credentials (HTTP 401 or 403)."""


class ModelRateLimitError(ModelError):
    """Too many requests or tokens (HTTP 429); ``retry_after`` is in seconds, when known."""

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status_code: int | None = 429,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status_code=status_code, code=code)
        self.retry_after = retry_after


class ModelBadRequestError(ModelError):
    """The provider rejected the request itself (HTTP 400, 404, 413, 422, other 4xx)."""


class ModelServerError(ModelError):
    """The provider failed (5xx, overloaded, an error event in the stream, a garbled response)."""

    retryable = True


class ModelConnectionError(ModelError):
    """The provider could not be reached, or the connection broke mid-stream."""

    retryable = True


class ModelTimeoutError(ModelConnectionError):
    """A connect or read timeout expired."""


class ModelConfigError(ModelError, ValueError):
    """The model configuration is invalid; no request was sent.

    ``field`` names the offending setting (``"temperature"``, ``"provider"``,
    ...) and ``source`` where it came from (an override, an environment
    variable, the workspace file) when known.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        field: str | None = None,
        source: str | None = None,
    ) -> None:
        super().__init__(message, provider=provider)
        self.field = field
        self.source = source

    def __str__(self) -> str:
        return self.message


class MissingAPIKeyError(ModelConfigError):
    """The chosen provider needs an API key and none was configured."""

    def __init__(self, provider: str, env_var: str) -> None:
        super().__init__(
            f"no API key for model provider {provider!r}: set the {env_var} environment "
            f"variable (or pass api_key explicitly)",
            provider=provider,
            field="api_key",
            source=f"env:{env_var}",
        )
        self.env_var = env_var


# Error "type" strings the providers put in their error bodies.
_TYPE_CLASSES: dict[str, type[ModelError]] = {
    # Anthropic
    "authentication_error": ModelAuthenticationError,
    "permission_error": ModelAuthenticationError,
    "rate_limit_error": ModelRateLimitError,
    "invalid_request_error": ModelBadRequestError,
    "not_found_error": ModelBadRequestError,
    "request_too_large": ModelBadRequestError,
    "api_error": ModelServerError,
    "overloaded_error": ModelServerError,
    "timeout_error": ModelTimeoutError,
    # OpenAI (``type`` or ``code``)
    "invalid_api_key": ModelAuthenticationError,
    "insufficient_quota": ModelRateLimitError,
    "rate_limit_exceeded": ModelRateLimitError,
    "server_error": ModelServerError,
    "context_length_exceeded": ModelBadRequestError,
}


def _build(
    cls: type[ModelError],
    message: str,
    *,
    provider: str,
    status_code: int | None,
    code: str | None,
    retry_after: float | None,
) -> ModelError:
    if cls is ModelRateLimitError:
        return ModelRateLimitError(
            message, provider=provider, status_code=status_code, code=code, retry_after=retry_after
        )
    return cls(message, provider=provider, status_code=status_code, code=code)


def error_for_status(
    provider: str,
    status_code: int,
    message: str,
    *,
    code: str | None = None,
    retry_after: float | None = None,
) -> ModelError:
    """The :class:`ModelError` subclass for an HTTP error status."""
    cls: type[ModelError]
    if status_code in (401, 403):
        cls = ModelAuthenticationError
    elif status_code == 429:
        cls = ModelRateLimitError
    elif status_code == 408:
        cls = ModelTimeoutError
    elif status_code >= 500:
        cls = ModelServerError
    elif 400 <= status_code < 500:
        cls = ModelBadRequestError
    else:  # an error reported with a 2xx/3xx status, e.g. inside a stream
        cls = _TYPE_CLASSES.get(code or "", ModelServerError)
    return _build(
        cls, message, provider=provider, status_code=status_code, code=code, retry_after=retry_after
    )


def error_for_type(provider: str, error_type: str | None, message: str) -> ModelError:
    """The :class:`ModelError` for an error reported without an HTTP status (mid-stream)."""
    cls = _TYPE_CLASSES.get(error_type or "", ModelServerError)
    return _build(
        cls, message, provider=provider, status_code=None, code=error_type, retry_after=None
    )


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` response headers."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            continue
    return None


def error_details(body: object) -> tuple[str | None, str | None]:
    """``(message, type-or-code)`` from a provider error body, when it has them.

    Handles OpenAI's ``{"error": {"message", "type", "code"}}`` (or its inner
    object, which the OpenAI SDK keeps) and Anthropic's
    ``{"type": "error", "error": {"type", "message"}}``.
    """
    if not isinstance(body, Mapping):
        return None, None
    inner: Any = body.get("error", body)
    if not isinstance(inner, Mapping):
        inner = body
    message = inner.get("message")
    kind = inner.get("type")
    code = inner.get("code")
    kind_or_code = code if isinstance(code, str) and code in _TYPE_CLASSES else kind
    return (
        message if isinstance(message, str) and message else None,
        kind_or_code if isinstance(kind_or_code, str) and kind_or_code else None,
    )
