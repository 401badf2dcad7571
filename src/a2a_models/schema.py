"""JSON Schemas (draft 2020-12) of the A2A wire forms this package's codec writes.

One schema per codec dialect:

* ``"1.0"`` - A2A 1.0 ProtoJSON (``lf.a2a.v1``), used by every 1.0 binding;
* ``"0.3"`` - A2A 0.3 JSON-RPC (the shapes of the 0.3 JSON Schema: ``kind``
  tags, lowercase states, nested push configs, ...);
* ``"0.3-http"`` - A2A 0.3 HTTP+JSON (ProtoJSON of the 0.3 proto ``a2a.v1``).

Every schema has one ``$defs`` entry per model class (keyed by class name:
``Task``, ``TextPart``, ``APIKeySecurityScheme``, ...), one per union
(``StreamResponse``, ``SendMessageResponse``), the enums (``TaskState``,
``Role``) and the wire shapes that have no class of their own (0.3's
``PushNotificationConfig``, ``FileWithBytes``/``FileWithUri``,
``AgentInterface``; the protos' ``StringList``). There is no root schema:
refer to ``#/$defs/<Name>``.

The table-driven classes are derived from the codec's own field tables (wire
names, required and non-empty members, members a dialect cannot carry,
constants such as ``kind``/``type``) and the models' type annotations; the
hand-written codec hooks (oneofs and the 0.3 reshapings) have hand-written
fragments here. The schemas state the constraints of the wire format
(types, enums, constants, required and non-empty members, oneofs); they do not
encode incidental encoder habits such as leaving out empty optional arrays.
Unknown members are allowed, because receivers SHOULD ignore them (spec §5.7);
``strict=True`` forbids them, which is how the contract tests check that the
codec writes nothing else.

>>> from a2a_models import Message, codec
>>> from a2a_models.schema import validate_wire
>>> validate_wire(codec.to_wire(Message.user("hi")), Message)
>>> validate_wire({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": 1}]}, Message)
Traceback (most recent call last):
...
a2a_models.errors.DecodeError: $.parts[0].text: 1 is not of type 'string'

Validation is a separate, explicit step: decoding never runs it (the codec's
own checks are faster and at least as strict). Regenerate the committed files
with ``python -m a2a_models.schema [DIRECTORY]`` (default ``spec/json``).
"""

from __future__ import annotations

import copy
import functools
import json
import re
import sys
import typing
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import attrs
import jsonschema  # type: ignore[import-untyped, unused-ignore]
import jsonschema.exceptions  # type: ignore[import-untyped, unused-ignore]

from . import models as m
from ._state import TaskState
from .codec import facts
from .codec.facts import ClassSpec, Field, render_path, unwrap_optional
from .errors import DecodeError
from .models import rules

__all__ = [
    "DIALECTS",
    "JSON_SCHEMA_DIALECT",
    "json_schema",
    "main",
    "schema_filename",
    "schema_text",
    "validate_wire",
    "write_schemas",
]

#: The dialects with a schema (the codec's ``"python"`` form is not JSON).
DIALECTS: Final[tuple[str, ...]] = ("1.0", "0.3", "0.3-http")
#: ``$schema`` of every generated document.
JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
#: Where ``python -m a2a_models.schema`` writes by default.
DEFAULT_DIRECTORY: Final = Path("spec/json")

Schema = dict[str, Any]

# --------------------------------------------------------------------------- leaf schemas

_INT32_MIN: Final = -(2**31)
_INT32_MAX: Final = 2**31 - 1
# What the codec writes: UTC with "Z", 0, 3, 6 or 9 fraction digits (ProtoJSON form).
_TIMESTAMP_PATTERN: Final = (
    r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{3}(?:[0-9]{3}){0,2})?Z$"
)
# What the codec writes: the standard alphabet, padded (RFC 4648 §4).
_BASE64_PATTERN: Final = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
_RESOURCE_KIND = re.compile(r"_res\(\{\}, '([^']+)'\)")


def _string(*, nonempty: bool = False) -> Schema:
    return {"type": "string", "minLength": 1} if nonempty else {"type": "string"}


def _int32(*, non_negative: bool = False) -> Schema:
    return {"type": "integer", "minimum": 0 if non_negative else _INT32_MIN, "maximum": _INT32_MAX}


def _timestamp() -> Schema:
    return {"type": "string", "format": "date-time", "pattern": _TIMESTAMP_PATTERN}


def _base64() -> Schema:
    return {"type": "string", "contentEncoding": "base64", "pattern": _BASE64_PATTERN}


def _json_object() -> Schema:
    return {"type": "object"}


def _ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def _array(items: Any, *, nonempty: bool = False) -> Schema:
    schema: Schema = {"type": "array", "items": items}
    if nonempty:
        schema["minItems"] = 1
    return schema


def _object(
    properties: dict[str, Any], required: Sequence[str] = (), description: str | None = None
) -> Schema:
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if description:
        schema["description"] = description
    return schema


def _one_present(keys: Iterable[str]) -> list[Schema]:
    """One branch per member: under ``oneOf`` exactly one is present, ``anyOf`` at least one."""
    return [{"required": [key]} for key in keys]


def _presence_union(members: dict[str, Any], description: str, *, exactly: bool = True) -> Schema:
    """An object holding exactly one (``exactly``) or at least one of ``members``."""
    schema = _object(members, description=description)
    schema["oneOf" if exactly else "anyOf"] = _one_present(members)
    return schema


def _tagged_union(tag: str, variants: dict[str, str], description: str) -> Schema:
    """A union discriminated by the constant member ``tag`` (0.3 ``kind``/``type``)."""
    branches: list[Schema] = [{"properties": {tag: {"enum": list(variants)}}}]
    branches += [
        {"if": {"properties": {tag: {"const": value}}, "required": [tag]}, "then": _ref(name)}
        for value, name in variants.items()
    ]
    return {"type": "object", "required": [tag], "allOf": branches, "description": description}


def _variant(base: str, description: str, **extra: Any) -> Schema:
    """A def that is ``base`` restricted to one variant (``TextPart`` of ``Part``)."""
    return {"$ref": f"#/$defs/{base}", "description": description, **extra}


# --------------------------------------------------------------------------- table classes


def _def_name(cls: type[Any]) -> str:
    """The ``$defs`` name an attribute of type ``cls`` refers to (its wire union)."""
    if issubclass(cls, m.Part):
        return "Part"
    if issubclass(cls, m.SecurityScheme):
        return "SecurityScheme"
    return cls.__name__


def _type_schema(tp: Any, *, nonempty: bool = False, non_negative: bool = False) -> Any:
    """JSON Schema of a value annotated ``tp`` in a model."""
    tp = unwrap_optional(tp)
    if tp is str:
        return _string(nonempty=nonempty)
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return _int32(non_negative=non_negative)
    if tp is datetime:
        return _timestamp()
    if tp is bytes:
        return _base64()
    if tp is TaskState:
        return _ref("TaskState")
    if tp is m.Role:
        return _ref("Role")
    if tp is Any:
        return {}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        return _array(_type_schema(args[0]), nonempty=nonempty)
    if origin is dict:
        if args[1] is Any:
            return _json_object()
        return {"type": "object", "additionalProperties": _type_schema(args[1])}
    if isinstance(tp, type) and attrs.has(tp):
        return _ref(_def_name(tp))
    raise TypeError(f"no JSON Schema for the model type {tp!r}")


#: Constraints the models enforce beyond the type (``location`` is checked by a validator).
_EXTRA: Final[dict[tuple[type[Any], str], Schema]] = {
    (m.APIKeySecurityScheme, "location"): {"enum": list(rules.API_KEY_LOCATIONS)},
}


def _field_schema(cls: type[Any], fld: Field, a: attrs.Attribute[Any], hint: Any) -> Any:
    resource = _RESOURCE_KIND.search(getattr(fld.kind, "decode", None) or "")
    if resource is not None:
        # 0.3 REST resource name ``tasks/{id}`` carrying the model's bare id.
        return {"type": "string", "pattern": f"^{re.escape(resource.group(1))}/[^/]+$"}
    schema = _type_schema(
        hint,
        nonempty=fld.nonempty,  # from the model's rules (codec.facts tables)
        non_negative=rules.must_not_be_negative(a),
    )
    extra = _EXTRA.get((cls, a.name))
    if extra is not None:
        schema = {k: v for k, v in {**schema, **extra}.items() if k != "minLength"}
    return schema


def _describe(cls: type[Any]) -> str:
    doc = (cls.__doc__ or "").strip()
    return doc.split("\n\n")[0].replace("\n", " ").replace("``", "`") if doc else cls.__name__


def _table_schema(spec: ClassSpec) -> Schema:
    """The def of a table-driven class: its members, as the codec's table lists them."""
    cls = spec.cls
    hints = typing.get_type_hints(cls)
    by_attr = {a.name: a for a in attrs.fields(cls)}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for fld in spec.fields:
        if fld.unsupported is not None:
            continue  # the dialect cannot carry it: never written
        a = by_attr[fld.attr]
        properties[fld.wire] = _field_schema(cls, fld, a, hints[fld.attr])
        if fld.always or a.default is attrs.NOTHING:
            required.append(fld.wire)
    for wire, const in spec.constants:
        properties[wire] = {"const": const}
        required.append(wire)
    return _object(properties, required, _describe(cls))


def _table_defs(specs: Iterable[ClassSpec]) -> dict[str, Schema]:
    return {spec.cls.__name__: _table_schema(spec) for spec in specs}


# --------------------------------------------------------------------------- hooked types

_SCHEME_WRAPPERS: Final = {
    "apiKeySecurityScheme": "APIKeySecurityScheme",
    "httpAuthSecurityScheme": "HTTPAuthSecurityScheme",
    "oauth2SecurityScheme": "OAuth2SecurityScheme",
    "openIdConnectSecurityScheme": "OpenIdConnectSecurityScheme",
    "mtlsSecurityScheme": "MutualTlsSecurityScheme",
}
_SCHEME_TAGS: Final = {
    "apiKey": "APIKeySecurityScheme",
    "http": "HTTPAuthSecurityScheme",
    "oauth2": "OAuth2SecurityScheme",
    "openIdConnect": "OpenIdConnectSecurityScheme",
    "mutualTLS": "MutualTlsSecurityScheme",
}
_FLOWS: Final = {
    "authorizationCode": "AuthorizationCodeOAuthFlow",
    "clientCredentials": "ClientCredentialsOAuthFlow",
    "implicit": "ImplicitOAuthFlow",
    "password": "PasswordOAuthFlow",
    "deviceCode": "DeviceCodeOAuthFlow",
}
_STREAM_WRAPPERS: Final = {
    "task": "Task",
    "message": "Message",
    "statusUpdate": "TaskStatusUpdateEvent",
    "artifactUpdate": "TaskArtifactUpdateEvent",
}
_STREAM_KINDS: Final = {
    "task": "Task",
    "message": "Message",
    "status-update": "TaskStatusUpdateEvent",
    "artifact-update": "TaskArtifactUpdateEvent",
}
_D_STREAM = "One stream item (and push-notification body): a task, a message or an update."
_D_SEND = "The result of SendMessage: a task or a direct message."
_D_SCHEME = "A security scheme of the agent card."
_D_FLOWS = "The OAuth 2.0 flows of an OAuth2 security scheme."


def _wrapped_unions(defs: dict[str, Schema]) -> None:
    """The oneof wrappers shared by the ProtoJSON dialects (1.0, 0.3-http)."""
    defs["StreamResponse"] = _presence_union(
        {k: _ref(v) for k, v in _STREAM_WRAPPERS.items()}, _D_STREAM
    )
    defs["SendMessageResponse"] = _presence_union(
        {k: _ref(_STREAM_WRAPPERS[k]) for k in ("task", "message")}, _D_SEND
    )
    defs["SecurityScheme"] = _presence_union(
        {k: _ref(v) for k, v in _SCHEME_WRAPPERS.items()}, _D_SCHEME
    )
    defs["StringList"] = _object(
        {"list": _array(_string())}, description="The scopes of one scheme of a requirement."
    )
    defs["SecurityRequirement"] = _object(
        {"schemes": {"type": "object", "additionalProperties": _ref("StringList")}},
        description="Schemes that must all be satisfied together, each with its scopes.",
    )


def _hooked_v10(defs: dict[str, Schema]) -> None:
    text, raw, url, data = "text", "raw", "url", "data"
    part = _object(
        {
            text: _string(),
            raw: _base64(),
            url: _string(),
            data: {},
            "metadata": _json_object(),
            "filename": _string(),
            "mediaType": _string(),
        },
        description="A content part: exactly one of text, raw (base64), url or data (any JSON).",
    )
    part["oneOf"] = _one_present((text, raw, url, data))
    defs["Part"] = part
    defs["TextPart"] = _variant("Part", "A part whose content is text.", required=[text])
    defs["FilePart"] = _variant(
        "Part", "A file part: inline raw bytes or a url.", anyOf=_one_present((raw, url))
    )
    defs["DataPart"] = _variant("Part", "A part holding any JSON value.", required=[data])
    defs["OAuthFlows"] = _presence_union({k: _ref(v) for k, v in _FLOWS.items()}, _D_FLOWS)
    _wrapped_unions(defs)


def _push_defs(defs: dict[str, Schema], *, http: bool) -> None:
    """0.3's AuthenticationInfo, PushNotificationConfig, TaskPushNotificationConfig."""
    defs["AuthenticationInfo"] = _object(
        {"schemes": _array(_string(nonempty=True), nonempty=True), "credentials": _string()},
        ["schemes"],
        "Push-notification credentials (0.3: a list of schemes; the codec writes one).",
    )
    defs["PushNotificationConfig"] = _object(
        {
            "url": _string(nonempty=True),
            "id": _string(),
            "token": _string(),
            "authentication": _ref("AuthenticationInfo"),
        },
        ["url"],
        "Where and how to deliver a task's updates (0.3's inner config object).",
    )
    if http:
        defs["TaskPushNotificationConfig"] = _object(
            {
                "name": {
                    "type": "string",
                    "pattern": "^tasks/[^/]+/pushNotificationConfigs/[^/]*$",
                },
                "pushNotificationConfig": _ref("PushNotificationConfig"),
            },
            ["pushNotificationConfig"],
            "A push config of a task, named tasks/{taskId}/pushNotificationConfigs/{id}.",
        )
    else:
        defs["TaskPushNotificationConfig"] = _object(
            {
                "taskId": _string(nonempty=True),
                "pushNotificationConfig": _ref("PushNotificationConfig"),
            },
            ["taskId", "pushNotificationConfig"],
            "A push config of a task (0.3 nests the config beside the task id).",
        )
        defs["ListTaskPushNotificationConfigsResponse"] = {
            **_array(_ref("TaskPushNotificationConfig")),
            "description": "The result of tasks/pushNotificationConfig/list: a bare array.",
        }
    defs["SendMessageConfiguration"] = _object(
        {
            "acceptedOutputModes": _array(_string()),
            "pushNotification" if http else "pushNotificationConfig": _ref(
                "PushNotificationConfig"
            ),
            "historyLength": _int32(non_negative=True),
            "blocking": {"type": "boolean"},
        },
        (),
        "Options of a send (0.3: blocking instead of 1.0's returnImmediately).",
    )


def _card_defs(defs: dict[str, Schema]) -> None:
    """0.3's AgentInterface and the card members the codec's card hook adds."""
    defs["AgentInterface"] = _object(
        {"url": _string(nonempty=True), "transport": _string(nonempty=True)},
        ["url", "transport"],
        "One more endpoint of the agent (0.3: transport and url).",
    )
    card = defs["AgentCard"]
    card["properties"].update(
        {
            "url": _string(nonempty=True),
            "preferredTransport": _string(nonempty=True),
            "protocolVersion": _string(nonempty=True),
            "additionalInterfaces": _array(_ref("AgentInterface")),
            "supportsAuthenticatedExtendedCard": {"type": "boolean"},
        }
    )
    # The 0.3 schema requires url and protocolVersion; preferredTransport
    # defaults to JSONRPC and additionalInterfaces is optional (the codec
    # writes both anyway).
    card["required"] = [*card.get("required", ()), "url", "protocolVersion"]


def _hooked_v03(defs: dict[str, Schema]) -> None:
    meta = _json_object()
    defs["TextPart"] = _object(
        {"kind": {"const": "text"}, "text": _string(), "metadata": meta},
        ["kind", "text"],
        "A text part.",
    )
    defs["FileWithBytes"] = _object(
        {"bytes": _base64(), "mimeType": _string(), "name": _string()},
        ["bytes"],
        "An inline file (base64 bytes).",
    )
    defs["FileWithUri"] = _object(
        {"uri": _string(), "mimeType": _string(), "name": _string()},
        ["uri"],
        "A file by reference.",
    )
    defs["FilePart"] = _object(
        {
            "kind": {"const": "file"},
            "file": {"oneOf": [_ref("FileWithBytes"), _ref("FileWithUri")]},
            "metadata": meta,
        },
        ["kind", "file"],
        "A file part: inline bytes or a uri.",
    )
    defs["DataPart"] = _object(
        {"kind": {"const": "data"}, "data": _json_object(), "metadata": meta},
        ["kind", "data"],
        "A part holding a JSON object.",
    )
    defs["Part"] = _tagged_union(
        "kind", {"text": "TextPart", "file": "FilePart", "data": "DataPart"}, "A content part."
    )
    defs["SecurityScheme"] = _tagged_union("type", dict(_SCHEME_TAGS), _D_SCHEME)
    flows = {k: _ref(v) for k, v in _FLOWS.items() if k != "deviceCode"}
    # 0.3 allows any number of flows, none included (its schema requires no member).
    defs["OAuthFlows"] = _object(flows, description=_D_FLOWS)
    defs["SecurityRequirement"] = {
        "type": "object",
        "additionalProperties": _array(_string()),
        "description": "Schemes that must all be satisfied together: name -> scopes.",
    }
    defs["StreamResponse"] = _tagged_union("kind", dict(_STREAM_KINDS), _D_STREAM)
    defs["SendMessageResponse"] = _tagged_union(
        "kind", {"task": "Task", "message": "Message"}, _D_SEND
    )
    _push_defs(defs, http=False)
    _card_defs(defs)


def _hooked_v03_http(defs: dict[str, Schema]) -> None:
    file = _object(
        {"fileWithUri": _string(), "fileWithBytes": _base64(), "mimeType": _string()},
        description="The file of a part: by uri or inline base64 bytes.",
    )
    file["oneOf"] = _one_present(("fileWithUri", "fileWithBytes"))
    data = _object({"data": _json_object()}, ["data"], "The data of a part: a JSON object.")
    part = _object(
        {"text": _string(), "file": file, "data": data},
        description="A content part: exactly one of text, file or data.",
    )
    part["oneOf"] = _one_present(("text", "file", "data"))
    defs["Part"] = part
    defs["TextPart"] = _variant("Part", "A text part.", required=["text"])
    defs["FilePart"] = _variant("Part", "A file part.", required=["file"])
    defs["DataPart"] = _variant("Part", "A data part.", required=["data"])
    flows = {k: _ref(v) for k, v in _FLOWS.items() if k != "deviceCode"}
    # A proto3 oneof: at most one flow (none is the unset oneof).
    oauth = _object(flows, description=_D_FLOWS)
    oauth["not"] = {"anyOf": [{"required": [a, b]} for a in flows for b in flows if a < b]}
    defs["OAuthFlows"] = oauth
    for name, config_id in (
        ("GetTaskPushNotificationConfigRequest", "[^/]*"),
        ("DeleteTaskPushNotificationConfigRequest", "[^/]+"),
    ):
        defs[name] = _object(
            {
                "name": {
                    "type": "string",
                    "pattern": f"^tasks/[^/]+/pushNotificationConfigs/{config_id}$",
                }
            },
            ["name"],
            "A push config named by resource: tasks/{task_id}/pushNotificationConfigs/{id}.",
        )
    _wrapped_unions(defs)
    _push_defs(defs, http=True)
    _card_defs(defs)


# --------------------------------------------------------------------------- enums


def _enum_defs(dialect: str) -> dict[str, Schema]:
    state_names, role_names = facts.enum_names(dialect)
    states, roles = list(state_names.values()), list(role_names.values())
    return {
        "TaskState": {"type": "string", "enum": states, "description": "The state of a task."},
        "Role": {"type": "string", "enum": roles, "description": "Who sent a message."},
    }


# --------------------------------------------------------------------------- documents

_TITLES: Final = {
    "1.0": "A2A 1.0 wire format (ProtoJSON of lf.a2a.v1)",
    "0.3": "A2A 0.3 JSON-RPC wire format",
    "0.3-http": "A2A 0.3 HTTP+JSON wire format (ProtoJSON of a2a.v1)",
}


def _dialect_name(dialect: Any) -> str:
    name = str(getattr(dialect, "value", dialect))
    if name not in DIALECTS:
        raise ValueError(f"no JSON Schema for dialect {dialect!r}; expected one of {DIALECTS}")
    return name


def _forbid_unknown(node: Any) -> None:
    """Set ``additionalProperties: false`` on every object schema listing its members."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for value in node.values():
            _forbid_unknown(value)
    elif isinstance(node, list):
        for item in node:
            _forbid_unknown(item)


@functools.cache
def _build(dialect: str, strict: bool) -> Schema:
    defs: dict[str, Schema]
    if dialect == "1.0":
        defs = _table_defs(facts.specs("1.0"))
        _hooked_v10(defs)
    elif dialect == "0.3":
        defs = _table_defs(facts.specs("0.3"))
        _hooked_v03(defs)
    else:
        defs = _table_defs(facts.specs("0.3-http"))
        _hooked_v03_http(defs)
    defs.update(_enum_defs(dialect))
    if strict:
        _forbid_unknown(defs)
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": _TITLES[dialect] + (" (strict)" if strict else ""),
        "description": (
            f"The JSON that a2a-models writes in its {dialect!r} codec dialect, one $defs "
            "entry per type. Generated by `python -m a2a_models.schema`; do not edit."
        ),
        "$defs": dict(sorted(defs.items())),
    }


def json_schema(dialect: str = "1.0", *, strict: bool = False) -> Schema:
    """The JSON Schema document (draft 2020-12) of ``dialect`` ("1.0", "0.3", "0.3-http").

    ``strict=True`` forbids members the codec does not write. The result is a
    fresh copy: callers may modify it.
    """
    return copy.deepcopy(_build(_dialect_name(dialect), strict))


def schema_filename(dialect: str) -> str:
    """The committed file name of ``dialect``'s schema: ``a2a-<dialect>.schema.json``."""
    return f"a2a-{_dialect_name(dialect)}.schema.json"


def schema_text(dialect: str) -> str:
    """The committed text of ``dialect``'s schema (sorted keys, indent 2, final newline)."""
    return json.dumps(_build(_dialect_name(dialect), False), indent=2, sort_keys=True) + "\n"


def write_schemas(directory: str | Path = DEFAULT_DIRECTORY) -> list[Path]:
    """Write one schema file per dialect into ``directory``; return their paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for dialect in DIALECTS:
        path = out / schema_filename(dialect)
        path.write_text(schema_text(dialect), encoding="utf-8")
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- validation

_UNIONS: Final[dict[Any, str]] = {
    m.StreamResponse: "StreamResponse",
    m.SendMessageResponse: "SendMessageResponse",
}


def _root_name(tp: Any, dialect: str) -> str:
    """The root of ``tp``: a def name, or ``SecurityScheme#<member>`` for one wrapped kind."""
    if isinstance(tp, str):
        return tp
    try:
        union = _UNIONS.get(tp)
    except TypeError:
        union = None
    if union is not None:
        return union
    if isinstance(tp, type) and attrs.has(tp):
        if issubclass(tp, m.SecurityScheme) and tp is not m.SecurityScheme and dialect != "0.3":
            # The ProtoJSON dialects write a scheme inside its oneof wrapper.
            for key, name in _SCHEME_WRAPPERS.items():
                if name == tp.__name__:
                    return f"SecurityScheme#{key}"
        return tp.__name__
    raise TypeError(f"{tp!r} is not an A2A model type, union alias or $defs name")


@functools.cache
def _validator(dialect: str, root: str, strict: bool) -> jsonschema.Draft202012Validator:
    document = _build(dialect, strict)
    name, _, member = root.partition("#")
    if name not in document["$defs"]:
        raise TypeError(f"{name} has no {dialect} wire form")
    schema: Schema = {**document, "$ref": f"#/$defs/{name}"}
    if member:
        schema["required"] = [member]
    return jsonschema.Draft202012Validator(schema)


_MAX_MESSAGE: Final = 300


def validate_wire(value: Any, tp: Any, dialect: str = "1.0", *, strict: bool = False) -> None:
    """Check an already-encoded JSON value against the schema of ``tp`` in ``dialect``.

    ``tp`` is a model class (``Task``), a union alias (``StreamResponse``) or
    a ``$defs`` name (``"PushNotificationConfig"``). Raises
    :class:`~a2a_models.errors.DecodeError` with the JSON path and message of
    the most relevant error, :class:`TypeError` when ``dialect`` has no form
    for ``tp``. ``strict=True`` also rejects members the codec never writes.
    Validators are built once per (dialect, type) and cached.
    """
    name = _dialect_name(dialect)
    validator = _validator(name, _root_name(tp, name), strict)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        message = error.message
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 3] + "..."
        raise DecodeError(render_path(list(error.absolute_path)), message)


# --------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None, *, out: Callable[[str], Any] = print) -> int:
    """``python -m a2a_models.schema [DIRECTORY]``: regenerate the schema files."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        out("usage: python -m a2a_models.schema [DIRECTORY]  (default: spec/json)")
        return 0 if args and args[0] in ("-h", "--help") else 2
    for path in write_schemas(args[0] if args else DEFAULT_DIRECTORY):
        out(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
