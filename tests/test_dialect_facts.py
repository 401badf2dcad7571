"""``codec.expresses``: what each dialect writes, answered from the codec's own tables.

The hypothesis strategies read their per-attribute dialect flags from it, so
the property tests would fail if the answer and the encoders disagreed; these
tests pin the answer against the encoders directly.
"""

from __future__ import annotations

from typing import Any

import pytest

from a2a_models import codec
from a2a_models import models as m
from a2a_models.errors import EncodeError
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
    for dialect in ("1.0", "0.3", "0.3-http", "python"):
        rules = a2a_st._rules(dialect)
        assert rules.tenant is codec.expresses(m.SendMessageRequest, "tenant", dialect)
        assert rules.read_metadata is codec.expresses(m.GetTaskRequest, "metadata", dialect)
        assert rules.multi_scheme is codec.expresses(m.AuthenticationInfo, "other_schemes", dialect)


def test_bad_questions_get_precise_errors() -> None:
    with pytest.raises(AttributeError, match="Task has no attribute 'nope'"):
        codec.expresses(m.Task, "nope", "1.0")
    with pytest.raises(ValueError, match="unknown dialect"):
        codec.expresses(m.Task, "metadata", "2.0")
