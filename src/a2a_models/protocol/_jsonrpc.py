"""JSON-RPC 2.0 envelopes, a strict parser and serializers (pure: no I/O).

The server side, in the style of h11: feed bytes to :func:`parse_message` and
match on what comes back; it never raises for bad input.

* :class:`Request` - a call; answer it with a :class:`SuccessResponse` or an
  :class:`ErrorResponse` echoing its ``id``.
* :class:`Notification` - a call without ``id``; never answer it.
* :class:`ErrorResponse` - the input was invalid (not JSON, not a JSON-RPC
  request, an empty or oversized batch); send it back as it is.
* :class:`Batch` - a batch; its items are each one of the three above. Answer
  with a :class:`Batch` of the responses to its requests and invalid items, or
  with nothing at all when every item was a notification.

The client side: :func:`encode_message` and :func:`parse_response`, which
returns typed errors (``JSONRPCError.from_jsonrpc(remote=True)``) and raises
:class:`~a2a_models.errors.InvalidAgentResponseError` for a malformed reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, Generic, TypeAlias, TypeVar

import attrs

from .. import codec
from ..errors import (
    DecodeError,
    InvalidAgentResponseError,
    InvalidModelError,
    InvalidRequestError,
    JSONParseError,
    JSONRPCError,
)
from ._version import normalize_version

__all__ = [
    "DEFAULT_MAX_BATCH_SIZE",
    "JSONRPC_VERSION",
    "Batch",
    "ErrorResponse",
    "Notification",
    "Params",
    "ParsedMessage",
    "ParsedResponse",
    "Request",
    "RequestId",
    "Response",
    "ResponseId",
    "SuccessResponse",
    "encode_message",
    "encode_response",
    "message_to_wire",
    "parse_message",
    "parse_message_value",
    "parse_response",
    "parse_response_value",
    "response_to_wire",
]

JSONRPC_VERSION: Final = "2.0"
#: Largest batch :func:`parse_message` accepts unless told otherwise.
DEFAULT_MAX_BATCH_SIZE: Final = 100

#: A request id: a string or an integer (never a boolean or a float).
RequestId: TypeAlias = str | int
#: A response id: ``None`` when the request's id could not be read.
ResponseId: TypeAlias = str | int | None
#: By-name (object) or by-position (array) parameters, as parsed JSON.
Params: TypeAlias = dict[str, Any] | list[Any]

_T_co = TypeVar("_T_co", covariant=True)
_MAX_ECHO = 100


def _is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# -- validators (local misuse raises InvalidModelError) ----------------------


def _v_method(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise InvalidModelError(f"{type(inst).__name__}.{attr.name}", "must be a str")


def _v_params(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, dict | list):
        raise InvalidModelError(
            f"{type(inst).__name__}.{attr.name}", "must be a dict, a list or None"
        )


def _v_request_id(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if not _is_request_id(value):
        raise InvalidModelError(
            f"{type(inst).__name__}.{attr.name}", "must be a str or an int (not bool or float)"
        )


def _v_response_id(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not _is_request_id(value):
        raise InvalidModelError(
            f"{type(inst).__name__}.{attr.name}",
            "must be a str, an int (not bool or float) or None",
        )


def _v_error(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, JSONRPCError):
        raise InvalidModelError(f"{type(inst).__name__}.{attr.name}", "must be a JSONRPCError")


def _v_items(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, tuple) or not value:
        raise InvalidModelError(f"{type(inst).__name__}.{attr.name}", "must be a non-empty tuple")


def _error_key(error: JSONRPCError) -> tuple[Any, ...]:
    """Errors compare by value, not identity, inside an :class:`ErrorResponse`."""
    return (type(error), error.code, error.message, error.data, error.remote)


# -- envelopes ----------------------------------------------------------------


@attrs.frozen(slots=True)
class Request:
    """A JSON-RPC call that expects an answer echoing ``id``.

    ``params`` is the parsed JSON (``None`` when the member was absent); decode
    it with :func:`~a2a_models.protocol.decode_params`.
    """

    method: str = attrs.field(validator=_v_method)
    params: Params | None = attrs.field(validator=_v_params, hash=False)
    id: RequestId = attrs.field(validator=_v_request_id)


@attrs.frozen(slots=True)
class Notification:
    """A JSON-RPC call without an ``id`` member: the server MUST NOT answer it."""

    method: str = attrs.field(validator=_v_method)
    params: Params | None = attrs.field(default=None, validator=_v_params, hash=False)


@attrs.frozen(slots=True)
class SuccessResponse:
    """A successful answer. ``result`` is a JSON-ready value (see ``encode_result``)."""

    id: ResponseId = attrs.field(validator=_v_response_id)
    result: Any = attrs.field(hash=False)


@attrs.frozen(slots=True)
class ErrorResponse:
    """An error answer; ``id`` is ``None`` when the request's id was unreadable."""

    id: ResponseId = attrs.field(validator=_v_response_id)
    error: JSONRPCError = attrs.field(validator=_v_error, eq=_error_key, hash=False)


@attrs.frozen(slots=True)
class Batch(Generic[_T_co]):
    """A JSON-RPC batch (a JSON array) of at least one item, in wire order."""

    items: tuple[_T_co, ...] = attrs.field(validator=_v_items)

    def __iter__(self) -> Iterator[_T_co]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


#: A response of either kind.
Response: TypeAlias = SuccessResponse | ErrorResponse
#: One item of an incoming message, after validation.
ParsedItem: TypeAlias = Request | Notification | ErrorResponse
#: What :func:`parse_message` returns.
ParsedMessage: TypeAlias = Request | Notification | ErrorResponse | Batch[ParsedItem]
#: What :func:`parse_response` returns.
ParsedResponse: TypeAlias = SuccessResponse | ErrorResponse | Batch[Response]


# -- server side: parsing requests ------------------------------------------


def _invalid(request_id: ResponseId, detail: str) -> ErrorResponse:
    return ErrorResponse(request_id, InvalidRequestError(f"Invalid JSON-RPC request: {detail}"))


def _parse_item(value: object) -> ParsedItem:
    """Validate one request object (JSON-RPC 2.0 §4) without raising."""
    if not isinstance(value, dict):
        return _invalid(None, f"expected an object, got {_json_type(value)}")
    has_id = "id" in value
    raw_id = value.get("id")
    request_id: ResponseId = None
    if has_id:
        if raw_id is None:
            return _invalid(None, "id must be a string or an integer, not null")
        if not _is_request_id(raw_id):
            return _invalid(None, f"id must be a string or an integer, got {_json_type(raw_id)}")
        request_id = raw_id
    if "jsonrpc" not in value:
        return _invalid(request_id, 'member "jsonrpc" is missing; it must be "2.0"')
    version = value["jsonrpc"]
    if not (isinstance(version, str) and version == JSONRPC_VERSION):
        return _invalid(request_id, 'member "jsonrpc" must be exactly "2.0"')
    if "method" not in value:
        return _invalid(request_id, 'member "method" is missing')
    method = value["method"]
    if not isinstance(method, str):
        return _invalid(request_id, f"method must be a string, got {_json_type(method)}")
    params = value.get("params")
    if "params" in value and not isinstance(params, dict | list):
        return _invalid(
            request_id, f"params must be an object or an array, got {_json_type(params)}"
        )
    if not has_id:
        return Notification(method, params)
    assert request_id is not None  # for mypy: has_id and validated above
    return Request(method, params, request_id)


def parse_message_value(
    value: object, *, max_batch_size: int | None = DEFAULT_MAX_BATCH_SIZE
) -> ParsedMessage:
    """Like :func:`parse_message`, for a JSON value that is already parsed."""
    if isinstance(value, list):
        if not value:
            return _invalid(None, "empty batch: a batch needs at least one request")
        if max_batch_size is not None and len(value) > max_batch_size:
            return _invalid(
                None, f"batch of {len(value)} requests exceeds the limit of {max_batch_size}"
            )
        return Batch(tuple(_parse_item(item) for item in value))
    return _parse_item(value)


def parse_message(
    data: bytes | bytearray | memoryview | str,
    *,
    max_batch_size: int | None = DEFAULT_MAX_BATCH_SIZE,
) -> ParsedMessage:
    """Parse an incoming JSON-RPC 2.0 message. Never raises for bad input.

    Returns a :class:`Request`, a :class:`Notification`, an
    :class:`ErrorResponse` to send back as is (invalid JSON gives -32700 with
    id ``null``; any other invalid message -32600, echoing the id when it
    could be read), or a :class:`Batch` of those, one per array element.
    An empty batch or one longer than ``max_batch_size`` (``None``: no
    limit) is a single -32600 error.
    """
    if max_batch_size is not None and max_batch_size < 1:
        raise ValueError("max_batch_size must be at least 1 (or None)")
    try:
        value = codec.loads(data)
    except DecodeError as exc:
        # A member named twice: the text has no one meaning, so it is a parse error
        # (as protobuf's JSON parser says), whatever member it is; its path is named.
        where = exc.path.removeprefix("$").removeprefix(".")
        return ErrorResponse(None, JSONParseError(f"Invalid JSON payload: {where}: {exc.expected}"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        detail = str(exc)[:_MAX_ECHO] if isinstance(exc, ValueError) else "nested too deeply"
        return ErrorResponse(None, JSONParseError(f"Invalid JSON payload: {detail}"))
    return parse_message_value(value, max_batch_size=max_batch_size)


# -- client side: parsing responses ------------------------------------------


def _bad_response(where: str, detail: str) -> InvalidAgentResponseError:
    return InvalidAgentResponseError(f"Invalid JSON-RPC response{where}: {detail}")


def _parse_response_item(value: object, where: str, null_result: bool = False) -> Response:
    if not isinstance(value, dict):
        raise _bad_response(where, f"expected an object, got {_json_type(value)}")
    if value.get("jsonrpc") != JSONRPC_VERSION or not isinstance(value.get("jsonrpc"), str):
        raise _bad_response(where, 'member "jsonrpc" must be exactly "2.0"')
    if "id" not in value:
        raise _bad_response(where, 'member "id" is missing')
    response_id = value["id"]
    if response_id is not None and not _is_request_id(response_id):
        raise _bad_response(
            where, f"id must be a string, an integer or null, got {_json_type(response_id)}"
        )
    has_result, has_error = "result" in value, "error" in value
    if has_result and has_error:
        raise _bad_response(where, 'it has both "result" and "error"')
    if has_result:
        return SuccessResponse(response_id, value["result"])
    if not has_error:
        if null_result:
            return SuccessResponse(response_id, None)
        raise _bad_response(where, 'it has neither "result" nor "error"')
    error = value["error"]
    if not isinstance(error, dict):
        raise _bad_response(where, f"error must be an object, got {_json_type(error)}")
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise _bad_response(where, f"error.code must be an integer, got {_json_type(code)}")
    if not isinstance(error.get("message"), str):
        raise _bad_response(
            where, f"error.message must be a string, got {_json_type(error.get('message'))}"
        )
    return ErrorResponse(response_id, JSONRPCError.from_jsonrpc(error, remote=True))


def parse_response_value(value: object, *, null_result: bool = False) -> ParsedResponse:
    """Like :func:`parse_response`, for a JSON value that is already parsed."""
    if isinstance(value, list):
        if not value:
            raise _bad_response("", "empty batch")
        return Batch(
            tuple(
                _parse_response_item(v, f" (batch item {i})", null_result)
                for i, v in enumerate(value)
            )
        )
    return _parse_response_item(value, "", null_result)


def parse_response(
    data: bytes | bytearray | memoryview | str, *, null_result: bool = False
) -> ParsedResponse:
    """Parse a JSON-RPC 2.0 response (or a batch of them) received by a client.

    An error member becomes an :class:`ErrorResponse` holding the typed error
    (``TaskNotFoundError`` for -32001, …, with ``remote=True``); it is not
    raised. A reply that is not valid JSON-RPC (invalid JSON, wrong
    ``jsonrpc``, no ``id``, both or neither of ``result``/``error``, an
    error without an integer ``code`` or a string ``message``) raises
    :class:`~a2a_models.errors.InvalidAgentResponseError`.

    ``null_result=True`` (a call whose result is ``null``, such as deleting a
    push config) reads a response with neither member as that ``null``
    result: the a2a-sdk's 0.3 servers drop ``"result": null`` when they
    serialise the response (pydantic ``exclude_none``), and their deletes did
    happen.
    """
    try:
        value = codec.loads(data)
    except DecodeError as exc:  # a member named twice (its path, whole)
        raise _bad_response("", str(exc)) from None
    except (ValueError, RecursionError) as exc:
        detail = str(exc)[:_MAX_ECHO] if isinstance(exc, ValueError) else "nested too deeply"
        raise _bad_response("", f"not valid JSON ({detail})") from None
    return parse_response_value(value, null_result=null_result)


# -- serializers ---------------------------------------------------------------


def response_to_wire(response: Response, version: str = "1.0") -> dict[str, Any]:
    """The JSON-ready dict of a response; errors use ``error.to_jsonrpc(version)``."""
    if isinstance(response, SuccessResponse):
        return {"jsonrpc": JSONRPC_VERSION, "id": response.id, "result": response.result}
    return {
        "jsonrpc": JSONRPC_VERSION,
        "id": response.id,
        "error": response.error.to_jsonrpc(normalize_version(version)),
    }


def encode_response(response: Response | Batch[Response], version: str = "1.0") -> bytes:
    """Serialize a response (or a batch of responses) to compact UTF-8 JSON.

    ``version`` ("1.0" or "0.3") selects the error ``data`` form: 1.0 sends an
    array of ``@type`` details with a ``google.rpc.ErrorInfo``, 0.3 sends
    ``data`` as is. Results must already be wire values (``encode_result``).
    """
    if isinstance(response, Batch):
        return codec.dumps([response_to_wire(r, version) for r in response])
    return codec.dumps(response_to_wire(response, version))


def message_to_wire(message: Request | Notification) -> dict[str, Any]:
    """The JSON-ready dict of a request or notification (``params`` omitted if ``None``)."""
    out: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION}
    if isinstance(message, Request):
        out["id"] = message.id
    out["method"] = message.method
    if message.params is not None:
        out["params"] = message.params
    return out


def encode_message(message: Request | Notification | Batch[Request | Notification]) -> bytes:
    """Serialize a request, a notification or a batch of them (client side)."""
    if isinstance(message, Batch):
        return codec.dumps([message_to_wire(m) for m in message])
    return codec.dumps(message_to_wire(message))
