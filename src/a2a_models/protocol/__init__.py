"""The wire protocols of A2A 1.0 and 0.3, I/O-free: JSON-RPC, HTTP+JSON, SSE.

JSON-RPC envelopes and method tables, the HTTP+JSON route table and its
mappings (``REST_ROUTES``, ``match_rest_route``, ``build_rest_request``...),
Server-Sent Events framing and parsing (``SSEParser``, ``sse_frame``), and
version negotiation.

Pure and I/O-free: feed bytes in, get typed values out, and the reverse.

Server::

    version = negotiate_version(headers.get("A2A-Version"))
    match parse_message(body):
        case Request(method, params, id):
            spec = method_for(method, version)           # MethodNotFoundError
            req = decode_params(spec, params, version)   # InvalidParamsError
            result = await getattr(handler, spec.handler)(req)
            reply = SuccessResponse(id, encode_result(spec, result, version))
        case ErrorResponse() as reply: ...              # send it back as is
        case Notification(): ...                        # never answered
        case Batch(items): ...                          # one reply per non-notification

    body = encode_response(reply, version)

Client::

    body = encode_request(METHODS["GetTask"], GetTaskRequest(id="t1"), "1.0", id=1)
    match parse_response(reply_bytes):
        case SuccessResponse(id, result): task = decode_result(spec, result, "1.0")
        case ErrorResponse(id, error): raise error       # typed, error.remote is True
"""

from ._jsonrpc import (
    DEFAULT_MAX_BATCH_SIZE,
    JSONRPC_VERSION,
    Batch,
    ErrorResponse,
    Notification,
    Params,
    ParsedItem,
    ParsedMessage,
    ParsedResponse,
    Request,
    RequestId,
    Response,
    ResponseId,
    SuccessResponse,
    encode_message,
    encode_response,
    message_to_wire,
    parse_message,
    parse_message_value,
    parse_response,
    parse_response_value,
    response_to_wire,
)
from ._methods import (
    METHODS,
    MethodSpec,
    build_request,
    decode_params,
    decode_result,
    encode_request,
    encode_result,
    method_for,
)
from ._rest import (
    A2A_MEDIA_TYPE,
    JSON_MEDIA_TYPE,
    REST_ROUTES,
    SSE_MEDIA_TYPE,
    RestRequest,
    RestRoute,
    RestRouteError,
    build_rest_request,
    decode_rest_params,
    decode_rest_result,
    encode_rest_result,
    match_rest_route,
    rest_dialect,
    rest_error_body,
    rest_error_from_body,
    rest_media_type,
    rest_version,
)
from ._sse import SSEError, SSEEvent, SSEParser, format_comment, format_event, sse_frame
from ._version import (
    SUPPORTED_VERSIONS,
    V0_3,
    V1_0,
    negotiate_version,
    normalize_version,
)

__all__ = [
    "A2A_MEDIA_TYPE",
    "JSON_MEDIA_TYPE",
    "REST_ROUTES",
    "SSE_MEDIA_TYPE",
    "RestRequest",
    "RestRoute",
    "RestRouteError",
    "SSEError",
    "SSEEvent",
    "SSEParser",
    "build_rest_request",
    "decode_rest_params",
    "decode_rest_result",
    "encode_rest_result",
    "format_comment",
    "format_event",
    "match_rest_route",
    "rest_dialect",
    "rest_error_body",
    "rest_error_from_body",
    "rest_media_type",
    "rest_version",
    "sse_frame",
    "DEFAULT_MAX_BATCH_SIZE",
    "JSONRPC_VERSION",
    "METHODS",
    "SUPPORTED_VERSIONS",
    "V0_3",
    "V1_0",
    "Batch",
    "ErrorResponse",
    "MethodSpec",
    "Notification",
    "Params",
    "ParsedItem",
    "ParsedMessage",
    "ParsedResponse",
    "Request",
    "RequestId",
    "Response",
    "ResponseId",
    "SuccessResponse",
    "build_request",
    "decode_params",
    "decode_result",
    "encode_message",
    "encode_request",
    "encode_response",
    "encode_result",
    "message_to_wire",
    "method_for",
    "negotiate_version",
    "normalize_version",
    "parse_message",
    "parse_message_value",
    "parse_response",
    "parse_response_value",
    "response_to_wire",
]
