"""Derive ProtoJSON JSON Schemas and field inventories from the normative A2A protos.

The protos under ``../shared/a2a-spec`` are the single source of truth for the wire
format (1.0: ``lf.a2a.v1``; 0.3 HTTP+JSON: ``a2a.v1``). Contract tests validate the
models' JSON against schemas generated here instead of a hand-maintained copy.
"""

from __future__ import annotations

import copy
import functools
import importlib.resources
import importlib.util
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
from google.api import field_behavior_pb2
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

__all__ = [
    "SPEC_DIR",
    "SUPPORTED_VERSIONS",
    "compile_descriptors",
    "proto_file",
    "proto_inventory",
    "proto_json_schema",
    "require_spec",
    "schema_for",
    "validator_for",
]

SPEC_DIR: Path = Path(__file__).resolve().parents[2].parent / "shared" / "a2a-spec"

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Protocol version -> (spec directory, proto package).
_VERSIONS: dict[str, tuple[str, str]] = {
    "1.0": ("1.0.1", "lf.a2a.v1"),
    "0.3": ("0.3.0", "a2a.v1"),
}
SUPPORTED_VERSIONS: tuple[str, ...] = tuple(_VERSIONS)

# Oneofs that must hold exactly one member rather than "at most one": a value of
# these messages is meaningless without its payload (e.g. a Part must have content,
# a SecurityScheme must name its kind, a stream item must carry an event).
_EXACTLY_ONE: dict[str, frozenset[tuple[str, str]]] = {
    "1.0": frozenset(
        {
            ("Part", "content"),
            ("SecurityScheme", "scheme"),
            ("OAuthFlows", "flow"),
            ("StreamResponse", "payload"),
            ("SendMessageResponse", "payload"),
        }
    ),
    "0.3": frozenset(
        {
            ("Part", "part"),
            ("FilePart", "file"),
            ("SecurityScheme", "scheme"),
            # Not ("OAuthFlows", "flow"): 0.3 allows a scheme without flows (the
            # 0.3 JSON Schema's OAuthFlows requires no member, and an unset proto3
            # oneof is valid), so the 0.3 oneof holds at most one flow.
            ("StreamResponse", "payload"),
            ("SendMessageResponse", "payload"),
        }
    ),
}

# REQUIRED repeated fields exempt from minItems: 1. A ListTasks page with no matching
# tasks is a normal result (§3.1.4), yet `tasks` is REQUIRED and §5.7 demands >= 1 item.
_MAY_BE_EMPTY: dict[str, frozenset[tuple[str, str]]] = {
    "1.0": frozenset({("ListTasksResponse", "tasks")}),
    "0.3": frozenset(),
}

_FD = descriptor_pb2.FieldDescriptorProto
_REQUIRED = field_behavior_pb2.REQUIRED

_INT_STRING = r"^-?[0-9]+$"
_UINT_STRING = r"^[0-9]+$"
# ProtoJSON parsers accept the standard and the URL-safe alphabet, padded or not.
_BASE64 = (
    r"^(?:[A-Za-z0-9+/_-]{4})*"
    r"(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$"
)
_RFC3339 = (
    r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
_DURATION = r"^-?[0-9]+(?:\.[0-9]{1,9})?s$"
_FLOAT_STRING = r"^(?:NaN|-?Infinity|-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)$"

_INT32 = {"minimum": -(2**31), "maximum": 2**31 - 1}
_UINT32 = {"minimum": 0, "maximum": 2**32 - 1}
_INT64 = {"minimum": -(2**63), "maximum": 2**63 - 1}
_UINT64 = {"minimum": 0, "maximum": 2**64 - 1}

_SCALAR_NAMES: dict[int, str] = {
    _FD.TYPE_DOUBLE: "double",
    _FD.TYPE_FLOAT: "float",
    _FD.TYPE_INT64: "int64",
    _FD.TYPE_UINT64: "uint64",
    _FD.TYPE_INT32: "int32",
    _FD.TYPE_FIXED64: "fixed64",
    _FD.TYPE_FIXED32: "fixed32",
    _FD.TYPE_BOOL: "bool",
    _FD.TYPE_STRING: "string",
    _FD.TYPE_BYTES: "bytes",
    _FD.TYPE_UINT32: "uint32",
    _FD.TYPE_SFIXED32: "sfixed32",
    _FD.TYPE_SFIXED64: "sfixed64",
    _FD.TYPE_SINT32: "sint32",
    _FD.TYPE_SINT64: "sint64",
}


def _number(bounds: dict[str, int], digits: str) -> dict[str, Any]:
    """Integer that ProtoJSON also accepts as a quoted decimal string."""
    return {
        "anyOf": [
            {"type": "integer", **bounds},
            {"type": "string", "pattern": digits},
        ]
    }


_FLOATING: dict[str, Any] = {
    "anyOf": [{"type": "number"}, {"type": "string", "pattern": _FLOAT_STRING}]
}

_SCALAR_SCHEMAS: dict[int, dict[str, Any]] = {
    _FD.TYPE_STRING: {"type": "string"},
    _FD.TYPE_BOOL: {"type": "boolean"},
    _FD.TYPE_BYTES: {"type": "string", "contentEncoding": "base64", "pattern": _BASE64},
    _FD.TYPE_DOUBLE: _FLOATING,
    _FD.TYPE_FLOAT: _FLOATING,
    _FD.TYPE_INT32: _number(_INT32, _INT_STRING),
    _FD.TYPE_SINT32: _number(_INT32, _INT_STRING),
    _FD.TYPE_SFIXED32: _number(_INT32, _INT_STRING),
    _FD.TYPE_UINT32: _number(_UINT32, _UINT_STRING),
    _FD.TYPE_FIXED32: _number(_UINT32, _UINT_STRING),
    _FD.TYPE_INT64: _number(_INT64, _INT_STRING),
    _FD.TYPE_SINT64: _number(_INT64, _INT_STRING),
    _FD.TYPE_SFIXED64: _number(_INT64, _INT_STRING),
    _FD.TYPE_UINT64: _number(_UINT64, _UINT_STRING),
    _FD.TYPE_FIXED64: _number(_UINT64, _UINT_STRING),
}

_WRAPPERS: dict[str, int] = {
    "google.protobuf.StringValue": _FD.TYPE_STRING,
    "google.protobuf.BoolValue": _FD.TYPE_BOOL,
    "google.protobuf.BytesValue": _FD.TYPE_BYTES,
    "google.protobuf.DoubleValue": _FD.TYPE_DOUBLE,
    "google.protobuf.FloatValue": _FD.TYPE_FLOAT,
    "google.protobuf.Int32Value": _FD.TYPE_INT32,
    "google.protobuf.UInt32Value": _FD.TYPE_UINT32,
    "google.protobuf.Int64Value": _FD.TYPE_INT64,
    "google.protobuf.UInt64Value": _FD.TYPE_UINT64,
}

# Well-known types with a special ProtoJSON representation. `True` is the
# JSON Schema that accepts any JSON value.
_WELL_KNOWN: dict[str, Any] = {
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Value": True,
    "google.protobuf.ListValue": {"type": "array"},
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time", "pattern": _RFC3339},
    "google.protobuf.Duration": {"type": "string", "pattern": _DURATION},
    "google.protobuf.FieldMask": {"type": "string"},
    "google.protobuf.Any": {
        "type": "object",
        "required": ["@type"],
        "properties": {"@type": {"type": "string"}},
    },
    "google.protobuf.Empty": {"type": "object", "properties": {}},
    **{name: _SCALAR_SCHEMAS[kind] for name, kind in _WRAPPERS.items()},
}


def require_spec() -> Path:
    """Return SPEC_DIR, or fail loudly: contract tests must never be skipped."""
    if not SPEC_DIR.is_dir():
        raise RuntimeError(
            f"A2A spec directory ../shared/a2a-spec is missing (looked for {SPEC_DIR}). "
            "The contract tests need the normative protos; CI must provide this checkout."
        )
    return SPEC_DIR


def _check_version(version: str) -> tuple[str, str]:
    try:
        return _VERSIONS[version]
    except KeyError:
        raise ValueError(
            f"unknown A2A version {version!r}; expected one of {SUPPORTED_VERSIONS}"
        ) from None


def proto_file(version: str) -> Path:
    """Path of the normative ``a2a.proto`` for ``version`` ("1.0" or "0.3")."""
    directory, _ = _check_version(version)
    path = require_spec() / directory / "a2a.proto"
    if not path.is_file():
        raise RuntimeError(
            f"{path} is missing from ../shared/a2a-spec; CI must provide the A2A spec files."
        )
    return path


def _googleapis_include() -> Path:
    """Include root holding googleapis-common-protos' ``google/api/*.proto``."""
    spec = importlib.util.find_spec("google.api")
    candidates: list[Path] = []
    if spec is not None and spec.submodule_search_locations is not None:
        candidates += [Path(p).parent.parent for p in spec.submodule_search_locations]
    candidates += [Path(p) for p in sys.path if p]
    for root in candidates:
        if (root / "google" / "api" / "annotations.proto").is_file():
            return root
    raise RuntimeError("google/api/annotations.proto not found; install googleapis-common-protos.")


def _well_known_include() -> Path:
    """Include root of the well-known protos bundled with grpcio-tools."""
    return Path(str(importlib.resources.files("grpc_tools") / "_proto"))


@functools.cache
def compile_descriptors(version: str) -> descriptor_pb2.FileDescriptorSet:
    """Compile the A2A proto (with imports) to a FileDescriptorSet, once per process.

    The result is shared between callers: treat it as read-only.
    """
    source = proto_file(version)
    with tempfile.TemporaryDirectory(prefix="a2a-proto-") as tmp:
        out = Path(tmp) / "a2a.pb"
        args = [
            "grpc_tools.protoc",
            f"--proto_path={source.parent}",
            f"--proto_path={_well_known_include()}",
            f"--proto_path={_googleapis_include()}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            source.name,
        ]
        code = protoc.main(args)
        if code != 0 or not out.is_file():
            raise RuntimeError(f"protoc failed ({code}) compiling {source}: {' '.join(args)}")
        fds = descriptor_pb2.FileDescriptorSet()
        fds.ParseFromString(out.read_bytes())
    return fds


def _a2a_file(version: str) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of the A2A proto itself (not its imports)."""
    _, package = _check_version(version)
    for file in compile_descriptors(version).file:
        if file.package == package and file.name == "a2a.proto":
            return file
    raise RuntimeError(f"compiled descriptor set for {version} lacks a2a.proto ({package})")


class _Index:
    """Lookup tables over the descriptor set, keyed by fully qualified name."""

    def __init__(self, version: str) -> None:
        self.file = _a2a_file(version)
        self.package = self.file.package
        self.messages: dict[str, descriptor_pb2.DescriptorProto] = {}
        self.enums: dict[str, descriptor_pb2.EnumDescriptorProto] = {}
        for file in compile_descriptors(version).file:
            scope = f".{file.package}" if file.package else ""
            self._collect(scope, file.message_type)
            for enum in file.enum_type:
                self.enums[f"{scope}.{enum.name}"] = enum
        # Only the A2A file's own types get $defs; keying by short name must be unique.
        self.local_messages: dict[str, str] = {}
        self.local_enums: dict[str, str] = {}
        prefix = f".{self.package}."
        for full, message in self.messages.items():
            if full.startswith(prefix) and not message.options.map_entry:
                self._add_local(self.local_messages, full)
        for full in self.enums:
            if full.startswith(prefix):
                self._add_local(self.local_enums, full)

    def _collect(self, scope: str, messages: Iterable[descriptor_pb2.DescriptorProto]) -> None:
        for message in messages:
            full = f"{scope}.{message.name}"
            self.messages[full] = message
            self._collect(full, message.nested_type)
            for enum in message.enum_type:
                self.enums[f"{full}.{enum.name}"] = enum

    def _add_local(self, table: dict[str, str], full: str) -> None:
        short = full.rsplit(".", 1)[1]
        if short in self.local_messages or short in self.local_enums:
            raise RuntimeError(f"short name {short!r} is ambiguous in {self.package}")
        table[short] = full

    def short_name(self, full: str) -> str:
        """Local short name for A2A types, dotted full name (no leading dot) otherwise."""
        if full.startswith(f".{self.package}."):
            return full.rsplit(".", 1)[1]
        return full.lstrip(".")


@functools.cache
def _index(version: str) -> _Index:
    return _Index(version)


def _is_required(field: descriptor_pb2.FieldDescriptorProto) -> bool:
    return _REQUIRED in field.options.Extensions[field_behavior_pb2.field_behavior]


def _map_entry(
    index: _Index, field: descriptor_pb2.FieldDescriptorProto
) -> descriptor_pb2.DescriptorProto | None:
    if field.label != _FD.LABEL_REPEATED or field.type != _FD.TYPE_MESSAGE:
        return None
    entry = index.messages[field.type_name]
    return entry if entry.options.map_entry else None


def _real_oneofs(message: descriptor_pb2.DescriptorProto) -> dict[int, list[str]]:
    """Oneof index -> member json names, skipping proto3 `optional` synthetic oneofs."""
    members: dict[int, list[str]] = {}
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            members.setdefault(field.oneof_index, []).append(field.json_name)
    return members


def _value_schema(index: _Index, field: descriptor_pb2.FieldDescriptorProto) -> Any:
    """Schema of one (non-repeated) value of ``field``."""
    if field.type == _FD.TYPE_ENUM:
        enum_short = index.short_name(field.type_name)
        if enum_short in index.local_enums:
            return {"$ref": f"#/$defs/{enum_short}"}
        return _enum_schema(index.enums[field.type_name])
    if field.type == _FD.TYPE_MESSAGE:
        full = field.type_name.lstrip(".")
        if full in _WELL_KNOWN:
            return copy.deepcopy(_WELL_KNOWN[full])
        short = index.short_name(field.type_name)
        if short in index.local_messages:
            return {"$ref": f"#/$defs/{short}"}
        raise NotImplementedError(f"no ProtoJSON schema for imported message {full}")
    if field.type == _FD.TYPE_GROUP:
        raise NotImplementedError("proto2 groups are not ProtoJSON-mappable here")
    return copy.deepcopy(_SCALAR_SCHEMAS[field.type])


def _map_key_schema(key: descriptor_pb2.FieldDescriptorProto) -> dict[str, Any] | None:
    """propertyNames constraint for a map key (JSON object keys are always strings)."""
    if key.type == _FD.TYPE_STRING:
        return None
    if key.type == _FD.TYPE_BOOL:
        return {"enum": ["true", "false"]}
    unsigned = key.type in (_FD.TYPE_UINT32, _FD.TYPE_UINT64, _FD.TYPE_FIXED32, _FD.TYPE_FIXED64)
    return {"pattern": _UINT_STRING if unsigned else _INT_STRING}


def _field_schema(
    index: _Index, field: descriptor_pb2.FieldDescriptorProto, may_be_empty: bool = False
) -> Any:
    entry = _map_entry(index, field)
    if entry is not None:
        key, value = entry.field[0], entry.field[1]
        schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": _value_schema(index, value),
        }
        key_schema = _map_key_schema(key)
        if key_schema is not None:
            schema["propertyNames"] = key_schema
        return schema
    if field.label == _FD.LABEL_REPEATED:
        array: dict[str, Any] = {"type": "array", "items": _value_schema(index, field)}
        if _is_required(field) and not may_be_empty:
            # Spec §5.7: a REQUIRED repeated field must contain at least one element.
            array["minItems"] = 1
        return array
    return _value_schema(index, field)


def _enum_schema(enum: descriptor_pb2.EnumDescriptorProto) -> dict[str, Any]:
    """Enum by value name (canonical output) or by declared number (accepted on input)."""
    return {
        "anyOf": [
            {"type": "string", "enum": [v.name for v in enum.value]},
            {"type": "integer", "enum": sorted({v.number for v in enum.value})},
        ]
    }


def _message_schema(
    index: _Index,
    message: descriptor_pb2.DescriptorProto,
    exactly_one: set[str],
    may_be_empty: set[str],
    strict: bool,
) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            f.json_name: _field_schema(index, f, f.name in may_be_empty) for f in message.field
        },
    }
    required = [f.json_name for f in message.field if _is_required(f)]
    if required:
        schema["required"] = required
    constraints: list[dict[str, Any]] = []
    for oneof_index, members in sorted(_real_oneofs(message).items()):
        oneof_name = message.oneof_decl[oneof_index].name
        if oneof_name in exactly_one:
            constraints.append({"oneOf": [{"required": [m]} for m in members]})
        else:
            constraints.extend(
                {"not": {"required": [a, b]}}
                for i, a in enumerate(members)
                for b in members[i + 1 :]
            )
    if constraints:
        schema["allOf"] = constraints
    if strict:
        schema["additionalProperties"] = False
    return schema


@functools.cache
def _build_schema(version: str, strict: bool) -> dict[str, Any]:
    index = _index(version)
    wanted = _EXACTLY_ONE[version] | _MAY_BE_EMPTY[version]
    defs: dict[str, Any] = {}
    for short, full in index.local_messages.items():
        message = index.messages[full]
        exactly_one = {o for m, o in _EXACTLY_ONE[version] if m == short}
        may_be_empty = {f for m, f in _MAY_BE_EMPTY[version] if m == short}
        # Fail loudly if the proto drifts away from the special cases listed above.
        missing = (exactly_one - {d.name for d in message.oneof_decl}) | (
            may_be_empty - {f.name for f in message.field}
        )
        if missing:
            raise RuntimeError(f"{version} {short} lacks {sorted(missing)}; update protoschema")
        defs[short] = _message_schema(index, message, exactly_one, may_be_empty, strict)
    absent = {m for m, _ in wanted} - set(defs)
    if absent:
        raise RuntimeError(f"{version} proto lacks messages {sorted(absent)}; update protoschema")
    for short, full in index.local_enums.items():
        defs[short] = _enum_schema(index.enums[full])
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": f"A2A {version} ProtoJSON ({index.package})",
        "$defs": dict(sorted(defs.items())),
    }


def proto_json_schema(version: str, strict: bool = False) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) with one ``$defs`` entry per A2A message and enum.

    ``strict=True`` sets ``additionalProperties: false`` on every message; by default
    unknown members are allowed because the spec says receivers SHOULD ignore them.
    """
    return copy.deepcopy(_build_schema(version, strict))


def schema_for(version: str, message_name: str, strict: bool = False) -> dict[str, Any]:
    """Self-contained schema whose root is ``#/$defs/<message_name>``."""
    schema = proto_json_schema(version, strict)
    if message_name not in schema["$defs"]:
        raise KeyError(f"{message_name!r} is not an A2A {version} message or enum")
    schema["$ref"] = f"#/$defs/{message_name}"
    return schema


@functools.cache
def validator_for(
    version: str, message_name: str, strict: bool = False
) -> jsonschema.Draft202012Validator:
    """Cached validator for one A2A message or enum (ProtoJSON form)."""
    schema = schema_for(version, message_name, strict)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@functools.cache
def _build_inventory(version: str) -> dict[str, dict[str, Any]]:
    index = _index(version)
    inventory: dict[str, dict[str, Any]] = {}
    for short, full in index.local_messages.items():
        message = index.messages[full]
        fields: dict[str, dict[str, Any]] = {}
        for field in message.field:
            entry = _map_entry(index, field)
            value = entry.field[1] if entry is not None else field
            real_oneof = field.HasField("oneof_index") and not field.proto3_optional
            fields[field.json_name] = {
                "name": field.name,
                "number": field.number,
                "type": _type_name(index, value),
                "key_type": _type_name(index, entry.field[0]) if entry is not None else None,
                "repeated": field.label == _FD.LABEL_REPEATED and entry is None,
                "map": entry is not None,
                "required": _is_required(field),
                "optional": field.proto3_optional,
                "oneof": message.oneof_decl[field.oneof_index].name if real_oneof else None,
                "deprecated": field.options.deprecated,
            }
        inventory[short] = {"fields": fields}
    inventory["enums"] = {
        short: {"values": [v.name for v in index.enums[full].value]}
        for short, full in index.local_enums.items()
    }
    return inventory


def _type_name(index: _Index, field: descriptor_pb2.FieldDescriptorProto) -> str:
    if field.type in (_FD.TYPE_MESSAGE, _FD.TYPE_ENUM):
        return index.short_name(field.type_name)
    return _SCALAR_NAMES[field.type]


def proto_inventory(version: str) -> dict[str, dict[str, Any]]:
    """Every A2A message's fields keyed by json name, plus ``"enums"``: name -> values.

    Field entries: ``name`` (proto name), ``number``, ``type`` (scalar name, A2A short
    name, or dotted well-known name; a map's value type), ``key_type`` (maps only),
    ``repeated``, ``map``, ``required`` (field_behavior REQUIRED), ``optional`` (proto3
    ``optional``), ``oneof`` (real oneof name or None) and ``deprecated``.
    """
    return copy.deepcopy(_build_inventory(version))
