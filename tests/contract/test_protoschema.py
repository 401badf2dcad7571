"""Tests for the proto -> ProtoJSON schema tooling used by the contract tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from . import protoschema as ps

VERSIONS = ("1.0", "0.3")


def _errors(version: str, name: str, payload: Any, strict: bool = False) -> list[str]:
    validator = ps.validator_for(version, name, strict)
    return [e.message for e in validator.iter_errors(payload)]


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


# --- spec location ---------------------------------------------------------------------


def test_spec_dir_is_sibling_shared_checkout() -> None:
    repo = Path(ps.__file__).resolve().parents[2]
    assert repo.parent / "shared" / "a2a-spec" == ps.SPEC_DIR
    assert ps.require_spec() == ps.SPEC_DIR
    assert ps.proto_file("1.0").is_file()
    assert ps.proto_file("0.3").is_file()


def test_missing_spec_fails_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ps, "SPEC_DIR", tmp_path / "absent")
    with pytest.raises(RuntimeError, match=r"\.\./shared/a2a-spec is missing.*CI must"):
        ps.require_spec()
    with pytest.raises(RuntimeError):
        ps.proto_file("1.0")


def test_unknown_version_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown A2A version"):
        ps.compile_descriptors("1.0.1")


# --- compilation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "package", "messages", "enums"),
    [("1.0", "lf.a2a.v1", 44, 2), ("0.3", "a2a.v1", 45, 2)],
)
def test_compile_counts(version: str, package: str, messages: int, enums: int) -> None:
    fds = ps.compile_descriptors(version)
    (a2a,) = [f for f in fds.file if f.name == "a2a.proto"]
    assert a2a.package == package
    assert len(a2a.message_type) == messages
    assert len(a2a.enum_type) == enums
    assert [s.name for s in a2a.service] == ["A2AService"]
    imported = {f.name for f in fds.file}
    assert {"google/api/field_behavior.proto", "google/protobuf/struct.proto"} <= imported


def test_compile_is_cached() -> None:
    assert ps.compile_descriptors("1.0") is ps.compile_descriptors("1.0")


# --- schema document -------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("version", VERSIONS)
def test_schema_is_valid_and_self_contained(version: str, strict: bool) -> None:
    schema = ps.proto_json_schema(version, strict=strict)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/")
        assert ref.removeprefix("#/$defs/") in schema["$defs"]
    inventory = ps.proto_inventory(version)
    expected = (set(inventory) - {"enums"}) | set(inventory["enums"])
    assert set(schema["$defs"]) == expected
    for name, definition in schema["$defs"].items():
        if name not in inventory["enums"]:
            assert ("additionalProperties" in definition) is strict
            assert set(definition["properties"]) == set(inventory[name]["fields"])


def test_schema_copies_are_independent() -> None:
    ps.proto_json_schema("1.0")["$defs"].clear()
    assert "Task" in ps.proto_json_schema("1.0")["$defs"]


def test_schema_for_root_and_unknown_name() -> None:
    schema = ps.schema_for("1.0", "Task")
    assert schema["$ref"] == "#/$defs/Task"
    assert "Part" in schema["$defs"]
    with pytest.raises(KeyError):
        ps.schema_for("1.0", "PushNotificationConfig")  # merged away in 1.0


def test_validator_is_cached() -> None:
    assert ps.validator_for("1.0", "Task") is ps.validator_for("1.0", "Task")
    assert ps.validator_for("1.0", "Task") is not ps.validator_for("1.0", "Task", True)


# --- 1.0 payloads ----------------------------------------------------------------------

MESSAGE_10 = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}

VALID_10: list[tuple[str, Any]] = [
    ("Task", {"id": "t1", "status": {"state": "TASK_STATE_WORKING"}}),
    (
        "Task",
        {
            "id": "t1",
            "contextId": "c1",
            "status": {
                "state": "TASK_STATE_COMPLETED",
                "timestamp": "2025-04-02T16:59:25.331Z",
                "message": {**MESSAGE_10, "role": "ROLE_AGENT"},
            },
            "artifacts": [{"artifactId": "a1", "parts": [{"data": {"k": [1, 2]}}]}],
            "history": [MESSAGE_10],
            "metadata": {"x": {"y": None}},
        },
    ),
    ("Task", {"id": "t1", "status": {"state": 3}}),
    ("TaskStatus", {"state": "TASK_STATE_FAILED", "timestamp": "2025-04-02T16:59:25Z"}),
    (
        "TaskStatus",
        {"state": "TASK_STATE_FAILED", "timestamp": "2025-04-02T16:59:25.123456789+02:00"},
    ),
    ("Part", {"text": "hi"}),
    ("Part", {"text": ""}),
    ("Part", {"raw": "aGk=", "filename": "a.bin", "mediaType": "application/octet-stream"}),
    ("Part", {"raw": "-_8"}),
    ("Part", {"url": "https://x/a.pdf", "mediaType": "application/pdf"}),
    ("Part", {"data": None}),
    ("Part", {"data": [1, "two", False]}),
    ("Message", {**MESSAGE_10, "referenceTaskIds": ["t0"], "extensions": ["urn:x"]}),
    ("SecurityScheme", {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}),
    ("SecurityScheme", {"mtlsSecurityScheme": {}}),
    (
        "OAuthFlows",
        {"clientCredentials": {"tokenUrl": "https://t", "scopes": {}}},
    ),
    ("StreamResponse", {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": 2}}}),
    ("SendMessageResponse", {"message": MESSAGE_10}),
    ("SendMessageRequest", {"message": MESSAGE_10, "configuration": {"historyLength": "5"}}),
    ("SendMessageConfiguration", {"historyLength": 0, "returnImmediately": True}),
    ("ListTasksResponse", {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}),
    ("SecurityRequirement", {"schemes": {"oauth": {"list": ["read"]}}}),
    ("Task", {"id": "t1", "status": {"state": "TASK_STATE_WORKING"}, "unknownField": 1}),
]

INVALID_10: list[tuple[str, Any]] = [
    ("Task", {"id": "t1"}),
    ("Task", {"id": 5, "status": {"state": "TASK_STATE_WORKING"}}),
    ("Task", {"status": {"state": "TASK_STATE_WORKING"}}),
    ("TaskStatus", {"state": "completed"}),
    ("TaskStatus", {"state": "TASK_STATE_CANCELLED"}),
    ("TaskStatus", {"state": 99}),
    ("TaskStatus", {"state": "TASK_STATE_WORKING", "timestamp": "2025-04-02T16:59:25"}),
    ("TaskStatus", {"state": "TASK_STATE_WORKING", "timestamp": "2025-04-02 16:59:25Z"}),
    ("TaskStatus", {"state": "TASK_STATE_WORKING", "timestamp": "2025-04-02T16:59:25.1234567890Z"}),
    ("Part", {"text": "hi", "url": "https://x"}),
    ("Part", {}),
    ("Part", {"mediaType": "text/plain"}),
    ("Part", {"text": 1}),
    ("Part", {"raw": "not base64!"}),
    ("Part", {"raw": "a"}),
    ("Message", {**MESSAGE_10, "parts": []}),
    ("Message", {**MESSAGE_10, "role": "user"}),
    ("Message", {"messageId": "m1", "role": "ROLE_USER"}),
    ("Message", {**MESSAGE_10, "parts": [{"kind": "text", "text": "hi", "url": "u"}]}),
    ("SecurityScheme", {}),
    (
        "SecurityScheme",
        {
            "apiKeySecurityScheme": {"location": "header", "name": "X-Key"},
            "mtlsSecurityScheme": {},
        },
    ),
    ("SecurityScheme", {"apiKeySecurityScheme": {"name": "X-Key"}}),
    ("OAuthFlows", {"clientCredentials": {"tokenUrl": "https://t"}}),
    ("OAuthFlows", {}),  # 1.0: exactly one flow
    ("StreamResponse", {}),
    ("SendMessageResponse", {"task": {"id": "t", "status": {"state": 1}}, "message": MESSAGE_10}),
    ("SendMessageConfiguration", {"historyLength": 2**31}),
    ("SendMessageConfiguration", {"historyLength": "five"}),
    ("SendMessageConfiguration", {"historyLength": True}),
    ("SendMessageConfiguration", {"returnImmediately": "true"}),
    ("SecurityRequirement", {"schemes": {"oauth": ["read"]}}),
    ("Task", {"id": "t1", "status": {"state": "TASK_STATE_WORKING"}, "metadata": []}),
    ("Task", None),
]


@pytest.mark.parametrize(("name", "payload"), VALID_10)
def test_valid_10_payloads(name: str, payload: Any) -> None:
    assert _errors("1.0", name, payload) == []


@pytest.mark.parametrize(("name", "payload"), INVALID_10)
def test_invalid_10_payloads(name: str, payload: Any) -> None:
    assert _errors("1.0", name, payload)


def test_strict_rejects_unknown_members() -> None:
    task = {"id": "t1", "status": {"state": "TASK_STATE_WORKING"}}
    assert _errors("1.0", "Task", task, strict=True) == []
    assert _errors("1.0", "Task", {**task, "kind": "task"}, strict=True)
    nested = {**task, "status": {"state": "TASK_STATE_WORKING", "final": True}}
    assert _errors("1.0", "Task", nested, strict=True)
    assert _errors("1.0", "Task", nested) == []


def test_snake_case_names_are_not_canonical() -> None:
    # ProtoJSON parsers accept proto names, but emitters must use json_name.
    payload = {"message_id": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    assert _errors("1.0", "Message", payload)


# --- 0.3 payloads (HTTP+JSON ProtoJSON dialect) ------------------------------------------

MESSAGE_03 = {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]}

VALID_03: list[tuple[str, Any]] = [
    ("Part", {"file": {"fileWithUri": "https://x", "mimeType": "a/b"}}),
    ("Part", {"file": {"fileWithBytes": "aGk="}}),
    ("Part", {"data": {"data": {"k": 1}}}),
    ("Part", {"text": "hi"}),
    ("TaskStatus", {"state": "TASK_STATE_CANCELLED", "message": MESSAGE_03}),
    ("Task", {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}),
    ("Task", {"id": "t1"}),  # the 0.3 proto marks almost nothing REQUIRED
    ("Message", MESSAGE_03),
    ("SendMessageRequest", {"message": MESSAGE_03}),
    ("SendMessageResponse", {"message": MESSAGE_03}),
    ("StreamResponse", {"statusUpdate": {"taskId": "t", "final": True, "status": {"state": 3}}}),
    ("SecurityScheme", {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}),
    ("OAuthFlows", {}),  # 0.3: a scheme may list no flow
    ("OAuthFlows", {"clientCredentials": {"tokenUrl": "https://t"}}),
]

INVALID_03: list[tuple[str, Any]] = [
    ("TaskStatus", {"state": "TASK_STATE_CANCELED"}),
    ("TaskStatus", {"state": "canceled"}),
    ("Part", {"file": {"fileWithUri": "https://x", "fileWithBytes": "aGk="}}),
    ("Part", {"file": {"mimeType": "a/b"}}),
    ("Part", {"text": "hi", "data": {"data": {}}}),
    ("Part", {}),
    ("Part", {"data": {"data": [1]}}),  # 0.3 DataPart.data is a Struct, not a Value
    ("SendMessageRequest", {}),
    ("SendMessageResponse", {}),
    ("Message", {**MESSAGE_03, "content": [{}]}),
    (
        "OAuthFlows",
        {"clientCredentials": {"tokenUrl": "https://t"}, "password": {"tokenUrl": "https://p"}},
    ),
]


@pytest.mark.parametrize(("name", "payload"), VALID_03)
def test_valid_03_payloads(name: str, payload: Any) -> None:
    assert _errors("0.3", name, payload) == []


@pytest.mark.parametrize(("name", "payload"), INVALID_03)
def test_invalid_03_payloads(name: str, payload: Any) -> None:
    assert _errors("0.3", name, payload)


# --- inventory -------------------------------------------------------------------------


def test_inventory_10() -> None:
    inv = ps.proto_inventory("1.0")
    assert len(inv) - 1 == 44
    parts = inv["Message"]["fields"]["parts"]
    assert parts == {
        "name": "parts",
        "number": 5,
        "type": "Part",
        "key_type": None,
        "repeated": True,
        "map": False,
        "required": True,
        "optional": False,
        "oneof": None,
        "deprecated": False,
    }
    assert inv["AgentCard"]["fields"]["documentationUrl"]["optional"] is True
    assert inv["AgentCard"]["fields"]["documentationUrl"]["oneof"] is None
    schemes = inv["AgentCard"]["fields"]["securitySchemes"]
    assert (schemes["map"], schemes["repeated"]) == (True, False)
    assert (schemes["key_type"], schemes["type"]) == ("string", "SecurityScheme")
    assert {f["oneof"] for f in inv["Part"]["fields"].values()} == {"content", None}
    assert inv["Part"]["fields"]["data"]["type"] == "google.protobuf.Value"
    assert inv["Part"]["fields"]["raw"]["type"] == "bytes"
    assert inv["OAuthFlows"]["fields"]["implicit"]["deprecated"] is True
    assert inv["SecurityScheme"]["fields"]["mtlsSecurityScheme"]["name"] == "mtls_security_scheme"
    assert "TASK_STATE_CANCELED" in inv["enums"]["TaskState"]["values"]
    assert inv["enums"]["Role"]["values"] == ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]


def test_inventory_03_explicit_json_names() -> None:
    inv = ps.proto_inventory("0.3")
    assert inv["TaskStatus"]["fields"]["message"]["name"] == "update"
    assert inv["SendMessageRequest"]["fields"]["message"]["name"] == "request"
    assert inv["StreamResponse"]["fields"]["message"]["name"] == "msg"
    assert inv["Message"]["fields"]["content"]["type"] == "Part"
    assert "TASK_STATE_CANCELLED" in inv["enums"]["TaskState"]["values"]


def test_inventory_is_a_copy() -> None:
    ps.proto_inventory("1.0")["Task"]["fields"].clear()
    assert "id" in ps.proto_inventory("1.0")["Task"]["fields"]
