"""One table of dialect facts: the codec's, read by the strategies and the schemas.

``codec.facts`` answers what each dialect writes (from the codec's tables) and
the oneof facts (measured on the codec). The strategies and ``schema`` read
them; these tests pin the answers against the encoders, check that the
schemas say the same, and that every model rule is enforced on decode.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.codec import facts
from a2a_models.errors import DecodeError, EncodeError, InvalidModelError
from a2a_models.models import rules
from a2a_models.schema import json_schema
from a2a_models.testing import strategies as a2a_st

CASES: list[tuple[Any, str, Any, dict[str, bool]]] = [
    (
        m.GetTaskRequest,
        "metadata",
        lambda: m.GetTaskRequest(id="t", metadata={"a": 1}),
        {"1.0": False, "0.3": True, "0.3-http": False, "python": True},
    ),
    (
        m.SendMessageRequest,
        "tenant",
        lambda: m.SendMessageRequest(
            message=m.Message(role=m.Role.USER, parts=[m.Part.text("x")], message_id="m1"),
            tenant="acme",
        ),
        {"1.0": True, "0.3": False, "0.3-http": False, "python": True},
    ),
    (
        m.AgentCapabilities,
        "state_transition_history",
        lambda: m.AgentCapabilities(state_transition_history=True),
        {"1.0": False, "0.3": True, "0.3-http": False, "python": True},
    ),
    (
        m.Message,
        "reference_task_ids",
        lambda: m.Message(
            role=m.Role.USER,
            parts=[m.Part.text("x")],
            message_id="m1",
            context_id="c",
            reference_task_ids=["t1"],
        ),
        {"1.0": True, "0.3": True, "0.3-http": False, "python": True},
    ),
]


@pytest.mark.parametrize(
    ("tp", "attr", "build", "answers"),
    CASES,
    ids=lambda x: getattr(x, "__name__", x if isinstance(x, str) else ""),
)
def test_expresses_agrees_with_the_encoders(
    tp: Any, attr: str, build: Any, answers: dict[str, bool]
) -> None:
    value = build()
    for dialect, written in answers.items():
        assert codec.expresses(tp, attr, dialect) is written, dialect
        if dialect == "python":
            assert codec.from_dict(tp, codec.to_dict(value)) == value
        elif written:
            assert codec.decode(tp, codec.encode(value, dialect), dialect) == value
        else:
            with pytest.raises(EncodeError):
                codec.encode(value, dialect)


def test_strategy_flags_come_from_the_codec() -> None:
    # The strategies' rules hold no flag of their own: only the dialect name and
    # the facts measured on the codec; every other answer asks the codec's tables.
    assert {f.name for f in dataclasses.fields(a2a_st._rules("1.0"))} == {"name", "measured"}
    for dialect in a2a_st.DIALECTS:
        rules = a2a_st._rules(dialect)
        assert rules.measured == facts.dialect_facts(dialect)
        assert rules.tenant is codec.expresses(m.SendMessageRequest, "tenant", dialect)
        assert rules.read_metadata is codec.expresses(m.GetTaskRequest, "metadata", dialect)
        assert rules.multi_scheme is codec.expresses(m.AuthenticationInfo, "other_schemes", dialect)
        assert rules.required(m.Task, "context_id") is (dialect == "0.3")


# What the facts should say, written out once here to pin the measurements.
EXPECTED_FACTS = {
    "1.0": dict(min_flows=1, max_flows=1, device_code=True, data_any=True, part_extras=True,
                unspecified_role=True, resource_names=False, proto3_plain=False,
                shared_protocol_version=False, empty_strings=False, push_needs_task=False),
    "0.3": dict(min_flows=0, max_flows=4, device_code=False, data_any=False, part_extras=False,
                unspecified_role=False, resource_names=False, proto3_plain=False,
                shared_protocol_version=True, empty_strings=True, push_needs_task=True),
    "0.3-http": dict(min_flows=0, max_flows=1, device_code=False, data_any=False,
                     part_extras=False, unspecified_role=True, resource_names=True,
                     proto3_plain=True, shared_protocol_version=True, empty_strings=False,
                     push_needs_task=False),
    "python": dict(min_flows=0, max_flows=5, device_code=True, data_any=True, part_extras=True,
                   unspecified_role=True, resource_names=False, proto3_plain=False,
                   shared_protocol_version=False, empty_strings=True, push_needs_task=False),
}  # fmt: skip


@pytest.mark.parametrize("dialect", list(EXPECTED_FACTS))
def test_measured_facts(dialect: str) -> None:
    measured = facts.dialect_facts(dialect)
    assert {k: getattr(measured, k) for k in EXPECTED_FACTS[dialect]} == EXPECTED_FACTS[dialect]


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.3-http"])
def test_schema_agrees_with_the_codec(dialect: str) -> None:
    defs = json_schema(dialect)["$defs"]
    # Types: the schema describes exactly the types the codec has a form for.
    for tp in (m.ListTasksRequest, m.ListTasksResponse, m.DeviceCodeOAuthFlow):
        assert (tp.__name__ in defs) is facts.has_form(tp, dialect), tp
    # Enum spellings.
    states, roles = facts.enum_names(dialect)
    assert defs["TaskState"]["enum"] == list(states.values())
    assert defs["Role"]["enum"] == list(roles.values())
    assert (m.Role.UNSPECIFIED in roles) is facts.dialect_facts(dialect).unspecified_role
    # Members: names, what is required, what must not be empty.
    checked = 0
    for spec in facts.specs(dialect):
        if spec.name and spec.name != spec.cls.__name__:
            continue  # a part of a hand-written form (the 0.3 card): its schema is too
        schema = defs[spec.cls.__name__]
        props, required = schema["properties"], set(schema.get("required", ()))
        by_attr = attrs.fields_dict(spec.cls)
        for f in spec.fields:
            if f.unsupported is not None:
                assert f.wire not in props
                assert not codec.expresses(spec.cls, f.attr, dialect)
                continue
            assert codec.expresses(spec.cls, f.attr, dialect)
            member = props[f.wire]
            # The schema describes what the codec writes: every member it always writes.
            always = f.always or by_attr[f.attr].default is attrs.NOTHING
            assert (f.wire in required) is always, (spec.cls, f.attr)
            checked += 1
            if "pattern" in member:  # timestamps, resource names: the pattern decides
                continue
            floor = member.get("minLength", member.get("minItems", 0))
            refuses_empty = floor == 1 or "" not in member.get("enum", [""])
            assert refuses_empty is rules.must_not_be_empty(by_attr[f.attr]), (spec.cls, f.attr)
    assert checked > 80


def _table_fields() -> list[tuple[str, Any, Any, Any]]:
    out = []
    for dialect in ("1.0", "0.3", "0.3-http"):
        for spec in facts.specs(dialect):
            by_attr = attrs.fields_dict(spec.cls)
            for f in spec.fields:
                a = by_attr[f.attr]
                if f.unsupported is None and _bad_values(a):
                    out.append((dialect, spec, f, a))
    return out


_INTS = (rules.int32, rules.optional_int32)
_JSON = (rules.optional_json_object, rules.json_value)


def _bad_values(a: Any) -> list[Any]:
    """Values the model's rules refuse for attribute ``a`` (empty: none checked here)."""
    checks = rules.validators_of(a)
    if rules.must_not_be_negative(a):
        return [-1, 2**31]
    if any(v in _INTS for v in checks):
        return [2**31, -(2**31) - 1]
    if rules.api_key_location in checks:
        return ["body", ""]
    if any(v in _JSON for v in checks):
        return [{"a": [float("nan")]}, {"a": {1: "b"}}]
    if rules.must_not_be_empty(a):
        return [[]] if "tuple" in str(a.type) else [""]
    return []


@pytest.mark.parametrize(
    ("dialect", "spec", "fld", "attribute"),
    _table_fields(),
    ids=lambda x: x if isinstance(x, str) else getattr(x, "attr", None),
)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_model_rule_is_enforced_on_decode(
    dialect: str, spec: Any, fld: Any, attribute: Any, data: st.DataObject
) -> None:
    # The generated decoders skip the validators; they must refuse what the
    # model's rules refuse, naming the member.
    if not a2a_st.expressible(spec.cls, dialect):
        pytest.skip(f"{spec.cls.__name__} has no standalone {dialect} form")
    value = data.draw(a2a_st.strategy_for(spec.cls, dialect))
    wire = codec.to_wire(value, dialect)
    for bad in _bad_values(attribute):
        with pytest.raises(InvalidModelError):  # the model refuses it ...
            attrs.evolve(value, **{fld.attr: bad})
        if isinstance(value, m.SecurityScheme) and dialect != "0.3":
            # ProtoJSON wraps each scheme: {"apiKeySecurityScheme": {...}}.
            ((key, inner),) = wire.items()
            broken = {key: {**inner, fld.wire: bad}}
        else:
            broken = {**wire, fld.wire: bad}
        with pytest.raises(DecodeError) as info:  # ... and so does the decoder
            codec.from_wire(spec.cls, broken, dialect)
        assert info.value.path.endswith(fld.wire), info.value


def test_bad_questions_get_precise_errors() -> None:
    with pytest.raises(AttributeError, match="Task has no attribute 'nope'"):
        codec.expresses(m.Task, "nope", "1.0")
    with pytest.raises(ValueError, match="unknown dialect"):
        codec.expresses(m.Task, "metadata", "2.0")
