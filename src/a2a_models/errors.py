"""Every exception a2a-models raises, in one hierarchy.

Whose fault an error is shows in its class, as in h11:

* :class:`InvalidModelError` – *you* built a model with a bad value (local misuse).
* :class:`DecodeError` – *the peer* sent bytes that are not a valid A2A payload.
* :class:`EncodeError` – a value cannot be written in the requested dialect
  (for example a 1.0-only field encoded for a 0.3 peer).
* :class:`JSONRPCError` and its subclasses – the protocol's own errors, with the
  spec's codes. A server raises them to answer a request; a client raises them
  when the peer answered with an error (``err.remote`` is then ``True``).

The extras' errors are ``A2AError`` subclasses too, named for what failed
(``ModelError`` for an LLM provider, ``ToolError``, ``MCPServerError``,
``TransportError``, ``SchemaVersionError``...), so ``except A2AError``
catches everything this package raises on purpose.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

__all__ = [
    "ERROR_DOMAIN",
    "A2AError",
    "AuthenticationError",
    "ContentTypeNotSupportedError",
    "DecodeError",
    "EncodeError",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidModelError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "JSONRPCError",
    "MethodNotFoundError",
    "PermissionDeniedError",
    "PushNotificationNotSupportedError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "TransportError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
    "clip_input",
    "error_from_code",
    "error_from_name",
    "error_from_reason",
    "quote_input",
]

#: ``google.rpc.ErrorInfo.domain`` used by every A2A error (spec §9.5).
ERROR_DOMAIN = "a2a-protocol.org"
_ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
_STRUCT_TYPE = "type.googleapis.com/google.protobuf.Struct"
#: The type of a detail listing which request fields are wrong and why (spec §3.3.2).
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"
_VALUE_TYPE = "type.googleapis.com/google.protobuf.Value"


#: How many characters of a caller's value an error message repeats: enough to recognise it.
ECHO_LIMIT = 64
#: Longest id carried whole where a program reads it (error data, telemetry): any real one.
ID_LIMIT = 256


def clip_input(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` unchanged if at most ``limit`` characters, else its start followed by
    ``... (N characters)``: a caller's value as an error carries it unquoted (the
    ``ErrorInfo`` metadata), bounded whatever its size."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def quote_input(value: object, limit: int = ECHO_LIMIT) -> str:
    """A caller's ``value`` quoted for an error message: the ``repr`` of at most ``limit``
    characters of it, then ``... (N characters)`` when it was cut.

    Every error that repeats what the peer sent (a task id, an enum name, a URL) goes
    through here, so the answer to an 8 MiB bogus id is a few hundred bytes, not 16 MiB.
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value)} characters)"
    return clip_input(repr(value), limit)


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


class A2AError(Exception):
    """Base class of every error raised by a2a-models."""


class InvalidModelError(A2AError, ValueError):
    """A model was constructed with an invalid value (the caller's fault).

    ``field`` names the offending attribute as ``Class.attribute``.
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class DecodeError(A2AError, ValueError):
    """Input could not be decoded into the requested type (the peer's fault).

    ``path`` is a JSON path (``$.params.message.parts[2]``) to the first
    problem and ``expected`` says what should have been there.
    """

    def __init__(self, path: str, expected: str) -> None:
        self.path = path
        self.expected = expected
        super().__init__(f"{path}: {expected}")


class EncodeError(A2AError, ValueError):
    """A value cannot be expressed in the requested wire dialect."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class TransportError(A2AError, ConnectionError):
    """The exchange with the agent failed below A2A: no connection, a reset, a
    stream cut off. The agent did not answer; calling (or subscribing) again may work.

    Every client binding raises it (HTTP: its subclass ``HTTPTransportError``).
    """


class JSONRPCError(A2AError):
    """A JSON-RPC 2.0 error object: ``code``, ``message`` and optional ``data``.

    Subclasses exist for every code the JSON-RPC and A2A specifications define;
    :func:`error_from_code` maps a code back to its class. ``remote`` is true
    when the error was received from a peer rather than raised locally.
    """

    code: ClassVar[int] = -32000
    default_message: ClassVar[str] = "Server error"
    #: UPPER_SNAKE ``google.rpc.ErrorInfo.reason`` for A2A-specific errors.
    reason: ClassVar[str | None] = None
    #: HTTP status for the HTTP+JSON binding (spec §11.6).
    http_status: ClassVar[int] = 500
    #: ``google.rpc.Code`` name used in HTTP+JSON and gRPC error bodies.
    grpc_status: ClassVar[str] = "UNKNOWN"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        code: int | None = None,
        remote: bool = False,
    ) -> None:
        self.message = message or self.default_message
        self.data = data
        self.remote = remote
        if code is not None:
            # Only meaningful for the base class: an unknown code from a peer.
            self.code = code  # type: ignore[misc]
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def error_info(self, metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The ``google.rpc.ErrorInfo`` detail (1.0 wire form, with ``@type``)."""
        info: dict[str, Any] = {
            "@type": _ERROR_INFO_TYPE,
            "reason": self.reason or "UNKNOWN",
            "domain": ERROR_DOMAIN,
        }
        if metadata:
            info["metadata"] = dict(metadata)
        return info

    def to_jsonrpc(self, version: str = "1.0") -> dict[str, Any]:
        """The JSON-RPC ``error`` member for ``version`` ("1.0" or "0.3").

        1.0 carries ``data`` as an array of ``@type`` detail objects with an
        ``ErrorInfo`` for A2A errors (spec §9.5); 0.3 carries ``data`` as is.
        """
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if version.startswith("0."):
            if self.data is not None:
                err["data"] = self.data
            return err
        details = self.details()
        if details:
            err["data"] = details
        return err

    def to_http_status(self) -> dict[str, Any]:
        """The ``google.rpc.Status`` body used by the 1.0 HTTP+JSON binding."""
        details = self.status_details()
        body: dict[str, Any] = {
            "code": self.http_status,
            "status": self.grpc_status,
            "message": self.message,
        }
        if details:
            body["details"] = details
        return {"error": body}

    def status_details(self) -> list[Any]:
        """The ``details`` of an HTTP+JSON or gRPC status: :meth:`details`, and for
        the standard JSON-RPC errors an ``ErrorInfo`` too (``INVALID_PARAMS``, ...).

        Over JSON-RPC the code says which error it is; over HTTP and gRPC several
        share a status (400 ``INVALID_ARGUMENT``: invalid params, invalid request,
        unsupported content type), and the a2a-sdk's clients tell them apart only
        by the ErrorInfo: without one they report a bare "HTTP Error 400" and drop
        the message. The reasons are the SDK's.
        """
        details = self.details()
        reason = _STANDARD_REASONS.get(self.code)
        if reason is not None and not any(
            isinstance(d, dict) and d.get("@type") == _ERROR_INFO_TYPE for d in details
        ):
            details.append({"@type": _ERROR_INFO_TYPE, "reason": reason, "domain": ERROR_DOMAIN})
        return details

    def details(self) -> list[Any]:
        """The 1.0 ``details`` array: every entry carries ``@type`` (spec §9.5, §11.6).

        A2A errors lead with their ``google.rpc.ErrorInfo``. Free-form ``data``
        (``{"taskId": "t1"}``) goes into that ErrorInfo's ``metadata`` (string
        values, as the map requires); without an ErrorInfo it travels as a
        ``google.protobuf.Struct``, and any other untyped value as a
        ``google.protobuf.Value``. Already typed entries are kept as they are.
        """
        raw = _as_details(self.data)
        typed = [d for d in raw if isinstance(d, dict) and "@type" in d]
        info = next((d for d in typed if d["@type"] == _ERROR_INFO_TYPE), None)
        if info is None and self.reason is not None:
            info = self.error_info()
            typed.insert(0, info)
        for item in raw:
            if isinstance(item, dict) and "@type" in item:
                continue
            if isinstance(item, dict) and info is not None:
                metadata = dict(info.get("metadata") or {})
                for key, value in item.items():
                    metadata.setdefault(
                        str(key), value if isinstance(value, str) else _json_text(value)
                    )
                info["metadata"] = metadata
            elif isinstance(item, dict):
                typed.append({"@type": _STRUCT_TYPE, "value": item})
            else:
                typed.append({"@type": _VALUE_TYPE, "value": item})
        return typed

    @classmethod
    def from_jsonrpc(cls, error: Mapping[str, Any], *, remote: bool = True) -> JSONRPCError:
        """Rebuild the typed error from a JSON-RPC ``error`` object (either version)."""
        code = error.get("code")
        message = error.get("message")
        data = error.get("data")
        if not isinstance(code, int) or isinstance(code, bool):
            return InternalError(
                f"peer sent an error without an integer code: {error!r}", remote=remote
            )
        klass = error_from_code(code)
        if klass is JSONRPCError:
            return JSONRPCError(
                message if isinstance(message, str) else None, data, code=code, remote=remote
            )
        return klass(message if isinstance(message, str) else None, data, remote=remote)

    @classmethod
    def from_http_status(cls, body: Mapping[str, Any], *, remote: bool = True) -> JSONRPCError:
        """Rebuild the typed error from a ``google.rpc.Status`` REST error body."""
        inner = body.get("error", body)
        if not isinstance(inner, Mapping):
            return InternalError(f"peer sent an unreadable error body: {body!r}", remote=remote)
        message = inner.get("message")
        details = inner.get("details")
        msg = message if isinstance(message, str) else None
        if isinstance(details, list):
            for detail in details:
                if isinstance(detail, Mapping) and detail.get("@type") == _ERROR_INFO_TYPE:
                    reason = detail.get("reason")
                    klass = _BY_REASON.get(reason) if isinstance(reason, str) else None
                    if klass is not None:
                        return klass(msg, details, remote=remote)
        status = inner.get("status")
        for klass in _STATUS_FALLBACK:
            if klass.grpc_status == status:
                return klass(msg, details, remote=remote)
        return InternalError(msg, details, remote=remote)


def _as_details(data: Any) -> list[Any]:
    if data is None:
        return []
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        return list(data)
    return [data]


class JSONParseError(JSONRPCError):
    """-32700: the payload is not valid JSON."""

    code = -32700
    default_message = "Invalid JSON payload"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"


class InvalidRequestError(JSONRPCError):
    """-32600: the JSON is not a valid JSON-RPC request."""

    code = -32600
    default_message = "Request payload validation error"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"


class MethodNotFoundError(JSONRPCError):
    """-32601: no such method."""

    code = -32601
    default_message = "Method not found"
    http_status = 404
    grpc_status = "UNIMPLEMENTED"


class InvalidParamsError(JSONRPCError):
    """-32602: the method's parameters are invalid."""

    code = -32602
    default_message = "Invalid parameters"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"

    @classmethod
    def of_field(
        cls, field: str, message: str, *, problem: str | None = None
    ) -> InvalidParamsError:
        """The error for one wrong request field: its ``data`` is a ``google.rpc.BadRequest``
        field violation (``field``; ``problem``, or else ``message``, as its description),
        the structured form the spec asks validation errors to carry on every binding."""
        violation = {"field": field, "description": message if problem is None else problem}
        return cls(message, [{"@type": BAD_REQUEST_TYPE, "fieldViolations": [violation]}])


class InternalError(JSONRPCError):
    """-32603: the server failed unexpectedly."""

    code = -32603
    default_message = "Internal error"
    http_status = 500
    grpc_status = "INTERNAL"


class TaskNotFoundError(JSONRPCError):
    """-32001: the task does not exist or is not visible to the caller."""

    code = -32001
    default_message = "Task not found"
    reason = "TASK_NOT_FOUND"
    http_status = 404
    grpc_status = "NOT_FOUND"

    @classmethod
    def of(cls, task_id: str, *, config_id: str | None = None) -> TaskNotFoundError:
        """The error for a ``task_id`` that names no task the caller may see (with
        ``config_id``: no such push notification config of that task).

        The one place this error is worded; the id is echoed bounded, in the message
        (:func:`quote_input`) and as ``taskId`` in the data (whole up to ``ID_LIMIT``).
        """
        what = f"task {quote_input(task_id)}"
        if config_id is not None:
            what = f"push notification config {quote_input(config_id)} of {what}"
        return cls(f"{what} not found", {"taskId": clip_input(task_id, ID_LIMIT)})


class TaskNotCancelableError(JSONRPCError):
    """-32002: the task is in a state that cannot be canceled."""

    code = -32002
    default_message = "Task cannot be canceled"
    reason = "TASK_NOT_CANCELABLE"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class PushNotificationNotSupportedError(JSONRPCError):
    """-32003: the agent does not support push notifications."""

    code = -32003
    default_message = "Push Notification is not supported"
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class UnsupportedOperationError(JSONRPCError):
    """-32004: the operation is not supported by this agent or in this state."""

    code = -32004
    default_message = "This operation is not supported"
    reason = "UNSUPPORTED_OPERATION"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class ContentTypeNotSupportedError(JSONRPCError):
    """-32005: a requested or supplied media type is not supported."""

    code = -32005
    default_message = "Incompatible content types"
    reason = "CONTENT_TYPE_NOT_SUPPORTED"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"


class InvalidAgentResponseError(JSONRPCError):
    """-32006: the agent produced a response that violates the protocol."""

    code = -32006
    default_message = "Invalid agent response"
    reason = "INVALID_AGENT_RESPONSE"
    http_status = 500
    grpc_status = "INTERNAL"


class ExtendedAgentCardNotConfiguredError(JSONRPCError):
    """-32007: the extended agent card is declared but not configured.

    0.3 called this ``AuthenticatedExtendedCardNotConfiguredError``.
    """

    code = -32007
    default_message = "Extended agent card is not configured"
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class ExtensionSupportRequiredError(JSONRPCError):
    """-32008: a required extension was not requested by the client (1.0)."""

    code = -32008
    default_message = "Extension support required"
    reason = "EXTENSION_SUPPORT_REQUIRED"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class VersionNotSupportedError(JSONRPCError):
    """-32009: the requested A2A protocol version is not supported (1.0)."""

    code = -32009
    default_message = "Protocol version not supported"
    reason = "VERSION_NOT_SUPPORTED"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class AuthenticationError(JSONRPCError):
    """Missing or invalid credentials: HTTP 401 with ``WWW-Authenticate`` challenges,
    gRPC ``UNAUTHENTICATED``.

    JSON-RPC has no A2A code for it (spec §3.3.2 leaves it to the binding);
    it is sent as the implementation-defined server error -32000 with HTTP
    status 401. Servers raise it to refuse a call; clients raise it when the
    agent refused theirs (``challenges`` from the answer's ``WWW-Authenticate``).
    """

    code = -32000
    default_message = "Authentication required"
    http_status = 401
    grpc_status = "UNAUTHENTICATED"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        challenges: Sequence[str] = (),
        missing: bool = False,
        remote: bool = False,
    ) -> None:
        super().__init__(message, data, remote=remote)
        #: ``WWW-Authenticate`` values, one per acceptable scheme.
        self.challenges = tuple(challenges)
        #: True when no credentials were sent at all (rather than wrong ones).
        self.missing = missing


class PermissionDeniedError(JSONRPCError):
    """Valid credentials without the required scopes: HTTP 403, gRPC ``PERMISSION_DENIED``
    (JSON-RPC: -32000 with HTTP status 403)."""

    code = -32000
    default_message = "Permission denied"
    http_status = 403
    grpc_status = "PERMISSION_DENIED"

    def __init__(
        self,
        message: str | None = None,
        data: Any = None,
        *,
        challenges: Sequence[str] = (),
        remote: bool = False,
    ) -> None:
        super().__init__(message, data, remote=remote)
        self.challenges = tuple(challenges)


_BY_CODE: dict[int, type[JSONRPCError]] = {
    klass.code: klass
    for klass in (
        JSONParseError,
        InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        InternalError,
        TaskNotFoundError,
        TaskNotCancelableError,
        PushNotificationNotSupportedError,
        UnsupportedOperationError,
        ContentTypeNotSupportedError,
        InvalidAgentResponseError,
        ExtendedAgentCardNotConfiguredError,
        ExtensionSupportRequiredError,
        VersionNotSupportedError,
    )
}
#: ErrorInfo reasons of the standard errors in HTTP+JSON and gRPC statuses
#: (:meth:`JSONRPCError.status_details`), as the a2a-sdk names them.
_STANDARD_REASONS: dict[int, str] = {
    InvalidRequestError.code: "INVALID_REQUEST",
    MethodNotFoundError.code: "METHOD_NOT_FOUND",
    InvalidParamsError.code: "INVALID_PARAMS",
    InternalError.code: "INTERNAL_ERROR",
}
_BY_REASON: dict[str, type[JSONRPCError]] = {
    **{reason: _BY_CODE[code] for code, reason in _STANDARD_REASONS.items()},
    **{k.reason: k for k in _BY_CODE.values() if k.reason is not None},
}
# Generic REST errors without an ErrorInfo fall back on their status.
_STATUS_FALLBACK = (
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotFoundError,
    AuthenticationError,
    PermissionDeniedError,
    InternalError,
)


def error_from_code(code: int) -> type[JSONRPCError]:
    """The error class for a JSON-RPC ``code`` (``JSONRPCError`` if unknown)."""
    return _BY_CODE.get(code, JSONRPCError)


#: The standard errors by their class name, as the a2a-sdk's 0.3 gRPC servers lead
#: their status messages with it (0.3's names included).
_BY_NAME: dict[str, type[JSONRPCError]] = {
    **{k.__name__: k for k in _BY_CODE.values()},
    "AuthenticatedExtendedCardNotConfiguredError": ExtendedAgentCardNotConfiguredError,
}


def error_from_name(name: str) -> type[JSONRPCError] | None:
    """The error class named ``name`` (``TaskNotFoundError``; 0.3's names too), if standard."""
    return _BY_NAME.get(name)


def error_from_reason(reason: str) -> type[JSONRPCError] | None:
    """The error class for a ``google.rpc.ErrorInfo.reason`` (an A2A error, or a standard one
    as HTTP+JSON and gRPC statuses name it: ``INVALID_PARAMS``, ...)."""
    return _BY_REASON.get(reason)
