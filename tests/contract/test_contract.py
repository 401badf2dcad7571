"""Contract: what the codec writes is valid per the upstream schemas *and* our own.

For every model type and union, in every JSON dialect, Hypothesis generates
values (``a2a_models.testing.strategies``, with the matching dialect), the
codec encodes them, and the JSON must validate against

(a) the upstream schema of that dialect:

    * ``"1.0"`` - the ProtoJSON schema derived from the normative 1.0 proto
      (``protoschema.validator_for("1.0", <message>)``);
    * ``"0.3"`` - the 0.3 JSON Schema (``a2a.json``, draft-07), the normative
      source of the 0.3 JSON-RPC shapes, at the definition our class maps to
      (``SendMessageRequest`` → ``MessageSendParams``, ...);
    * ``"0.3-http"`` - the ProtoJSON schema derived from the 0.3 proto
      (``protoschema.validator_for("0.3", <message>)``);

    each with unknown members forbidden, so the codec cannot slip in a member
    the spec does not define (the upstream schemas themselves allow them);

(b) this project's own schema (``a2a_models.schema.validate_wire``, strict).

Where upstream and the codec genuinely disagree, ``KNOWN_DISAGREEMENTS`` keeps
the property tests on the agreed part of the value space, and
``test_known_disagreement`` pins a minimal example as ``xfail(strict=True)``:
it starts passing (and so failing, until its entry is removed) when the codec
is fixed, either by writing valid JSON or by refusing with an EncodeError.
Fixed ones move to ``REFUSED`` (the codec must keep refusing them).
``OWN_SCHEMA_BUGS`` lists what the project's own schema gets wrong (reported;
pinned in ``test_own_schema.py``): only the own-schema check skips those values.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from a2a_models import codec, schema
from a2a_models import models as m
from a2a_models.codec._converters import get_namespace
from a2a_models.errors import DecodeError, EncodeError, InvalidModelError
from a2a_models.testing import strategies as a2a_st

from . import protoschema

DIALECTS = ("1.0", "0.3", "0.3-http")
UNIONS = (m.StreamResponse, m.SendMessageResponse)

# --------------------------------------------------------------------------- upstream targets

#: Our type -> its definition in the 0.3 JSON Schema (a JSON pointer under the root).
UPSTREAM_0_3_JSON: dict[Any, str] = {
    m.TextPart: "definitions/TextPart",
    m.FilePart: "definitions/FilePart",
    m.DataPart: "definitions/DataPart",
    m.Part: "definitions/Part",
    m.Message: "definitions/Message",
    m.Artifact: "definitions/Artifact",
    m.TaskStatus: "definitions/TaskStatus",
    m.Task: "definitions/Task",
    m.TaskStatusUpdateEvent: "definitions/TaskStatusUpdateEvent",
    m.TaskArtifactUpdateEvent: "definitions/TaskArtifactUpdateEvent",
    m.AuthenticationInfo: "definitions/PushNotificationAuthenticationInfo",
    m.TaskPushNotificationConfig: "definitions/TaskPushNotificationConfig",
    m.AuthorizationCodeOAuthFlow: "definitions/AuthorizationCodeOAuthFlow",
    m.ClientCredentialsOAuthFlow: "definitions/ClientCredentialsOAuthFlow",
    m.ImplicitOAuthFlow: "definitions/ImplicitOAuthFlow",
    m.PasswordOAuthFlow: "definitions/PasswordOAuthFlow",
    m.OAuthFlows: "definitions/OAuthFlows",
    m.APIKeySecurityScheme: "definitions/APIKeySecurityScheme",
    m.HTTPAuthSecurityScheme: "definitions/HTTPAuthSecurityScheme",
    m.OAuth2SecurityScheme: "definitions/OAuth2SecurityScheme",
    m.OpenIdConnectSecurityScheme: "definitions/OpenIdConnectSecurityScheme",
    m.MutualTlsSecurityScheme: "definitions/MutualTLSSecurityScheme",
    m.SecurityScheme: "definitions/SecurityScheme",
    # No definition of its own: the item schema of AgentCard.security.
    m.SecurityRequirement: "definitions/AgentCard/properties/security/items",
    m.AgentProvider: "definitions/AgentProvider",
    m.AgentExtension: "definitions/AgentExtension",
    m.AgentCapabilities: "definitions/AgentCapabilities",
    m.AgentSkill: "definitions/AgentSkill",
    m.AgentCardSignature: "definitions/AgentCardSignature",
    m.AgentCard: "definitions/AgentCard",
    m.SendMessageConfiguration: "definitions/MessageSendConfiguration",
    m.SendMessageRequest: "definitions/MessageSendParams",
    m.GetTaskRequest: "definitions/TaskQueryParams",
    m.CancelTaskRequest: "definitions/TaskIdParams",
    m.SubscribeToTaskRequest: "definitions/TaskIdParams",
    m.GetTaskPushNotificationConfigRequest: "definitions/GetTaskPushNotificationConfigParams",
    m.DeleteTaskPushNotificationConfigRequest: "definitions/DeleteTaskPushNotificationConfigParams",
    m.ListTaskPushNotificationConfigsRequest: "definitions/ListTaskPushNotificationConfigParams",
    # The method results that are not a definition of their own.
    m.ListTaskPushNotificationConfigsResponse: (
        "definitions/ListTaskPushNotificationConfigSuccessResponse/properties/result"
    ),
    m.StreamResponse: "definitions/SendStreamingMessageSuccessResponse/properties/result",
    m.SendMessageResponse: "definitions/SendMessageSuccessResponse/properties/result",
    # agent/getAuthenticatedExtendedCard takes no params: only JSON-RPC's generic rule applies.
    m.GetExtendedAgentCardRequest: "definitions/JSONRPCRequest/properties/params",
}

#: Our type -> 0.3 proto message, where the name differs (otherwise: the codec's name).
UPSTREAM_0_3_PROTO: dict[Any, str] = {
    m.TextPart: "Part",
    m.FilePart: "Part",
    m.DataPart: "Part",
    m.SecurityRequirement: "Security",
    m.SubscribeToTaskRequest: "TaskSubscriptionRequest",
    m.ListTaskPushNotificationConfigsRequest: "ListTaskPushNotificationConfigRequest",
    m.ListTaskPushNotificationConfigsResponse: "ListTaskPushNotificationConfigResponse",
    m.GetExtendedAgentCardRequest: "GetAgentCardRequest",
}

#: Types the codec has no standalone form for (they only occur nested, or not at all).
NO_FORM: dict[str, frozenset[Any]] = {
    "1.0": frozenset(),
    "0.3": frozenset(
        {m.AgentInterface, m.DeviceCodeOAuthFlow, m.ListTasksRequest, m.ListTasksResponse}
    ),
    "0.3-http": frozenset(
        {m.AgentInterface, m.DeviceCodeOAuthFlow, m.ListTasksRequest, m.ListTasksResponse}
    ),
}


def _codec_name(tp: Any) -> str:
    return codec._hook_name(tp)


def _codec_has_form(tp: Any, dialect: str) -> bool:
    return f"_u_{_codec_name(tp)}" in get_namespace(codec.Dialect(dialect), False)


def _forbid_unknown(node: Any) -> None:
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            _forbid_unknown(value)
    elif isinstance(node, list):
        for item in node:
            _forbid_unknown(item)


@functools.cache
def _v03_json_document() -> dict[str, Any]:
    path = protoschema.require_spec() / "0.3.0" / "a2a.json"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(document)
    strict = copy.deepcopy(document)
    _forbid_unknown(strict["definitions"])
    return strict


@functools.cache
def _v03_json_validator(pointer: str) -> jsonschema.Draft7Validator:
    document = _v03_json_document()
    return jsonschema.Draft7Validator(
        {"$ref": f"#/{pointer}", "definitions": document["definitions"]}
    )


def upstream_validator(tp: Any, dialect: str) -> Any:
    """The upstream schema validator (unknown members forbidden) of ``tp`` in ``dialect``."""
    if dialect == "1.0":
        return protoschema.validator_for("1.0", _codec_name(tp), strict=True)
    if dialect == "0.3":
        return _v03_json_validator(UPSTREAM_0_3_JSON[tp])
    return protoschema.validator_for(
        "0.3", UPSTREAM_0_3_PROTO.get(tp, _codec_name(tp)), strict=True
    )


def _upstream_error(wire: Any, tp: Any, dialect: str) -> str | None:
    error = jsonschema.exceptions.best_match(upstream_validator(tp, dialect).iter_errors(wire))
    if error is None:
        return None
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"${path}: {error.message}"


def _encode(value: Any, tp: Any, dialect: str) -> Any:
    """The JSON the codec puts on the wire (through bytes, as a peer would see it)."""
    wire = codec.to_wire(value, dialect, as_type=tp if tp in UNIONS else None)
    return codec.loads(codec.dumps(wire))


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or _codec_name(tp)


ALL_TYPES: tuple[Any, ...] = (*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES)
CASES = [
    pytest.param(dialect, tp, id=f"{dialect}-{_name(tp)}")
    for dialect in DIALECTS
    for tp in ALL_TYPES
    if tp not in NO_FORM[dialect]
]

# --------------------------------------------------------------------------- disagreements

#: (dialect, type) -> (values hitting the disagreement, why). The property tests
#: skip those values; ``DISAGREEMENTS`` pins one minimal example of each.
KNOWN_DISAGREEMENTS: dict[tuple[str, Any], tuple[Callable[[Any], bool], str]] = {}


_SKILL = m.AgentSkill(id="s", name="s", description="d", tags=["t"])


def _card(version: str = "1.0", **kw: Any) -> m.AgentCard:
    iface = m.AgentInterface(url="https://a", protocol_binding="JSONRPC", protocol_version=version)
    return m.AgentCard(name="a", description="d", version="1", supported_interfaces=[iface], **kw)


def test_card_without_skills_is_refused() -> None:
    """AgentCard.skills is REQUIRED (proto): a REQUIRED repeated field needs an item (§5.7).

    The model refuses to build such a card, and every decoder refuses one on the
    wire (absent or ``[]``) with the rule in the message.
    """
    with pytest.raises(InvalidModelError, match=r"AgentCard\.skills: .*spec §5\.7"):
        _card(skills=[])
    with pytest.raises(TypeError, match="skills"):
        _card()
    good = codec.to_wire(_card(skills=[_SKILL]), "1.0")
    for dialect in ("1.0", "0.3", "0.3-http"):
        version = "1.0" if dialect == "1.0" else "0.3.0"
        wire = codec.to_wire(_card(version, skills=[_SKILL]), dialect)
        for bad in ({**wire, "skills": []}, {k: v for k, v in wire.items() if k != "skills"}):
            with pytest.raises(DecodeError, match=r"\$\.skills: .*spec §5\.7"):
                codec.from_wire(m.AgentCard, bad, dialect)
    assert codec.from_wire(m.AgentCard, good, "1.0").skills == (_SKILL,)


#: (id, dialect, type, build the minimal value, the disagreement and who is right)
DISAGREEMENTS: list[tuple[str, str, Any, Callable[[], Any], str]] = []

#: (id, dialect, type, build, rule): values the codec once wrote against the
#: upstream schema and now refuses with an EncodeError (formerly DISAGREEMENTS).
REFUSED: list[tuple[str, str, Any, Callable[[], Any], str]] = [
    (
        "1.0-get-push-config-without-id",
        "1.0",
        m.GetTaskPushNotificationConfigRequest,
        lambda: m.GetTaskPushNotificationConfigRequest(task_id="t1"),
        "GetTaskPushNotificationConfigRequest.id is REQUIRED in the 1.0 proto",
    ),
    (
        "0.3-unspecified-role",
        "0.3",
        m.Message,
        lambda: m.Message(role=m.Role.UNSPECIFIED, parts=[m.Part.text("x")], message_id="m1"),
        "the 0.3 JSON Schema's role is 'agent' | 'user'",
    ),
    (
        "0.3-implicit-flow-without-authorization-url",
        "0.3",
        m.ImplicitOAuthFlow,
        lambda: m.ImplicitOAuthFlow(scopes={"read": "r"}),
        "ImplicitOAuthFlow.authorizationUrl is required by the 0.3 JSON Schema",
    ),
    (
        "0.3-password-flow-without-token-url",
        "0.3",
        m.PasswordOAuthFlow,
        lambda: m.PasswordOAuthFlow(scopes={}),
        "PasswordOAuthFlow.tokenUrl is required by the 0.3 JSON Schema",
    ),
    (
        "0.3-extension-without-uri",
        "0.3",
        m.AgentExtension,
        lambda: m.AgentExtension(description="no uri"),
        "AgentExtension.uri is required by the 0.3 JSON Schema",
    ),
    (
        "0.3-http-task-id-with-slash",
        "0.3-http",
        m.GetTaskRequest,
        lambda: m.GetTaskRequest(id="a/b"),
        "an id containing '/' cannot be written into the resource name tasks/{id}",
    ),
    (
        "0.3-http-config-id-with-slash",
        "0.3-http",
        m.DeleteTaskPushNotificationConfigRequest,
        lambda: m.DeleteTaskPushNotificationConfigRequest(task_id="t", id="c/d"),
        "an id containing '/' cannot be written into tasks/{id}/pushNotificationConfigs/{id}",
    ),
]

#: (dialect, type) -> (values hitting it, why): the codec writes what the
#: project's own schema (a2a_models.schema) rejects or has no def for. These are
#: bugs of the schema module (reported); the upstream check still runs on them,
#: and tests/contract/test_own_schema.py pins a minimal example of each.
OWN_SCHEMA_BUGS: dict[str, list[tuple[Callable[[Any, Any], bool], str]]] = {}


def _own_schema_bug(tp: Any, value: Any, dialect: str) -> bool:
    return any(hits(tp, value) for hits, _ in OWN_SCHEMA_BUGS.get(dialect, ()))


# --------------------------------------------------------------------------- tests


def test_cases_cover_every_type_with_a_codec_form() -> None:
    for dialect in DIALECTS:
        without = {tp for tp in ALL_TYPES if not _codec_has_form(tp, dialect)}
        assert without == NO_FORM[dialect], (dialect, without ^ NO_FORM[dialect])
    assert len(CASES) >= 125
    for param in CASES:
        dialect, tp = param.values
        upstream_validator(tp, dialect)  # every case has an upstream target


@pytest.mark.parametrize(("dialect", "tp"), CASES)
@given(data=st.data())
def test_codec_output_matches_upstream_and_own_schema(
    dialect: str, tp: Any, data: st.DataObject
) -> None:
    value = data.draw(a2a_st.strategy_for(tp, dialect), label="value")
    known = KNOWN_DISAGREEMENTS.get((dialect, tp))
    if known is not None:
        assume(not known[0](value))
    wire = _encode(value, tp, dialect)
    error = _upstream_error(wire, tp, dialect)
    assert error is None, f"upstream {dialect} schema rejects the codec's output: {error}\n{wire}"
    if not _own_schema_bug(tp, value, dialect):
        schema.validate_wire(wire, tp, dialect, strict=True)


@pytest.mark.parametrize(
    ("dialect", "tp", "build"),
    [
        pytest.param(dialect, tp, build, id=ident, marks=pytest.mark.xfail(strict=True, reason=why))
        for ident, dialect, tp, build, why in DISAGREEMENTS
    ],
)
def test_known_disagreement(dialect: str, tp: Any, build: Callable[[], Any]) -> None:
    try:
        value = build()
        wire = _encode(value, tp, dialect)
    except (EncodeError, InvalidModelError):
        return  # refusing to build or write the value is a fix too
    assert _upstream_error(wire, tp, dialect) is None
    schema.validate_wire(wire, tp, dialect, strict=True)
    assert codec.from_wire(tp, wire, dialect) == value


@pytest.mark.parametrize(
    ("dialect", "tp", "build"),
    [pytest.param(dialect, tp, build, id=ident) for ident, dialect, tp, build, _ in REFUSED],
)
def test_values_upstream_forbids_are_refused(
    dialect: str, tp: Any, build: Callable[[], Any]
) -> None:
    value = build()
    with pytest.raises(EncodeError):
        _encode(value, tp, dialect)


def test_disagreement_examples_are_otherwise_valid() -> None:
    """Each pinned example breaks exactly the rule it documents: the rest is well formed."""
    unspecified = m.Message(role=m.Role.USER, parts=[m.Part.text("x")], message_id="m1")
    assert _upstream_error(_encode(unspecified, m.Message, "0.3"), m.Message, "0.3") is None
    card = _encode(_card(skills=[_SKILL]), m.AgentCard, "1.0")
    assert _upstream_error(card, m.AgentCard, "1.0") is None
    request = _encode(
        m.GetTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
        m.GetTaskPushNotificationConfigRequest,
        "1.0",
    )
    assert _upstream_error(request, m.GetTaskPushNotificationConfigRequest, "1.0") is None
