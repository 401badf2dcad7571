"""Model <-> protobuf conversion of the gRPC binding (``a2a_models.adapters.grpc``).

* The committed ``_pb`` modules are what ``_protoc.generate`` makes of the
  1.0.1 ``a2a.proto`` today (needs ``../shared/a2a-spec``).
* For every model type and union alias, from the hypothesis strategies:
  model -> protobuf -> model equals; protobuf bytes -> model -> bytes are equal;
  ``json_format.MessageToDict`` of the protobuf equals the 1.0 JSON codec's output.
* Invalid messages give a DecodeError naming the field; values protobuf cannot
  carry give an EncodeError.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.adapters.grpc import _protoc
from a2a_models.adapters.grpc._convert import from_proto, proto_class, to_proto
from a2a_models.adapters.grpc._pb import a2a_pb2 as pb
from a2a_models.errors import DecodeError, EncodeError
from a2a_models.testing import strategies as a2a_st

SPEC = Path(__file__).resolve().parents[3] / "shared" / "a2a-spec"
PB_DIR = Path(_protoc.__file__).parent / "_pb"

TYPES: list[Any] = [*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES]


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


@pytest.mark.parametrize("version", ["1.0.1", "0.3.0"])
def test_generated_modules_are_fresh(tmp_path: Path, version: str) -> None:
    proto = SPEC / version / "a2a.proto"
    if not proto.exists():
        pytest.fail(f"the A2A spec checkout is missing: {proto} (see noxfile 'protos')")
    written = _protoc.generate(proto, tmp_path)
    stem, _ = _protoc.target(proto.read_text(encoding="utf-8"))
    assert [p.name for p in written] == list(_protoc.outputs(stem))
    for name in _protoc.outputs(stem):
        fresh = (tmp_path / name).read_text(encoding="utf-8")
        committed = (PB_DIR / name).read_text(encoding="utf-8")
        assert fresh == committed, f"{name} is stale: run `nox -s protos`"


def test_sdk_and_package_protos_coexist() -> None:
    # The SDK registers its own lf.a2a.v1 in the default pool; ours is private.
    sdk = pytest.importorskip("a2a.types.a2a_pb2")
    task = m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING))
    data = to_proto(task).SerializeToString()
    theirs = sdk.Task.FromString(data)
    assert theirs.id == "t" and theirs.status.state == sdk.TASK_STATE_WORKING
    assert from_proto(m.Task, pb.Task.FromString(theirs.SerializeToString())) == task


# JSON members that are proto3 ``optional`` (presence kept even at 0/false)
# or REQUIRED-always-written: MessageToDict prints the former, omits the latter at default.
_PRESENCE = frozenset(
    {
        "historyLength",
        "pageSize",
        "includeArtifacts",
        "documentationUrl",
        "iconUrl",
        "streaming",
        "pushNotifications",
        "extendedAgentCard",
        "text",
        "raw",
        "url",  # Part.content oneof members: presence too
    }
)
_OPAQUE = {"metadata", "params", "header", "data"}
_MAPS = {"scopes", "schemes", "securitySchemes"}


def _drop_defaults(value: Any, key: str | None = None, presence: frozenset[str] = _PRESENCE) -> Any:
    """The codec's output without the members proto3 does not print at their default."""
    if key in _OPAQUE or key == "scopes":  # JSON, or a map<string, string>
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k not in presence and k not in _OPAQUE:
                if v == {} and k in _MAPS:
                    continue
                if v in (
                    "",
                    0,
                    [],
                    "ROLE_UNSPECIFIED",
                    "TASK_STATE_UNSPECIFIED",
                ) and not isinstance(v, dict):
                    continue
            out[k] = _drop_defaults(v, k, presence)
        return out
    if isinstance(value, list):
        return [_drop_defaults(v, None, presence) for v in value]
    return value


def _encodable(tp: Any, value: Any) -> Any | None:
    """to_proto(value), or None when protobuf cannot carry a number in it (asserted precise)."""
    try:
        return to_proto(value, tp if tp in a2a_st.UNION_TYPES else None)
    except EncodeError as exc:
        assert "has no exact protobuf Struct number" in str(exc), exc
        return None


@pytest.mark.parametrize("tp", TYPES, ids=_name)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trips(tp: Any, data: st.DataObject) -> None:
    value = data.draw(a2a_st.strategy_for(tp, "1.0"))
    msg = _encodable(tp, value)
    if msg is None:
        return
    assert isinstance(msg, proto_class(tp))
    back = from_proto(tp, msg)
    if isinstance(value, m.ListTasksRequest) and value.status is m.TaskState.UNSPECIFIED:
        # proto3: status 0 is "unset"; both mean "no filter" to the engine.
        value = attrs.evolve(value, status=None)
    assert back == value
    wire = msg.SerializeToString(deterministic=True)
    again = to_proto(
        from_proto(tp, proto_class(tp).FromString(wire)), tp if tp in a2a_st.UNION_TYPES else None
    )
    assert again.SerializeToString(deterministic=True) == wire
    expected = codec.to_wire(value, dialect="1.0", as_type=tp if tp in a2a_st.UNION_TYPES else None)
    # ListTasksResponse.page_size is a plain int32 (the request's is optional).
    presence = _PRESENCE - {"pageSize"} if tp is m.ListTasksResponse else _PRESENCE
    assert json_format.MessageToDict(msg) == _drop_defaults(expected, None, presence)


# --------------------------------------------------------------------------- errors


def _task_pb(**kw: Any) -> Any:
    return pb.Task(id="t", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING), **kw)


@pytest.mark.parametrize(
    ("tp", "msg", "path", "expected"),
    [
        (m.Task, pb.Task(id="t"), "$.status", "required field missing"),
        (m.Task, pb.Task(status=pb.TaskStatus(state=1)), "$.id", "required field missing"),
        (m.Message, pb.Message(message_id="m", role=1), "$.parts", "required field missing"),
        (
            m.Task,
            _task_pb(history=[pb.Message(role=1, parts=[pb.Part(text="x")])]),
            "$.history[0].message_id",
            "required field missing",
        ),
        (m.TaskStatus, pb.TaskStatus(state=42), "$.state", "TaskState enum number"),
        (
            m.GetTaskRequest,
            pb.GetTaskRequest(id="t", history_length=-1),
            "$.history_length",
            "non-negative",
        ),
        (m.Part, pb.Part(filename="f"), "$", "exactly one of text, raw, url, data"),
        (
            m.APIKeySecurityScheme,
            pb.SecurityScheme(
                api_key_security_scheme=pb.APIKeySecurityScheme(name="k", location="body")
            ),
            "$.api_key_security_scheme.location",
            "header, query, cookie",
        ),
        (
            m.HTTPAuthSecurityScheme,
            pb.SecurityScheme(mtls_security_scheme=pb.MutualTlsSecurityScheme()),
            "$",
            "expected a HTTPAuthSecurityScheme",
        ),
        (m.StreamResponse, pb.StreamResponse(), "$", "exactly one of task, message"),
    ],
)
def test_invalid_messages_name_the_field(tp: Any, msg: Any, path: str, expected: str) -> None:
    with pytest.raises(DecodeError) as info:
        from_proto(tp, msg)
    assert info.value.path == path
    assert expected in str(info.value)


def test_timestamp_out_of_range() -> None:
    msg = pb.TaskStatus(state=1)
    msg.timestamp.seconds = 400_000_000_000  # year ~14600
    with pytest.raises(DecodeError, match=r"\$\.timestamp.*out of range"):
        from_proto(m.TaskStatus, msg)


def test_nanoseconds_survive() -> None:
    ts = m.Timestamp.with_nanoseconds(datetime(2025, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), 789)
    msg = to_proto(m.TaskStatus(state=m.TaskState.WORKING, timestamp=ts))
    assert msg.timestamp.nanos == 123456789
    back = from_proto(m.TaskStatus, msg).timestamp
    assert back == ts and back is not None and getattr(back, "nanosecond", 0) == 789


def test_inexact_integer_is_an_encode_error() -> None:
    task = m.Task(
        id="t",
        status=m.TaskStatus(state=m.TaskState.WORKING),
        metadata={"ok": 2**63, "n": [1, 2**53 + 1]},
    )
    with pytest.raises(EncodeError) as info:
        to_proto(task)
    assert info.value.path == "$.metadata.n[1]"
    assert "9007199254740993" in str(info.value)


def test_large_exact_integers_and_floats_come_back() -> None:
    meta = {"big": 2**63, "f": 1.5, "neg": -0.0, "i": 7}
    back = from_proto(m.Message, to_proto(m.Message.user("x", metadata=meta))).metadata
    assert back == meta
    assert type(back["i"]) is int and type(back["big"]) is int and type(back["f"]) is float
    assert str(back["neg"]) == "-0.0"


def test_only_in_03_is_an_encode_error() -> None:
    auth = m.AuthenticationInfo(scheme="Bearer", other_schemes=("Basic",))
    with pytest.raises(EncodeError, match="one authentication scheme") as info:
        to_proto(auth)
    assert info.value.path == "$.other_schemes"
    event = m.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.COMPLETED), final=True
    )
    # ``final`` is replaced by the end of the stream in 1.0: not a loss.
    assert to_proto(event).task_id == "t"


def test_unknown_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        to_proto(object())
    with pytest.raises(TypeError):
        from_proto(dict, pb.Task())
