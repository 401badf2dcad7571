"""Differential property tests: this codec against the official a2a-sdk, both directions.

``test_codec_interop`` checks fixed vectors; here hypothesis drives both sides:

* ours -> wire -> SDK: every model from ``a2a_models.testing.strategies`` is written
  by our codec, parsed strictly by the SDK (``json_format.ParseDict`` for 1.0 and
  0.3 HTTP+JSON, the 0.3 pydantic models for 0.3 JSON-RPC), written back by the SDK
  and read by our codec: the result must be ours again.
* SDK -> wire -> ours: arbitrary messages of the SDK's protos (:func:`pb_messages`,
  built from the descriptors, REQUIRED fields set) are written by ``MessageToDict``
  (camelCase and, as ProtoJSON parsers must also accept, the proto field names) or
  converted to 0.3 by the SDK's own ``to_compat_*``; our codec must read them and
  write back the same message.

What is normalised, and why, is stated where it happens: Struct numbers are
doubles in protobuf (the SDK writes ``2`` as ``2.0`` and rounds integers beyond
2**53), and ``*_UNSPECIFIED`` values of REQUIRED enums are not generated (protobuf
omits them, and a REQUIRED field that is absent is refused, spec §5.7).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
from a2a.compat.v0_3 import conversions as conv03
from a2a.compat.v0_3 import types as t03
from a2a.types import a2a_pb2 as pb
from google.api import field_behavior_pb2
from google.protobuf import json_format, message_factory, struct_pb2, timestamp_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import a2a_models as m
from a2a_models import codec
from a2a_models.errors import DecodeError
from a2a_models.testing import strategies as a2a_st

from .sdk_vectors import strict_equal
from .test_codec_interop import V03_TYPES, without_false_defaults

# One codec path is enough here: tests/test_accelerator.py holds the compiled
# accelerator to the pure codec's results and errors.

_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --------------------------------------------------------------------------- SDK-side strategies

_FD = FieldDescriptor
_COUNTS = frozenset({"history_length", "page_size", "total_size"})
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53).map(float)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6,
)
_TIMESTAMPS = st.builds(
    lambda s, n: timestamp_pb2.Timestamp(seconds=s, nanos=n),
    st.integers(-62135596800, 253402300799),  # 0001-01-01 .. 9999-12-31
    st.integers(0, 999_999_999) | st.sampled_from([0, 1000, 123_000_000]),
)


def _required(f: FieldDescriptor) -> bool:
    behaviours = f.GetOptions().Extensions[field_behavior_pb2.field_behavior]
    return field_behavior_pb2.REQUIRED in behaviours


def _scalar(f: FieldDescriptor, nonzero: bool) -> st.SearchStrategy[Any]:
    # Value rules the spec states in prose, which our models enforce: counts
    # are not negative, an API key travels in a header, a query or a cookie.
    if f.name == "location" and f.containing_type.name == "APIKeySecurityScheme":
        return st.sampled_from(["header", "query", "cookie"])
    if f.type == _FD.TYPE_INT32:
        low = 1 if nonzero else (0 if f.name in _COUNTS else -(2**31))
        return st.integers(low, 2**31 - 1)
    if f.type == _FD.TYPE_STRING:
        return st.text(min_size=1 if nonzero else 0, max_size=8)
    if f.type == _FD.TYPE_BYTES:
        return st.binary(min_size=1 if nonzero else 0, max_size=8)
    if f.type == _FD.TYPE_BOOL:
        return st.just(True) if nonzero else st.booleans()
    if f.type == _FD.TYPE_ENUM:
        return st.sampled_from([v.number for v in f.enum_type.values if v.number or not nonzero])
    raise NotImplementedError(f.full_name)


def _value(f: FieldDescriptor, depth: int, nonzero: bool) -> st.SearchStrategy[Any]:
    if f.type != _FD.TYPE_MESSAGE:
        return _scalar(f, nonzero)
    name = f.message_type.full_name
    if name == "google.protobuf.Struct":
        objects = st.dictionaries(st.text(max_size=5), _JSON, max_size=3)
        return objects.map(lambda d: json_format.ParseDict(d, struct_pb2.Struct()))
    if name == "google.protobuf.Value":
        return _JSON.map(lambda d: json_format.ParseDict(d, struct_pb2.Value()))
    if name == "google.protobuf.Timestamp":
        return _TIMESTAMPS
    return pb_messages(f.message_type, depth + 1)


def _set(msg: Any, f: FieldDescriptor, value: Any) -> None:
    if f.type == _FD.TYPE_MESSAGE:
        getattr(msg, f.name).CopyFrom(value)
    else:
        setattr(msg, f.name, value)


@st.composite
def pb_messages(draw: st.DrawFn, desc: Descriptor, depth: int = 0) -> Any:
    """An arbitrary message of ``desc``: REQUIRED fields set (non-default), each real
    oneof holding one member (at any value, defaults included), the other fields
    present or not."""
    msg = message_factory.GetMessageClass(desc)()
    oneofs = [o for o in desc.oneofs if not o.name.startswith("_")]  # not proto3 optional
    for oneof in oneofs:
        f = draw(st.sampled_from(list(oneof.fields)))
        _set(msg, f, draw(_value(f, depth, False)))
    in_oneof = {f.name for o in oneofs for f in o.fields}
    for f in desc.fields:
        required = _required(f)
        if f.name in in_oneof or not (required or (depth <= 3 and draw(st.booleans()))):
            continue
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            key_f, value_f = (f.message_type.fields_by_name[k] for k in ("key", "value"))
            items = draw(
                st.dictionaries(
                    _scalar(key_f, False),
                    _value(value_f, depth, False),
                    min_size=1 if required else 0,
                    max_size=3,
                )
            )
            target = getattr(msg, f.name)
            for k, v in items.items():
                if value_f.type == _FD.TYPE_MESSAGE:
                    target[k].CopyFrom(v)
                else:
                    target[k] = v
        elif f.is_repeated:
            values = st.lists(
                _value(f, depth, False), min_size=int(required), max_size=1 if depth > 2 else 3
            )
            getattr(msg, f.name).extend(draw(values))
        else:
            _set(msg, f, draw(_value(f, depth, required)))
    return msg


# --------------------------------------------------------------------------- helpers


def _doubles(value: Any) -> Any:
    """JSON with every number as a double: what a protobuf Struct holds."""
    if isinstance(value, bool) or not isinstance(value, int | float | dict | list | tuple):
        return value
    if isinstance(value, dict):
        return {k: _doubles(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_doubles(v) for v in value]
    return float(value)


def _as_type(tp: Any) -> Any:
    return tp if tp in a2a_st.UNION_TYPES else None


def _name(tp: Any) -> str:
    if tp is m.StreamResponse:
        return "StreamResponse"
    if tp is m.SendMessageResponse:
        return "SendMessageResponse"
    return str(tp.__name__)


def _unspecified(wire: Any) -> bool:
    return "_UNSPECIFIED'" in repr(wire)


# Types both sides have under one name. The SecurityScheme subclasses are left
# out: our codec writes them wrapped in their SecurityScheme oneof member.
V10_TYPES = [
    tp
    for tp in (*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES)
    if hasattr(pb, _name(tp))
    and not (_name(tp).endswith("SecurityScheme") and _name(tp) != "SecurityScheme")
]
V03_HTTP_TYPES = [
    tp for tp in V10_TYPES if hasattr(pb03, _name(tp)) and a2a_st.expressible(tp, "0.3-http")
]


def test_type_lists_cover_the_protocol() -> None:
    assert len(V10_TYPES) >= 38
    assert {m.Task, m.Message, m.Part, m.AgentCard, m.StreamResponse} <= set(V10_TYPES)
    assert {m.Task, m.Message, m.Part, m.AgentCard, m.StreamResponse} <= set(V03_HTTP_TYPES)


# --------------------------------------------------------------------------- 1.0


@pytest.mark.parametrize("tp", V10_TYPES, ids=_name)
@_SETTINGS
@given(data=st.data())
def test_v10_ours_through_sdk(tp: Any, data: st.DataObject) -> None:
    x = data.draw(a2a_st.strategy_for(tp, "1.0"), label="ours")
    wire = codec.to_wire(x, "1.0", as_type=_as_type(tp))
    assume(not _unspecified(wire))
    msg = json_format.ParseDict(copy.deepcopy(wire), getattr(pb, _name(tp))())
    # ProtoJSON writers may use the proto field names; parsers must accept both.
    proto_names = data.draw(st.booleans(), label="proto field names")
    sdk_wire = json_format.MessageToDict(msg, preserving_proto_field_name=proto_names)
    back = codec.from_wire(tp, sdk_wire, "1.0")
    assert _doubles(codec.to_wire(back, "1.0", as_type=_as_type(tp))) == _doubles(wire)


@pytest.mark.parametrize("tp", V10_TYPES, ids=_name)
@_SETTINGS
@given(data=st.data())
def test_v10_sdk_through_ours(tp: Any, data: st.DataObject) -> None:
    desc = pb.DESCRIPTOR.message_types_by_name[_name(tp)]
    msg = data.draw(pb_messages(desc), label="sdk")
    # ProtoJSON writers may use the proto field names; parsers must accept both.
    proto_names = data.draw(st.booleans(), label="proto field names")
    sdk_wire = json_format.MessageToDict(msg, preserving_proto_field_name=proto_names)
    ours = codec.to_wire(codec.from_wire(tp, sdk_wire, "1.0"), "1.0", as_type=_as_type(tp))
    assert json_format.ParseDict(ours, getattr(pb, _name(tp))()) == msg


# --------------------------------------------------------------------------- 0.3 HTTP+JSON


@pytest.mark.parametrize("tp", V03_HTTP_TYPES, ids=_name)
@_SETTINGS
@given(data=st.data())
def test_v03_http_ours_through_sdk(tp: Any, data: st.DataObject) -> None:
    x = data.draw(a2a_st.strategy_for(tp, "0.3-http"), label="ours")
    wire = codec.to_wire(x, "0.3-http", as_type=_as_type(tp))
    assume(not _unspecified(wire))
    msg = json_format.ParseDict(copy.deepcopy(wire), getattr(pb03, _name(tp))())
    # ProtoJSON writers may use the proto field names; parsers must accept both.
    proto_names = data.draw(st.booleans(), label="proto field names")
    sdk_wire = json_format.MessageToDict(msg, preserving_proto_field_name=proto_names)
    back = codec.from_wire(tp, sdk_wire, "0.3-http")
    assert _doubles(codec.to_wire(back, "0.3-http", as_type=_as_type(tp))) == _doubles(wire)


# --------------------------------------------------------------------------- 0.3 JSON-RPC


def _sdk03(name: str) -> Any:
    return t03.Part if name == "TextPart" else getattr(t03, name)


def _dump03(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.mark.parametrize("name", sorted(n for n in V03_TYPES if n not in ("FilePart", "DataPart")))
@_SETTINGS
@given(data=st.data())
def test_v03_ours_through_sdk(name: str, data: st.DataObject) -> None:
    tp = V03_TYPES[name]
    x = data.draw(a2a_st.strategy_for(tp, "0.3"), label="ours")
    wire = codec.to_wire(x, "0.3")
    sdk_wire = _dump03(_sdk03(name).model_validate(copy.deepcopy(wire)))
    back = codec.to_wire(codec.from_wire(tp, sdk_wire, "0.3"), "0.3")
    # The SDK's pydantic models keep JSON numbers as they are: exact equality.
    assert strict_equal(without_false_defaults(name, back), without_false_defaults(name, wire))


_TO_COMPAT = {
    "Task": (m.Task, conv03.to_compat_task),
    "Message": (m.Message, conv03.to_compat_message),
    "Part": (m.Part, conv03.to_compat_part),
    "AgentCard": (m.AgentCard, conv03.to_compat_agent_card),
    "TaskStatusUpdateEvent": (m.TaskStatusUpdateEvent, conv03.to_compat_task_status_update_event),
    "TaskArtifactUpdateEvent": (
        m.TaskArtifactUpdateEvent,
        conv03.to_compat_task_artifact_update_event,
    ),
    "TaskPushNotificationConfig": (
        m.TaskPushNotificationConfig,
        conv03.to_compat_task_push_notification_config,
    ),
}


@pytest.mark.parametrize("name", sorted(_TO_COMPAT))
@_SETTINGS
@given(data=st.data())
def test_v03_sdk_through_ours(name: str, data: st.DataObject) -> None:
    """What the SDK's 0.3 JSON-RPC side writes for its 1.0 objects, read by us and
    written back, is what the SDK wrote (as the SDK's 0.3 models read both)."""
    tp, to_compat = _TO_COMPAT[name]
    msg = data.draw(pb_messages(pb.DESCRIPTOR.message_types_by_name[name]), label="sdk")
    if name == "TaskPushNotificationConfig":
        assume(msg.task_id)  # 1.0 may leave it out; a 0.3 config names its task
    if name == "AgentCard":
        # The SDK renders a card for 0.3 only from a 0.x interface.
        msg.supported_interfaces.add(
            url="https://a.example", protocol_binding="JSONRPC", protocol_version="0.3"
        )
    try:
        sdk_wire = _dump03(to_compat(msg))
    except Exception:  # the SDK's own refusal (e.g. a card without a 0.x interface)
        assume(False)
    cls = t03.Part if name == "Part" else getattr(t03, name)
    ours = codec.to_wire(codec.from_wire(tp, sdk_wire, "0.3"), "0.3", lossy=True)
    assert strict_equal(
        without_false_defaults(name, _dump03(cls.model_validate(ours))),
        without_false_defaults(name, sdk_wire),
    )


# --------------------------------------------------------------------------- fixed cases

_TS = pb.TaskStatus(state=pb.TASK_STATE_WORKING)
_MSG03 = pb03.Message(message_id="m", role=pb03.ROLE_USER, content=[pb03.Part(text="hi")])

# Members read by hand-written hooks, as a ProtoJSON writer using the proto field
# names (MessageToDict(preserving_proto_field_name=True)) spells them.
PROTO_NAME_CASES: list[tuple[str, Any, str, Any]] = [
    ("1.0", m.StreamResponse, "StreamResponse", pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(task_id="t", context_id="c", status=_TS))),
    ("1.0", m.StreamResponse, "StreamResponse", pb.StreamResponse(
        artifact_update=pb.TaskArtifactUpdateEvent(
            task_id="t", context_id="c", artifact=pb.Artifact(artifact_id="a", parts=[pb.Part(text="x")])))),
    ("1.0", m.SecurityScheme, "SecurityScheme", pb.SecurityScheme(
        api_key_security_scheme=pb.APIKeySecurityScheme(location="header", name="k"))),
    ("1.0", m.SecurityScheme, "SecurityScheme", pb.SecurityScheme(
        mtls_security_scheme=pb.MutualTlsSecurityScheme(description="d"))),
    ("1.0", m.OAuthFlows, "OAuthFlows", pb.OAuthFlows(
        client_credentials=pb.ClientCredentialsOAuthFlow(token_url="https://t", scopes={"a": "b"}))),
    ("1.0", m.OAuthFlows, "OAuthFlows", pb.OAuthFlows(
        device_code=pb.DeviceCodeOAuthFlow(
            device_authorization_url="https://d", token_url="https://t", scopes={"a": "b"}))),
    ("1.0", m.Part, "Part", pb.Part(raw=b"\x00", media_type="image/png", filename="a.png")),
    ("0.3-http", m.TaskStatus, "TaskStatus", pb03.TaskStatus(state=pb03.TASK_STATE_WORKING, update=_MSG03)),
    ("0.3-http", m.StreamResponse, "StreamResponse", pb03.StreamResponse(msg=_MSG03)),
    ("0.3-http", m.SendMessageResponse, "SendMessageResponse", pb03.SendMessageResponse(msg=_MSG03)),
    ("0.3-http", m.SecurityScheme, "SecurityScheme", pb03.SecurityScheme(
        http_auth_security_scheme=pb03.HTTPAuthSecurityScheme(scheme="bearer"))),
    ("0.3-http", m.OAuthFlows, "OAuthFlows", pb03.OAuthFlows(
        client_credentials=pb03.ClientCredentialsOAuthFlow(token_url="https://t"))),
    ("0.3-http", m.TaskPushNotificationConfig, "TaskPushNotificationConfig",
        pb03.TaskPushNotificationConfig(
            name="tasks/t/pushNotificationConfigs/c",
            push_notification_config=pb03.PushNotificationConfig(id="c", url="https://h", token="x"))),
    ("0.3-http", m.Part, "Part", pb03.Part(
        file=pb03.FilePart(file_with_uri="https://f", mime_type="application/pdf"))),
    ("0.3-http", m.AgentCard, "AgentCard", pb03.AgentCard(
        name="n", description="d", version="1", url="https://a", preferred_transport="GRPC",
        protocol_version="0.3.0", capabilities=pb03.AgentCapabilities(),
        default_input_modes=["text"], default_output_modes=["text"],
        skills=[pb03.AgentSkill(id="s", name="s", description="s", tags=["t"])],
        supports_authenticated_extended_card=True)),
]  # fmt: skip


@pytest.mark.usefixtures("codec_path")
@pytest.mark.parametrize("proto_names", [False, True], ids=["camel", "proto-names"])
@pytest.mark.parametrize(("dialect", "tp", "name", "msg"), PROTO_NAME_CASES)
def test_hand_written_hooks_read_both_spellings(
    dialect: str, tp: Any, name: str, msg: Any, proto_names: bool
) -> None:
    """Every member is read in both spellings ProtoJSON allows, and nothing is lost:
    written back, the SDK parses exactly the message it wrote."""
    wire = json_format.MessageToDict(msg, preserving_proto_field_name=proto_names)
    ours = codec.to_wire(codec.from_wire(tp, wire, dialect), dialect, as_type=_as_type(tp))
    module = pb if dialect == "1.0" else pb03
    assert json_format.ParseDict(ours, getattr(module, name)()) == msg


_WORKING = {"state": "TASK_STATE_WORKING"}
_U = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "a"}]}

# A member given in both spellings: which one was meant is unknowable, so it is
# refused (protobuf's conformance suite requires the same), never half-read.
BOTH_SPELLINGS: list[tuple[str, Any, Any, str]] = [
    ("1.0", m.Part, {"text": "a", "mediaType": "x/y", "media_type": "x/z"}, "$.mediaType"),
    ("1.0", m.Message, {"messageId": "m", "role": "ROLE_USER",
        "parts": [{"text": "a", "media_type": "x/y", "mediaType": "x/z"}]}, "$.parts[0].mediaType"),
    ("1.0", m.SecurityScheme, {"mtlsSecurityScheme": {}, "mtls_security_scheme": {}},
        "$.mtlsSecurityScheme"),
    ("1.0", m.OAuthFlows, {"implicit": None, "deviceCode": {}, "device_code": {}}, "$.deviceCode"),
    ("1.0", m.StreamResponse, {"statusUpdate": {"taskId": "t", "contextId": "c", "status": _WORKING},
        "status_update": {"taskId": "u", "contextId": "c", "status": _WORKING}}, "$.statusUpdate"),
    ("1.0", m.Task, {"id": "t", "contextId": "a", "context_id": "b", "status": _WORKING},
        "$.contextId"),
    ("0.3-http", m.Part, {"file": {"fileWithUri": "https://a", "file_with_uri": "https://b"}},
        "$.file.fileWithUri"),
    ("0.3-http", m.TaskStatus, {"state": "TASK_STATE_WORKING", "message": _U, "update": _U},
        "$.message"),
    ("0.3-http", m.StreamResponse, {"message": _U, "msg": _U}, "$.message"),
    ("0.3-http", m.TaskPushNotificationConfig, {"pushNotificationConfig": {"url": "https://a"},
        "push_notification_config": {"url": "https://b"}}, "$.pushNotificationConfig"),
]  # fmt: skip


@pytest.mark.usefixtures("codec_path")
@pytest.mark.parametrize(("dialect", "tp", "wire", "path"), BOTH_SPELLINGS)
def test_a_member_in_both_spellings_is_refused(dialect: str, tp: Any, wire: Any, path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        codec.from_wire(tp, wire, dialect)
    assert caught.value.path == path
    assert "given twice" in str(caught.value)


@pytest.mark.usefixtures("codec_path")
@pytest.mark.parametrize(
    "wire",
    [
        {"role": 1},
        {"role": "ROLE_USER", "metadata": {"n": [1, None, 1.5, {"b": []}], "big": 10**20}},
        {"role": "ROLE_USER", "parts": [{"raw": "AP8"}, {"raw": "AP-_"}, {"raw": "AP+/"}]},
        {"role": "ROLE_USER", "parts": [{"data": None}, {"text": "a", "raw": None}]},
        {"role": "ROLE_USER", "contextId": None, "extensions": None, "metadata": None},
    ],
)
def test_protojson_input_forms_mean_what_they_mean_to_the_sdk(wire: dict[str, Any]) -> None:
    """Enum numbers, url-safe/unpadded base64, nulls for unset members, nested
    Struct values: read by both sides as the same message."""
    full = {"messageId": "m", "parts": [{"text": "a"}], **wire}
    sdk = json_format.ParseDict(copy.deepcopy(full), pb.Message())
    ours = codec.to_wire(codec.from_wire(m.Message, full, "1.0"), "1.0")
    assert json_format.ParseDict(ours, pb.Message()) == sdk


@pytest.mark.usefixtures("codec_path")
@pytest.mark.parametrize(
    ("text", "seconds", "nanos"),
    [
        ("2024-01-02T03:04:05Z", 1704164645, 0),
        ("2024-01-02T03:04:05.1Z", 1704164645, 100_000_000),
        ("2024-01-02T03:04:05.123456789Z", 1704164645, 123_456_789),
        ("2024-01-02T03:04:05+01:00", 1704161045, 0),
        ("2024-01-02T03:04:05.5-08:30", 1704195245, 500_000_000),
        ("0001-01-01T00:00:00Z", -62135596800, 0),
        ("9999-12-31T23:59:59.999999999Z", 253402300799, 999_999_999),
    ],
)
def test_timestamps_read_as_the_sdk_reads_them(text: str, seconds: int, nanos: int) -> None:
    wire = {"state": "TASK_STATE_WORKING", "timestamp": text}
    sdk = json_format.ParseDict(copy.deepcopy(wire), pb.TaskStatus()).timestamp
    assert (sdk.seconds, sdk.nanos) == (seconds, nanos)
    ours = codec.to_wire(codec.from_wire(m.TaskStatus, wire, "1.0"), "1.0")
    assert json_format.ParseDict(ours, pb.TaskStatus()).timestamp == sdk


@pytest.mark.usefixtures("codec_path")
@pytest.mark.parametrize(
    ("wire", "path"),
    [
        ({"parts": [{"text": "a"}, {"raw": "AP8=AP8="}]}, "$.parts[1].raw"),
        ({"parts": [{"raw": "AP 8="}]}, "$.parts[0].raw"),
        ({"parts": [{"raw": "AP!8="}]}, "$.parts[0].raw"),
        ({"parts": [{"text": "a", "raw": "AA=="}]}, "$.parts[0]"),
        ({"role": "ROLE_BOSS"}, "$.role"),
        ({"role": 7}, "$.role"),
        ({"parts": [{"text": 5}]}, "$.parts[0].text"),
    ],
)
def test_bad_values_name_their_path(wire: dict[str, Any], path: str) -> None:
    """Where the SDK's parser silently drops characters of base64 (``AP8=AP8=`` reads
    as one byte pair, see docs/sdk-deviations.md) or refuses, ours names the member."""
    full = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}], **wire}
    with pytest.raises(DecodeError) as caught:
        codec.from_wire(m.Message, full, "1.0")
    assert caught.value.path == path
