"""The two A2A 0.3 dialects.

* **0.3 JSON-RPC** - the shapes of the 0.3 JSON Schema: ``kind``
  discriminators, lowercase hyphenated states, ``file.bytes``/``file.uri``,
  ``type``-tagged security schemes, the card's ``url``/``preferredTransport``/
  ``additionalInterfaces``/``protocolVersion``, nested push configs.
* **0.3 HTTP+JSON** - ProtoJSON of the 0.3 proto (``a2a.v1``): ``TASK_STATE_*``
  with ``CANCELLED``, ``ROLE_*``, ``Message.content``, ``{"file":
  {"fileWithUri": ...}}``, ``{"data": {"data": {...}}}``, resource names such
  as ``tasks/{id}/pushNotificationConfigs/{cfg}``.

Both map onto the 1.0-shaped models; what they cannot express is reported
through ``_gen.lose`` (an :class:`~a2a_models.errors.EncodeError` unless lossy).
"""

from __future__ import annotations

import binascii
from typing import Any

import attrs

from .. import models as m
from .._state import TaskState
from ._gen import (
    ClassSpec,
    Fail,
    Field,
    Kind,
    Loss,
    Namespace,
    builder,
    compile_dialect,
    json_any,
    lose,
    struct,
    type_name,
)
from ._v10 import camel, inline_part_encoder, install_wrapper_union, slot_setters

__all__ = ["V03_STATES", "install"]

#: TaskState -> 0.3 JSON-RPC wire name (``unknown`` is 1.0's UNSPECIFIED).
V03_STATES: dict[TaskState, str] = {
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.COMPLETED: "completed",
    TaskState.CANCELED: "canceled",
    TaskState.FAILED: "failed",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
    TaskState.UNSPECIFIED: "unknown",
}

_STR = Kind(decode="({0} if {0}.__class__ is str else _bad_str({0}))", empty="''")
_BOOL = Kind(decode="({0} if ({0} is True or {0} is False) else _bad_bool({0}))", empty="False")
_INT = Kind(decode="_int32({})", empty="0")
_NONNEG = Kind(decode="_nonneg_int32({})", empty="0")
_LOCATION = Kind(decode="_api_key_location({})", empty="''")
_OBJ = Kind(decode="_obj({})")
_TS = Kind(decode="_ts({})", encode="_fmt_ts({})")
_STRS = Kind(decode="_str_list({})", encode="_listify({})", is_list=True, empty="[]")
_STRMAP = Kind(decode="_str_map({})")
_STATE = Kind(decode="_E_TaskState({})", encode="_X_TaskState[{}._value_]", enum="TaskState")
_ROLE = Kind(decode="_E_Role({})", encode="_X_Role[{}._value_]", enum="Role")


def _obj(name: str) -> Kind:
    return Kind(decode=f"_s_{name}({{}})", encode=f"_u_{name}({{}})")


def _objs(name: str) -> Kind:
    return Kind(
        decode=f"_list(_s_{name}, {{}})",
        encode=f"_ulist(_u_{name}, {{}})",
        is_list=True,
        empty="[]",
        items=name,
    )


def _f(attr: str, kind: Kind = _STR, wire: str | None = None, **kw: Any) -> Field:
    return Field(attr=attr, wire=wire or camel(attr), kind=kind, **kw)


def _no(attr: str, why: str) -> Field:
    return Field(attr=attr, wire=f"<{attr}>", unsupported=why)


def _specs(http: bool) -> list[ClassSpec]:
    """Field tables of the table-driven classes of one 0.3 dialect."""
    # ProtoJSON: "" / 0 / false / [] mean unset; JSON-RPC keeps them.
    pj: dict[str, Any] = {"empty_is_unset": True} if http else {}
    req: dict[str, Any] = {"required": True, "always": True, "nonempty": True}
    kind = (lambda value: ((("kind", value),))) if not http else (lambda value: ())
    no_tenant = _no("tenant", "A2A 0.3 has no tenants")
    specs = [
        ClassSpec(
            m.TaskStatus,
            (
                _f("state", _STATE, required=True, always=True),
                _f("message", _obj("Message")),
                _f("timestamp", _TS),
            ),
        ),
        ClassSpec(
            m.Message,
            (
                _f("message_id", **req),
                _f("context_id", **pj),
                _f("task_id", **pj),
                _f("role", _ROLE, required=True, always=True),
                _f("parts", _objs("Part"), wire="content" if http else "parts", **req),
                _f("metadata", _OBJ),
                _f("extensions", _STRS, **pj),
                _no("reference_task_ids", "the 0.3 proto has no referenceTaskIds")
                if http
                else _f("reference_task_ids", _STRS),
            ),
            constants=kind("message"),
        ),
        ClassSpec(
            m.Artifact,
            (
                _f("artifact_id", **req),
                _f("name", **pj),
                _f("description", **pj),
                _f("parts", _objs("Part"), **req),
                _f("metadata", _OBJ),
                _f("extensions", _STRS, **pj),
            ),
        ),
        ClassSpec(
            m.Task,
            (
                _f("id", **req),
                # REQUIRED in the 0.3 JSON Schema, plain in the 0.3 proto.
                _f("context_id", required=not http, always=not http, **pj),
                _f("status", _obj("TaskStatus"), required=True, always=True),
                _f("artifacts", _objs("Artifact"), **pj),
                _f("history", _objs("Message"), **pj),
                _f("metadata", _OBJ),
            ),
            constants=kind("task"),
        ),
        ClassSpec(
            m.TaskStatusUpdateEvent,
            (
                _f("task_id", **req),
                _f("context_id", **req),
                _f("status", _obj("TaskStatus"), required=True, always=True),
                _f("final", _BOOL, required=not http, always=not http, **pj),
                _f("metadata", _OBJ),
            ),
            constants=kind("status-update"),
        ),
        ClassSpec(
            m.TaskArtifactUpdateEvent,
            (
                _f("task_id", **req),
                _f("context_id", **req),
                _f("artifact", _obj("Artifact"), required=True, always=True),
                _f("append", _BOOL, **pj),
                _f("last_chunk", _BOOL, **pj),
                _f("metadata", _OBJ),
            ),
            constants=kind("artifact-update"),
        ),
        ClassSpec(m.AgentProvider, (_f("organization", **req), _f("url", **req))),
        ClassSpec(
            m.AgentExtension,
            (
                _f("uri", always=not http, **pj),
                _f("description", **pj),
                _f("required", _BOOL, **pj),
                _f("params", _OBJ),
            ),
        ),
        ClassSpec(
            m.AgentCapabilities,
            (
                _f("streaming", _BOOL),
                _f("push_notifications", _BOOL),
                _f("extensions", _objs("AgentExtension"), **pj),
                _no("state_transition_history", "the 0.3 proto has no stateTransitionHistory")
                if http
                else _f("state_transition_history", _BOOL),
                _no(
                    "extended_agent_card",
                    "0.3 carries it on the card (supportsAuthenticatedExtendedCard)",
                ),
            ),
        ),
        ClassSpec(
            m.AgentSkill,
            (
                _f("id", **req),
                _f("name", **req),
                _f("description", **req),
                _f("tags", _STRS, **req),
                _f("examples", _STRS, **pj),
                _f("input_modes", _STRS, **pj),
                _f("output_modes", _STRS, **pj),
                _f("security_requirements", _objs("SecurityRequirement"), wire="security", **pj),
            ),
        ),
        ClassSpec(
            m.AgentCardSignature,
            (_f("protected", **req), _f("signature", **req), _f("header", _OBJ)),
        ),
        ClassSpec(
            m.AgentCard,
            (
                _f("name", **req),
                _f("description", **req),
                _f("version", **req),
                _f("provider", _obj("AgentProvider")),
                _f("documentation_url", **pj),
                _no("icon_url", "the 0.3 proto has no iconUrl") if http else _f("icon_url"),
                _f("capabilities", _obj("AgentCapabilities"), required=True, always=True),
                _f("security_schemes", Kind(decode="_map(_s_SecurityScheme, {})",
                                            encode="_umap(_u_SecurityScheme, {})")),
                _f("security_requirements", _objs("SecurityRequirement"), wire="security", **pj),
                _f("default_input_modes", _STRS, **req),
                _f("default_output_modes", _STRS, **req),
                _f("skills", _objs("AgentSkill"), **req, **pj),
                _f("signatures", _objs("AgentCardSignature"), **pj),
            ),
            name="AgentCardBase",
            placeholders=(("supported_interfaces", ()),),
        ),
        ClassSpec(
            m.AuthorizationCodeOAuthFlow,
            (
                _f("authorization_url", **req),
                _f("token_url", **req),
                _f("scopes", _STRMAP, required=True, always=True),
                _f("refresh_url", **pj),
                _no("pkce_required", "A2A 0.3 has no pkceRequired"),
            ),
        ),
        ClassSpec(
            m.ClientCredentialsOAuthFlow,
            (_f("token_url", **req), _f("scopes", _STRMAP, required=True, always=True),
             _f("refresh_url", **pj)),
        ),
        ClassSpec(
            m.ImplicitOAuthFlow,
            (_f("authorization_url", always=not http, **pj), _f("scopes", _STRMAP, always=True),
             _f("refresh_url", **pj)),
        ),
        ClassSpec(
            m.PasswordOAuthFlow,
            (_f("token_url", always=not http, **pj), _f("scopes", _STRMAP, always=True),
             _f("refresh_url", **pj)),
        ),
    ]
    # Security schemes: JSON-RPC tags them with "type", ProtoJSON wraps them.
    scheme_tables = {
        m.APIKeySecurityScheme: (
            "apiKey",
            (_f("description", **pj),
             _f("location", _LOCATION, wire="location" if http else "in", **req),
             _f("name", **req)),
        ),
        m.HTTPAuthSecurityScheme: (
            "http",
            (_f("description", **pj), _f("scheme", **req), _f("bearer_format", **pj)),
        ),
        m.OAuth2SecurityScheme: (
            "oauth2",
            (_f("description", **pj), _f("flows", _obj("OAuthFlows"), required=True, always=True),
             _f("oauth2_metadata_url", **pj)),
        ),
        m.OpenIdConnectSecurityScheme: (
            "openIdConnect",
            (_f("description", **pj), _f("open_id_connect_url", **req)),
        ),
        m.MutualTlsSecurityScheme: ("mutualTLS", (_f("description", **pj),)),
    }
    for cls, (tag, fields) in scheme_tables.items():
        specs.append(ClassSpec(cls, fields, constants=(() if http else (("type", tag),))))
    # Request params.
    specs += [
        ClassSpec(
            m.SendMessageRequest,
            (
                _f("message", _obj("Message"), required=True, always=True),
                _f("configuration", _obj("SendMessageConfiguration")),
                _f("metadata", _OBJ),
                no_tenant,
            ),
        ),
        ClassSpec(m.GetExtendedAgentCardRequest, (no_tenant,)),
    ]
    if not http:
        specs += [
            ClassSpec(
                m.GetTaskRequest,
                (_f("id", **req), _f("history_length", _NONNEG), _f("metadata", _OBJ), no_tenant),
            ),
            ClassSpec(m.CancelTaskRequest, (_f("id", **req), _f("metadata", _OBJ), no_tenant)),
            ClassSpec(m.SubscribeToTaskRequest, (_f("id", **req), _f("metadata", _OBJ), no_tenant)),
            ClassSpec(
                m.GetTaskPushNotificationConfigRequest,
                (_f("task_id", wire="id", **req), _f("id", wire="pushNotificationConfigId"),
                 _f("metadata", _OBJ), no_tenant),
            ),
            ClassSpec(
                m.DeleteTaskPushNotificationConfigRequest,
                (_f("task_id", wire="id", **req), _f("id", wire="pushNotificationConfigId", **req),
                 _f("metadata", _OBJ), no_tenant),
            ),
            ClassSpec(
                m.ListTaskPushNotificationConfigsRequest,
                (_f("task_id", wire="id", **req), _f("metadata", _OBJ), no_tenant,
                 _no("page_size", "0.3 push-config lists have no pagination"),
                 _no("page_token", "0.3 push-config lists have no pagination")),
            ),
        ]
    else:
        specs += [
            ClassSpec(
                m.GetTaskRequest,
                (_f("id", wire="name", kind=_resource("tasks"), **req),
                 _f("history_length", _NONNEG, **pj), _no("metadata", "no metadata in 0.3 REST"),
                 no_tenant),
            ),
            ClassSpec(
                m.CancelTaskRequest,
                (_f("id", wire="name", kind=_resource("tasks"), **req),
                 _no("metadata", "no metadata in 0.3 REST"), no_tenant),
            ),
            ClassSpec(
                m.SubscribeToTaskRequest,
                (_f("id", wire="name", kind=_resource("tasks"), **req),
                 _no("metadata", "no metadata in 0.3 REST"), no_tenant),
            ),
            ClassSpec(
                m.ListTaskPushNotificationConfigsRequest,
                (_f("task_id", wire="parent", kind=_resource("tasks"), **req),
                 _f("page_size", _INT, **pj), _f("page_token", **pj),
                 _no("metadata", "no metadata in 0.3 REST"), no_tenant),
            ),
            ClassSpec(
                m.ListTaskPushNotificationConfigsResponse,
                (_f("configs", _objs("TaskPushNotificationConfig"), **pj),
                 _f("next_page_token", **pj)),
            ),
        ]
    if http:
        # ProtoJSON parsers accept proto field names too (message_id, context_id, ...).
        proto_names = {"parts": "content", "message": "request"}
        specs = [
            attrs.evolve(
                spec,
                aliases=tuple(
                    (proto_names.get(f.attr, f.attr), f.wire)
                    for f in spec.fields
                    if f.unsupported is None and proto_names.get(f.attr, f.attr) != f.wire
                ),
            )
            for spec in specs
        ]
    return specs


def _resource(collection: str) -> Kind:
    """A ``tasks/{id}`` resource name <-> the bare id."""
    return Kind(decode=f"_res({{}}, {collection!r})", encode=f"_res_name({{}}, {collection!r})")


def _resource_name(value: str, collection: str) -> str:
    if "/" in value:
        # tasks/a/b would name another resource: refuse rather than mislead.
        lose(f"an id containing '/' cannot be written in a resource name: {value!r}")
    return f"{collection}/{value}"


def _parse_resource(value: Any, collection: str) -> str:
    if value.__class__ is not str:
        raise Fail(f"expected a resource name string, got {type_name(value)}")
    prefix = collection + "/"
    if not value.startswith(prefix) or "/" in value[len(prefix):] or len(value) == len(prefix):
        raise Fail(f"expected a resource name like {prefix}<id>, got {value!r}")
    return value[len(prefix):]


# --------------------------------------------------------------------------- hooks


def _check_str(value: Any, *path: str | int) -> None:
    if value is not None and value.__class__ is not str:
        raise Fail(f"expected a string, got {type_name(value)}", *path)


def install(ns: Namespace, *, http: bool, strict: bool) -> None:
    """Compile a 0.3 dialect (JSON-RPC, or HTTP+JSON when ``http``) into ``ns``."""
    ns["_res"] = _parse_resource
    ns["_res_name"] = _resource_name
    # 0.3 data parts hold objects only (anything else goes to _u_Part: a
    # loss); the 0.3 proto's parts have no metadata.
    dict_data = " and {p}.data.__class__ is dict"
    if http:
        ns.update(inline_part_encoder(
            "{{'text': {p}.text}}", "{{'data': {{'data': {p}.data}}}}", data_guard=dict_data))
    else:
        ns.update(inline_part_encoder(
            "{{'kind': 'text', 'text': {p}.text}}",
            "{{'kind': 'data', 'data': {p}.data}}",
            text_meta="{{'kind': 'text', 'text': {p}.text, 'metadata': {p}.metadata}}",
            data_guard=dict_data,
        ))
    compile_dialect(_specs(http), ns, strict=strict)
    _install_parts(ns, http=http, strict=strict)
    _install_security(ns, http=http, strict=strict)
    _install_card(ns, http=http)
    _install_push(ns, http=http, strict=strict)
    _install_send_configuration(ns, http=http)
    if http:
        _install_config_names(ns, strict=strict)
    if http:
        keys = {m.Task: "task", m.Message: "message", m.TaskStatusUpdateEvent: "statusUpdate",
                m.TaskArtifactUpdateEvent: "artifactUpdate"}
        install_wrapper_union(ns, "StreamResponse", keys, strict=strict)
        install_wrapper_union(ns, "SendMessageResponse", {m.Task: "task", m.Message: "message"},
                              strict=strict)
    else:
        _install_kind_union(ns, "StreamResponse", {
            "task": m.Task, "message": m.Message, "status-update": m.TaskStatusUpdateEvent,
            "artifact-update": m.TaskArtifactUpdateEvent})
        _install_kind_union(ns, "SendMessageResponse", {"task": m.Task, "message": m.Message})


def _install_config_names(ns: Namespace, *, strict: bool) -> None:
    """0.3 REST names a push config ``tasks/{task}/pushNotificationConfigs/{config}``."""
    new = object.__new__

    def install(cls: type[Any], id_required: bool) -> None:
        setters = slot_setters(cls)

        def structure(d: Any) -> Any:
            if d.__class__ is not dict:
                raise Fail(f"expected an object ({cls.__name__}), got {type_name(d)}")
            if strict and set(d) - {"name"}:
                raise Fail("unknown field (strict mode)", sorted(set(d) - {"name"})[0])
            name = d.get("name")
            if name.__class__ is not str:
                raise Fail("required field missing" if name is None else "expected a string",
                           "name")
            parts = name.split("/")
            if len(parts) != 4 or parts[0] != "tasks" or parts[2] != "pushNotificationConfigs" \
                    or not parts[1] or (id_required and not parts[3]):
                raise Fail("expected tasks/{id}/pushNotificationConfigs/{config_id}", "name")
            o: Any = new(cls)
            setters["task_id"](o, parts[1])
            setters["id"](o, parts[3] or None)
            setters["tenant"](o, None)
            setters["metadata"](o, None)
            return o

        def unstructure(o: Any) -> dict[str, Any]:
            for value in (o.task_id, o.id or ""):
                if "/" in value:
                    lose(f"an id containing '/' cannot be written in a resource name: {value!r}")
            if o.tenant:
                lose("A2A 0.3 has no tenants", "tenant")
            if o.metadata is not None:
                lose("no metadata in 0.3 REST", "metadata")
            return {"name": f"tasks/{o.task_id}/pushNotificationConfigs/{o.id or ''}"}

        ns[f"_s_{cls.__name__}"], ns[f"_u_{cls.__name__}"] = structure, unstructure

    install(m.GetTaskPushNotificationConfigRequest, id_required=False)
    install(m.DeleteTaskPushNotificationConfigRequest, id_required=True)


def _install_kind_union(ns: Namespace, name: str, kinds: dict[str, type[Any]]) -> None:
    choices = ", ".join(kinds)
    by_class = {cls: cls.__name__ for cls in kinds.values()}

    def structure(d: Any) -> Any:
        if d.__class__ is not dict:
            raise Fail(f"expected an object ({name}), got {type_name(d)}")
        k = d.get("kind")
        cls = kinds.get(k) if k.__class__ is str else None
        if cls is None:
            raise Fail(f"expected kind to be one of {choices}, got {k!r}", "kind")
        return ns[f"_s_{cls.__name__}"](d)

    def unstructure(o: Any) -> Any:
        cls_name = by_class.get(type(o))
        if cls_name is None:
            raise Loss(f"{name} cannot hold a {type(o).__name__}")
        return ns[f"_u_{cls_name}"](o)

    ns[f"_s_{name}"], ns[f"_u_{name}"] = structure, unstructure


def _install_parts(ns: Namespace, *, http: bool, strict: bool) -> None:
    TextPart, FilePart, DataPart = m.TextPart, m.FilePart, m.DataPart
    # Mutable twins (see _gen.builder): slots filled by plain stores.
    TextB, FileB, DataB = builder(TextPart), builder(FilePart), builder(DataPart)
    b64d = ns["_b64d"]
    b2a = binascii.b2a_base64  # b2a(raw, newline=False).decode("ascii") = _gen.b64encode(raw)

    def decode_file(f: Any, meta: Any) -> m.FilePart:
        if f.__class__ is not dict:
            raise Fail(f"expected an object, got {type_name(f)}", "file")
        if http:
            g = f.get
            raw = g("fileWithBytes", g("file_with_bytes"))
            url = g("fileWithUri", g("file_with_uri"))
            media, name = g("mimeType", g("mime_type")), None
            k_raw, k_url = "fileWithBytes", "fileWithUri"
        else:
            raw, url, media, name = f.get("bytes"), f.get("uri"), f.get("mimeType"), f.get("name")
            k_raw, k_url = "bytes", "uri"
        if (raw is None) == (url is None):
            raise Fail(f"expected exactly one of {k_raw}, {k_url}", "file")
        _check_str(media, "mimeType", "file")
        _check_str(name, "name", "file")
        if raw is not None:
            try:
                raw = b64d(raw)
            except Fail as exc:
                exc.path += [k_raw, "file"]
                raise
        else:
            _check_str(url, k_url, "file")
        p: Any = FileB()
        p.raw = raw
        p.url = url
        p.metadata = meta
        p.filename = (name or None) if http else name
        p.media_type = (media or None) if http else media
        p.__class__ = FilePart
        return p  # type: ignore[no-any-return]

    def text_part(text: str, meta: Any) -> m.TextPart:
        p: Any = TextB()
        p.text = text
        p.metadata = meta
        p.filename = p.media_type = None
        p.__class__ = TextPart
        return p  # type: ignore[no-any-return]

    def s_part(d: Any) -> m.Part:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (Part), got {type_name(d)}")
        if len(d) == (1 if http else 2):
            # The common case, a bare text part, skips the general checks.
            text = d.get("text")
            if text.__class__ is str and (http or d.get("kind") == "text"):
                return text_part(text, None)
        k: Any
        if http:
            present = [k for k in ("text", "file", "data") if d.get(k) is not None]
            if len(present) != 1:
                raise Fail("expected exactly one of text, file, data")
            k = present[0]
            meta = None
        else:
            k = d.get("kind")
            if k is None and not strict:
                # Lenient: infer a missing kind from the content member.
                present = [key for key in ("text", "file", "data") if key in d]
                k = present[0] if len(present) == 1 else None
            if k not in ("text", "file", "data"):
                raise Fail(f"expected kind to be one of text, file, data, got {k!r}", "kind")
            meta = d.get("metadata")
            if meta is not None:
                try:
                    meta = struct(meta)
                except Fail as exc:
                    exc.path.append("metadata")
                    raise
        if strict:
            allowed = {k, "metadata", "kind"} if not http else {k}
            for key in d:
                if key not in allowed:
                    raise Fail("unknown field (strict mode)", key)
        if k == "text":
            text = d.get("text")
            if text.__class__ is not str:
                raise Fail(f"expected a string, got {type_name(text)}", "text")
            return text_part(text, meta)
        if k == "file":
            return decode_file(d.get("file"), meta)
        data = d.get("data")
        if http:
            if data.__class__ is not dict:
                raise Fail(f"expected an object, got {type_name(data)}", "data")
            data = data.get("data", {})
        if data.__class__ is not dict:
            raise Fail(f"expected an object, got {type_name(data)}", "data")
        try:
            data = json_any(data)
        except Fail as exc:
            exc.path.append("data")
            raise
        p: Any = DataB()
        p.data = data
        p.metadata = meta
        p.filename = p.media_type = None
        p.__class__ = DataPart
        return p  # type: ignore[no-any-return]

    def u_part(p: Any) -> dict[str, Any]:
        r: dict[str, Any]
        cls = p.__class__
        if cls is not TextPart and cls is not DataPart and cls is not FilePart:
            # A subclass: classify it like its base (the three are siblings).
            cls = next((c for c in (TextPart, DataPart, FilePart) if isinstance(p, c)), None)
        if cls is TextPart:
            r = {"kind": "text", "text": p.text} if not http else {"text": p.text}
            if p.filename:
                lose("a 0.3 text part has no filename", "filename")
            if p.media_type:
                lose("a 0.3 text part has no mediaType", "mediaType")
        elif cls is DataPart:
            data = p.data
            if data.__class__ is not dict:
                lose("0.3 data parts hold objects only", "data")
                data = {"value": data}
            r = {"kind": "data", "data": data} if not http else {"data": {"data": data}}
            if p.filename:
                lose("a 0.3 data part has no filename", "filename")
            if p.media_type:
                lose("a 0.3 data part has no mediaType", "mediaType")
        elif cls is FilePart:
            f: dict[str, Any] = {}
            if http:
                if p.raw is not None:
                    f["fileWithBytes"] = b2a(p.raw, newline=False).decode("ascii")
                else:
                    f["fileWithUri"] = p.url
                if p.media_type:
                    f["mimeType"] = p.media_type
                if p.filename:
                    lose("the 0.3 proto's FilePart has no name", "filename")
                r = {"file": f}
            else:
                if p.raw is not None:
                    f["bytes"] = b2a(p.raw, newline=False).decode("ascii")
                else:
                    f["uri"] = p.url
                if p.media_type is not None:
                    f["mimeType"] = p.media_type
                if p.filename is not None:
                    f["name"] = p.filename
                r = {"kind": "file", "file": f}
        else:
            raise Loss(f"unknown Part subclass {type(p).__name__}")
        if p.metadata is not None:
            if http:
                lose("the 0.3 proto's Part has no metadata", "metadata")
            else:
                r["metadata"] = p.metadata
        return r

    ns["_s_Part"], ns["_u_Part"] = s_part, u_part


_SCHEME_TAGS = {
    "apiKey": m.APIKeySecurityScheme,
    "http": m.HTTPAuthSecurityScheme,
    "oauth2": m.OAuth2SecurityScheme,
    "openIdConnect": m.OpenIdConnectSecurityScheme,
    "mutualTLS": m.MutualTlsSecurityScheme,
}
_SCHEME_WRAPPERS = {
    "apiKeySecurityScheme": m.APIKeySecurityScheme,
    "httpAuthSecurityScheme": m.HTTPAuthSecurityScheme,
    "oauth2SecurityScheme": m.OAuth2SecurityScheme,
    "openIdConnectSecurityScheme": m.OpenIdConnectSecurityScheme,
    "mtlsSecurityScheme": m.MutualTlsSecurityScheme,
}
_FLOWS = {
    "authorization_code": ("authorizationCode", "AuthorizationCodeOAuthFlow"),
    "client_credentials": ("clientCredentials", "ClientCredentialsOAuthFlow"),
    "implicit": ("implicit", "ImplicitOAuthFlow"),
    "password": ("password", "PasswordOAuthFlow"),
}


def _install_security(ns: Namespace, *, http: bool, strict: bool) -> None:
    if http:
        install_wrapper_union(ns, "SecurityScheme", {c: k for k, c in _SCHEME_WRAPPERS.items()},
                              strict=strict)
    else:
        tags = ", ".join(_SCHEME_TAGS)
        class_tag = {cls: tag for tag, cls in _SCHEME_TAGS.items()}

        def s_scheme(d: Any) -> m.SecurityScheme:
            if d.__class__ is not dict:
                raise Fail(f"expected an object (SecurityScheme), got {type_name(d)}")
            tag = d.get("type")
            cls = _SCHEME_TAGS.get(tag) if tag.__class__ is str else None
            if cls is None:
                raise Fail(f"expected type to be one of {tags}, got {tag!r}", "type")
            return ns[f"_s_{cls.__name__}"](d)  # type: ignore[no-any-return]

        def u_scheme(s: m.SecurityScheme) -> dict[str, Any]:
            if type(s) not in class_tag:
                raise Loss(f"unknown SecurityScheme subclass {type(s).__name__}")
            return ns[f"_u_{type(s).__name__}"](s)  # type: ignore[no-any-return]

        ns["_s_SecurityScheme"], ns["_u_SecurityScheme"] = s_scheme, u_scheme

    new = object.__new__
    set_flows = slot_setters(m.OAuthFlows)
    flow_keys = ", ".join(k for k, _ in _FLOWS.values())

    def s_flows(d: Any) -> m.OAuthFlows:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (OAuthFlows), got {type_name(d)}")
        o: Any = new(m.OAuthFlows)
        count = 0
        for attr, (key, cls_name) in _FLOWS.items():
            value = d.get(key)
            if value is not None:
                count += 1
                try:
                    value = ns[f"_s_{cls_name}"](value)
                except Fail as exc:
                    exc.path.append(key)
                    raise
            set_flows[attr](o, value)
        set_flows["device_code"](o, None)
        if http and count > 1:
            raise Fail(f"expected at most one of {flow_keys}")
        if strict:
            known = {k for k, _ in _FLOWS.values()}
            for key in d:
                if key not in known:
                    raise Fail("unknown field (strict mode)", key)
        return o  # type: ignore[no-any-return]

    def u_flows(o: m.OAuthFlows) -> dict[str, Any]:
        r: dict[str, Any] = {}
        for attr, (key, cls_name) in _FLOWS.items():
            value = getattr(o, attr)
            if value is not None:
                if http and r:
                    lose("the 0.3 proto allows one OAuth flow per scheme", key)
                    continue
                r[key] = ns[f"_u_{cls_name}"](value)
        if o.device_code is not None:
            lose("A2A 0.3 has no device code flow", "deviceCode")
        return r

    ns["_s_OAuthFlows"], ns["_u_OAuthFlows"] = s_flows, u_flows

    set_req = slot_setters(m.SecurityRequirement)
    str_list = ns["_str_list"]

    def s_requirement(d: Any) -> m.SecurityRequirement:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (security requirement), got {type_name(d)}")
        schemes = d
        if http:
            schemes = d.get("schemes") or {}
            if schemes.__class__ is not dict:
                raise Fail(f"expected an object, got {type_name(schemes)}", "schemes")
        out: dict[str, tuple[str, ...]] = {}
        for name, scopes in schemes.items():
            try:
                if http:
                    if scopes.__class__ is not dict:
                        raise Fail(f"expected a StringList object, got {type_name(scopes)}")
                    out[name] = str_list(scopes.get("list") or [])
                else:
                    out[name] = str_list(scopes)
            except Fail as exc:
                exc.path.append(name)
                if http:
                    exc.path.append("schemes")
                raise
        o: Any = new(m.SecurityRequirement)
        set_req["schemes"](o, out)
        return o  # type: ignore[no-any-return]

    def u_requirement(o: m.SecurityRequirement) -> dict[str, Any]:
        if http:
            # ProtoJSON omits an empty repeated field inside the StringList too.
            lists = {n: {"list": list(s)} if s else {} for n, s in o.schemes.items()}
            return {"schemes": lists} if lists else {}
        return {n: list(s) for n, s in o.schemes.items()}

    ns["_s_SecurityRequirement"], ns["_u_SecurityRequirement"] = s_requirement, u_requirement


def _install_card(ns: Namespace, *, http: bool) -> None:
    s_base, u_base = ns["_s_AgentCardBase"], ns["_u_AgentCardBase"]
    set_card = slot_setters(m.AgentCard)
    set_caps = slot_setters(m.AgentCapabilities)
    new = object.__new__
    k_ext = "supportsAuthenticatedExtendedCard"

    def interface(d: Any, i: int, version: str) -> m.AgentInterface:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (AgentInterface), got {type_name(d)}", i,
                       "additionalInterfaces")
        url, transport = d.get("url"), d.get("transport")
        if url.__class__ is not str or not url:
            raise Fail("expected a non-empty string", "url", i, "additionalInterfaces")
        if transport.__class__ is not str or not transport:
            raise Fail("expected a non-empty string", "transport", i, "additionalInterfaces")
        return m.AgentInterface(url=url, protocol_binding=transport, protocol_version=version)

    def s_card(d: Any) -> m.AgentCard:
        card = s_base(d)
        url, transport, version = d.get("url"), d.get("preferredTransport"), d.get("protocolVersion")
        if url.__class__ is not str or not url:
            raise Fail("required field missing" if url is None else "expected a non-empty string",
                       "url")
        if transport is None or transport == "":
            transport = "JSONRPC"  # the 0.3 schema's default
        elif transport.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(transport)}", "preferredTransport")
        if version is None or version == "":
            if not http:
                raise Fail("required field missing", "protocolVersion")
            version = "0.3.0"
        elif version.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(version)}", "protocolVersion")
        extra = d.get("additionalInterfaces") or []
        if extra.__class__ is not list:
            raise Fail(f"expected an array, got {type_name(extra)}", "additionalInterfaces")
        main = m.AgentInterface(url=url, protocol_binding=transport, protocol_version=version)
        others = [interface(x, i, version) for i, x in enumerate(extra)]
        set_card["supported_interfaces"](card, (main, *(x for x in others if x != main)))
        ext = d.get(k_ext)
        if ext is not None and not (http and ext is False):  # ProtoJSON: false is unset
            if ext is not True and ext is not False:
                raise Fail(f"expected a boolean, got {type_name(ext)}", k_ext)
            caps: Any = new(m.AgentCapabilities)
            for a in attrs.fields(m.AgentCapabilities):
                set_caps[a.name](caps, getattr(card.capabilities, a.name))
            set_caps["extended_agent_card"](caps, ext)
            set_card["capabilities"](card, caps)
        return card  # type: ignore[no-any-return]

    def u_card(c: m.AgentCard) -> dict[str, Any]:
        # The extended-card flag travels on the card in 0.3, not in capabilities.
        caps = c.capabilities
        if caps.extended_agent_card is not None:
            c = attrs.evolve(c, capabilities=attrs.evolve(caps, extended_agent_card=None))
        r: dict[str, Any] = u_base(c)
        ifaces = [i for i in c.supported_interfaces if i.protocol_version.startswith("0.")]
        if not ifaces:
            lose("the card has no 0.3 interface (protocol_version 0.x)", "supportedInterfaces")
            ifaces = list(c.supported_interfaces)
        elif len(ifaces) != len(c.supported_interfaces):
            lose("a 0.3 card cannot list 1.0 interfaces", "supportedInterfaces")
        main = ifaces[0]
        for i, iface in enumerate(ifaces):
            if iface.protocol_version != main.protocol_version:
                lose("0.3 has one protocolVersion per card", "supportedInterfaces", i)
            if iface.tenant:
                lose("A2A 0.3 has no tenants", "supportedInterfaces", i)
        r["url"] = main.url
        r["preferredTransport"] = main.protocol_binding
        r["protocolVersion"] = main.protocol_version
        if len(ifaces) > 1:
            # 0.3 lists the main interface there too (0.3 §5.6); one alone needs no list.
            r["additionalInterfaces"] = [
                {"url": i.url, "transport": i.protocol_binding} for i in ifaces
            ]
        if caps.extended_agent_card is not None:
            if http and not caps.extended_agent_card:
                pass  # ProtoJSON omits false
            else:
                r[k_ext] = caps.extended_agent_card
        return r

    ns["_s_AgentCard"], ns["_u_AgentCard"] = s_card, u_card


def _install_push(ns: Namespace, *, http: bool, strict: bool) -> None:
    new = object.__new__
    set_auth = slot_setters(m.AuthenticationInfo)
    set_cfg = slot_setters(m.TaskPushNotificationConfig)
    str_list = ns["_str_list"]

    def s_auth(d: Any) -> m.AuthenticationInfo:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (authentication), got {type_name(d)}")
        raw = d.get("schemes")
        try:
            schemes = str_list(raw) if raw is not None else ()
        except Fail as exc:
            exc.path.append("schemes")
            raise
        if not schemes:
            raise Fail("expected at least one scheme", "schemes")
        for i, scheme in enumerate(schemes):
            if not scheme:
                raise Fail("must not be empty", i, "schemes")
        creds = d.get("credentials")
        _check_str(creds, "credentials")
        o: Any = new(m.AuthenticationInfo)
        set_auth["scheme"](o, schemes[0])
        set_auth["other_schemes"](o, schemes[1:])
        set_auth["credentials"](o, creds or None if http else creds)
        return o  # type: ignore[no-any-return]

    def u_auth(o: m.AuthenticationInfo) -> dict[str, Any]:
        r: dict[str, Any] = {"schemes": [o.scheme, *o.other_schemes]}
        if o.credentials is not None and (o.credentials or not http):
            r["credentials"] = o.credentials
        return r

    def s_inner(d: Any, task_id: str | None) -> m.TaskPushNotificationConfig:
        """The 0.3 ``PushNotificationConfig`` object."""
        if d.__class__ is not dict:
            raise Fail(f"expected an object (PushNotificationConfig), got {type_name(d)}")
        url, cid, token, auth = d.get("url"), d.get("id"), d.get("token"), d.get("authentication")
        if url.__class__ is not str or not url:
            raise Fail("required field missing" if url is None else "expected a non-empty string",
                       "url")
        _check_str(cid, "id")
        _check_str(token, "token")
        if auth is not None:
            try:
                auth = s_auth(auth)
            except Fail as exc:
                exc.path.append("authentication")
                raise
        o: Any = new(m.TaskPushNotificationConfig)
        set_cfg["url"](o, url)
        set_cfg["id"](o, cid or None if http else cid)
        set_cfg["task_id"](o, task_id)
        set_cfg["token"](o, token or None if http else token)
        set_cfg["authentication"](o, auth)
        set_cfg["tenant"](o, None)
        return o  # type: ignore[no-any-return]

    def u_inner(o: m.TaskPushNotificationConfig) -> dict[str, Any]:
        r: dict[str, Any] = {"url": o.url}
        if o.id is not None:
            r["id"] = o.id
        if o.token is not None:
            r["token"] = o.token
        if o.authentication is not None:
            r["authentication"] = u_auth(o.authentication)
        if o.tenant:
            lose("A2A 0.3 has no tenants", "tenant")
        return r

    ns["_s_PushNotificationConfig"] = lambda d: s_inner(d, None)

    def u_inner_only(o: m.TaskPushNotificationConfig) -> dict[str, Any]:
        # Inside a send configuration the task does not exist yet.
        return u_inner(o)

    ns["_u_PushNotificationConfig"] = u_inner_only

    def s_config(d: Any) -> m.TaskPushNotificationConfig:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (TaskPushNotificationConfig), got {type_name(d)}")
        inner = d.get("pushNotificationConfig")
        if inner is None:
            raise Fail("required field missing", "pushNotificationConfig")
        if http:
            name = d.get("name")
            task_id = cfg_id = None
            if name is not None and name != "":
                if name.__class__ is not str:
                    raise Fail(f"expected a string, got {type_name(name)}", "name")
                parts = name.split("/")
                if len(parts) != 4 or parts[0] != "tasks" or parts[2] != "pushNotificationConfigs":
                    raise Fail("expected tasks/{id}/pushNotificationConfigs/{config_id}", "name")
                task_id, cfg_id = parts[1], parts[3]
        else:
            task_id = d.get("taskId")
            if task_id.__class__ is not str or not task_id:
                raise Fail("required field missing" if task_id is None else "expected a non-empty string",
                           "taskId")
            cfg_id = None
        try:
            o = s_inner(inner, task_id)
        except Fail as exc:
            exc.path.append("pushNotificationConfig")
            raise
        if cfg_id and o.id is None:
            set_cfg["id"](o, cfg_id)
        return o

    def u_config(o: m.TaskPushNotificationConfig) -> dict[str, Any]:
        inner = u_inner(o)
        if http:
            r: dict[str, Any] = {}
            if o.task_id:
                r["name"] = f"tasks/{o.task_id}/pushNotificationConfigs/{o.id or ''}"
            r["pushNotificationConfig"] = inner
            return r
        if not o.task_id:
            lose("required by this dialect (taskId)", "taskId")
        return {"taskId": o.task_id, "pushNotificationConfig": inner}

    ns["_s_TaskPushNotificationConfig"], ns["_u_TaskPushNotificationConfig"] = s_config, u_config
    ns["_s_AuthenticationInfo"], ns["_u_AuthenticationInfo"] = s_auth, u_auth

    if not http:
        set_list = slot_setters(m.ListTaskPushNotificationConfigsResponse)

        def s_list(d: Any) -> m.ListTaskPushNotificationConfigsResponse:
            configs = ns["_list"](s_config, d)
            o: Any = new(m.ListTaskPushNotificationConfigsResponse)
            set_list["configs"](o, configs)
            set_list["next_page_token"](o, None)
            return o  # type: ignore[no-any-return]

        def u_list(o: m.ListTaskPushNotificationConfigsResponse) -> list[Any]:
            if o.next_page_token:
                lose("0.3 push-config lists have no pagination", "nextPageToken")
            return [u_config(c) for c in o.configs]

        ns["_s_ListTaskPushNotificationConfigsResponse"] = s_list
        ns["_u_ListTaskPushNotificationConfigsResponse"] = u_list


def _install_send_configuration(ns: Namespace, *, http: bool) -> None:
    new = object.__new__
    set_conf = slot_setters(m.SendMessageConfiguration)
    str_list, int32 = ns["_str_list"], ns["_int32"]
    k_push = "pushNotification" if http else "pushNotificationConfig"

    aliases = {
        "accepted_output_modes": "acceptedOutputModes",
        "history_length": "historyLength",
        "push_notification": "pushNotification",
    }
    alias_keys = frozenset(aliases)

    def s_conf(d: Any) -> m.SendMessageConfiguration:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (configuration), got {type_name(d)}")
        if http and not alias_keys.isdisjoint(d):
            d = ns["_unalias"](d, aliases)
        modes = d.get("acceptedOutputModes")
        try:
            modes = str_list(modes) if modes is not None else ()
        except Fail as exc:
            exc.path.append("acceptedOutputModes")
            raise
        blocking = d.get("blocking")
        if blocking is not None and blocking is not True and blocking is not False:
            raise Fail(f"expected a boolean, got {type_name(blocking)}", "blocking")
        history = d.get("historyLength")
        if history is not None:
            try:
                history = int32(history)
            except Fail as exc:
                exc.path.append("historyLength")
                raise
            if history < 0:
                raise Fail("must not be negative", "historyLength")
            if http and history == 0:
                history = None
        push = d.get(k_push)
        if push is not None:
            try:
                push = ns["_s_PushNotificationConfig"](push)
            except Fail as exc:
                exc.path.append(k_push)
                raise
        o: Any = new(m.SendMessageConfiguration)
        set_conf["accepted_output_modes"](o, modes)
        set_conf["task_push_notification_config"](o, push)
        set_conf["history_length"](o, history)
        # 0.3 JSON-RPC's default was non-blocking only in old drafts; absent
        # means "server default", which 1.0 defines as blocking.
        set_conf["return_immediately"](o, blocking is False)
        return o  # type: ignore[no-any-return]

    def u_conf(o: m.SendMessageConfiguration) -> dict[str, Any]:
        r: dict[str, Any] = {}
        if o.accepted_output_modes:
            r["acceptedOutputModes"] = list(o.accepted_output_modes)
        if o.task_push_notification_config is not None:
            if o.task_push_notification_config.task_id:
                lose("a send configuration's push config has no taskId in 0.3", k_push, "taskId")
            r[k_push] = ns["_u_PushNotificationConfig"](o.task_push_notification_config)
        if o.history_length is not None:
            r["historyLength"] = o.history_length
        r["blocking"] = not o.return_immediately
        return r

    ns["_s_SendMessageConfiguration"], ns["_u_SendMessageConfiguration"] = s_conf, u_conf
