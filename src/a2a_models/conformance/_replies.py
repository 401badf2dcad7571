"""What came back: raw HTTP replies, A2A errors read from any binding, call results
and SSE events, each able to describe itself for a check's message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .. import codec
from .. import models as m
from .._state import TaskState
from ..errors import JSONRPCError, error_from_reason
from ._registry import JSONRPC, REST, Exchange
from ._target import excerpt

__all__ = [
    "ERROR_INFO_TYPE",
    "CallResult",
    "HttpReply",
    "RemoteError",
    "StreamEvent",
    "describe_error_class",
    "error_class_for",
    "rest_error",
    "wire_dialect",
]

_A2A_REASONS = {
    "TASK_NOT_FOUND",
    "TASK_NOT_CANCELABLE",
    "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "UNSUPPORTED_OPERATION",
    "CONTENT_TYPE_NOT_SUPPORTED",
    "INVALID_AGENT_RESPONSE",
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    "EXTENSION_SUPPORT_REQUIRED",
    "VERSION_NOT_SUPPORTED",
}
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"


def describe_error_class(cls: type[JSONRPCError], transport: str, version: str = "1.0") -> str:
    if transport == REST and version == "0.3":  # no status per error type in 0.3 (§3.2.3)
        return f"{cls.__name__} (an HTTP {cls.http_status // 100}xx error with a JSON body)"
    if transport == REST:
        reason = f" {cls.reason}" if cls.reason else ""
        return f"{cls.__name__} (HTTP {cls.http_status}{reason})"
    return f"{cls.__name__} ({cls.code})"


@attrs.frozen(slots=True)
class HttpReply:
    """A complete HTTP response (or the failure to get one)."""

    exchange: Exchange
    status: int | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    body: bytes = b""
    error: str | None = None
    #: A response came, but its body was not read to the end (``error`` says why).
    incomplete: bool = False

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()

    def json(self) -> Any:
        """The parsed body; raises ValueError if it is not JSON."""
        return codec.loads(self.body)


@attrs.frozen(slots=True)
class RemoteError:
    """An error answer, transport-neutral.

    JSON-RPC: ``code``/``message``/``data`` of the error object. REST: the
    HTTP status, and ``code``/``message``/``details`` of the google.rpc.Status
    body when there is one; ``reason`` is the ErrorInfo reason if present.
    """

    transport: str
    code: int | None
    message: str
    data: Any = None
    http_status: int | None = None
    reason: str | None = None
    details: tuple[Any, ...] = ()
    body_shape_ok: bool = True
    #: The A2A version of the endpoint that answered (``may_be`` judges by its rules).
    version: str = "1.0"
    #: HTTP+JSON: the answer is the server's generic one for a path no A2A server has
    #: (``CheckContext.call`` compares the two): the route is missing, this is no A2A error.
    route_missing: bool = False

    def is_(self, cls: type[JSONRPCError]) -> bool:
        """Whether this is ``cls`` by 1.0's rules: the JSON-RPC code, or over HTTP+JSON the
        status of 1.0's table (§5.4) and the ErrorInfo reason when there is one."""
        if self.transport == JSONRPC:
            return self.code == cls.code
        if self.http_status != cls.http_status:
            return False
        if cls.reason is None:
            return self.reason is None or self.reason not in _A2A_REASONS
        return self.reason is None or self.reason == cls.reason

    def may_be(self, cls: type[JSONRPCError]) -> bool:
        """Whether this can be ``cls`` by its own version's text. As :meth:`is_`, except over
        0.3 HTTP+JSON, which fixes neither an error body nor a status per error type: 0.3
        §3.2.3 asks only for "appropriate HTTP status codes ... that correspond to A2A error
        types". There an error may be ``cls`` when its status is of ``cls``'s class (4xx for
        an error the client caused, 5xx for the server's own) and the route exists; an
        ErrorInfo reason, when the body has one, must still agree."""
        if self.transport != REST or self.version != "0.3":
            return self.is_(cls)
        status = self.http_status
        if self.route_missing or status is None or status // 100 != cls.http_status // 100:
            return False
        if cls.reason is None:
            return self.reason is None or self.reason not in _A2A_REASONS
        return self.reason is None or self.reason == cls.reason

    def describe(self) -> str:
        if self.transport == JSONRPC:
            return f"JSON-RPC error {self.code} {self.message!r}"
        reason = f" reason={self.reason}" if self.reason else ""
        return f"HTTP {self.http_status}{reason} {self.message!r}"

    def error_info(self) -> dict[str, Any] | None:
        for d in self.details:
            if isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE:
                return d
        return None


@attrs.frozen(slots=True)
class CallResult:
    """The outcome of one operation: a raw ``result`` xor an ``error`` (or a ``problem``)."""

    op: str
    version: str
    transport: str
    http: HttpReply
    result: Any = None
    has_result: bool = False
    error: RemoteError | None = None
    #: Why the reply is neither a result nor an error (not JSON, bad envelope, ...).
    problem: str | None = None
    #: The raw JSON-RPC envelope (JSON-RPC only).
    envelope: Any = None

    @property
    def dialect(self) -> str:
        return wire_dialect(self.version, self.transport)

    def describe(self) -> str:
        if self.error is not None:
            return self.error.describe()
        if self.problem is not None:
            return self.problem
        return f"a result ({excerpt(codec.dumps(self.result), 160)})"


def wire_dialect(version: str, transport: str) -> str:
    if version == "1.0":
        return "1.0"
    return "0.3-http" if transport == REST else "0.3"


@attrs.define
class StreamEvent:
    """One SSE event, parsed as far as it goes."""

    index: int
    data: str
    sse_id: str = ""
    json: Any = None
    problem: str | None = None
    #: The StreamResponse member (JSON-RPC: the envelope's ``result``).
    payload: Any = None
    error: RemoteError | None = None
    model: Any = None
    decode_error: str | None = None

    @property
    def kind(self) -> str | None:
        v = self.model
        if isinstance(v, m.Task):
            return "task"
        if isinstance(v, m.Message):
            return "message"
        if isinstance(v, m.TaskStatusUpdateEvent):
            return "status"
        if isinstance(v, m.TaskArtifactUpdateEvent):
            return "artifact"
        return None

    @property
    def state(self) -> TaskState | None:
        v = self.model
        if isinstance(v, m.Task):
            return v.status.state
        if isinstance(v, m.TaskStatusUpdateEvent):
            return v.status.state
        return None

    @property
    def is_terminal(self) -> bool:
        st = self.state
        return st is not None and st.is_terminal

    def describe(self) -> str:
        if self.model is not None:
            st = self.state
            return f"#{self.index} {self.kind}" + (f" {st.name}" if st is not None else "")
        if self.error is not None:
            return f"#{self.index} error: {self.error.describe()}"
        return f"#{self.index} undecodable: {self.problem or self.decode_error}"


def rest_error(reply: HttpReply, version: str = "1.0") -> RemoteError:
    try:
        body = reply.json()
    except ValueError:
        body = None
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        details = tuple(err.get("details") or ()) if isinstance(err.get("details"), list) else ()
        reason = None
        for d in details:
            if isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE:
                r = d.get("reason")
                reason = r if isinstance(r, str) else None
                break
        code = err.get("code")
        return RemoteError(
            transport=REST,
            code=code if isinstance(code, int) else None,
            message=str(err.get("message", "")),
            data=err,
            http_status=reply.status,
            reason=reason,
            details=details,
            body_shape_ok=True,
            version=version,
        )
    message = ""
    if isinstance(body, dict):
        message = str(body.get("message") or body.get("detail") or body.get("title") or "")
    return RemoteError(
        transport=REST,
        code=None,
        message=message or excerpt(reply.body, 120),
        data=body,
        http_status=reply.status,
        body_shape_ok=False,
        version=version,
    )


def error_class_for(reason: str | None) -> type[JSONRPCError] | None:
    return error_from_reason(reason) if reason else None
