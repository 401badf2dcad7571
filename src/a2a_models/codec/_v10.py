"""The A2A 1.0 dialect (ProtoJSON of ``lf.a2a.v1``) and the snake_case Python-dict form.

Both share one structure; they differ in member names (camelCase vs
snake_case) and in leaf values (RFC 3339 text and base64 vs ``datetime`` and
``bytes``). Most classes are described by tables derived from the models;
the oneofs (Part, SecurityScheme, OAuthFlows, the response unions) and
SecurityRequirement's nested map have hand-written hooks.
"""

from __future__ import annotations

import binascii
import typing
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import attrs

from .. import models as m
from .._state import TaskState
from ._gen import (
    CHECK_JSON,
    ClassSpec,
    Fail,
    Field,
    Kind,
    Loss,
    Namespace,
    builder,
    json_any,
    lose,
    struct,
    type_name,
    unalias,
    with_model_rules,
)

__all__ = ["REQUIRED_WITH_DEFAULT", "build_specs", "camel", "install_oneof_hooks"]


def camel(snake: str) -> str:
    """proto field name -> ProtoJSON ``json_name`` (lowerCamelCase)."""
    head, *rest = snake.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def snake(name: str) -> str:
    """Identity naming for the Python-dict form."""
    return name


#: REQUIRED proto fields that have a Python default and that a decoder must
#: find: inventing them (a fresh message id, default modes) would be wrong.
MUST_BE_PRESENT: frozenset[tuple[type[Any], str]] = frozenset(
    {
        (m.Message, "message_id"),
        (m.Artifact, "artifact_id"),
        (m.AgentInterface, "protocol_version"),
        (m.AgentCard, "capabilities"),
        (m.AgentCard, "default_input_modes"),
        (m.AgentCard, "default_output_modes"),
    }
)

#: REQUIRED proto fields that have a Python default: always written (spec
#: §8.4.1). Those not in MUST_BE_PRESENT may be absent or at their ProtoJSON
#: default on input (``"nextPageToken": ""``, ``"tasks": []``): serializers
#: such as protobuf's omit defaults even of REQUIRED fields.
REQUIRED_WITH_DEFAULT: frozenset[tuple[type[Any], str]] = MUST_BE_PRESENT | frozenset(
    {
        (m.GetTaskPushNotificationConfigRequest, "id"),
        (m.AuthorizationCodeOAuthFlow, "scopes"),
        (m.ClientCredentialsOAuthFlow, "scopes"),
        (m.DeviceCodeOAuthFlow, "scopes"),
        (m.ListTasksResponse, "tasks"),
        (m.ListTasksResponse, "next_page_token"),
        (m.ListTasksResponse, "page_size"),
        (m.ListTasksResponse, "total_size"),
    }
)

#: proto3 ``optional`` fields: presence is tracked, so ``0``/``false``/``""``
#: are real values there, not "unset" (``historyLength: 0`` means no history).
PRESENCE_TRACKED: frozenset[tuple[type[Any], str]] = frozenset(
    {
        (m.SendMessageConfiguration, "history_length"),
        (m.GetTaskRequest, "history_length"),
        (m.ListTasksRequest, "page_size"),
        (m.ListTasksRequest, "history_length"),
        (m.ListTasksRequest, "include_artifacts"),
        (m.AgentCard, "documentation_url"),
        (m.AgentCard, "icon_url"),
        (m.AgentCapabilities, "streaming"),
        (m.AgentCapabilities, "push_notifications"),
        (m.AgentCapabilities, "extended_agent_card"),
    }
)

#: Classes decoded by generated tables, in dependency-free order.
TABLE_CLASSES: tuple[type[Any], ...] = (
    m.TaskStatus,
    m.Message,
    m.Artifact,
    m.Task,
    m.TaskStatusUpdateEvent,
    m.TaskArtifactUpdateEvent,
    m.AuthenticationInfo,
    m.TaskPushNotificationConfig,
    m.AgentInterface,
    m.AgentProvider,
    m.AgentExtension,
    m.AgentCapabilities,
    m.AgentSkill,
    m.AgentCardSignature,
    m.AgentCard,
    m.AuthorizationCodeOAuthFlow,
    m.ClientCredentialsOAuthFlow,
    m.ImplicitOAuthFlow,
    m.PasswordOAuthFlow,
    m.DeviceCodeOAuthFlow,
    m.APIKeySecurityScheme,
    m.HTTPAuthSecurityScheme,
    m.OAuth2SecurityScheme,
    m.OpenIdConnectSecurityScheme,
    m.MutualTlsSecurityScheme,
    m.SendMessageConfiguration,
    m.SendMessageRequest,
    m.GetTaskRequest,
    m.ListTasksRequest,
    m.ListTasksResponse,
    m.CancelTaskRequest,
    m.SubscribeToTaskRequest,
    m.GetTaskPushNotificationConfigRequest,
    m.DeleteTaskPushNotificationConfigRequest,
    m.ListTaskPushNotificationConfigsRequest,
    m.ListTaskPushNotificationConfigsResponse,
    m.GetExtendedAgentCardRequest,
)

#: Attributes that exist only in 0.3: the 1.0 dialect reports them when set.
ONLY_IN_V03: dict[tuple[type[Any], str], str] = {
    (m.TaskStatusUpdateEvent, "final"): "",  # stream closure replaces it: not a loss
    (m.AuthenticationInfo, "other_schemes"): "A2A 1.0 has one authentication scheme",
    (m.AgentCapabilities, "state_transition_history"): (
        "capabilities.stateTransitionHistory was removed in A2A 1.0"
    ),
    (m.GetTaskRequest, "metadata"): "GetTaskRequest has no metadata in A2A 1.0",
    (m.SubscribeToTaskRequest, "metadata"): "SubscribeToTaskRequest has no metadata in A2A 1.0",
    (m.GetTaskPushNotificationConfigRequest, "metadata"): "no metadata in A2A 1.0",
    (m.DeleteTaskPushNotificationConfigRequest, "metadata"): "no metadata in A2A 1.0",
    (m.ListTaskPushNotificationConfigsRequest, "metadata"): "no metadata in A2A 1.0",
}


def _leaf_kinds(python: bool) -> dict[Any, Kind]:
    str_kind = Kind(decode="({0} if {0}.__class__ is str else _bad_str({0}))", empty="''")
    if python:
        ts = Kind(decode="_ts({})")
        raw = Kind(decode="_bytes({})")
    else:
        ts = Kind(decode="_ts({})", encode="_fmt_ts({})")
        raw = Kind(decode="_b64d({})", encode="_b64e({})")
    return {
        str: str_kind,
        bool: Kind(
            decode="({0} if ({0} is True or {0} is False) else _bad_bool({0}))", empty="False"
        ),
        int: Kind(decode="_int32({})", empty="0"),
        datetime: ts,
        bytes: raw,
        "json_object": Kind(decode="_obj({})"),
        "json_value": Kind(),
        # Enum.__hash__ is Python code: key the encode tables by ``_value_``.
        TaskState: Kind(
            decode="_E_TaskState({})", encode="_X_TaskState[{}._value_]", enum="TaskState"
        ),
        m.Role: Kind(decode="_E_Role({})", encode="_X_Role[{}._value_]", enum="Role"),
        "str_list": Kind(decode="_str_list({})", encode="_listify({})", is_list=True, empty="[]"),
    }


def unwrap_optional(tp: Any) -> Any:
    """``X`` for an annotation ``X | None``; any other annotation unchanged."""
    args = typing.get_args(tp)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp


def kind_for(tp: Any, leaves: dict[Any, Kind], name_of: Callable[[type[Any]], str]) -> Kind:
    """The codec kind of an attribute type annotation."""
    tp = unwrap_optional(tp)
    if tp in leaves:
        return leaves[tp]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is tuple:
        item = args[0]
        if item is str:
            return leaves["str_list"]
        n = name_of(item)
        return Kind(
            decode=f"_list(_s_{n}, {{}})",
            encode=f"_ulist(_u_{n}, {{}})",
            is_list=True,
            empty="[]",
            items=n,
        )
    if origin is dict:
        _key, value = args
        if value is str:
            return Kind(decode="_str_map({})")
        if value is typing.Any:
            return leaves["json_object"]
        n = name_of(value)
        return Kind(decode=f"_map(_s_{n}, {{}})", encode=f"_umap(_u_{n}, {{}})")
    if tp is typing.Any:
        return leaves["json_value"]
    if attrs.has(tp):
        n = name_of(tp)
        return Kind(decode=f"_s_{n}({{}})", encode=f"_u_{n}({{}})")
    raise TypeError(f"no codec kind for {tp!r}")


def build_specs(*, python: bool) -> list[ClassSpec]:
    """Field tables for every table-driven class in 1.0 (or the Python-dict form)."""
    leaves = _leaf_kinds(python)
    wire = snake if python else camel
    specs = []
    for cls in TABLE_CLASSES:
        hints = typing.get_type_hints(cls)
        fields = []
        for a in attrs.fields(cls):
            tp = hints[a.name]
            if a.name in ("metadata", "params", "header"):
                kind = leaves["json_object"]
            else:
                kind = kind_for(tp, leaves, lambda c: c.__name__)
            required = a.default is attrs.NOTHING or (cls, a.name) in MUST_BE_PRESENT
            only03 = ONLY_IN_V03.get((cls, a.name))
            unsupported = None
            if only03 is not None and not python:
                # The Python-dict form holds everything the models hold.
                if not only03:
                    continue
                unsupported = only03
            fields.append(
                Field(
                    attr=a.name,
                    wire=wire(a.name),
                    kind=kind,
                    required=required,
                    always=required
                    or ((cls, a.name) in REQUIRED_WITH_DEFAULT and not python)
                    or bool(a.metadata.get("always_emit")),
                    empty_is_unset=not python and (cls, a.name) not in PRESENCE_TRACKED,
                    unsupported=unsupported,
                )
            )
        aliases = (
            ()
            if python
            else tuple(
                (f.attr, f.wire) for f in fields if f.attr != f.wire and f.unsupported is None
            )
        )
        spec = ClassSpec(cls=cls, fields=tuple(fields), name=cls.__name__, aliases=aliases)
        specs.append(with_model_rules(spec))
    return specs


# --------------------------------------------------------------------------- oneof hooks


def inline_part_encoder(
    text: str,
    data: str,
    *,
    text_meta: str | None = None,
    data_guard: str = "",
    keep_empty: bool = False,
) -> Namespace:
    """Namespace entries inlining the encoding of plain text and data parts.

    The arguments are the encoded dict's source with ``{p}`` for the part
    variable: ``text`` for a :class:`~a2a_models.TextPart` without metadata,
    filename or media type, ``text_meta`` (if the dialect has part metadata)
    for one with metadata only, ``data`` for such a
    :class:`~a2a_models.DataPart` (``data_guard``: an extra condition). Those
    shapes, most parts, are then encoded right in the generated list code; any
    other part calls ``_u_Part``, which gives the same result for them.
    """

    def inline(p: str) -> str:
        # keep_empty (the Python-dict form): "" is a value to keep, not "unset".
        bare = (
            f"{p}.filename is None and {p}.media_type is None"
            if keep_empty
            else f"not {p}.filename and not {p}.media_type"
        )
        if text_meta is None:
            text_src = f"{text.format(p=p)} if {p}.__class__ is _TextPart and {p}.metadata is None"
        else:
            text_src = (
                f"({text.format(p=p)} if {p}.metadata is None else {text_meta.format(p=p)})"
                f" if {p}.__class__ is _TextPart"
            )
        return (
            f"({text_src} and {bare}"
            f" else {data.format(p=p)} if {p}.__class__ is _DataPart{data_guard.format(p=p)}"
            f" and {p}.metadata is None and {bare} else _u_Part({p}))"
        )

    return {"_INLINE_u_Part": inline, "_TextPart": m.TextPart, "_DataPart": m.DataPart}


def slot_setters(cls: type[Any]) -> dict[str, Any]:
    """Attribute name -> the slot descriptor's ``__set__`` (bypasses frozen ``__setattr__``)."""
    out = {}
    for a in attrs.fields(cls):
        for klass in cls.__mro__:
            desc = klass.__dict__.get(a.name)
            if desc is not None and hasattr(desc, "__set__"):
                out[a.name] = desc.__set__
                break
    return out


_PART_CONTENT = ("text", "raw", "url", "data")
_SCHEME_KEYS = {
    m.APIKeySecurityScheme: "apiKeySecurityScheme",
    m.HTTPAuthSecurityScheme: "httpAuthSecurityScheme",
    m.OAuth2SecurityScheme: "oauth2SecurityScheme",
    m.OpenIdConnectSecurityScheme: "openIdConnectSecurityScheme",
    m.MutualTlsSecurityScheme: "mtlsSecurityScheme",
}
#: OAuthFlows attribute -> the name of the flow class it holds: 1.0's oneof members, in order.
OAUTH_FLOW_CLASSES: dict[str, str] = {
    "authorization_code": "AuthorizationCodeOAuthFlow",
    "client_credentials": "ClientCredentialsOAuthFlow",
    "implicit": "ImplicitOAuthFlow",
    "password": "PasswordOAuthFlow",
    "device_code": "DeviceCodeOAuthFlow",
}
_STREAM_KEYS = {
    m.Task: "task",
    m.Message: "message",
    m.TaskStatusUpdateEvent: "statusUpdate",
    m.TaskArtifactUpdateEvent: "artifactUpdate",
}


def install_oneof_hooks(ns: Namespace, *, python: bool, strict: bool) -> None:
    """Add the hand-written hooks of the 1.0 oneofs to ``ns``."""
    w = snake if python else camel
    k_text, k_raw, k_url, k_data = "text", "raw", "url", "data"
    k_meta, k_file, k_media = "metadata", "filename", w("media_type")
    raw_dec = ns["_bytes"] if python else ns["_b64d"]
    b2a = binascii.b2a_base64
    part_known = frozenset({k_text, k_raw, k_url, k_data, k_meta, k_file, k_media})
    part_aliases = {"media_type": k_media}
    new = object.__new__
    TextPart, FilePart, DataPart = m.TextPart, m.FilePart, m.DataPart
    # Mutable twins (see _gen.builder): slots filled by plain stores.
    TextB, FileB, DataB = builder(TextPart), builder(FilePart), builder(DataPart)

    checking = CHECK_JSON.get

    def data_of(value: Any) -> Any:
        try:
            return json_any(value)
        except Fail as exc:
            exc.path.append(k_data)
            raise

    def s_part(d: Any) -> m.Part:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (Part), got {type_name(d)}")
        p: Any
        if len(d) == 1:
            # The common cases, a bare {"text": "..."} or {"data": ...}, skip
            # the general checks (which would find nothing else to check).
            text = d.get(k_text)
            if text.__class__ is str:
                p = TextB()
                p.text = text
                p.metadata = p.filename = p.media_type = None
                p.__class__ = TextPart
                return p  # type: ignore[no-any-return]
            if k_data in d:
                p = DataB()
                p.data = d[k_data] if not checking() else data_of(d[k_data])
                p.metadata = p.filename = p.media_type = None
                p.__class__ = DataPart
                return p  # type: ignore[no-any-return]
        g = d.get
        text = g(k_text)
        raw, url = g(k_raw), g(k_url)
        has_data = k_data in d
        if (text is not None) + (raw is not None) + (url is not None) + has_data != 1:
            raise Fail("expected exactly one of text, raw, url, data")
        if not python and "media_type" in d:
            # The proto field name, which ProtoJSON parsers also accept.
            d = unalias(d, part_aliases)
            g = d.get
        meta, filename, media = g(k_meta), g(k_file), g(k_media)
        if meta is not None:
            try:
                meta = struct(meta)
            except Fail as exc:
                exc.path.append(k_meta)
                raise
        if filename is not None and filename.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(filename)}", k_file)
        if media is not None and media.__class__ is not str:
            raise Fail(f"expected a string, got {type_name(media)}", k_media)
        if strict:
            for key in d:
                if key not in part_known:
                    raise Fail("unknown field (strict mode)", key)
        if not python:
            filename = filename or None
            media = media or None
        cls: type[Any]
        if text is not None:
            if text.__class__ is not str:
                raise Fail(f"expected a string, got {type_name(text)}", k_text)
            p = TextB()
            p.text = text
            cls = TextPart
        elif has_data:
            p = DataB()
            p.data = d[k_data] if not checking() else data_of(d[k_data])
            cls = DataPart
        else:
            if raw is not None:
                try:
                    raw = raw_dec(raw)
                except Fail as exc:
                    exc.path.append(k_raw)
                    raise
            elif url.__class__ is not str:
                raise Fail(f"expected a string, got {type_name(url)}", k_url)
            p = FileB()
            p.raw = raw
            p.url = url
            cls = FilePart
        p.metadata = meta
        p.filename = filename
        p.media_type = media
        p.__class__ = cls
        return p  # type: ignore[no-any-return]

    def u_part(p: Any) -> dict[str, Any]:
        cls = p.__class__
        r: dict[str, Any]
        # Exact classes first (the three are siblings: order does not matter).
        if cls is TextPart:
            r = {k_text: p.text}
        elif cls is DataPart:
            r = {k_data: p.data}
        elif cls is FilePart or isinstance(p, FilePart):
            raw = p.raw
            if raw is None:
                r = {k_url: p.url}
            elif python:
                r = {k_raw: raw}
            else:
                r = {k_raw: b2a(raw, newline=False).decode("ascii")}  # = _gen.b64encode
        elif isinstance(p, TextPart):
            r = {k_text: p.text}
        elif isinstance(p, DataPart):
            r = {k_data: p.data}
        else:
            raise Loss(f"unknown Part subclass {type(p).__name__}")
        v = p.metadata
        if v is not None:
            r[k_meta] = v
        v = p.filename
        if v or (python and v is not None):
            r[k_file] = v
        v = p.media_type
        if v or (python and v is not None):
            r[k_media] = v
        return r

    ns["_s_Part"], ns["_u_Part"] = s_part, u_part

    scheme_keys = {
        cls: (w(key) if not python else _to_snake(key)) for cls, key in _SCHEME_KEYS.items()
    }
    by_key = {key: cls for cls, key in scheme_keys.items()}
    scheme_choices = ", ".join(by_key)
    scheme_aliases = {} if python else proto_names(by_key)
    scheme_alias_keys = frozenset(scheme_aliases)

    def s_scheme(d: Any) -> m.SecurityScheme:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (SecurityScheme), got {type_name(d)}")
        if scheme_alias_keys and not scheme_alias_keys.isdisjoint(d):
            d = unalias(d, scheme_aliases)
        present = [k for k in d if k in by_key and d[k] is not None]
        if len(present) != 1 or (strict and len(d) != 1):
            raise Fail(f"expected exactly one of {scheme_choices}")
        key = present[0]
        try:
            return ns[f"_s_{by_key[key].__name__}"](d[key])  # type: ignore[no-any-return]
        except Fail as exc:
            exc.path.append(key)
            raise

    def u_scheme(s: m.SecurityScheme) -> dict[str, Any]:
        key = scheme_keys.get(type(s))
        if key is None:
            raise Loss(f"unknown SecurityScheme subclass {type(s).__name__}")
        return {key: ns[f"_u_{type(s).__name__}"](s)}

    ns["_s_SecurityScheme"], ns["_u_SecurityScheme"] = s_scheme, u_scheme

    flow_keys = {attr: w(attr) for attr in OAUTH_FLOW_CLASSES}
    s_flows_set = slot_setters(m.OAuthFlows)
    flow_choices = ", ".join(flow_keys.values())
    flow_aliases = {} if python else proto_names(flow_keys.values())
    flow_alias_keys = frozenset(flow_aliases)

    def s_flows(d: Any) -> m.OAuthFlows:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (OAuthFlows), got {type_name(d)}")
        if flow_alias_keys and not flow_alias_keys.isdisjoint(d):
            d = unalias(d, flow_aliases)
        o: Any = new(m.OAuthFlows)
        count = 0
        for attr, key in flow_keys.items():
            value = d.get(key)
            if value is not None:
                count += 1
                try:
                    value = ns[f"_s_{OAUTH_FLOW_CLASSES[attr]}"](value)
                except Fail as exc:
                    exc.path.append(key)
                    raise
            s_flows_set[attr](o, value)
        if count != 1 and not python:
            raise Fail(f"expected exactly one of {flow_choices}")
        if strict:
            for key in d:
                if key not in flow_keys.values():
                    raise Fail("unknown field (strict mode)", key)
        return o  # type: ignore[no-any-return]

    def u_flows(o: m.OAuthFlows) -> dict[str, Any]:
        r: dict[str, Any] = {}
        for attr, key in flow_keys.items():
            value = getattr(o, attr)
            if value is not None:
                if r and not python:
                    lose("A2A 1.0 allows exactly one OAuth flow per scheme", key)
                    continue
                r[key] = ns[f"_u_{OAUTH_FLOW_CLASSES[attr]}"](value)
        if not r and not python:
            lose("A2A 1.0 needs exactly one OAuth flow per scheme")
        return r

    ns["_s_OAuthFlows"], ns["_u_OAuthFlows"] = s_flows, u_flows

    s_req = slot_setters(m.SecurityRequirement)
    k_schemes = "schemes"

    def s_requirement(d: Any) -> m.SecurityRequirement:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (SecurityRequirement), got {type_name(d)}")
        schemes = d.get(k_schemes)
        out: dict[str, tuple[str, ...]] = {}
        if schemes is not None:
            if schemes.__class__ is not dict:
                raise Fail(f"expected an object, got {type_name(schemes)}", k_schemes)
            for name, lst in schemes.items():
                if lst.__class__ is not dict:
                    raise Fail(
                        f"expected a StringList object, got {type_name(lst)}", k_schemes, name
                    )
                scopes = lst.get("list")
                if scopes is None:
                    out[name] = ()
                    continue
                try:
                    out[name] = ns["_str_list"](scopes)
                except Fail as exc:
                    exc.path += ["list", name, k_schemes]
                    raise
        o: Any = new(m.SecurityRequirement)
        s_req["schemes"](o, out)
        return o  # type: ignore[no-any-return]

    def u_requirement(o: m.SecurityRequirement) -> dict[str, Any]:
        if not o.schemes:
            return {}
        if python:
            return {k_schemes: {name: {"list": list(s)} for name, s in o.schemes.items()}}
        # ProtoJSON omits an empty repeated field inside the StringList too.
        return {k_schemes: {name: {"list": list(s)} if s else {} for name, s in o.schemes.items()}}

    ns["_s_SecurityRequirement"], ns["_u_SecurityRequirement"] = s_requirement, u_requirement

    stream_keys = {cls: _to_snake(key) if python else key for cls, key in _STREAM_KEYS.items()}
    install_wrapper_union(ns, "StreamResponse", stream_keys, strict=strict, protojson=not python)
    send_keys = {m.Task: stream_keys[m.Task], m.Message: stream_keys[m.Message]}
    install_wrapper_union(ns, "SendMessageResponse", send_keys, strict=strict, protojson=not python)


def _to_snake(camel_name: str) -> str:
    out = []
    for ch in camel_name:
        if ch.isupper():
            out.append("_" + ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def proto_names(wire_names: Iterable[str]) -> dict[str, str]:
    """The proto field names (``status_update``) of camelCase ``wire_names`` that differ.

    ProtoJSON parsers accept both spellings of a member; the hand-written oneof
    hooks pass such input through :func:`~a2a_models.codec._gen.unalias`, which
    also refuses a member given in both spellings (one of them would be lost).
    """
    return {_to_snake(w): w for w in wire_names if _to_snake(w) != w}


def install_wrapper_union(
    ns: Namespace,
    name: str,
    keys: dict[type[Any], str],
    *,
    strict: bool,
    protojson: bool,
    renamed: dict[str, str] | None = None,
) -> None:
    """A oneof wrapper ``{"task": {...}}`` <-> the bare model object.

    ``protojson``: the member names are ProtoJSON ``json_name``s, so their proto
    field names are read too (``renamed``: proto name -> member, where the proto
    gives a ``json_name`` of its own, as 0.3's ``msg`` -> ``message``).
    """
    by_key = {key: cls.__name__ for cls, key in keys.items()}
    choices = ", ".join(by_key)
    aliases = {**proto_names(by_key), **(renamed or {})} if protojson else {}
    alias_keys = frozenset(aliases)

    def structure(d: Any) -> Any:
        if d.__class__ is not dict:
            raise Fail(f"expected an object ({name}), got {type_name(d)}")
        if alias_keys and not alias_keys.isdisjoint(d):
            d = unalias(d, aliases)
        present = [k for k in by_key if d.get(k) is not None]
        if len(present) != 1 or (strict and len(d) != 1):
            raise Fail(f"expected exactly one of {choices}")
        key = present[0]
        try:
            return ns[f"_s_{by_key[key]}"](d[key])
        except Fail as exc:
            exc.path.append(key)
            raise

    def unstructure(o: Any) -> dict[str, Any]:
        key = keys.get(type(o))
        if key is None:
            raise Loss(f"{name} cannot hold a {type(o).__name__}")
        return {key: ns[f"_u_{type(o).__name__}"](o)}

    ns[f"_s_{name}"], ns[f"_u_{name}"] = structure, unstructure
