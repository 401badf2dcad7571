"""What each wire dialect can express: the codec's tables, and facts read from them.

This is the public way into the codec's own statement of each dialect, for
:mod:`a2a_models.schema`, the gRPC binding's conversion and the hypothesis
strategies (:mod:`a2a_models.testing.strategies`), so none of them restates it:

* :func:`specs` - the field tables (member names, required, unsupported) the
  decoders and encoders are generated from; :data:`V03_STATES` - the 0.3
  JSON-RPC state spellings; :func:`enum_names` - every dialect's enum spellings;
  :data:`OAUTH_FLOW_CLASSES` - the flow class each ``OAuthFlows`` attribute holds.
* :func:`expresses` - whether a dialect writes a model attribute (from the tables).
* :func:`dialect_facts` - the facts the tables do not hold as one member
  (the oneofs: parts, OAuth flows, cards' interfaces, enums), asked of the
  codec itself by encoding one small probe model each, once per dialect.
* :func:`builder`, :class:`Fail`, :class:`Loss`, :func:`render_path` - the
  generated code's building blocks, for a binding that generates its own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import attrs

from .. import models as m
from .._state import TaskState
from ..errors import DecodeError, EncodeError
from ._gen import ClassSpec, Fail, Field, Kind, Loss, builder, render_path
from ._v03 import V03_STATES
from ._v03 import specs as _v03_specs
from ._v10 import (
    MUST_BE_PRESENT,
    OAUTH_FLOW_CLASSES,
    ONLY_IN_V03,
    PRESENCE_TRACKED,
    REQUIRED_WITH_DEFAULT,
    TABLE_CLASSES,
    build_specs,
    unwrap_optional,
)

__all__ = [
    "DIALECTS",
    "MUST_BE_PRESENT",
    "OAUTH_FLOW_CLASSES",
    "ONLY_IN_V03",
    "PRESENCE_TRACKED",
    "REQUIRED_WITH_DEFAULT",
    "TABLE_CLASSES",
    "V03_STATES",
    "ClassSpec",
    "DialectFacts",
    "Fail",
    "Field",
    "Kind",
    "Loss",
    "builder",
    "dialect_facts",
    "enum_names",
    "expresses",
    "field",
    "has_form",
    "render_path",
    "specs",
    "unexpressible",
    "unwrap_optional",
]

#: The dialects (the values of :class:`a2a_models.codec.Dialect`).
DIALECTS: tuple[str, ...] = ("1.0", "0.3", "0.3-http", "python")


def _name(dialect: Any) -> str:
    name = str(getattr(dialect, "value", dialect))
    if name not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {DIALECTS}")
    return name


@functools.cache
def _specs(dialect: str) -> tuple[ClassSpec, ...]:
    if dialect in ("1.0", "python"):
        return tuple(build_specs(python=dialect == "python"))
    return tuple(_v03_specs(dialect == "0.3-http"))


def specs(dialect: str) -> list[ClassSpec]:
    """The field tables of the table-driven classes of ``dialect`` (what the codec compiles)."""
    return list(_specs(_name(dialect)))


@functools.cache
def _fields(dialect: str) -> dict[type[Any], dict[str, Field]]:
    return {s.cls: {f.attr: f for f in s.fields} for s in _specs(dialect)}


def field(tp: type[Any], attr: str, dialect: str) -> Field | None:
    """The table entry of ``tp.attr`` in ``dialect`` (``None``: not a table-driven class)."""
    return _fields(_name(dialect)).get(tp, {}).get(attr)


@functools.cache
def unexpressible(dialect: str) -> dict[tuple[type[Any], str], str]:
    """(class, attribute) -> why, for every table-driven attribute ``dialect`` cannot write."""
    dialect = _name(dialect)
    out: dict[tuple[type[Any], str], str] = {}
    for spec in _specs(dialect):
        written = {f.attr for f in spec.fields if f.unsupported is None}
        written |= {attr for attr, _ in spec.placeholders}
        why = {f.attr: f.unsupported for f in spec.fields if f.unsupported is not None}
        for a in attrs.fields(spec.cls):
            if a.name not in written:
                out[spec.cls, a.name] = why.get(a.name) or f"A2A {dialect} has no such member"
    return out


def expresses(tp: type[Any], attr: str, dialect: str) -> bool:
    """Whether ``dialect`` writes attribute ``attr`` of the model class ``tp``.

    ``False`` means encoding a non-default value reports an
    :class:`~a2a_models.errors.EncodeError` (or is dropped with ``lossy=True``).
    Answers for the table-driven classes; the oneofs (parts, security
    schemes, flows) are described by :func:`dialect_facts`.
    """
    if attr not in attrs.fields_dict(tp):
        raise AttributeError(f"{tp.__name__} has no attribute {attr!r}")
    return (tp, attr) not in unexpressible(_name(dialect))


def enum_names(dialect: str) -> tuple[dict[TaskState, str], dict[m.Role, str]]:
    """How ``dialect`` spells each task state and role; a member it cannot write is missing."""
    from ._converters import Dialect
    from ._converters import enum_names as names

    return names(Dialect(_name(dialect)))


def has_form(tp: Any, dialect: str) -> bool:
    """Whether ``dialect`` has a standalone wire form for ``tp`` (ListTasks is 1.0-only)."""
    from . import _hook_name  # the codec's own naming of union and oneof types
    from ._converters import Dialect, get_namespace

    return f"_s_{_hook_name(tp)}" in get_namespace(Dialect(_name(dialect)), False)


# --------------------------------------------------------------------------- oneof facts


@dataclass(frozen=True)
class DialectFacts:
    """What a dialect can express where its tables hold no single member for it.

    Each flag is measured on the codec (one probe model encoded and decoded
    back), so it cannot drift from what the encoders and decoders do.
    """

    name: str
    #: OAuthFlows: how many flows one scheme may hold, at least and at most.
    min_flows: int
    max_flows: int
    #: The device-code flow exists.
    device_code: bool
    #: ``DataPart.data`` may be any JSON value (else only an object).
    data_any: bool
    #: Parts carry ``metadata``.
    part_metadata: bool
    #: Text and data parts carry ``filename``/``media_type``.
    part_extras: bool
    #: ``FilePart.filename``.
    file_name: bool
    #: A card's interfaces share one ``protocolVersion`` starting with ``"0."``.
    shared_protocol_version: bool
    #: ``AgentExtension.uri``, ``ImplicitOAuthFlow.authorization_url`` and
    #: ``PasswordOAuthFlow.token_url`` must be set (0.3's schema requires them).
    v03_required_urls: bool
    #: Plain proto3 scalars: ``0`` (and for plain bools ``False``) read back as unset.
    proto3_plain: bool
    #: Ids written inside resource names (``tasks/{id}``) cannot contain ``/``.
    resource_names: bool
    #: ``Role.UNSPECIFIED`` / ``TaskState.UNSPECIFIED`` are written.
    unspecified_role: bool
    unspecified_state: bool
    #: A push config inside a send configuration has no ``task_id`` (0.3 nests
    #: a bare PushNotificationConfig).
    nested_push_without_task: bool
    #: A standalone push config needs a ``task_id``.
    push_needs_task: bool
    #: Optional strings may be ``""`` and read back as ``""`` (not as unset).
    empty_strings: bool


def _round_trips(value: Any, dialect: str, as_type: Any = None) -> bool:
    from . import from_wire, to_wire

    tp = as_type if as_type is not None else type(value)
    try:
        return bool(from_wire(tp, to_wire(value, dialect, as_type=as_type), dialect) == value)
    except (EncodeError, DecodeError):
        return False


_SCOPES = {"read": "read things"}
_FLOWS: tuple[tuple[str, Any], ...] = (
    ("authorization_code", lambda: m.AuthorizationCodeOAuthFlow(
        authorization_url="https://a", token_url="https://t", scopes=_SCOPES)),
    ("client_credentials", lambda: m.ClientCredentialsOAuthFlow(
        token_url="https://t", scopes=_SCOPES)),
    ("implicit", lambda: m.ImplicitOAuthFlow(authorization_url="https://a", scopes=_SCOPES)),
    ("password", lambda: m.PasswordOAuthFlow(token_url="https://t", scopes=_SCOPES)),
    ("device_code", lambda: m.DeviceCodeOAuthFlow(
        device_authorization_url="https://d", token_url="https://t", scopes=_SCOPES)),
)  # fmt: skip


def _message(**kw: Any) -> m.Message:
    return m.Message(
        role=kw.pop("role", m.Role.USER),
        parts=kw.pop("parts", (m.Part.text("x"),)),
        message_id="m",
        context_id=kw.pop("context_id", "c"),
        **kw,
    )


def _card(versions: tuple[str, ...]) -> m.AgentCard:
    return m.AgentCard(
        name="a",
        description="d",
        version="1",
        supported_interfaces=tuple(
            m.AgentInterface(url=f"https://a/{i}", protocol_binding="JSONRPC", protocol_version=v)
            for i, v in enumerate(versions)
        ),
        skills=(m.AgentSkill(id="s", name="s", description="d", tags=("t",)),),
    )


@functools.cache
def dialect_facts(dialect: str) -> DialectFacts:
    """The oneof and enum facts of ``dialect``, measured on the codec (cached)."""
    d = _name(dialect)
    flows = [make() for _, make in _FLOWS]
    counts = [
        n
        for n in range(len(flows) + 1)
        if _round_trips(
            m.OAuthFlows(**dict(zip([k for k, _ in _FLOWS], flows[:n], strict=False))), d
        )
    ]
    push = m.TaskPushNotificationConfig(url="https://hook", task_id="t")
    nested = m.SendMessageConfiguration(task_push_notification_config=push)
    return DialectFacts(
        name=d,
        min_flows=min(counts),
        max_flows=max(counts),
        device_code=_round_trips(m.OAuthFlows(device_code=flows[-1]), d),
        data_any=_round_trips(m.DataPart(data=[1]), d, m.Part),
        part_metadata=_round_trips(m.TextPart(text="x", metadata={"k": 1}), d, m.Part),
        part_extras=_round_trips(m.TextPart(text="x", filename="f"), d, m.Part),
        file_name=_round_trips(m.FilePart(url="https://f", filename="f"), d, m.Part),
        shared_protocol_version=not _round_trips(_card(("0.3", "0.2")), d),
        v03_required_urls=not any(
            _round_trips(value, d)
            for value in (
                m.AgentExtension(uri=None),
                m.OAuthFlows(implicit=m.ImplicitOAuthFlow(scopes=_SCOPES)),
                m.OAuthFlows(password=m.PasswordOAuthFlow(scopes=_SCOPES)),
            )
        ),
        proto3_plain=not _round_trips(m.GetTaskRequest(id="t", history_length=0), d),
        resource_names=not _round_trips(m.GetTaskRequest(id="a/b"), d),
        unspecified_role=_round_trips(_message(role=m.Role.UNSPECIFIED), d),
        unspecified_state=_round_trips(m.TaskStatus(state=TaskState.UNSPECIFIED), d),
        nested_push_without_task=not _round_trips(nested, d),
        push_needs_task=not _round_trips(m.TaskPushNotificationConfig(url="https://hook"), d),
        empty_strings=_round_trips(_message(context_id=""), d),
    )
