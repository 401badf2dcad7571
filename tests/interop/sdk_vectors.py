"""Wire vectors produced, and parsers backed, by the official ``a2a-sdk`` (1.3.0).

Our own codec is checked against the reference SDK in both directions: the
``*_vectors()`` functions return JSON exactly as the SDK puts it on the wire,
and ``sdk_parse_v10`` / ``sdk_parse_v03`` run JSON that we produced through
the SDK's own parser and serializer.

How the SDK serializes
======================

A2A 1.0 (``a2a.types.a2a_pb2``, proto package ``lf.a2a.v1``; its field names
and numbers are identical to ``shared/a2a-spec/1.0.1/a2a.proto``):

* Objects: ``google.protobuf.json_format.MessageToDict(msg)`` with default
  options (camelCase json_name, enum names, defaults omitted). The JSON-RPC
  server (``a2a.server.routes.jsonrpc_dispatcher.JsonRpcDispatcher``) sometimes
  passes ``preserving_proto_field_name=False`` explicitly, which is the default
  anyway. The REST server (``rest_dispatcher``), the JSON-RPC and REST client
  transports (``a2a.client.transports.{jsonrpc,rest}``) and the push sender
  (``BasePushNotificationSender``: body ``MessageToDict(StreamResponse)``) use
  plain ``MessageToDict``.
* The one exception is ``ListTasksResponse``. It goes through
  ``a2a.server.routes.common.serialize_list_tasks_response``, which calls
  ``MessageToDict(..., always_print_fields_with_no_presence=True)`` and then
  drops ``artifacts`` from every task unless the request set
  ``includeArtifacts``. The always-print flag works recursively, so every
  nested Task/Message also carries ``""``, ``[]`` and ``{}`` defaults.
* Parsing: the server calls ``ParseDict(params, Cls(), ignore_unknown_fields=True)``
  and the clients call ``a2a.utils.proto_utils.parse_lenient``, which wraps the
  same call. Both are lenient.
* JSON-RPC envelopes come from the ``json-rpc`` package:
  ``JSONRPC20Request(method=..., params=MessageToDict(req), _id=str(uuid4())).data``
  on the client, and ``JSONRPC20Response(result=..., _id=id).data`` on the
  server. SSE items are the same response envelopes wrapping
  ``MessageToDict(StreamResponse)``. Errors come from
  ``a2a.server.request_handlers.response_helpers.build_error_response(id, err)``.
  For ``A2AError`` subclasses it emits ``{"code", "message", "data": [ErrorInfo]}``,
  where ``data`` is a list of google.rpc typed details:
  ``{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
  "domain": "a2a-protocol.org", "metadata": <A2AError.data or {}>}``, followed by a
  ``google.rpc.BadRequest`` entry when ``InvalidParamsError.data["errors"]`` is
  set. Dispatcher-level errors (``a2a.server.jsonrpc_models`` pydantic errors:
  parse error, method not found) have no ``data``.
* The well-known card (``create_agent_card_routes`` → ``agent_card_to_dict``) is
  **not** pure ProtoJSON. It is ``MessageToDict(card)`` deep-merged with the 0.3
  rendering of the same card, ``to_compat_agent_card(card).model_dump(exclude_none=True)``,
  so it carries ``url``, ``preferredTransport``, ``protocolVersion`` and the 0.3
  ``type``/``in`` keys inside each security scheme, among others. See
  ``v10_wellknown_card_vectors``.

A2A 0.3 (``a2a.compat.v0_3``):

* ``types.py``: pydantic v2 models generated from the 0.3 JSON Schema (class
  names equal the schema definition names). Base ``a2a._base.A2ABaseModel``:
  camelCase alias generator, ``serialize_by_alias``, and pydantic's default
  ``extra='ignore'``.
* Serialization on the JSON-RPC wire is
  ``model.model_dump(mode="json", by_alias=True, exclude_none=True)``. The
  client (``jsonrpc_transport.CompatJsonRpcTransport``) dumps ``params`` this
  way. The server (``jsonrpc_adapter.JSONRPC03Adapter``) dumps whole success
  responses this way, and uses ``model_dump_json(by_alias=True, exclude_none=True)``
  for SSE items. Parsing is ``Model.model_validate(dict)``.
* ``conversions.py`` converts between the 1.0 protos and the 0.3 pydantic
  types (``to_compat_*`` and ``to_core_*``). ``proto_utils.py`` converts
  between the 0.3 pydantic types and the 0.3 gRPC protos (``a2a_v0_3_pb2``,
  package ``a2a.v1``). The 0.3 HTTP+JSON dialect is ``MessageToDict`` of those
  protos (``rest_handler.py`` on the server, ``rest_transport.py`` on the client).
* Server side: ``request_handler.RequestHandler03`` wraps a 1.0
  ``RequestHandler`` and converts on both sides. The JSON-RPC adapter is
  ``jsonrpc_adapter.JSONRPC03Adapter``, the REST adapter
  ``rest_adapter.REST03Adapter`` (with ``rest_handler``), and the gRPC handler
  ``grpc_handler``.
  Client side: ``jsonrpc_transport.CompatJsonRpcTransport``,
  ``rest_transport.CompatRestTransport``, ``grpc_transport.CompatGrpcTransport``.
  ``a2a.client.ClientFactory`` picks them when the chosen
  ``AgentInterface.protocolVersion`` is in [0.3, 1.0).

Running an SDK server and client (both versions on one app)
============================================================

::

    from starlette.applications import Starlette
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler  # = DefaultRequestHandlerV2
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            await event_queue.enqueue_event(Message(...))  # or Task / status / artifact events
        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None: ...

    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore(),
                                    agent_card=card)
    app = Starlette(routes=[*create_agent_card_routes(card),
                            *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
                            *create_rest_routes(handler, enable_v0_3_compat=True)])

A 1.0 JSON-RPC request must send the header ``A2A-Version: 1.0``. Without it
the server assumes 0.3 and answers 1.0 methods with -32009
(VersionNotSupported). 0.3 methods (``message/send`` etc.) are dispatched by
method name when ``enable_v0_3_compat=True``. Clients:
``await a2a.client.create_client(card_or_url, ClientConfig(...))``. A card
interface with ``protocolVersion`` "0.3" selects the Compat* transports.

Observed SDK quirks (asserted in ``test_sdk_vectors.py``)
=========================================================

1.0 / protobuf (protobuf 7.x ``json_format``):

1. Every number inside ``google.protobuf.Struct``/``Value`` (``metadata``,
   ``Part.data``, ``AgentExtension.params``, ``AgentCardSignature.header``) is
   a double. ``MessageToDict`` emits ``18.0`` for an input ``18``, and integers
   above 2**53 lose precision. Typed ``int32`` fields (``historyLength``,
   ``pageSize``, ``totalSize``) stay ints. Struct key order is not preserved.
2. ``ParseDict`` accepts ``{"data": null}`` as a ``Value`` holding null and
   re-emits ``"data": null``.
3. Proto3 ``optional`` fields are emitted whenever set, even at the default:
   ``historyLength: 0``, ``capabilities.pushNotifications: false``,
   ``includeArtifacts: false``. Plain scalars at their default are omitted,
   including REQUIRED ones: ``returnImmediately: false``, ``append: false``,
   ``required: false``, an empty ``contextId``, ``state: TASK_STATE_UNSPECIFIED``.
   Only ``ListTasksResponse`` prints defaults, and it prints them for all
   nested messages too. ``ListTaskPushNotificationConfigsResponse`` on the
   last page omits ``nextPageToken`` (it is ``""``).
4. An empty ``StringList`` in a SecurityRequirement is emitted as ``{}``, not
   ``{"list": []}``. An empty ``mtlsSecurityScheme`` is emitted as ``{}``.
5. Timestamps are emitted with 0, 3, 6 or 9 fractional digits, always ``Z``.
6. The SDK client JSON-RPC request ids are ``str(uuid4())``. The vectors use
   fixed ids.

0.3 compat layer:

7. ``extra='ignore'``: ``model_validate`` silently drops unknown members, so a
   misspelt field is not an error. ``sdk_parse_v03`` therefore cannot detect
   them. Compare its output with the input instead.
8. ``DeleteTaskPushNotificationConfigSuccessResponse`` (``result: null``) is
   dumped with ``exclude_none=True`` and loses ``result`` entirely, giving
   ``{"id", "jsonrpc"}``. That violates the 0.3 schema and JSON-RPC 2.0, and
   the SDK's own model rejects it (``result`` is required).
   ``CompatJsonRpcTransport`` patches a missing ``result`` back in before parsing.
   In the same way, any 0.3 response model with ``id=None`` loses ``id``. The
   adapter's hand-built error dicts keep ``"id": null``.
9. Non-streaming 0.3 error responses are built by hand in
   ``JSONRPC03Adapter._generate_error_response`` with ``model_dump(by_alias=True)``,
   without ``exclude_none``, so ``"data": null`` is always present. SSE errors
   use ``exclude_none`` and omit it. The 0.3 ``error.data`` is the raw
   ``A2AError.data`` dict, not the 1.0 ErrorInfo list. Errors without a 0.3 code
   (e.g. -32009 VersionNotSupported, -32008) become -32603.
   ``CompatJsonRpcTransport`` sends ``agent/getAuthenticatedExtendedCard`` with
   ``"params": {}``. The schema has no ``params`` member, and the model ignores it.
10. 1.0 → 0.3 conversion (``conversions.to_compat_*``):
    ``TaskStatusUpdateEvent.final`` is true only for completed, canceled, failed
    and rejected, so it is **false** for input-required and auth-required. A
    non-object ``Part.data`` becomes ``{"value": <v>}`` with
    ``metadata.data_part_compat = true``. Numbers in data and metadata arrive as
    floats (quirk 1). ``MessageSendConfiguration.blocking`` is always emitted.
    ``AuthenticationInfo.scheme`` becomes ``schemes: [scheme]``. The card keeps
    only interfaces whose ``protocolVersion`` is in [0.3, 1.0), so the first one
    becomes ``url``/``preferredTransport``, and ``protocolVersion`` is copied
    from that interface ("0.3", not "0.3.0"). It raises VersionNotSupportedError
    when no 0.3 interface exists. Device-code flows and ``pkceRequired`` are
    dropped. ``AgentExtension.required`` is always emitted. A Role of
    UNSPECIFIED becomes "agent".
11. 0.3 → 1.0 conversion (``to_core_*``): ``historyLength: 0`` is treated as
    unset, ``blocking`` maps to ``returnImmediately = not blocking``, only
    ``schemes[0]`` survives, and a TaskState of "unknown" maps to UNSPECIFIED.
12. ``CompatRestTransport`` sends request bodies with
    ``MessageToDict(..., preserving_proto_field_name=True)``, i.e.
    **snake_case**, while the REST server emits camelCase.
13. Import order: importing ``a2a.compat.v0_3.jsonrpc_adapter`` before
    ``a2a.server.routes`` fails with a circular import. This module imports
    ``a2a.server.routes`` first.
14. ``build_error_response`` raises ``pydantic.ValidationError`` for
    ``a2a.utils.errors.JSONParseError``, because it maps that error to the
    ``InternalError`` model whose ``code`` is ``Literal[-32603]``. The dispatcher
    avoids this by using ``a2a.server.jsonrpc_models.JSONParseError`` for invalid
    JSON, which gives ``{"code": -32700, "message": <json error>}``, ``id`` null
    and no ``data``.
15. A round trip 0.3 → 1.0 → 0.3 through a live SDK server (``message/send`` with
    an echoing executor) returns the ints in ``data``/``metadata`` as floats
    (``18`` → ``18.0``).
"""

from __future__ import annotations

import base64
import copy
import math
from typing import Any

# Must precede any a2a.compat.v0_3.jsonrpc_adapter import (SDK circular import, quirk 13).
import a2a.server.routes  # noqa: F401

# isort: split
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as t03
from a2a.compat.v0_3.jsonrpc_adapter import _to_v03_jsonrpc_error
from a2a.server import jsonrpc_models
from a2a.server.request_handlers.response_helpers import (
    agent_card_to_dict,
    build_error_response,
)
from a2a.server.routes.common import serialize_list_tasks_response
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as sdk_errors
from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message as ProtoMessage
from google.protobuf.timestamp_pb2 import Timestamp
from jsonrpc.jsonrpc2 import JSONRPC20Request, JSONRPC20Response
from pydantic import BaseModel

__all__ = [
    "V03_SCHEMA_DEVIATIONS",
    "V03_UNPARSEABLE",
    "V10_METHOD_PARAMS",
    "V10_METHOD_RESULT",
    "floats_to_ints",
    "sdk_parse_v03",
    "sdk_parse_v10",
    "strict_equal",
    "v03_jsonrpc_vectors",
    "v03_models",
    "v03_to_wire",
    "v03_vectors",
    "v10_jsonrpc_vectors",
    "v10_protos",
    "v10_to_wire",
    "v10_vectors",
    "v10_wellknown_card_vectors",
]

JsonDict = dict[str, Any]

REQUEST_ID = "req-1"
TASK_ID = "task-7f3c"
CONTEXT_ID = "ctx-91ab"
TENANT = "acme"
TS_MILLIS = "2025-07-31T12:34:56.789Z"

# JSON with every JSON kind; numbers include ints (which ProtoJSON turns into doubles).
NESTED_DATA: JsonDict = {
    "city": "Zürich",
    "count": 18,
    "ratio": 0.25,
    "negative": -3,
    "ok": True,
    "no": False,
    "nothing": None,
    "tags": ["a", 1, False, None, {"deep": [[], {}]}],
    "nested": {"empty": {}, "list": [], "inner": {"n": 7, "s": "x"}},
}
METADATA: JsonDict = {"trace": {"id": "abc-123", "sampled": True}, "priority": 2}
RAW_BYTES = b"\x89PNG\r\n\x1a\n\x00\xff\xfe"
EXT_URI = "https://example.com/ext/trace/v1"

# 1.0 JSON-RPC method -> proto type of `params` (the SDK server's own table).
V10_METHOD_PARAMS: dict[str, str] = {
    method: cls.__name__ for method, cls in JsonRpcDispatcher.METHOD_TO_MODEL.items()
}
# 1.0 JSON-RPC method -> proto type of `result` (None: result is JSON null).
V10_METHOD_RESULT: dict[str, str | None] = {
    "SendMessage": "SendMessageResponse",
    "SendStreamingMessage": "StreamResponse",
    "GetTask": "Task",
    "ListTasks": "ListTasksResponse",
    "CancelTask": "Task",
    "CreateTaskPushNotificationConfig": "TaskPushNotificationConfig",
    "GetTaskPushNotificationConfig": "TaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs": "ListTaskPushNotificationConfigsResponse",
    "DeleteTaskPushNotificationConfig": None,
    "SubscribeToTask": "StreamResponse",
    "GetExtendedAgentCard": "AgentCard",
}

# 0.3 vectors the SDK emits although they do not validate against the 0.3 schema
# (``exclude_none`` drops the JSON-RPC members ``result: null`` and ``id: null``; quirk 8).
V03_SCHEMA_DEVIATIONS: frozenset[str] = frozenset(
    {"response_delete_push_config", "error_with_data_null_id"}
)
# ... and the subset that the SDK's own 0.3 models then refuse to parse.
V03_UNPARSEABLE: frozenset[str] = frozenset({"response_delete_push_config"})


# --------------------------------------------------------------------------- serializers


def v10_to_wire(msg: ProtoMessage, *, include_artifacts: bool = True) -> JsonDict:
    """Serialize a 1.0 proto exactly as the SDK does on the wire."""
    if isinstance(msg, pb.ListTasksResponse):
        return serialize_list_tasks_response(msg, include_artifacts)
    wire: JsonDict = json_format.MessageToDict(msg, preserving_proto_field_name=False)
    return wire


def v03_to_wire(model: BaseModel) -> Any:
    """Serialize a 0.3 pydantic model exactly as the SDK's 0.3 JSON-RPC transport does."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def sdk_parse_v10(type_name: str, wire: JsonDict) -> JsonDict:
    """Parse ``wire`` strictly into the SDK's 1.0 proto ``type_name`` and re-serialize it.

    Uses ``ParseDict(..., ignore_unknown_fields=False)``, so it raises
    ``google.protobuf.json_format.ParseError`` on unknown members or bad values.
    """
    cls = getattr(pb, type_name)
    msg = json_format.ParseDict(copy.deepcopy(wire), cls(), ignore_unknown_fields=False)
    if isinstance(msg, pb.ListTasksResponse):
        # The server drops artifacts only when the request did not set includeArtifacts.
        return serialize_list_tasks_response(msg, include_artifacts=True)
    return v10_to_wire(msg)


def sdk_parse_v03(type_name: str, wire: Any) -> Any:
    """Validate ``wire`` with the SDK's 0.3 pydantic model ``type_name`` and dump it back.

    Raises ``pydantic.ValidationError`` on failure. Unknown members are ignored
    by the SDK (quirk 7).
    """
    cls: type[BaseModel] = getattr(t03, type_name)
    return v03_to_wire(cls.model_validate(copy.deepcopy(wire)))


# --------------------------------------------------------------------------- comparison helpers


def strict_equal(a: Any, b: Any) -> bool:
    """JSON equality that also tells bool from int and int from float (``18 != 18.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def floats_to_ints(value: Any) -> Any:
    """Turn integral floats into ints recursively, undoing ProtoJSON's Struct int→double."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: floats_to_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [floats_to_ints(v) for v in value]
    return value


# --------------------------------------------------------------------------- 1.0 builders


def _struct(data: JsonDict) -> struct_pb2.Struct:
    """Build a Struct the way the SDK does (``ParseDict``)."""
    return json_format.ParseDict(copy.deepcopy(data), struct_pb2.Struct())


def _value(data: Any) -> struct_pb2.Value:
    """Build a Value from any JSON value."""
    return json_format.ParseDict(copy.deepcopy(data), struct_pb2.Value())


def _ts(text: str) -> Timestamp:
    """Build a Timestamp from RFC 3339 text."""
    ts = Timestamp()
    ts.FromJsonString(text)
    return ts


def _v10_parts() -> dict[str, pb.Part]:
    """One Part per content kind (and every JSON kind of ``data``)."""
    return {
        "part_text": pb.Part(
            text="Hello, agent! Grüße 👋",
            media_type="text/plain",
            metadata=_struct({"lang": "en"}),
        ),
        "part_raw": pb.Part(raw=RAW_BYTES, filename="pixel.png", media_type="image/png"),
        "part_url": pb.Part(
            url="https://example.com/files/report.pdf",
            filename="report.pdf",
            media_type="application/pdf",
            metadata=_struct({"sizeBytes": 1024}),
        ),
        "part_data_object": pb.Part(
            data=_value(NESTED_DATA), media_type="application/json", metadata=_struct(METADATA)
        ),
        "part_data_array": pb.Part(data=_value([1, "two", {"three": 3}, None, True])),
        "part_data_string": pb.Part(data=_value("just a string")),
        "part_data_number": pb.Part(data=_value(42)),
        "part_data_bool": pb.Part(data=_value(False)),
        "part_data_null": pb.Part(data=_value(None)),
    }


def _v10_user_message() -> pb.Message:
    """A user message that carries every Part kind and all optional members."""
    return pb.Message(
        message_id="msg-user-1",
        context_id=CONTEXT_ID,
        task_id=TASK_ID,
        role=pb.ROLE_USER,
        parts=list(_v10_parts().values()),
        metadata=_struct(METADATA),
        extensions=[EXT_URI],
        reference_task_ids=["task-0001", "task-0002"],
    )


def _v10_agent_message(text: str = "Working on it.") -> pb.Message:
    """A plain agent reply."""
    return pb.Message(
        message_id="msg-agent-1",
        context_id=CONTEXT_ID,
        task_id=TASK_ID,
        role=pb.ROLE_AGENT,
        parts=[pb.Part(text=text)],
    )


def _v10_artifacts() -> list[pb.Artifact]:
    """Two artifacts: a rich one and a file reference."""
    return [
        pb.Artifact(
            artifact_id="art-1",
            name="summary",
            description="Summary of the report",
            parts=[
                pb.Part(text="# Summary\n..."),
                pb.Part(data=_value({"score": 9, "pass": True})),
            ],
            metadata=_struct({"generator": "v2"}),
            extensions=[EXT_URI],
        ),
        pb.Artifact(
            artifact_id="art-2",
            parts=[pb.Part(url="https://example.com/out.csv", media_type="text/csv")],
        ),
    ]


def _v10_task_full() -> pb.Task:
    """A task with status message+timestamp, artifacts, history and metadata."""
    return pb.Task(
        id=TASK_ID,
        context_id=CONTEXT_ID,
        status=pb.TaskStatus(
            state=pb.TASK_STATE_WORKING, message=_v10_agent_message(), timestamp=_ts(TS_MILLIS)
        ),
        artifacts=_v10_artifacts(),
        history=[_v10_user_message(), _v10_agent_message()],
        metadata=_struct(METADATA),
    )


def _v10_task_minimal() -> pb.Task:
    """A freshly submitted task."""
    return pb.Task(
        id="task-min", context_id=CONTEXT_ID, status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED)
    )


def _v10_push_config_full() -> pb.TaskPushNotificationConfig:
    """A push config with every member set."""
    return pb.TaskPushNotificationConfig(
        tenant=TENANT,
        id="push-1",
        task_id=TASK_ID,
        url="https://client.example.com/webhook",
        token="opaque-token-123",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="secret-jwt"),
    )


def _v10_oauth_flows() -> dict[str, pb.OAuthFlows]:
    """One OAuthFlows per flow kind (the 1.0 ``flow`` oneof allows only one)."""
    return {
        "authorization_code": pb.OAuthFlows(
            authorization_code=pb.AuthorizationCodeOAuthFlow(
                authorization_url="https://auth.example.com/authorize",
                token_url="https://auth.example.com/token",
                refresh_url="https://auth.example.com/refresh",
                scopes={"read": "Read access", "write": "Write access"},
                pkce_required=True,
            )
        ),
        "client_credentials": pb.OAuthFlows(
            client_credentials=pb.ClientCredentialsOAuthFlow(
                token_url="https://auth.example.com/token", scopes={"agent": "Call the agent"}
            )
        ),
        "device_code": pb.OAuthFlows(
            device_code=pb.DeviceCodeOAuthFlow(
                device_authorization_url="https://auth.example.com/device",
                token_url="https://auth.example.com/token",
                refresh_url="https://auth.example.com/refresh",
                scopes={"read": "Read access"},
            )
        ),
        "implicit": pb.OAuthFlows(
            implicit=pb.ImplicitOAuthFlow(
                authorization_url="https://auth.example.com/authorize",
                refresh_url="https://auth.example.com/refresh",
                scopes={"read": "Read access"},
            )
        ),
        "password": pb.OAuthFlows(
            password=pb.PasswordOAuthFlow(
                token_url="https://auth.example.com/token", scopes={"read": "Read access"}
            )
        ),
    }


def _v10_security_schemes(flows: pb.OAuthFlows) -> dict[str, pb.SecurityScheme]:
    """Every SecurityScheme kind, with the given OAuth flows."""
    return {
        "apiKey": pb.SecurityScheme(
            api_key_security_scheme=pb.APIKeySecurityScheme(
                location="header", name="X-API-Key", description="Static key"
            )
        ),
        "bearer": pb.SecurityScheme(
            http_auth_security_scheme=pb.HTTPAuthSecurityScheme(
                scheme="Bearer", bearer_format="JWT", description="JWT bearer"
            )
        ),
        "oauth": pb.SecurityScheme(
            oauth2_security_scheme=pb.OAuth2SecurityScheme(
                flows=flows,
                oauth2_metadata_url="https://auth.example.com/.well-known/oauth-authorization-server",
                description="OAuth 2.0",
            )
        ),
        "oidc": pb.SecurityScheme(
            open_id_connect_security_scheme=pb.OpenIdConnectSecurityScheme(
                open_id_connect_url="https://auth.example.com/.well-known/openid-configuration",
                description="OIDC",
            )
        ),
        "mtls": pb.SecurityScheme(
            mtls_security_scheme=pb.MutualTlsSecurityScheme(description="Client certificates")
        ),
        "mtlsBare": pb.SecurityScheme(mtls_security_scheme=pb.MutualTlsSecurityScheme()),
    }


def _v10_security_requirements() -> list[pb.SecurityRequirement]:
    """OR of two AND-sets; one scheme with an empty scope list."""
    first = pb.SecurityRequirement()
    first.schemes["oauth"].list.extend(["read", "write"])
    first.schemes["mtls"].SetInParent()
    second = pb.SecurityRequirement()
    second.schemes["apiKey"].SetInParent()
    return [first, second]


def _v10_agent_card(flow_kind: str = "authorization_code") -> pb.AgentCard:
    """A fully populated AgentCard."""
    skill_req = pb.SecurityRequirement()
    skill_req.schemes["oauth"].list.append("read")
    card = pb.AgentCard(
        name="Recipe Agent",
        description="Finds recipes.",
        version="1.2.3",
        supported_interfaces=[
            pb.AgentInterface(
                url="https://agent.example.com/a2a/jsonrpc",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            ),
            pb.AgentInterface(
                url="https://agent.example.com/a2a/rest",
                protocol_binding="HTTP+JSON",
                protocol_version="1.0",
                tenant=TENANT,
            ),
            pb.AgentInterface(
                url="agent.example.com:443", protocol_binding="GRPC", protocol_version="1.0"
            ),
            pb.AgentInterface(
                url="https://agent.example.com/a2a/v03",
                protocol_binding="JSONRPC",
                protocol_version="0.3",
            ),
        ],
        provider=pb.AgentProvider(organization="Example Org", url="https://example.com"),
        documentation_url="https://example.com/docs",
        icon_url="https://example.com/icon.png",
        capabilities=pb.AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extensions=[
                pb.AgentExtension(
                    uri=EXT_URI,
                    description="Tracing",
                    required=True,
                    params=_struct({"sampleRate": 0.5, "maxSpans": 100, "modes": ["a", "b"]}),
                ),
                pb.AgentExtension(uri="https://example.com/ext/plain/v1"),
            ],
            extended_agent_card=True,
        ),
        security_schemes=_v10_security_schemes(_v10_oauth_flows()[flow_kind]),
        security_requirements=_v10_security_requirements(),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "image/png"],
        skills=[
            pb.AgentSkill(
                id="find-recipe",
                name="Find recipe",
                description="Finds a recipe by ingredients.",
                tags=["cooking", "search"],
                examples=["What can I cook with eggs?"],
                input_modes=["text/plain"],
                output_modes=["application/json"],
                security_requirements=[skill_req],
            ),
            pb.AgentSkill(id="chat", name="Chat", description="Small talk.", tags=["chat"]),
        ],
        signatures=[
            pb.AgentCardSignature(
                protected="eyJhbGciOiJFUzI1NiIsImtpZCI6ImtleS0xIiwidHlwIjoiSk9TRSJ9",
                signature="c2lnbmF0dXJlLWJ5dGVz",
                header=_struct({"kid": "key-1", "x5t": None}),
            )
        ],
    )
    return card


def _v10_agent_card_minimal() -> pb.AgentCard:
    """An AgentCard with only the required members."""
    card = pb.AgentCard(
        name="Tiny",
        description="Minimal agent.",
        version="0.0.1",
        supported_interfaces=[
            pb.AgentInterface(
                url="http://localhost:8000/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="s", name="S", description="d", tags=["t"])],
    )
    card.capabilities.SetInParent()
    return card


def v10_protos() -> dict[str, ProtoMessage]:
    """The SDK 1.0 proto objects behind ``v10_vectors`` (name → message)."""
    parts = _v10_parts()
    task_full = _v10_task_full()
    user_msg = _v10_user_message()
    agent_msg = _v10_agent_message()
    status_update_working = pb.TaskStatusUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        status=pb.TaskStatus(state=pb.TASK_STATE_WORKING, timestamp=_ts("2025-07-31T12:34:56Z")),
        metadata=_struct({"progress": 50}),
    )
    status_update_input = pb.TaskStatusUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        status=pb.TaskStatus(
            state=pb.TASK_STATE_INPUT_REQUIRED,
            message=_v10_agent_message("Which city?"),
            timestamp=_ts("2025-07-31T12:34:56.789123Z"),
        ),
    )
    artifact_update = pb.TaskArtifactUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        artifact=pb.Artifact(artifact_id="art-1", parts=[pb.Part(text=" more text")]),
        append=True,
        last_chunk=True,
        metadata=_struct({"chunk": 2}),
    )
    push_full = _v10_push_config_full()
    push_min = pb.TaskPushNotificationConfig(task_id=TASK_ID, url="https://client.example.com/hook")

    out: dict[str, Any] = {}
    out.update(parts)
    out["message_user_all_parts"] = user_msg
    out["message_agent_reply"] = agent_msg
    out["message_minimal"] = pb.Message(
        message_id="m-0", role=pb.ROLE_USER, parts=[pb.Part(text="hi")]
    )
    out["artifact_full"] = _v10_artifacts()[0]
    out["task_full"] = task_full
    out["task_minimal"] = _v10_task_minimal()
    timestamps = [
        "2025-07-31T12:34:56Z",
        TS_MILLIS,
        "2025-07-31T12:34:56.789123Z",
        "2025-07-31T12:34:56.789123456Z",
    ]
    for i, state in enumerate(pb.TaskState.DESCRIPTOR.values[1:]):
        out[f"task_status_{state.name.removeprefix('TASK_STATE_').lower()}"] = pb.TaskStatus(
            state=state.number, timestamp=_ts(timestamps[i % len(timestamps)])
        )
    out["status_update_working"] = status_update_working
    out["status_update_input_required"] = status_update_input
    out["status_update_completed"] = pb.TaskStatusUpdateEvent(
        task_id=TASK_ID, context_id=CONTEXT_ID, status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED)
    )
    out["artifact_update_append_last_chunk"] = artifact_update
    out["artifact_update_first_chunk"] = pb.TaskArtifactUpdateEvent(
        task_id=TASK_ID, context_id=CONTEXT_ID, artifact=_v10_artifacts()[1]
    )
    out["stream_task"] = pb.StreamResponse(task=task_full)
    out["stream_message"] = pb.StreamResponse(message=agent_msg)
    out["stream_status_update"] = pb.StreamResponse(status_update=status_update_input)
    out["stream_artifact_update"] = pb.StreamResponse(artifact_update=artifact_update)
    out["send_message_response_task"] = pb.SendMessageResponse(task=task_full)
    out["send_message_response_message"] = pb.SendMessageResponse(message=agent_msg)
    out["agent_card_full"] = _v10_agent_card()
    for flow in _v10_oauth_flows():
        out[f"agent_card_oauth_{flow}"] = _v10_agent_card(flow)
    out["agent_card_minimal"] = _v10_agent_card_minimal()
    out["send_message_request_full"] = pb.SendMessageRequest(
        tenant=TENANT,
        message=user_msg,
        configuration=pb.SendMessageConfiguration(
            accepted_output_modes=["text/plain", "application/json"],
            task_push_notification_config=push_full,
            history_length=10,
            return_immediately=True,
        ),
        metadata=_struct(METADATA),
    )
    out["send_message_request_history_zero"] = pb.SendMessageRequest(
        message=out["message_minimal"],
        configuration=pb.SendMessageConfiguration(history_length=0, return_immediately=False),
    )
    out["send_message_request_minimal"] = pb.SendMessageRequest(message=out["message_minimal"])
    out["get_task_request"] = pb.GetTaskRequest(tenant=TENANT, id=TASK_ID, history_length=3)
    out["get_task_request_minimal"] = pb.GetTaskRequest(id=TASK_ID)
    out["list_tasks_request_all_filters"] = pb.ListTasksRequest(
        tenant=TENANT,
        context_id=CONTEXT_ID,
        status=pb.TASK_STATE_INPUT_REQUIRED,
        page_size=25,
        page_token="tok-1",
        history_length=2,
        status_timestamp_after=_ts(TS_MILLIS),
        include_artifacts=True,
    )
    out["list_tasks_request_include_artifacts_false"] = pb.ListTasksRequest(include_artifacts=False)
    out["list_tasks_request_empty"] = pb.ListTasksRequest()
    out["list_tasks_response"] = pb.ListTasksResponse(
        tasks=[task_full, _v10_task_minimal()], next_page_token="tok-2", page_size=2, total_size=7
    )
    out["list_tasks_response_last_page"] = pb.ListTasksResponse(page_size=50)
    out["cancel_task_request"] = pb.CancelTaskRequest(
        tenant=TENANT, id=TASK_ID, metadata=_struct({"reason": "user"})
    )
    out["subscribe_to_task_request"] = pb.SubscribeToTaskRequest(tenant=TENANT, id=TASK_ID)
    out["task_push_notification_config_full"] = push_full
    out["task_push_notification_config_minimal"] = push_min
    out["get_task_push_notification_config_request"] = pb.GetTaskPushNotificationConfigRequest(
        tenant=TENANT, task_id=TASK_ID, id="push-1"
    )
    out["delete_task_push_notification_config_request"] = (
        pb.DeleteTaskPushNotificationConfigRequest(tenant=TENANT, task_id=TASK_ID, id="push-1")
    )
    out["list_task_push_notification_configs_request"] = pb.ListTaskPushNotificationConfigsRequest(
        tenant=TENANT, task_id=TASK_ID, page_size=10, page_token="tok-p"
    )
    out["list_task_push_notification_configs_response"] = (
        pb.ListTaskPushNotificationConfigsResponse(
            configs=[push_full, push_min], next_page_token="tok-3"
        )
    )
    out["list_task_push_notification_configs_response_last_page"] = (
        pb.ListTaskPushNotificationConfigsResponse(configs=[push_min])
    )
    out["get_extended_agent_card_request"] = pb.GetExtendedAgentCardRequest(tenant=TENANT)
    out["get_extended_agent_card_request_empty"] = pb.GetExtendedAgentCardRequest()
    return out


def v10_vectors() -> dict[str, tuple[str, JsonDict]]:
    """name → (1.0 proto message name, wire dict as the SDK emits it)."""
    return {name: (msg.DESCRIPTOR.name, v10_to_wire(msg)) for name, msg in v10_protos().items()}


def v10_wellknown_card_vectors() -> dict[str, JsonDict]:
    """Cards as served at ``/.well-known/agent-card.json`` (1.0 ProtoJSON merged with 0.3 fields).

    ``agent_card_to_dict`` needs an interface with a 0.3 ``protocolVersion`` to add
    the 0.3 fields. Without one (``agent_card_minimal``) it serves pure ProtoJSON.
    """
    protos: dict[str, Any] = v10_protos()
    return {
        name: agent_card_to_dict(protos[name])
        for name in ("agent_card_full", "agent_card_oauth_device_code", "agent_card_minimal")
    }


# --------------------------------------------------------------------------- 1.0 JSON-RPC


def _rpc_request(method: str, params: ProtoMessage) -> JsonDict:
    """A request envelope exactly as ``a2a.client.transports.jsonrpc.JsonRpcTransport`` builds it."""
    req = JSONRPC20Request(method=method, params=json_format.MessageToDict(params), _id=REQUEST_ID)
    return dict(req.data)


def _rpc_result(result: Any) -> JsonDict:
    """A success envelope exactly as ``JsonRpcDispatcher`` builds it."""
    return dict(JSONRPC20Response(result=result, _id=REQUEST_ID).data)


def v10_jsonrpc_vectors() -> dict[str, JsonDict]:
    """Full 1.0 JSON-RPC envelopes (requests, results, SSE items, errors) as the SDK emits them.

    Keys: ``request_<Method>``, ``response_<Method>[_variant]``, ``sse_<kind>``,
    ``error_<ErrorClass>[_variant]``. Errors come from the SDK's
    ``build_error_response``, the function the dispatcher uses for every error
    path.
    """
    p: dict[str, Any] = v10_protos()
    out: dict[str, JsonDict] = {}
    requests: dict[str, str] = {
        "SendMessage": "send_message_request_full",
        "SendStreamingMessage": "send_message_request_minimal",
        "GetTask": "get_task_request",
        "ListTasks": "list_tasks_request_all_filters",
        "CancelTask": "cancel_task_request",
        "CreateTaskPushNotificationConfig": "task_push_notification_config_full",
        "GetTaskPushNotificationConfig": "get_task_push_notification_config_request",
        "ListTaskPushNotificationConfigs": "list_task_push_notification_configs_request",
        "DeleteTaskPushNotificationConfig": "delete_task_push_notification_config_request",
        "SubscribeToTask": "subscribe_to_task_request",
        "GetExtendedAgentCard": "get_extended_agent_card_request_empty",
    }
    for method, vec in requests.items():
        out[f"request_{method}"] = _rpc_request(method, p[vec])

    # Results, mirroring JsonRpcDispatcher._handle_* serialization.
    out["response_SendMessage_task"] = _rpc_result(v10_to_wire(p["send_message_response_task"]))
    out["response_SendMessage_message"] = _rpc_result(
        v10_to_wire(p["send_message_response_message"])
    )
    out["response_GetTask"] = _rpc_result(v10_to_wire(p["task_full"]))
    out["response_CancelTask"] = _rpc_result(v10_to_wire(p["task_minimal"]))
    out["response_ListTasks"] = _rpc_result(
        serialize_list_tasks_response(p["list_tasks_response"], include_artifacts=True)
    )
    out["response_ListTasks_without_artifacts"] = _rpc_result(
        serialize_list_tasks_response(p["list_tasks_response"], include_artifacts=False)
    )
    out["response_CreateTaskPushNotificationConfig"] = _rpc_result(
        v10_to_wire(p["task_push_notification_config_full"])
    )
    out["response_GetTaskPushNotificationConfig"] = _rpc_result(
        v10_to_wire(p["task_push_notification_config_full"])
    )
    out["response_ListTaskPushNotificationConfigs"] = _rpc_result(
        v10_to_wire(p["list_task_push_notification_configs_response"])
    )
    out["response_DeleteTaskPushNotificationConfig"] = _rpc_result(None)
    out["response_GetExtendedAgentCard"] = _rpc_result(v10_to_wire(p["agent_card_full"]))
    # SSE `data:` payloads of SendStreamingMessage / SubscribeToTask.
    for kind in ("task", "message", "status_update", "artifact_update"):
        out[f"sse_{kind}"] = _rpc_result(v10_to_wire(p[f"stream_{kind}"]))

    # Errors: every A2AError the SDK maps to a JSON-RPC code, default message and data.
    for err_cls in sdk_errors.JSON_RPC_ERROR_CODE_MAP:
        if err_cls is sdk_errors.JSONParseError:
            continue  # build_error_response crashes on it (quirk 14); see error_dispatcher_parse_error
        out[f"error_{err_cls.__name__}"] = build_error_response(REQUEST_ID, err_cls())
    out["error_TaskNotFoundError_with_data"] = build_error_response(
        REQUEST_ID,
        sdk_errors.TaskNotFoundError(message="Task task-9 not found", data={"taskId": "task-9"}),
    )
    out["error_InvalidParamsError_field_violations"] = build_error_response(
        REQUEST_ID,
        sdk_errors.InvalidParamsError(
            data={"errors": [{"field": "message.parts", "message": "must not be empty"}]}
        ),
    )
    # Dispatcher paths (JsonRpcDispatcher.handle_requests):
    out["error_dispatcher_parse_error"] = build_error_response(
        None, jsonrpc_models.JSONParseError(message="Expecting value: line 1 column 1 (char 0)")
    )
    out["error_dispatcher_method_not_found"] = build_error_response(
        REQUEST_ID, jsonrpc_models.MethodNotFoundError()
    )
    out["error_dispatcher_invalid_params"] = build_error_response(
        REQUEST_ID,
        sdk_errors.InvalidParamsError(
            data={"parseError": 'Message type "lf.a2a.v1.GetTaskRequest" has no field named "x".'}
        ),
    )
    out["error_dispatcher_batch"] = build_error_response(
        REQUEST_ID, sdk_errors.InvalidRequestError(message="Batch requests are not supported")
    )
    out["error_version_not_supported"] = build_error_response(
        REQUEST_ID,
        sdk_errors.VersionNotSupportedError(
            message="A2A version '0.3' is not supported by this handler. Expected version '1.0'."
        ),
    )
    return out


# --------------------------------------------------------------------------- 0.3 builders


def _p03(part: t03.TextPart | t03.FilePart | t03.DataPart) -> t03.Part:
    """Wrap a concrete part in the ``Part`` root model."""
    return t03.Part(root=part)


def _v03_parts() -> dict[str, t03.TextPart | t03.FilePart | t03.DataPart]:
    """One 0.3 part per kind (file by bytes and by uri)."""
    return {
        "part_text": t03.TextPart(text="Hello, agent! Grüße 👋", metadata={"lang": "en"}),
        "part_file_bytes": t03.FilePart(
            file=t03.FileWithBytes(
                bytes=base64.b64encode(RAW_BYTES).decode(), mime_type="image/png", name="pixel.png"
            )
        ),
        "part_file_uri": t03.FilePart(
            file=t03.FileWithUri(
                uri="https://example.com/files/report.pdf",
                mime_type="application/pdf",
                name="report.pdf",
            ),
            metadata={"sizeBytes": 1024},
        ),
        "part_file_uri_bare": t03.FilePart(file=t03.FileWithUri(uri="https://example.com/x.bin")),
        "part_data": t03.DataPart(data=NESTED_DATA, metadata=METADATA),
    }


def _v03_user_message() -> t03.Message:
    """A 0.3 user message with every part kind and all optional members."""
    return t03.Message(
        message_id="msg-user-1",
        context_id=CONTEXT_ID,
        task_id=TASK_ID,
        role=t03.Role.user,
        parts=[_p03(p) for p in _v03_parts().values()],
        metadata=METADATA,
        extensions=[EXT_URI],
        reference_task_ids=["task-0001", "task-0002"],
    )


def _v03_agent_message(text: str = "Working on it.") -> t03.Message:
    """A plain 0.3 agent reply."""
    return t03.Message(
        message_id="msg-agent-1",
        context_id=CONTEXT_ID,
        task_id=TASK_ID,
        role=t03.Role.agent,
        parts=[_p03(t03.TextPart(text=text))],
    )


def _v03_artifact() -> t03.Artifact:
    """A rich 0.3 artifact."""
    return t03.Artifact(
        artifact_id="art-1",
        name="summary",
        description="Summary of the report",
        parts=[
            _p03(t03.TextPart(text="# Summary\n...")),
            _p03(t03.DataPart(data={"score": 9, "pass": True})),
        ],
        metadata={"generator": "v2"},
        extensions=[EXT_URI],
    )


def _v03_task_full() -> t03.Task:
    """A 0.3 task with everything set."""
    return t03.Task(
        id=TASK_ID,
        context_id=CONTEXT_ID,
        status=t03.TaskStatus(
            state=t03.TaskState.working, message=_v03_agent_message(), timestamp=TS_MILLIS
        ),
        artifacts=[
            _v03_artifact(),
            t03.Artifact(
                artifact_id="art-2",
                parts=[
                    _p03(
                        t03.FilePart(
                            file=t03.FileWithUri(
                                uri="https://example.com/out.csv", mime_type="text/csv"
                            )
                        )
                    )
                ],
            ),
        ],
        history=[_v03_user_message(), _v03_agent_message()],
        metadata=METADATA,
    )


def _v03_push_config() -> t03.PushNotificationConfig:
    """A 0.3 push config with every member set."""
    return t03.PushNotificationConfig(
        id="push-1",
        url="https://client.example.com/webhook",
        token="opaque-token-123",
        authentication=t03.PushNotificationAuthenticationInfo(
            schemes=["Bearer", "Basic"], credentials="secret-jwt"
        ),
    )


def _v03_agent_card() -> t03.AgentCard:
    """A fully populated 0.3 AgentCard (OAuthFlows may hold all four flows at once)."""
    schemes: dict[str, Any] = {
        "apiKey": t03.APIKeySecurityScheme(
            in_=t03.In.header, name="X-API-Key", description="Static key"
        ),
        "apiKeyQuery": t03.APIKeySecurityScheme(in_=t03.In.query, name="key"),
        "apiKeyCookie": t03.APIKeySecurityScheme(in_=t03.In.cookie, name="session"),
        "bearer": t03.HTTPAuthSecurityScheme(
            scheme="Bearer", bearer_format="JWT", description="JWT bearer"
        ),
        "oauth": t03.OAuth2SecurityScheme(
            description="OAuth 2.0",
            oauth2_metadata_url="https://auth.example.com/.well-known/oauth-authorization-server",
            flows=t03.OAuthFlows(
                authorization_code=t03.AuthorizationCodeOAuthFlow(
                    authorization_url="https://auth.example.com/authorize",
                    token_url="https://auth.example.com/token",
                    refresh_url="https://auth.example.com/refresh",
                    scopes={"read": "Read access", "write": "Write access"},
                ),
                client_credentials=t03.ClientCredentialsOAuthFlow(
                    token_url="https://auth.example.com/token", scopes={"agent": "Call the agent"}
                ),
                implicit=t03.ImplicitOAuthFlow(
                    authorization_url="https://auth.example.com/authorize", scopes={}
                ),
                password=t03.PasswordOAuthFlow(
                    token_url="https://auth.example.com/token",
                    refresh_url="https://auth.example.com/refresh",
                    scopes={"read": "Read access"},
                ),
            ),
        ),
        "oidc": t03.OpenIdConnectSecurityScheme(
            open_id_connect_url="https://auth.example.com/.well-known/openid-configuration",
            description="OIDC",
        ),
        "mtls": t03.MutualTLSSecurityScheme(description="Client certificates"),
        "mtlsBare": t03.MutualTLSSecurityScheme(),
    }
    return t03.AgentCard(
        name="Recipe Agent",
        description="Finds recipes.",
        version="1.2.3",
        url="https://agent.example.com/a2a/v03",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            t03.AgentInterface(url="https://agent.example.com/a2a/v03", transport="JSONRPC"),
            t03.AgentInterface(url="agent.example.com:443", transport="GRPC"),
            t03.AgentInterface(url="https://agent.example.com/a2a/rest", transport="HTTP+JSON"),
        ],
        protocol_version="0.3.0",
        provider=t03.AgentProvider(organization="Example Org", url="https://example.com"),
        documentation_url="https://example.com/docs",
        icon_url="https://example.com/icon.png",
        capabilities=t03.AgentCapabilities(
            streaming=True,
            push_notifications=False,
            state_transition_history=True,
            extensions=[
                t03.AgentExtension(
                    uri=EXT_URI,
                    description="Tracing",
                    required=True,
                    params={"sampleRate": 0.5, "maxSpans": 100, "modes": ["a", "b"]},
                ),
                t03.AgentExtension(uri="https://example.com/ext/plain/v1"),
            ],
        ),
        security_schemes={k: t03.SecurityScheme(root=v) for k, v in schemes.items()},
        security=[{"oauth": ["read", "write"], "mtls": []}, {"apiKey": []}],
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "image/png"],
        skills=[
            t03.AgentSkill(
                id="find-recipe",
                name="Find recipe",
                description="Finds a recipe by ingredients.",
                tags=["cooking", "search"],
                examples=["What can I cook with eggs?"],
                input_modes=["text/plain"],
                output_modes=["application/json"],
                security=[{"oauth": ["read"]}],
            ),
            t03.AgentSkill(id="chat", name="Chat", description="Small talk.", tags=["chat"]),
        ],
        supports_authenticated_extended_card=True,
        signatures=[
            t03.AgentCardSignature(
                protected="eyJhbGciOiJFUzI1NiIsImtpZCI6ImtleS0xIiwidHlwIjoiSk9TRSJ9",
                signature="c2lnbmF0dXJlLWJ5dGVz",
                header={"kid": "key-1", "x5t": None},
            )
        ],
    )


def v03_models() -> dict[str, BaseModel]:
    """The SDK 0.3 pydantic objects behind ``v03_vectors`` (name → model)."""
    parts = _v03_parts()
    task_full = _v03_task_full()
    user_msg = _v03_user_message()
    agent_msg = _v03_agent_message()
    push = _v03_push_config()
    status_input = t03.TaskStatusUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        status=t03.TaskStatus(
            state=t03.TaskState.input_required,
            message=_v03_agent_message("Which city?"),
            timestamp="2025-07-31T12:34:56.789123Z",
        ),
        final=True,
        metadata={"progress": 50},
    )
    artifact_update = t03.TaskArtifactUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        artifact=t03.Artifact(artifact_id="art-1", parts=[_p03(t03.TextPart(text=" more text"))]),
        append=True,
        last_chunk=True,
        metadata={"chunk": 2},
    )
    card = _v03_agent_card()
    send_params = t03.MessageSendParams(
        message=user_msg,
        configuration=t03.MessageSendConfiguration(
            accepted_output_modes=["text/plain", "application/json"],
            blocking=False,
            history_length=10,
            push_notification_config=push,
        ),
        metadata=METADATA,
    )
    task_push = t03.TaskPushNotificationConfig(task_id=TASK_ID, push_notification_config=push)
    task_push_min = t03.TaskPushNotificationConfig(
        task_id=TASK_ID,
        push_notification_config=t03.PushNotificationConfig(url="https://client.example.com/hook"),
    )
    get_push_params = t03.GetTaskPushNotificationConfigParams(
        id=TASK_ID, push_notification_config_id="push-1", metadata={"k": "v"}
    )
    rid = REQUEST_ID

    out: dict[str, Any] = {}
    out.update(parts)
    out["message_user_all_parts"] = user_msg
    out["message_agent_reply"] = agent_msg
    out["message_minimal"] = t03.Message(
        message_id="m-0", role=t03.Role.user, parts=[_p03(t03.TextPart(text="hi"))]
    )
    out["artifact_full"] = _v03_artifact()
    out["task_full"] = task_full
    out["task_minimal"] = t03.Task(
        id="task-min", context_id=CONTEXT_ID, status=t03.TaskStatus(state=t03.TaskState.submitted)
    )
    for state in t03.TaskState:
        out[f"task_status_{state.name}"] = t03.TaskStatus(
            state=state, timestamp="2025-07-31T12:34:56Z"
        )
    out["status_update_working"] = t03.TaskStatusUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        status=t03.TaskStatus(state=t03.TaskState.working),
        final=False,
    )
    out["status_update_input_required"] = status_input
    out["status_update_completed"] = t03.TaskStatusUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        status=t03.TaskStatus(state=t03.TaskState.completed, timestamp=TS_MILLIS),
        final=True,
    )
    out["artifact_update_append_last_chunk"] = artifact_update
    out["artifact_update_first_chunk"] = t03.TaskArtifactUpdateEvent(
        task_id=TASK_ID,
        context_id=CONTEXT_ID,
        artifact=_v03_artifact(),
        append=False,
        last_chunk=False,
    )
    out["agent_card_full"] = card
    out["agent_card_minimal"] = t03.AgentCard(
        name="Tiny",
        description="Minimal agent.",
        version="0.0.1",
        url="http://localhost:8000/",
        capabilities=t03.AgentCapabilities(),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[t03.AgentSkill(id="s", name="S", description="d", tags=["t"])],
    )
    out["message_send_params_full"] = send_params
    out["message_send_params_minimal"] = t03.MessageSendParams(message=out["message_minimal"])
    out["task_query_params"] = t03.TaskQueryParams(
        id=TASK_ID, history_length=3, metadata={"k": "v"}
    )
    out["task_query_params_history_zero"] = t03.TaskQueryParams(id=TASK_ID, history_length=0)
    out["task_id_params"] = t03.TaskIdParams(id=TASK_ID, metadata={"reason": "user"})
    out["push_notification_config"] = push
    out["task_push_notification_config"] = task_push
    out["task_push_notification_config_minimal"] = task_push_min
    out["get_push_config_params"] = get_push_params
    out["list_push_config_params"] = t03.ListTaskPushNotificationConfigParams(id=TASK_ID)
    out["delete_push_config_params"] = t03.DeleteTaskPushNotificationConfigParams(
        id=TASK_ID, push_notification_config_id="push-1"
    )
    # JSON-RPC request envelopes (method names are model defaults).
    out["request_message_send"] = t03.SendMessageRequest(id=rid, params=send_params)
    out["request_message_stream"] = t03.SendStreamingMessageRequest(
        id=7, params=out["message_send_params_minimal"]
    )
    out["request_tasks_get"] = t03.GetTaskRequest(id=rid, params=out["task_query_params"])
    out["request_tasks_cancel"] = t03.CancelTaskRequest(id=rid, params=out["task_id_params"])
    out["request_tasks_resubscribe"] = t03.TaskResubscriptionRequest(
        id=rid, params=t03.TaskIdParams(id=TASK_ID)
    )
    out["request_push_config_set"] = t03.SetTaskPushNotificationConfigRequest(
        id=rid, params=task_push
    )
    out["request_push_config_get"] = t03.GetTaskPushNotificationConfigRequest(
        id=rid, params=get_push_params
    )
    out["request_push_config_get_by_task_id"] = t03.GetTaskPushNotificationConfigRequest(
        id=rid, params=t03.TaskIdParams(id=TASK_ID)
    )
    out["request_push_config_list"] = t03.ListTaskPushNotificationConfigRequest(
        id=rid, params=t03.ListTaskPushNotificationConfigParams(id=TASK_ID)
    )
    out["request_push_config_delete"] = t03.DeleteTaskPushNotificationConfigRequest(
        id=rid,
        params=out["delete_push_config_params"],
    )
    out["request_extended_card"] = t03.GetAuthenticatedExtendedCardRequest(id=rid)
    # JSON-RPC success responses, as JSONRPC03Adapter builds them.
    out["response_message_send_task"] = t03.SendMessageSuccessResponse(id=rid, result=task_full)
    out["response_message_send_message"] = t03.SendMessageSuccessResponse(id=rid, result=agent_msg)
    out["sse_task"] = t03.SendStreamingMessageSuccessResponse(id=rid, result=out["task_minimal"])
    out["sse_message"] = t03.SendStreamingMessageSuccessResponse(id=rid, result=agent_msg)
    out["sse_status_update"] = t03.SendStreamingMessageSuccessResponse(id=rid, result=status_input)
    out["sse_artifact_update"] = t03.SendStreamingMessageSuccessResponse(
        id=rid, result=artifact_update
    )
    out["response_tasks_get"] = t03.GetTaskSuccessResponse(id=rid, result=task_full)
    out["response_tasks_cancel"] = t03.CancelTaskSuccessResponse(id=rid, result=out["task_minimal"])
    out["response_push_config_set"] = t03.SetTaskPushNotificationConfigSuccessResponse(
        id=rid, result=task_push
    )
    out["response_push_config_get"] = t03.GetTaskPushNotificationConfigSuccessResponse(
        id=rid, result=task_push
    )
    out["response_push_config_list"] = t03.ListTaskPushNotificationConfigSuccessResponse(
        id=rid, result=[task_push, task_push_min]
    )
    out["response_push_config_list_empty"] = t03.ListTaskPushNotificationConfigSuccessResponse(
        id=rid, result=[]
    )
    out["response_delete_push_config"] = t03.DeleteTaskPushNotificationConfigSuccessResponse(
        id=rid, result=None
    )
    out["response_extended_card"] = t03.GetAuthenticatedExtendedCardSuccessResponse(
        id=rid, result=card
    )
    # Error responses as emitted on the SSE path (pydantic, exclude_none: no `data` when None).
    for name in (
        "JSONParseError",
        "InvalidRequestError",
        "MethodNotFoundError",
        "InvalidParamsError",
        "InternalError",
        "TaskNotFoundError",
        "TaskNotCancelableError",
        "PushNotificationNotSupportedError",
        "UnsupportedOperationError",
        "ContentTypeNotSupportedError",
        "InvalidAgentResponseError",
        "AuthenticatedExtendedCardNotConfiguredError",
    ):
        out[f"error_{name}"] = t03.JSONRPCErrorResponse(id=rid, error=getattr(t03, name)())
    out["error_with_data_null_id"] = t03.JSONRPCErrorResponse(
        id=None, error=t03.InvalidParamsError(data={"field": "params.id"})
    )

    # What a 1.0 SDK server sends to a 0.3 client: conversions.to_compat_* of the 1.0 objects.
    p10: dict[str, Any] = v10_protos()
    out["from_v10_message_user_all_parts"] = conversions.to_compat_message(
        p10["message_user_all_parts"]
    )
    out["from_v10_task_full"] = conversions.to_compat_task(p10["task_full"])
    out["from_v10_status_update_input_required"] = conversions.to_compat_task_status_update_event(
        p10["status_update_input_required"]
    )
    out["from_v10_status_update_completed"] = conversions.to_compat_task_status_update_event(
        p10["status_update_completed"]
    )
    out["from_v10_artifact_update"] = conversions.to_compat_task_artifact_update_event(
        p10["artifact_update_append_last_chunk"]
    )
    out["from_v10_agent_card_full"] = conversions.to_compat_agent_card(p10["agent_card_full"])
    out["from_v10_agent_card_oauth_device_code"] = conversions.to_compat_agent_card(
        p10["agent_card_oauth_device_code"]
    )
    out["from_v10_task_push_notification_config"] = (
        conversions.to_compat_task_push_notification_config(
            p10["task_push_notification_config_full"]
        )
    )
    out["from_v10_send_message_request"] = conversions.to_compat_send_message_request(
        p10["send_message_request_full"],
        request_id=REQUEST_ID,
    )
    out["from_v10_sse_status_update"] = conversions.to_compat_stream_response(
        p10["stream_status_update"],
        REQUEST_ID,
    )
    return out


def v03_vectors() -> dict[str, tuple[str, Any]]:
    """name → (0.3 JSON Schema definition name, wire dict as the SDK's 0.3 layer emits it)."""
    out: dict[str, tuple[str, Any]] = {}
    for name, model in v03_models().items():
        type_name = type(model).__name__
        out[name] = (type_name, v03_to_wire(model))
    return out


def v03_jsonrpc_vectors() -> dict[str, tuple[str, JsonDict]]:
    """name → (0.3 schema name, envelope), emitted by SDK code paths that are not plain model dumps.

    * ``client_*``: ``CompatJsonRpcTransport`` requests, i.e. ``JSONRPC20Request(
      method, params=conversions.to_compat_*(v1_req).params.model_dump(...), _id)``.
    * ``error_adapter_*``: ``JSONRPC03Adapter._generate_error_response`` for an
      ``A2AError`` raised by the handler, ``{"jsonrpc", "id", "error":
      _to_v03_jsonrpc_error(e).model_dump(by_alias=True)}`` (note ``data: null``).
    """
    p: dict[str, Any] = v10_protos()

    def client(method: str, compat_req: Any) -> JsonDict:
        params = compat_req.params.model_dump(by_alias=True, exclude_none=True, mode="json")
        return dict(JSONRPC20Request(method=method, params=params, _id=REQUEST_ID).data)

    out: dict[str, tuple[str, JsonDict]] = {
        "client_message_send": (
            "SendMessageRequest",
            client(
                "message/send",
                conversions.to_compat_send_message_request(p["send_message_request_full"], 0),
            ),
        ),
        "client_message_stream": (
            "SendStreamingMessageRequest",
            client(
                "message/stream",
                conversions.to_compat_send_message_request(p["send_message_request_minimal"], 0),
            ),
        ),
        "client_tasks_get": (
            "GetTaskRequest",
            client("tasks/get", conversions.to_compat_get_task_request(p["get_task_request"], 0)),
        ),
        "client_tasks_cancel": (
            "CancelTaskRequest",
            client(
                "tasks/cancel",
                conversions.to_compat_cancel_task_request(p["cancel_task_request"], 0),
            ),
        ),
        "client_tasks_resubscribe": (
            "TaskResubscriptionRequest",
            client(
                "tasks/resubscribe",
                conversions.to_compat_subscribe_to_task_request(p["subscribe_to_task_request"], 0),
            ),
        ),
        "client_push_config_set": (
            "SetTaskPushNotificationConfigRequest",
            client(
                "tasks/pushNotificationConfig/set",
                conversions.to_compat_create_task_push_notification_config_request(
                    p["task_push_notification_config_full"],
                    0,
                ),
            ),
        ),
        "client_push_config_get": (
            "GetTaskPushNotificationConfigRequest",
            client(
                "tasks/pushNotificationConfig/get",
                conversions.to_compat_get_task_push_notification_config_request(
                    p["get_task_push_notification_config_request"],
                    0,
                ),
            ),
        ),
        "client_push_config_list": (
            "ListTaskPushNotificationConfigRequest",
            client(
                "tasks/pushNotificationConfig/list",
                conversions.to_compat_list_task_push_notification_config_request(
                    p["list_task_push_notification_configs_request"],
                    0,
                ),
            ),
        ),
        "client_push_config_delete": (
            "DeleteTaskPushNotificationConfigRequest",
            client(
                "tasks/pushNotificationConfig/delete",
                conversions.to_compat_delete_task_push_notification_config_request(
                    p["delete_task_push_notification_config_request"],
                    0,
                ),
            ),
        ),
        "client_extended_card": (
            "GetAuthenticatedExtendedCardRequest",
            dict(
                JSONRPC20Request(
                    method="agent/getAuthenticatedExtendedCard", params={}, _id=REQUEST_ID
                ).data
            ),
        ),
    }
    for err_cls in sdk_errors.JSON_RPC_ERROR_CODE_MAP:
        err = _to_v03_jsonrpc_error(err_cls()).model_dump(by_alias=True)
        out[f"error_adapter_{err_cls.__name__}"] = (
            "JSONRPCErrorResponse",
            {"jsonrpc": "2.0", "id": REQUEST_ID, "error": err},
        )
    err = _to_v03_jsonrpc_error(
        sdk_errors.TaskNotFoundError(message="Task task-9 not found", data={"taskId": "task-9"})
    ).model_dump(by_alias=True)
    out["error_adapter_TaskNotFoundError_with_data"] = (
        "JSONRPCErrorResponse",
        {"jsonrpc": "2.0", "id": REQUEST_ID, "error": err},
    )
    # Validation failure of a 0.3 request (CoreInvalidRequestError(data=str(exc))).
    out["error_adapter_invalid_request"] = (
        "JSONRPCErrorResponse",
        {
            "jsonrpc": "2.0",
            "id": REQUEST_ID,
            "error": jsonrpc_models.InvalidRequestError(
                data="1 validation error for GetTaskRequest"
            ).model_dump(by_alias=True),
        },
    )
    return out
