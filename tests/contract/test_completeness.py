"""Completeness: everything the upstream specifications define is represented here.

Three upstream inventories are audited:

* ``1.0 proto`` - every message, field (by JSON name) and enum value of the
  normative 1.0 proto (``protoschema.proto_inventory("1.0")``), against the
  codec's ``"1.0"`` dialect;
* ``0.3 proto`` - the same for the 0.3 proto, against ``"0.3-http"`` (its
  ProtoJSON transcoding);
* ``0.3 JSON Schema`` - every definition of ``0.3.0/a2a.json`` with its
  properties, enums and constants, against ``"0.3"`` (JSON-RPC), plus its
  JSON-RPC envelopes (``a2a_models.protocol``) and errors (``a2a_models.errors``).

A field is *carried* when the codec's field table for the mapped model class
writes a member of that JSON name (``_v10.build_specs`` / ``_v03.specs``), or
when a hand-written codec hook (Part, SecurityScheme, the 0.3 card and push
shapes, ...) is seen writing it: ``PROBES`` encodes fully populated values and
looks at the members produced. Enum values must decode, and re-encode to the
same name. Whatever is neither needs an entry, with its reason, in the one
``EXCEPTIONS`` table; an entry that is no longer needed fails the audit too.
A new upstream message, field, enum value or definition therefore fails until
someone maps it.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import attrs
import pytest

from a2a_models import codec, errors, protocol
from a2a_models import models as m
from a2a_models.codec import _v03, _v10
from a2a_models.errors import DecodeError, MethodNotFoundError

from . import protoschema

P10, P03, J03 = "1.0 proto", "0.3 proto", "0.3 JSON Schema"
DIALECT = {P10: "1.0", P03: "0.3-http", J03: "0.3"}

#: (source, message or definition, field or None for all of it) -> why it is not carried.
EXCEPTIONS: dict[tuple[str, str, str | None], str] = {
    # -- 0.3 proto: REST resource names travel in the URL, not in a body --------------
    (P03, "GetTaskPushNotificationConfigRequest", "name"): (
        "0.3 REST: GET /v1/{name=tasks/*/pushNotificationConfigs/*}; the name is the URL path "
        "(the codec's 0.3-http dialect has no body form for this request)"
    ),
    (P03, "DeleteTaskPushNotificationConfigRequest", "name"): (
        "0.3 REST: DELETE /v1/{name=tasks/*/pushNotificationConfigs/*}; the name is the URL "
        "path (no body form in the 0.3-http dialect)"
    ),
    (P03, "CreateTaskPushNotificationConfigRequest", None): (
        "0.3 REST: POST /v1/{parent=tasks/*}/pushNotificationConfigs with body `config`: "
        "parent and configId come from the URL, the body is the codec's 0.3-http "
        "TaskPushNotificationConfig (audited as such)"
    ),
    # -- 0.3 JSON Schema: TypeScript base interfaces -----------------------------------
    (J03, "AuthenticatedExtendedCardNotConfiguredError", None): (
        "code -32007 is a2a_models.errors.ExtendedAgentCardNotConfiguredError: renamed (and "
        "its default message reworded) in 1.0; error_from_code(-32007) maps the 0.3 code"
    ),
}

# --------------------------------------------------------------------------- full values

_TS = datetime(2025, 7, 31, 12, 34, 56, 789000, tzinfo=UTC)
_META = {"trace": "abc"}


def _parts(_: str = "") -> list[m.Part]:
    extras: dict[str, Any] = {"metadata": _META, "media_type": "text/plain", "filename": "a.txt"}
    return [
        m.TextPart("hello", **extras),
        m.FilePart(raw=b"\x89PNG", **extras),
        m.FilePart(url="https://files.example/a.pdf", **extras),
        m.DataPart({"k": [1, 2]}, **extras),
    ]


def _message(_: str = "") -> m.Message:
    return m.Message(
        role=m.Role.AGENT,
        parts=_parts(),
        message_id="m1",
        context_id="c1",
        task_id="t1",
        metadata=_META,
        extensions=("https://ext.example/v1",),
        reference_task_ids=("t0",),
    )


def _artifact() -> m.Artifact:
    return m.Artifact(
        parts=_parts(),
        artifact_id="a1",
        name="report",
        description="The report.",
        metadata=_META,
        extensions=("https://ext.example/v1",),
    )


def _status() -> m.TaskStatus:
    return m.TaskStatus(state=m.TaskState.WORKING, message=_message(), timestamp=_TS)


def _task(_: str = "") -> m.Task:
    return m.Task(
        id="t1",
        context_id="c1",
        status=_status(),
        artifacts=(_artifact(),),
        history=(_message(),),
        metadata=_META,
    )


def _status_event(_: str = "") -> m.TaskStatusUpdateEvent:
    return m.TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=_status(), metadata=_META, final=True
    )


def _artifact_event(_: str = "") -> m.TaskArtifactUpdateEvent:
    return m.TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=_artifact(),
        append=True,
        last_chunk=True,
        metadata=_META,
    )


def _push(_: str = "", *, task_id: str | None = "t1") -> m.TaskPushNotificationConfig:
    return m.TaskPushNotificationConfig(
        url="https://hooks.example/a2a",
        id="cfg1",
        task_id=task_id,
        token="tok",
        authentication=m.AuthenticationInfo(scheme="Bearer", credentials="secret"),
        tenant="acme",
    )


_SCOPES = {"read": "Read access"}


def _flows() -> list[m.OAuthFlows]:
    return [
        m.OAuthFlows(
            authorization_code=m.AuthorizationCodeOAuthFlow(
                authorization_url="https://auth/a",
                token_url="https://auth/t",
                scopes=_SCOPES,
                refresh_url="https://auth/r",
                pkce_required=True,
            )
        ),
        m.OAuthFlows(
            client_credentials=m.ClientCredentialsOAuthFlow(
                token_url="https://auth/t", scopes=_SCOPES, refresh_url="https://auth/r"
            )
        ),
        m.OAuthFlows(
            implicit=m.ImplicitOAuthFlow(
                authorization_url="https://auth/a", scopes=_SCOPES, refresh_url="https://auth/r"
            )
        ),
        m.OAuthFlows(
            password=m.PasswordOAuthFlow(
                token_url="https://auth/t", scopes=_SCOPES, refresh_url="https://auth/r"
            )
        ),
        m.OAuthFlows(
            device_code=m.DeviceCodeOAuthFlow(
                device_authorization_url="https://auth/d",
                token_url="https://auth/t",
                scopes=_SCOPES,
                refresh_url="https://auth/r",
            )
        ),
    ]


def _all_flows(_: str = "") -> m.OAuthFlows:
    """0.3 JSON-RPC allows several flows at once."""
    kw = {
        a: getattr(f, a) for f in _flows() for a in attrs.fields_dict(m.OAuthFlows) if getattr(f, a)
    }
    kw.pop("device_code")
    return m.OAuthFlows(**kw)


def _schemes(_: str = "") -> list[m.SecurityScheme]:
    return [
        m.APIKeySecurityScheme(description="key", location="header", name="X-Key"),
        m.HTTPAuthSecurityScheme(description="http", scheme="Bearer", bearer_format="JWT"),
        m.OAuth2SecurityScheme(
            description="oauth", flows=_flows()[0], oauth2_metadata_url="https://auth/.well-known"
        ),
        m.OpenIdConnectSecurityScheme(description="oidc", open_id_connect_url="https://oidc"),
        m.MutualTlsSecurityScheme(description="mtls"),
    ]


def _requirement(_: str = "") -> m.SecurityRequirement:
    return m.SecurityRequirement(schemes={"oauth": ("read", "write")})


def _card(dialect: str) -> m.AgentCard:
    version = "1.0" if dialect == "1.0" else "0.3.0"
    tenant = "acme" if dialect == "1.0" else None
    return m.AgentCard(
        name="Agent",
        description="Does things.",
        version="2.1.0",
        supported_interfaces=[
            m.AgentInterface(
                url="https://a.example/rpc",
                protocol_binding="JSONRPC",
                protocol_version=version,
                tenant=tenant,
            ),
            m.AgentInterface(
                url="https://a.example/rest", protocol_binding="HTTP+JSON", protocol_version=version
            ),
        ],
        capabilities=m.AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=(
                m.AgentExtension(
                    uri="https://ext.example/v1", description="ext", required=True, params=_META
                ),
            ),
            extended_agent_card=True,
            state_transition_history=True,
        ),
        default_input_modes=("text/plain",),
        default_output_modes=("application/json",),
        skills=(
            m.AgentSkill(
                id="s1",
                name="Skill",
                description="A skill.",
                tags=("t",),
                examples=("do it",),
                input_modes=("text/plain",),
                output_modes=("text/plain",),
                security_requirements=(_requirement(),),
            ),
        ),
        provider=m.AgentProvider(organization="Example", url="https://example.com"),
        documentation_url="https://docs.example",
        icon_url="https://icon.example/a.png",
        security_schemes={f"s{i}": s for i, s in enumerate(_schemes())},
        security_requirements=(_requirement(),),
        signatures=(
            m.AgentCardSignature(protected="eyJhbGciOiJFUzI1NiJ9", signature="c2ln", header=_META),
        ),
    )


def _send_configuration(_: str = "") -> m.SendMessageConfiguration:
    return m.SendMessageConfiguration(
        accepted_output_modes=("text/plain",),
        task_push_notification_config=_push(task_id=None),
        history_length=3,
        return_immediately=True,
    )


Build = Callable[[str], Any]
Probe = tuple[Build, Any, tuple[str | int, ...]]


def _each(
    build: Callable[[str], list[Any]], path: tuple[str | int, ...] = (), as_type: Any = None
) -> Callable[[str], list[Probe]]:
    def probes(dialect: str) -> list[Probe]:
        return [((lambda _d, v=v: v), as_type, path) for v in build(dialect)]

    return probes


def _one(
    build: Build, path: tuple[str | int, ...] = (), as_type: Any = None
) -> Callable[[str], list[Probe]]:
    return lambda dialect: [(build, as_type, path)]


def _stream(dialect: str) -> list[Any]:
    return [_task(), _message(), _status_event(), _artifact_event()]


def _file_parts(kind: str) -> Callable[[str], list[m.Part]]:
    return lambda d: [
        p for p in _parts() if isinstance(p, m.FilePart) and (kind == "" or getattr(p, kind))
    ]


_PUSH_INNER = ("pushNotificationConfig",)

#: (dialect, upstream shape name) -> the encoded objects that show the members a
#: hand-written codec hook writes for that shape (encoded with lossy=True, so
#: whatever a dialect cannot carry is visibly missing).
PROBES: dict[tuple[str, str], Callable[[str], list[Probe]]] = {
    # 1.0 oneofs and nested maps.
    ("1.0", "Part"): _each(_parts),
    ("1.0", "SecurityScheme"): _each(_schemes),
    ("1.0", "OAuthFlows"): _each(lambda d: _flows()),
    ("1.0", "SecurityRequirement"): _one(_requirement),
    ("1.0", "StringList"): _one(_requirement, ("schemes", "oauth")),
    ("1.0", "StreamResponse"): _each(_stream, as_type=m.StreamResponse),
    ("1.0", "SendMessageResponse"): _each(
        lambda d: [_task(), _message()], as_type=m.SendMessageResponse
    ),
    # 0.3 proto (HTTP+JSON).
    ("0.3-http", "Part"): _each(_parts),
    ("0.3-http", "FilePart"): _each(_file_parts(""), ("file",)),
    ("0.3-http", "DataPart"): _each(
        lambda d: [p for p in _parts() if isinstance(p, m.DataPart)], ("data",)
    ),
    ("0.3-http", "SecurityScheme"): _each(_schemes),
    ("0.3-http", "OAuthFlows"): _each(lambda d: _flows()[:4]),
    ("0.3-http", "Security"): _one(_requirement),
    ("0.3-http", "StringList"): _one(_requirement, ("schemes", "oauth")),
    ("0.3-http", "AgentCard"): _one(_card),
    ("0.3-http", "AgentInterface"): _one(_card, ("additionalInterfaces", 0)),
    ("0.3-http", "TaskPushNotificationConfig"): _one(_push),
    ("0.3-http", "PushNotificationConfig"): _one(_push, _PUSH_INNER),
    ("0.3-http", "AuthenticationInfo"): _one(_push, (*_PUSH_INNER, "authentication")),
    ("0.3-http", "SendMessageConfiguration"): _one(_send_configuration),
    ("0.3-http", "StreamResponse"): _each(_stream, as_type=m.StreamResponse),
    ("0.3-http", "SendMessageResponse"): _each(
        lambda d: [_task(), _message()], as_type=m.SendMessageResponse
    ),
    # 0.3 JSON-RPC.
    ("0.3", "TextPart"): _each(lambda d: [p for p in _parts() if isinstance(p, m.TextPart)]),
    ("0.3", "FilePart"): _each(_file_parts("")),
    ("0.3", "DataPart"): _each(lambda d: [p for p in _parts() if isinstance(p, m.DataPart)]),
    ("0.3", "PartBase"): _each(_parts),
    ("0.3", "FileWithBytes"): _each(_file_parts("raw"), ("file",)),
    ("0.3", "FileWithUri"): _each(_file_parts("url"), ("file",)),
    ("0.3", "FileBase"): _each(_file_parts(""), ("file",)),
    ("0.3", "SecuritySchemeBase"): _each(_schemes),
    ("0.3", "OAuthFlows"): _one(_all_flows),
    ("0.3", "AgentCard"): _one(_card),
    ("0.3", "AgentInterface"): _one(_card, ("additionalInterfaces", 0)),
    ("0.3", "TaskPushNotificationConfig"): _one(_push),
    ("0.3", "PushNotificationConfig"): _one(_push, _PUSH_INNER),
    ("0.3", "PushNotificationAuthenticationInfo"): _one(_push, (*_PUSH_INNER, "authentication")),
    ("0.3", "MessageSendConfiguration"): _one(_send_configuration),
}

#: Upstream name -> model class(es) whose codec table carries it, where the name differs.
CLASSES: dict[str, dict[str, tuple[type[Any], ...]]] = {
    P10: {},
    P03: {
        "TaskSubscriptionRequest": (m.SubscribeToTaskRequest,),
        "ListTaskPushNotificationConfigRequest": (m.ListTaskPushNotificationConfigsRequest,),
        "ListTaskPushNotificationConfigResponse": (m.ListTaskPushNotificationConfigsResponse,),
        "GetAgentCardRequest": (m.GetExtendedAgentCardRequest,),
        "Security": (m.SecurityRequirement,),
    },
    J03: {
        "MessageSendParams": (m.SendMessageRequest,),
        "MessageSendConfiguration": (m.SendMessageConfiguration,),
        "TaskQueryParams": (m.GetTaskRequest,),
        "TaskIdParams": (m.CancelTaskRequest, m.SubscribeToTaskRequest),
        "GetTaskPushNotificationConfigParams": (m.GetTaskPushNotificationConfigRequest,),
        "DeleteTaskPushNotificationConfigParams": (m.DeleteTaskPushNotificationConfigRequest,),
        "ListTaskPushNotificationConfigParams": (m.ListTaskPushNotificationConfigsRequest,),
        "PushNotificationAuthenticationInfo": (m.AuthenticationInfo,),
        "MutualTLSSecurityScheme": (m.MutualTlsSecurityScheme,),
        "PushNotificationConfig": (m.TaskPushNotificationConfig,),
        "FileWithBytes": (m.FilePart,),
        "FileWithUri": (m.FilePart,),
        "FileBase": (m.FilePart,),
        "PartBase": (m.Part,),
        "SecuritySchemeBase": (m.SecurityScheme,),
        # Unions: the abstract base classes and the codec's union aliases.
        "Part": (m.Part,),
        "SecurityScheme": (m.SecurityScheme,),
    },
}


def _classes(source: str, name: str) -> tuple[type[Any], ...]:
    if name in CLASSES[source]:
        return CLASSES[source][name]
    cls = getattr(m, name, None)
    return (cls,) if isinstance(cls, type) and attrs.has(cls) else ()


# --------------------------------------------------------------------------- carried members


@functools.cache
def _tables(dialect: str) -> dict[type[Any], dict[str, set[Any]]]:
    """Model class -> wire member -> constant values (empty set: any value)."""
    specs = (
        _v10.build_specs(python=False) if dialect == "1.0" else _v03.specs(dialect == "0.3-http")
    )
    out: dict[type[Any], dict[str, set[Any]]] = {}
    for spec in specs:
        members = out.setdefault(spec.cls, {})
        for f in spec.fields:
            if f.unsupported is None:
                members.setdefault(f.wire, set())
        for wire, const in spec.constants:
            members.setdefault(wire, set()).add(const)
    return out


def _probe(dialect: str, shape: str) -> dict[str, set[Any]] | None:
    """Wire member -> values seen, from the probes of ``shape`` (None: no probes)."""
    probes = PROBES.get((dialect, shape))
    if probes is None:
        return None
    seen: dict[str, set[Any]] = {}
    for build, as_type, path in probes(dialect):
        obj = codec.to_wire(build(dialect), dialect, as_type=as_type, lossy=True)
        for segment in path:
            obj = obj[segment]
        for key, value in obj.items():
            seen.setdefault(key, set()).add(json.dumps(value, sort_keys=True))
    return {
        k: {json.loads(v) for v in vs if not v.startswith(("{", "["))} for k, vs in seen.items()
    }


def carried(source: str, name: str) -> dict[str, set[Any]] | None:
    """Members the codec writes for upstream ``name`` (None: nothing represents it)."""
    dialect = DIALECT[source]
    tables = _tables(dialect)
    found: dict[str, set[Any]] | None = None
    for cls in _classes(source, name):
        if cls in tables:
            members = tables[cls]
            if found is None:
                found = {k: set(v) for k, v in members.items()}
            else:  # every class must carry it (TaskIdParams: cancel and resubscribe)
                found = {k: v | members[k] for k, v in found.items() if k in members}
    probed = _probe(dialect, name)
    if probed is not None:
        found = found or {}
        for key, values in probed.items():
            found.setdefault(key, set()).update(values)
    return found


class Audit:
    """Collects problems and the exception entries that were needed."""

    def __init__(self, exceptions: dict[tuple[str, str, str | None], str]) -> None:
        self.exceptions = exceptions
        self.problems: list[str] = []
        self.used: set[tuple[str, str, str | None]] = set()
        self.counts: dict[str, int] = {}

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def excused(self, source: str, name: str, field: str | None) -> bool:
        for key in ((source, name, field), (source, name, None)):
            if key in self.exceptions:
                self.used.add(key)
                return True
        return False

    def fail(self, source: str, name: str, field: str | None, problem: str) -> None:
        if not self.excused(source, name, field):
            where = f"{name}.{field}" if field else name
            self.problems.append(f"{source}: {where}: {problem}")


# --------------------------------------------------------------------------- enums


def _minimal_message(dialect: str, role: Any) -> dict[str, Any]:
    if dialect == "1.0":
        return {"messageId": "m", "role": role, "parts": [{"text": "x"}]}
    if dialect == "0.3-http":
        return {"messageId": "m", "role": role, "content": [{"text": "x"}]}
    return {
        "kind": "message",
        "messageId": "m",
        "role": role,
        "parts": [{"kind": "text", "text": "x"}],
    }


def _round_trip(tp: type[Any], wire: dict[str, Any], member: str, dialect: str) -> str | None:
    """None if ``wire[member]`` decodes and re-encodes to itself, else the problem."""
    try:
        value = codec.from_wire(tp, wire, dialect)
    except DecodeError as exc:
        return f"does not decode ({exc})"
    written = codec.to_wire(value, dialect, lossy=True).get(member)
    return None if written == wire[member] else f"re-encodes as {written!r}"


def _enum_values(source: str, enum: str, values: list[Any], audit: Audit) -> None:
    dialect = DIALECT[source]
    for value in values:
        audit.count("enum values")
        if enum == "TaskState":
            problem = _round_trip(m.TaskStatus, {"state": value}, "state", dialect)
        elif enum == "Role":
            problem = _round_trip(m.Message, _minimal_message(dialect, value), "role", dialect)
        elif enum == "APIKeySecurityScheme.in":
            wire = {"type": "apiKey", "in": value, "name": "k"}
            problem = _round_trip(m.APIKeySecurityScheme, wire, "in", dialect)
        elif enum == "TransportProtocol":
            known = {v for k, v in vars(m.ProtocolBinding).items() if k.isupper()}
            problem = None if value in known else "no ProtocolBinding constant"
        else:
            problem = "an enum nobody maps"
        if problem is not None:
            audit.fail(source, enum, str(value), problem)


# --------------------------------------------------------------------------- proto audits


def _check_members(
    source: str, name: str, members: dict[str, set[Any]] | None, fields: Any, audit: Audit
) -> None:
    if members is None and not fields:
        audit.fail(source, name, None, "no model class, codec table or hook represents it")
    for field in fields:
        audit.count("fields")
        if members is None:
            audit.fail(source, name, field, "no model class, codec table or hook represents it")
        elif field not in members:
            audit.fail(source, name, field, f"the codec's {DIALECT[source]} form never writes it")


def audit_proto(source: str, inventory: dict[str, Any], audit: Audit) -> None:
    """Every message, field and enum value of a proto inventory is carried."""
    for name, info in inventory.items():
        if name == "enums":
            continue
        audit.count("messages")
        if (source, name, None) in audit.exceptions:
            audit.used.add((source, name, None))
            continue
        members = carried(source, name)
        _check_members(source, name, members, info["fields"], audit)
    for enum, info in inventory["enums"].items():
        _enum_values(source, enum, info["values"], audit)


# --------------------------------------------------------------------------- 0.3 JSON Schema audit

_ENVELOPE_FIELDS: dict[str, type[Any]] = {
    "JSONRPCMessage": protocol.Request,
    "JSONRPCRequest": protocol.Request,
    "JSONRPCSuccessResponse": protocol.SuccessResponse,
    "JSONRPCErrorResponse": protocol.ErrorResponse,
}


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        if "$ref" in node:
            return [node["$ref"].rsplit("/", 1)[1]]
        return [r for branch in node.get("anyOf", ()) for r in _refs(branch)]
    return []


def _result_type(schema: dict[str, Any]) -> Any:
    refs = _refs(schema)
    if schema.get("type") == "null":
        return None
    if schema.get("type") == "array" and _refs(schema.get("items")) == [
        "TaskPushNotificationConfig"
    ]:
        return m.ListTaskPushNotificationConfigsResponse
    unions = {
        frozenset({"Task", "Message"}): m.SendMessageResponse,
        frozenset({"Task", "Message", "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent"}): (
            m.StreamResponse
        ),
    }
    if len(refs) > 1:
        return unions.get(frozenset(refs), "an unknown union")
    return getattr(m, refs[0], "an unknown type") if refs else "no result schema"


def _audit_envelope(name: str, d: dict[str, Any], defs: dict[str, Any], audit: Audit) -> None:
    props = d["properties"]
    if props["jsonrpc"].get("const") != protocol.JSONRPC_VERSION:
        audit.fail(J03, name, "jsonrpc", "is not protocol.JSONRPC_VERSION")
    if "method" in props and "const" in props["method"]:
        # A request of one A2A method.
        try:
            spec = protocol.method_for(props["method"]["const"], "0.3")
        except MethodNotFoundError:
            audit.fail(J03, name, "method", "not in protocol.METHODS")
            return
        if "params" in props:
            accepted = {c for r in _refs(props["params"]) for c in _classes(J03, r)}
            if spec.params_type not in accepted:
                audit.fail(J03, name, "params", f"METHODS gives {spec.params_type.__name__}")
        elif spec.params_required:
            audit.fail(J03, name, "params", "the method takes no params, METHODS requires them")
        envelope: type[Any] = protocol.Request
    elif "result" in props:
        request = defs.get(name.removesuffix("SuccessResponse") + "Request", {})
        if "const" not in request.get("properties", {}).get("method", {}):
            envelope = protocol.SuccessResponse  # the generic JSONRPCSuccessResponse
        else:
            spec = protocol.method_for(request["properties"]["method"]["const"], "0.3")
            if _result_type(props["result"]) != spec.result_type:
                audit.fail(J03, name, "result", f"METHODS gives {spec.result_type!r}")
            envelope = protocol.SuccessResponse
    else:
        envelope = _ENVELOPE_FIELDS[name]
    fields = {a.name for a in attrs.fields(envelope)}
    for prop in props:
        audit.count("fields")
        if prop != "jsonrpc" and prop not in fields:
            audit.fail(J03, name, prop, f"not an attribute of protocol.{envelope.__name__}")


def _audit_error(name: str, d: dict[str, Any], audit: Audit) -> None:
    code = d["properties"]["code"].get("const")
    cls = errors.JSONRPCError if code is None else errors.error_from_code(code)
    if code is not None and cls is errors.JSONRPCError:
        audit.fail(J03, name, "code", f"no error class for code {code}")
        return
    default = d["properties"]["message"].get("default")
    if cls.__name__ != name or (default is not None and default != cls.default_message):
        audit.fail(J03, name, None, f"code {code} is {cls.__name__} ({cls.default_message!r})")
    instance = cls()
    for prop in d["properties"]:
        audit.count("fields")
        if not hasattr(instance, prop):
            audit.fail(J03, name, prop, f"not an attribute of errors.{cls.__name__}")


def _audit_union(name: str, d: dict[str, Any], defs: dict[str, Any], audit: Audit) -> None:
    members = _refs(d)
    if name in ("A2AError",):
        ok = all("code" in defs[r]["properties"] for r in members)  # each audited as an error
    elif name == "A2ARequest":
        ok = len(members) == len([s for s in protocol.METHODS.values() if s.legacy_name])
    elif name == "JSONRPCResponse" or name.endswith("Response"):
        # anyOf [JSONRPCErrorResponse, <X>SuccessResponse]: protocol.Response
        ok = all(r == "JSONRPCErrorResponse" or r.endswith("SuccessResponse") for r in members)
    else:
        ok = bool(_classes(J03, name))  # Part, SecurityScheme: the abstract model bases
    if not ok:
        audit.fail(J03, name, None, "a union nobody maps")


def audit_json_schema(definitions: dict[str, Any], audit: Audit) -> None:
    """Every definition of the 0.3 JSON Schema, with its members, is represented."""
    for name, d in definitions.items():
        audit.count("definitions")
        props = d.get("properties")
        if "enum" in d:
            _enum_values(J03, name, d["enum"], audit)
        elif props is None:
            _audit_union(name, d, definitions, audit)
        elif "jsonrpc" in props:
            _audit_envelope(name, d, definitions, audit)
        elif "code" in props:
            _audit_error(name, d, audit)
        else:
            if (J03, name, None) in audit.exceptions:
                audit.used.add((J03, name, None))
                continue
            members = carried(J03, name)
            _check_members(J03, name, members, props, audit)
            for prop, schema in props.items():
                if members is None or prop not in members:
                    pass
                elif "const" in schema and members[prop] and schema["const"] not in members[prop]:
                    audit.fail(
                        J03, name, prop, f"written as {members[prop]}, not {schema['const']!r}"
                    )
                elif "const" in schema and not members[prop]:
                    audit.fail(
                        J03, name, prop, f"the constant {schema['const']!r} is never written"
                    )
                if "enum" in schema:
                    _enum_values(
                        J03,
                        f"{name}.{prop}" if name != "Message" else "Role",
                        schema["enum"],
                        audit,
                    )


# --------------------------------------------------------------------------- tests


@functools.cache
def _json_schema_definitions() -> dict[str, Any]:
    path = protoschema.require_spec() / "0.3.0" / "a2a.json"
    definitions: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["definitions"]
    return definitions


def _run(
    *,
    p10: dict[str, Any] | None = None,
    p03: dict[str, Any] | None = None,
    j03: dict[str, Any] | None = None,
    exceptions: dict[tuple[str, str, str | None], str] = EXCEPTIONS,
) -> Audit:
    audit = Audit(exceptions)
    audit_proto(P10, p10 if p10 is not None else protoschema.proto_inventory("1.0"), audit)
    audit_proto(P03, p03 if p03 is not None else protoschema.proto_inventory("0.3"), audit)
    audit_json_schema(j03 if j03 is not None else _json_schema_definitions(), audit)
    return audit


@functools.cache
def _audit() -> Audit:
    return _run()


@pytest.mark.parametrize("source", [P10, P03, J03])
def test_everything_upstream_is_represented(source: str) -> None:
    problems = [p for p in _audit().problems if p.startswith(source)]
    assert not problems, (
        "unmapped upstream items (map them in the codec/models, add a PROBES entry for a "
        "hand-written hook, or explain them in EXCEPTIONS):\n" + "\n".join(problems)
    )


def test_exception_table_has_no_stale_entries() -> None:
    stale = set(EXCEPTIONS) - _audit().used
    assert not stale, f"these EXCEPTIONS are no longer needed: {sorted(stale, key=str)}"


def test_audit_covers_everything() -> None:
    counts = _audit().counts
    assert counts["messages"] == 44 + 45  # 1.0 and 0.3 protos
    assert counts["definitions"] == 93  # the 0.3 JSON Schema
    assert counts["fields"] >= 500
    assert counts["enum values"] >= 40


def _inventory(version: str) -> dict[str, Any]:
    return copy.deepcopy(protoschema.proto_inventory(version))


def test_a_new_proto_field_fails_until_mapped() -> None:
    p10 = _inventory("1.0")
    p10["Task"]["fields"]["priority"] = dict(p10["Task"]["fields"]["id"], name="priority")
    p10["Part"]["fields"]["checksum"] = dict(p10["Part"]["fields"]["filename"], name="checksum")
    p10["Widget"] = {"fields": {}}
    p10["enums"]["TaskState"]["values"].append("TASK_STATE_PAUSED")
    p10["enums"]["Priority"] = {"values": ["PRIORITY_HIGH"]}
    problems = _run(p10=p10).problems
    assert problems == [
        f"{P10}: Task.priority: the codec's 1.0 form never writes it",
        f"{P10}: Part.checksum: the codec's 1.0 form never writes it",
        f"{P10}: Widget: no model class, codec table or hook represents it",
        f"{P10}: TaskState.TASK_STATE_PAUSED: does not decode "
        "($.state: expected a task state (TASK_STATE_UNSPECIFIED, TASK_STATE_SUBMITTED, "
        "TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, TASK_STATE_CANCELED, "
        "TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, TASK_STATE_AUTH_REQUIRED), "
        "got 'TASK_STATE_PAUSED')",
        f"{P10}: Priority.PRIORITY_HIGH: an enum nobody maps",
    ]


def test_a_new_0_3_item_fails_until_mapped() -> None:
    p03 = _inventory("0.3")
    p03["AgentCard"]["fields"]["homepage"] = dict(
        p03["AgentCard"]["fields"]["url"], name="homepage"
    )
    j03 = copy.deepcopy(_json_schema_definitions())
    j03["Message"]["properties"]["priority"] = {"type": "integer"}
    j03["FileWithUri"]["properties"]["size"] = {"type": "integer"}
    j03["Gadget"] = {"type": "object", "properties": {"a": {"type": "string"}}}
    j03["NewMethodRequest"] = copy.deepcopy(j03["GetTaskRequest"])
    j03["NewMethodRequest"]["properties"]["method"]["const"] = "tasks/new"
    j03["TeapotError"] = copy.deepcopy(j03["TaskNotFoundError"])
    j03["TeapotError"]["properties"]["code"]["const"] = -32099
    j03["TaskState"]["enum"].append("paused")
    problems = _run(p03=p03, j03=j03).problems
    assert problems == [
        f"{P03}: AgentCard.homepage: the codec's 0.3-http form never writes it",
        f"{J03}: FileWithUri.size: the codec's 0.3 form never writes it",
        f"{J03}: Message.priority: the codec's 0.3 form never writes it",
        f"{J03}: TaskState.paused: does not decode ($.state: expected a task state (submitted, "
        "working, input-required, completed, canceled, failed, rejected, auth-required, "
        "unknown), got 'paused')",
        f"{J03}: Gadget.a: no model class, codec table or hook represents it",
        f"{J03}: NewMethodRequest.method: not in protocol.METHODS",
        f"{J03}: TeapotError.code: no error class for code -32099",
    ]


def test_exceptions_excuse_only_what_they_name() -> None:
    """Without the table, each of its entries shows up as a problem, and nothing else does."""
    problems = _run(exceptions={}).problems
    for source, name, field in EXCEPTIONS:
        where = f"{source}: {name}.{field}:" if field else f"{source}: {name}"
        assert any(p.startswith(where) for p in problems), where
    excused = [
        p
        for p in problems
        if not any(
            p.startswith(f"{source}: {name}.{field}:" if field else f"{source}: {name}")
            for source, name, field in EXCEPTIONS
        )
    ]
    assert excused == []


def test_probes_see_the_hooks_at_work() -> None:
    """The probes really observe hand-written hooks (sanity check of the machinery)."""
    assert set(_probe("1.0", "Part") or {}) == {
        "text",
        "raw",
        "url",
        "data",
        "metadata",
        "filename",
        "mediaType",
    }
    assert _probe("0.3", "TextPart") == {"kind": {"text"}, "text": {"hello"}, "metadata": set()}
    assert set(_probe("0.3-http", "FilePart") or {}) == {"fileWithBytes", "fileWithUri", "mimeType"}
    assert set(_probe("0.3", "PushNotificationConfig") or {}) == {
        "url",
        "id",
        "token",
        "authentication",
    }
    assert carried(J03, "TaskIdParams") == {"id": set(), "metadata": set()}
