"""A2A errors <-> gRPC status with ``google.rpc.Status`` details (spec §10.6).

One mapping for both sides: the server turns a :class:`~a2a_models.errors.JSONRPCError`
into a status code, message and a ``grpc-status-details-bin`` trailer whose
``google.rpc.Status`` carries the error's 1.0 ``details`` (an ``ErrorInfo``
with ``reason`` and ``domain: a2a-protocol.org`` for A2A errors); the client
reads them back into the same error class through
:meth:`JSONRPCError.from_http_status`, so every binding raises the same
exceptions.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import grpc
from google.protobuf import any_pb2, json_format
from google.rpc import error_details_pb2, status_pb2  # noqa: F401  (registers ErrorInfo & co.)

from ...client import ClientTimeoutError
from ...errors import (
    A2AError,
    JSONRPCError,
    TransportError,
    error_from_code,
    error_from_name,
)

__all__ = ["DETAILS_KEY", "error_from_rpc", "status_of"]

log = logging.getLogger("a2a_models.adapters.grpc")

#: The trailer carrying the serialized ``google.rpc.Status``.
DETAILS_KEY = "grpc-status-details-bin"
#: A 0.3 status message led by its error's name: ``TaskNotFoundError: Task not found``.
_NAMED = re.compile(r"([A-Za-z]+Error): (.*)", re.DOTALL)
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def status_of(
    error: JSONRPCError, *, named: bool = False
) -> tuple[grpc.StatusCode, str, tuple[tuple[str, bytes], ...]]:
    """The gRPC code, message and trailing metadata for ``error``.

    ``named`` (0.3): the message starts with the error's name, ``TaskNotFoundError:
    ...``. 0.3 fixes no error form for gRPC; that is how the a2a-sdk's 0.3 servers
    (0.3.x, and 1.x's compat one) say which error it is, and all its clients can read.
    """
    code = getattr(grpc.StatusCode, error.grpc_status, grpc.StatusCode.UNKNOWN)
    message = error.message
    if named:
        standard = error_from_code(error.code)
        if standard is not JSONRPCError and isinstance(error, standard):
            message = f"{standard.__name__}: {message}"
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in error.status_details():
        packed = any_pb2.Any()
        try:
            json_format.ParseDict(detail, packed)
        except (json_format.ParseError, TypeError, ValueError) as exc:
            log.warning("error detail %r has no protobuf form, left out: %s", detail, exc)
            continue
        status.details.append(packed)
    return code, message, ((DETAILS_KEY, status.SerializeToString()),)


def error_from_rpc(exc: Any, target: str | None = None, *, named: bool = False) -> A2AError:
    """The project's error for a failed call (``grpc.aio.AioRpcError`` or ``grpc.RpcError``).

    A2A errors come back as their class (by ``ErrorInfo.reason``), others by
    status code as the REST binding does; a deadline is :class:`ClientTimeoutError`;
    ``UNAVAILABLE`` without details (gRPC's own: no connection to ``target``,
    or it broke) is :class:`~a2a_models.errors.TransportError`. ``named`` (0.3):
    the message may lead with the error's name (:func:`status_of`); it is taken off,
    and says which error it is when no ``ErrorInfo`` does (the a2a-sdk's 0.3 servers
    send none).
    """
    code = exc.code()
    message = exc.details() or None
    details: list[Any] = []
    for key, value in exc.trailing_metadata() or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status()
            try:
                status.ParseFromString(value)
            except Exception:  # a malformed trailer: fall back on the code
                break
            message = status.message or message
            for item in status.details:
                try:
                    details.append(json_format.MessageToDict(item))
                except Exception:
                    details.append({"@type": item.type_url})
    if code is grpc.StatusCode.DEADLINE_EXCEEDED and not details:
        return ClientTimeoutError(f"deadline exceeded: {message or 'the call took too long'}")
    if code is grpc.StatusCode.UNAVAILABLE and not details:
        # Made by gRPC, not sent by the agent (whose errors carry an ErrorInfo).
        where = f" to {target}" if target else ""
        return TransportError(f"the connection{where} failed: {message or 'unavailable'}")
    if named and message is not None:
        found = _NAMED.fullmatch(message)
        klass = error_from_name(found.group(1)) if found is not None else None
        if found is not None and klass is not None:
            message = found.group(2)
            if not any(isinstance(d, dict) and d.get("@type") == _ERROR_INFO for d in details):
                return klass(message, details or None, remote=True)
    body = {"message": message, "status": code.name, "details": details}
    return JSONRPCError.from_http_status({"error": body})
