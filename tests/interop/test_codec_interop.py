"""Our codec against the official a2a-sdk, in both directions and both versions.

Each SDK vector is decoded with this codec and re-encoded; the SDK must parse
our output, and its canonical re-serialisation of our output must equal its
canonical re-serialisation of its own vector (semantic equality, with the
SDK's own int→float conversion inside Struct undone on both sides, and in 0.3
the opt-in booleans the SDK dumps as an explicit ``false`` dropped on both
sides: see ``without_false_defaults``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

import a2a_models as m
from a2a_models import codec

from .sdk_vectors import (
    METADATA,
    floats_to_ints,
    sdk_parse_v03,
    sdk_parse_v10,
    strict_equal,
    v03_vectors,
    v10_vectors,
)

# Every test here runs on the pure codec and on the compiled accelerator.
pytestmark = pytest.mark.usefixtures("codec_path")

V10_TYPES: dict[str, Any] = {
    "StreamResponse": m.StreamResponse,
    "SendMessageResponse": m.SendMessageResponse,
}

# 0.3 JSON Schema definition -> our model (envelope definitions are the
# protocol layer's business and are checked in tests/protocol).
V03_TYPES: dict[str, Any] = {
    "Task": m.Task,
    "Message": m.Message,
    "TaskStatus": m.TaskStatus,
    "Artifact": m.Artifact,
    "TextPart": m.Part,
    "FilePart": m.Part,
    "DataPart": m.Part,
    "AgentCard": m.AgentCard,
    "MessageSendParams": m.SendMessageRequest,
    "TaskQueryParams": m.GetTaskRequest,
    "TaskIdParams": m.CancelTaskRequest,
    "GetTaskPushNotificationConfigParams": m.GetTaskPushNotificationConfigRequest,
    "ListTaskPushNotificationConfigParams": m.ListTaskPushNotificationConfigsRequest,
    "DeleteTaskPushNotificationConfigParams": m.DeleteTaskPushNotificationConfigRequest,
    "TaskPushNotificationConfig": m.TaskPushNotificationConfig,
    "TaskStatusUpdateEvent": m.TaskStatusUpdateEvent,
    "TaskArtifactUpdateEvent": m.TaskArtifactUpdateEvent,
}


def _v10_type(name: str) -> Any:
    return V10_TYPES.get(name) or getattr(m, name)


_V10 = v10_vectors()
_V03 = {k: v for k, v in v03_vectors().items() if v[0] in V03_TYPES}


def test_every_sdk_type_is_covered() -> None:
    assert {t for t, _ in _V10.values()} >= {"Task", "Message", "AgentCard", "StreamResponse"}
    assert len(_V03) >= 40


@pytest.mark.parametrize("name", sorted(_V10))
def test_v10_sdk_vector_decodes_and_reencodes_equivalently(name: str) -> None:
    type_name, wire = _V10[name]
    tp = _v10_type(type_name)
    obj = codec.from_wire(tp, wire, "1.0")
    ours = codec.to_wire(obj, "1.0", as_type=tp if tp in V10_TYPES.values() else None)
    # The SDK parses what we wrote (strictly: unknown fields are an error) ...
    theirs_of_ours = sdk_parse_v10(type_name, ours)
    # ... and means the same thing by it as by its own vector.
    assert floats_to_ints(theirs_of_ours) == floats_to_ints(sdk_parse_v10(type_name, wire))
    # Decoding is idempotent through our own codec too.
    assert codec.from_wire(tp, ours, "1.0") == obj


def without_false_defaults(type_name: str, dumped: Any) -> Any:
    """``dumped`` (a 0.3 SDK dump) without the optional booleans that are ``false``.

    Our models hold ``TaskArtifactUpdateEvent.append``/``last_chunk`` and
    ``AgentExtension.required`` as plain booleans and the 0.3 encoder leaves
    them out when false; the SDK's pydantic models keep ``None`` apart from
    ``False``, so a vector that spells out ``"append": false`` is dumped with
    it. In 0.3 an absent optional boolean means false (these flags are opt-in),
    so both spellings mean the same: drop exactly these members when false, on
    both sides, and nothing else (free-form members are left alone).
    """
    out = copy.deepcopy(dumped)
    if type_name == "TaskArtifactUpdateEvent":
        for key in ("append", "lastChunk"):
            if out.get(key) is False:
                del out[key]
    if type_name == "AgentCard":
        for extension in out.get("capabilities", {}).get("extensions", []):
            if extension.get("required") is False:
                del extension["required"]
    return out


@pytest.mark.parametrize("name", sorted(_V03))
def test_v03_sdk_vector_decodes_and_reencodes_equivalently(name: str) -> None:
    type_name, wire = _V03[name]
    tp = V03_TYPES[type_name]
    obj = codec.from_wire(tp, wire, "0.3")
    ours = codec.to_wire(obj, "0.3")
    assert without_false_defaults(type_name, sdk_parse_v03(type_name, ours)) == (
        without_false_defaults(type_name, sdk_parse_v03(type_name, wire))
    )
    assert codec.from_wire(tp, ours, "0.3") == obj


def test_false_defaults_are_the_only_thing_normalised() -> None:
    event = {"kind": "artifact-update", "append": False, "lastChunk": True, "metadata": {}}
    assert without_false_defaults("TaskArtifactUpdateEvent", event) == {
        "kind": "artifact-update",
        "lastChunk": True,
        "metadata": {},
    }
    card = {"capabilities": {"extensions": [{"uri": "u", "required": False, "params": {}}]}}
    assert without_false_defaults("AgentCard", card) == {
        "capabilities": {"extensions": [{"uri": "u", "params": {}}]}
    }
    assert without_false_defaults("Message", {"metadata": {"append": False}}) == {
        "metadata": {"append": False}
    }
    # True is kept: a difference there is still a difference.
    assert without_false_defaults("TaskArtifactUpdateEvent", {"append": True}) != {}


def test_ints_inside_metadata_stay_ints_where_the_sdk_makes_floats() -> None:
    msg = m.Message.user("hi", metadata=dict(METADATA))
    ours = codec.to_wire(msg, "1.0")
    assert strict_equal(ours["metadata"], METADATA)
    sdk = sdk_parse_v10("Message", ours)
    assert sdk["metadata"]["priority"] == 2.0
    assert type(sdk["metadata"]["priority"]) is float  # the SDK's known defect
    assert type(codec.from_wire(m.Message, sdk, "1.0").metadata["priority"]) is float


def test_sdk_parses_every_part_kind_we_write() -> None:
    msg = m.Message.user(
        "text",
        m.Part.file(raw=b"\x00\xff", media_type="image/png", filename="a.png"),
        m.Part.file(url="https://example.com/a.pdf", media_type="application/pdf"),
        m.Part.data([1, {"a": None}, "x"]),
        m.Part.data(None),
    )
    sdk = sdk_parse_v10("Message", codec.to_wire(msg, "1.0"))
    assert [next(iter(set(p) & {"text", "raw", "url", "data"})) for p in sdk["parts"]] == [
        "text",
        "raw",
        "url",
        "data",
        "data",
    ]
    assert codec.from_wire(m.Message, sdk, "1.0") == msg


def test_v03_http_reads_what_the_sdk_rest_binding_writes() -> None:
    """0.3 HTTP+JSON as the SDK writes it (its client's request bodies, its server's
    tasks): ProtoJSON of its 0.3 proto, whose Part has ``metadata`` and whose FilePart
    has ``name`` (0.3.0's proto has neither). Neither is lost on the way in."""
    from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb03
    from google.protobuf import json_format

    meta = {"source": "scanner", "page": 3}
    part = pb03.Part(
        file=pb03.FilePart(file_with_uri="https://example.com/r.pdf", mime_type="application/pdf")
    )
    part.file.name = "r.pdf"
    part.metadata.update(meta)
    message = pb03.Message(message_id="m-1", role=pb03.ROLE_USER, content=[part])
    message.content.add(text="see attached").metadata.update({"lang": "en"})

    # The SDK's 0.3 REST client: snake_case names (quirk 12 of sdk_vectors.py).
    request = pb03.SendMessageRequest(request=message)
    body = json_format.MessageToDict(request, preserving_proto_field_name=True)
    decoded = codec.from_wire(m.SendMessageRequest, body, "0.3-http")
    file_part, text_part = decoded.message.parts
    assert (file_part.filename, file_part.url) == ("r.pdf", "https://example.com/r.pdf")
    assert file_part.metadata == {"source": "scanner", "page": 3.0}  # Struct: floats
    assert text_part.metadata == {"lang": "en"}

    # The SDK's 0.3 REST server: camelCase, the parts in a task's artifact.
    task = pb03.Task(id="t-1", context_id="c-1", status=pb03.TaskStatus(state=2))
    task.artifacts.add(artifact_id="a-1").parts.append(part)
    got = codec.from_wire(m.Task, json_format.MessageToDict(task), "0.3-http")
    (artifact_part,) = got.artifacts[0].parts
    assert artifact_part.filename == "r.pdf" and artifact_part.metadata == file_part.metadata
