"""Every free-form JSON member of every model refuses what JSON cannot hold.

The members are found from the models themselves (the fields whose validator
is a JSON check), so a new ``metadata``/``params``/``data`` field is covered
without editing this file. A value with one poison (NaN, an infinity, a
non-string key, a set, a tuple, a non-JSON object) hidden at any depth of an
otherwise valid JSON value is refused at construction (``InvalidModelError``
naming ``Class.field``) and by the decoders of Python values (``from_dict``,
``from_wire``: ``DecodeError`` with the member's path); the clean value is
accepted and survives the codec unchanged.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.errors import DecodeError, InvalidModelError
from a2a_models.models.rules import json_problem, json_value, optional_json_object
from a2a_models.testing import strategies as a2a_st

# Every test here runs on the pure codec and on the compiled accelerator.
pytestmark = pytest.mark.usefixtures("codec_path")

_JSON_CHECKS = (json_value, optional_json_object)

#: (class, attribute) of every free-form JSON member of the models.
JSON_FIELDS: list[tuple[type[Any], str]] = sorted(
    {
        (cls, a.name)
        for cls in a2a_st.MODEL_TYPES
        if attrs.has(cls)
        for a in attrs.fields(cls)
        if a.validator in _JSON_CHECKS
    },
    key=lambda item: (item[0].__name__, item[1]),
)


def test_the_field_list_is_complete() -> None:
    """The scan finds the members the issue names (metadata everywhere, data, params, header)."""
    names = {f"{cls.__name__}.{attr}" for cls, attr in JSON_FIELDS}
    for expected in (
        "Message.metadata",
        "Task.metadata",
        "Artifact.metadata",
        "TextPart.metadata",
        "DataPart.data",
        "AgentExtension.params",
        "AgentCardSignature.header",
        "SendMessageRequest.metadata",
        "TaskStatusUpdateEvent.metadata",
    ):
        assert expected in names
    assert len(JSON_FIELDS) >= 15


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


_POISONS = st.sampled_from(
    [
        (float("nan"), "is not a JSON number"),
        (float("inf"), "is not a JSON number"),
        (-float("inf"), "is not a JSON number"),
        ({1: "x"}, "keys must be strings"),
        ({None: "x"}, "keys must be strings"),
        ({("a",): 1}, "keys must be strings"),
        ({1, 2}, "set .* is not a JSON value"),
        (("a", 1), "tuple .* is not a JSON value"),
        (b"raw", "bytes .* is not a JSON value"),
        (_Opaque(), "_Opaque <opaque> is not a JSON value"),
        (m.Role.USER, "Role .* is not a JSON value"),
    ]
)


@st.composite
def _poisoned_objects(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A JSON object with one poison somewhere inside, and the expected complaint."""
    poison, problem = draw(_POISONS)
    # A chain of containers down to the poison, each inside valid siblings.
    value: Any = poison
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            siblings = draw(st.lists(a2a_st.json_values(max_leaves=3), max_size=2))
            at = draw(st.integers(0, len(siblings)))
            value = [*siblings[:at], value, *siblings[at:]]
        else:
            siblings_d = draw(a2a_st.json_objects(max_leaves=3))
            key = draw(a2a_st.texts(max_size=6))
            siblings_d.pop(key, None)
            value = {**siblings_d, key: value}
    if value.__class__ is not dict:
        value = {"k": value}
    return value, problem


def _base(cls: type[Any], data: st.DataObject) -> Any:
    return data.draw(a2a_st.strategy_for(cls, "python"), label="base")


@pytest.mark.parametrize(("cls", "attr"), JSON_FIELDS, ids=lambda x: getattr(x, "__name__", x))
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_poison_at_any_depth_is_refused(cls: type[Any], attr: str, data: st.DataObject) -> None:
    base = _base(cls, data)
    bad, problem = data.draw(_poisoned_objects(), label="poisoned")
    assert json_problem(bad) is not None
    with pytest.raises(InvalidModelError, match=rf"{cls.__name__}\.{attr}: .*{problem}"):
        attrs.evolve(base, **{attr: bad})
    # The decoders of Python values refuse it too, naming the member.
    wire = codec.to_dict(base)
    wire[attr] = bad
    with pytest.raises(DecodeError, match=rf"\$\.{attr}: .*{problem}"):
        codec.from_dict(cls, wire)


@pytest.mark.parametrize(("cls", "attr"), JSON_FIELDS, ids=lambda x: getattr(x, "__name__", x))
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_clean_values_are_kept_exactly(cls: type[Any], attr: str, data: st.DataObject) -> None:
    base = _base(cls, data)
    good = data.draw(a2a_st.json_objects(max_leaves=12), label="value")
    assert json_problem(good) is None
    value = attrs.evolve(base, **{attr: good})
    assert getattr(value, attr) == good
    back = codec.from_dict(cls, codec.to_dict(value))
    assert getattr(back, attr) == good


def test_deeply_nested_values_get_a_precise_error() -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidModelError, match="nested too deeply"):
        m.Part.data(deep)


def test_too_deep_counts_objects_and_arrays_without_recursing() -> None:
    from a2a_models.models.rules import MAX_JSON_DEPTH, too_deep

    def nested(depth: int, as_list: bool = False) -> Any:
        value: Any = "x"
        for _ in range(depth):
            value = [value] if as_list else {"a": value}
        return value

    for as_list in (False, True):
        assert not too_deep(nested(MAX_JSON_DEPTH, as_list))
        assert too_deep(nested(MAX_JSON_DEPTH + 1, as_list))
        assert too_deep(nested(100_000, as_list))  # no RecursionError at any depth
    assert not too_deep("x") and not too_deep(None) and not too_deep({})
    assert too_deep({"wide": [1, 2, {"b": nested(MAX_JSON_DEPTH - 2)}]})  # 1 + 1 + 1 + 30
    assert not too_deep({"wide": [1, 2, {"b": nested(MAX_JSON_DEPTH - 3)}]})
