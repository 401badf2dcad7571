"""0.3 field tables (both dialects), the state names and resource-name helpers."""

from __future__ import annotations

from typing import Any

import attrs

from ... import models as m
from ..._state import TaskState
from ...errors import quote_input
from .._gen import (
    ClassSpec,
    Fail,
    Field,
    Kind,
    lose,
    type_name,
    with_model_rules,
)
from .._v10 import camel

__all__ = ["V03_STATES", "check_str", "parse_resource", "resource_name", "specs"]

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


def specs(http: bool) -> list[ClassSpec]:
    """Field tables of the table-driven classes of one 0.3 dialect."""
    # ProtoJSON: "" / 0 / false / [] mean unset; JSON-RPC keeps them.
    pj: dict[str, Any] = {"empty_is_unset": True} if http else {}
    req: dict[str, Any] = {"required": True, "always": True}
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
                _f(
                    "security_schemes",
                    Kind(
                        decode="_map(_s_SecurityScheme, {})", encode="_umap(_u_SecurityScheme, {})"
                    ),
                ),
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
                _f("scopes", _STRMAP, required=not http, always=True),
                _f("refresh_url", **pj),
                _no("pkce_required", "A2A 0.3 has no pkceRequired"),
            ),
        ),
        ClassSpec(
            m.ClientCredentialsOAuthFlow,
            (
                _f("token_url", **req),
                _f("scopes", _STRMAP, required=not http, always=True),
                _f("refresh_url", **pj),
            ),
        ),
        ClassSpec(
            m.ImplicitOAuthFlow,
            (
                _f("authorization_url", always=not http, **pj),
                _f("scopes", _STRMAP, always=True),
                _f("refresh_url", **pj),
            ),
        ),
        ClassSpec(
            m.PasswordOAuthFlow,
            (
                _f("token_url", always=not http, **pj),
                _f("scopes", _STRMAP, always=True),
                _f("refresh_url", **pj),
            ),
        ),
    ]
    # Security schemes: JSON-RPC tags them with "type", ProtoJSON wraps them.
    scheme_tables = {
        m.APIKeySecurityScheme: (
            "apiKey",
            (
                _f("description", **pj),
                _f("location", wire="location" if http else "in", **req),
                _f("name", **req),
            ),
        ),
        m.HTTPAuthSecurityScheme: (
            "http",
            (_f("description", **pj), _f("scheme", **req), _f("bearer_format", **pj)),
        ),
        m.OAuth2SecurityScheme: (
            "oauth2",
            (
                _f("description", **pj),
                _f("flows", _obj("OAuthFlows"), required=True, always=True),
                _f("oauth2_metadata_url", **pj),
            ),
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
                (_f("id", **req), _f("history_length", _INT), _f("metadata", _OBJ), no_tenant),
            ),
            ClassSpec(m.CancelTaskRequest, (_f("id", **req), _f("metadata", _OBJ), no_tenant)),
            ClassSpec(m.SubscribeToTaskRequest, (_f("id", **req), _f("metadata", _OBJ), no_tenant)),
            ClassSpec(
                m.GetTaskPushNotificationConfigRequest,
                (
                    _f("task_id", wire="id", **req),
                    _f("id", wire="pushNotificationConfigId"),
                    _f("metadata", _OBJ),
                    no_tenant,
                ),
            ),
            ClassSpec(
                m.DeleteTaskPushNotificationConfigRequest,
                (
                    _f("task_id", wire="id", **req),
                    _f("id", wire="pushNotificationConfigId", **req),
                    _f("metadata", _OBJ),
                    no_tenant,
                ),
            ),
            ClassSpec(
                m.ListTaskPushNotificationConfigsRequest,
                (
                    _f("task_id", wire="id", **req),
                    _f("metadata", _OBJ),
                    no_tenant,
                    _no("page_size", "0.3 push-config lists have no pagination"),
                    _no("page_token", "0.3 push-config lists have no pagination"),
                ),
            ),
        ]
    else:
        specs += [
            ClassSpec(
                m.GetTaskRequest,
                (
                    _f("id", wire="name", kind=_resource("tasks"), **req),
                    _f("history_length", _INT, **pj),
                    _no("metadata", "no metadata in 0.3 REST"),
                    no_tenant,
                ),
            ),
            ClassSpec(
                m.CancelTaskRequest,
                (
                    _f("id", wire="name", kind=_resource("tasks"), **req),
                    _no("metadata", "no metadata in 0.3 REST"),
                    no_tenant,
                ),
            ),
            ClassSpec(
                m.SubscribeToTaskRequest,
                (
                    _f("id", wire="name", kind=_resource("tasks"), **req),
                    _no("metadata", "no metadata in 0.3 REST"),
                    no_tenant,
                ),
            ),
            ClassSpec(
                m.ListTaskPushNotificationConfigsRequest,
                (
                    _f("task_id", wire="parent", kind=_resource("tasks"), **req),
                    _f("page_size", _INT, **pj),
                    _f("page_token", **pj),
                    _no("metadata", "no metadata in 0.3 REST"),
                    no_tenant,
                ),
            ),
            ClassSpec(
                m.ListTaskPushNotificationConfigsResponse,
                (
                    _f("configs", _objs("TaskPushNotificationConfig"), **pj),
                    _f("next_page_token", **pj),
                ),
            ),
        ]
    if http:
        # ProtoJSON parsers accept proto field names too (message_id, context_id, ...).
        # The 0.3 proto's own names where they are not the member's (json_name).
        proto_names = {
            (m.Message, "parts"): "content",
            (m.SendMessageRequest, "message"): "request",
            (m.TaskStatus, "message"): "update",
        }
        specs = [
            attrs.evolve(
                spec,
                aliases=tuple(
                    (name, f.wire)
                    for f in spec.fields
                    if f.unsupported is None
                    and (name := proto_names.get((spec.cls, f.attr), f.attr)) != f.wire
                ),
            )
            for spec in specs
        ]
    return [with_model_rules(spec) for spec in specs]


def _resource(collection: str) -> Kind:
    """A ``tasks/{id}`` resource name <-> the bare id."""
    return Kind(decode=f"_res({{}}, {collection!r})", encode=f"_res_name({{}}, {collection!r})")


def resource_name(value: str, collection: str) -> str:
    if "/" in value:
        # tasks/a/b would name another resource: refuse rather than mislead.
        lose(f"an id containing '/' cannot be written in a resource name: {value!r}")
    return f"{collection}/{value}"


def parse_resource(value: Any, collection: str) -> str:
    if value.__class__ is not str:
        raise Fail(f"expected a resource name string, got {type_name(value)}")
    prefix = collection + "/"
    if not value.startswith(prefix) or "/" in value[len(prefix) :] or len(value) == len(prefix):
        raise Fail(f"expected a resource name like {prefix}<id>, got {quote_input(value)}")
    return value[len(prefix) :]


def check_str(value: Any, *path: str | int) -> None:
    """Fail unless ``value`` is ``None`` or a string."""
    if value is not None and value.__class__ is not str:
        raise Fail(f"expected a string, got {type_name(value)}", *path)
