"""Round trips through every wire dialect, driven by ``a2a_models.testing.strategies``.

For every model type T, union alias and dialect d:
``decode(T, encode(x, d), d)`` is identical to ``x`` (``==`` plus exact JSON
types and key order), ``from_wire(T, to_wire(x, d), d) == x``, and
``from_dict(T, to_dict(x)) == x``.

Dialects whose codec is not written yet raise ``NotImplementedError``; their
tests skip (and switch on by themselves once the dialect lands).

Known codec bugs are listed in ``KNOWN_BUGS``: each has a minimal example run
as a strict xfail (it starts failing loudly once the bug is fixed, so the
entry can be removed) and a ``dodge`` that steers the property tests around
the bug so they keep testing everything else.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.errors import DecodeError, EncodeError, InvalidModelError
from a2a_models.testing import assert_identical, first_difference
from a2a_models.testing import strategies as a2a_st

# Every test here runs on the pure codec and on the compiled accelerator.
pytestmark = pytest.mark.usefixtures("codec_path")

JSON_DIALECTS = ("1.0", "0.3", "0.3-http")
ALL_DIALECTS = (*JSON_DIALECTS, "python")


# --------------------------------------------------------------------------- dialect availability


@functools.cache
def _unavailable_reason(dialect: str) -> str | None:
    """Why ``dialect`` cannot be tested yet (``NotImplementedError`` only), else None."""
    probe = m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING))
    try:
        codec.to_wire(probe, dialect)
    except NotImplementedError as exc:
        return f"dialect {dialect} is not implemented yet ({exc!r})"
    return None


def require(dialect: str) -> None:
    """Skip the current test if ``dialect`` raises NotImplementedError (and only then)."""
    reason = _unavailable_reason(dialect)
    if reason is not None:
        pytest.skip(reason)


# --------------------------------------------------------------------------- round trip helpers


def roundtrip(x: Any, tp: Any, dialect: str) -> Any:
    """Encode ``x`` as ``tp`` in ``dialect`` and decode it again."""
    as_type = tp if tp in a2a_st.UNION_TYPES else None
    if dialect == "python":
        return codec.from_dict(tp, codec.to_dict(x, as_type=as_type))
    return codec.decode(tp, codec.encode(x, dialect, as_type=as_type), dialect)


def _name(tp: Any) -> str:
    return {m.StreamResponse: "StreamResponse", m.SendMessageResponse: "SendMessageResponse"}.get(
        tp, getattr(tp, "__name__", repr(tp))
    )


_JSON_FIELDS = frozenset({"metadata", "data", "params", "header"})


def rebuild(
    x: Any,
    fix_model: Callable[[Any], Any] = lambda o: o,
    fix_json: Callable[[Any], Any] = lambda v: v,
) -> Any:
    """Rebuild a model tree bottom-up, applying ``fix_model`` to every model and
    ``fix_json`` to every free-form JSON payload (metadata, data, params, header)."""
    if isinstance(x, tuple):
        return tuple(rebuild(i, fix_model, fix_json) for i in x)
    if not attrs.has(type(x)):
        return x
    changes = {}
    for a in attrs.fields(type(x)):
        value = getattr(x, a.name)
        if a.name in _JSON_FIELDS and not isinstance(x, m.SecurityRequirement):
            new = fix_json(value)
        elif a.name == "security_schemes":
            new = {k: rebuild(v, fix_model, fix_json) for k, v in value.items()}
        elif isinstance(value, tuple) or attrs.has(type(value)):
            new = rebuild(value, fix_model, fix_json)
        else:
            continue
        if new is not value:
            changes[a.name] = new
    if changes:
        x = attrs.evolve(x, **changes)
    return fix_model(x)


def map_json(value: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every scalar of a JSON value (keys and order kept)."""
    if isinstance(value, dict):
        return {k: map_json(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [map_json(v, fn) for v in value]
    return fn(value)


# --------------------------------------------------------------------------- known bugs


@dataclass(frozen=True)
class KnownBug:
    """A codec bug found by these tests (reported; the codec is not ours to edit)."""

    id: str
    dialects: frozenset[str]
    reason: str
    #: (type, value): the minimal value whose round trip fails.
    example: Callable[[], tuple[Any, Any]]
    #: Rewrites generated values so the property tests step around the bug.
    dodge_model: Callable[[Any], Any] = lambda o: o
    dodge_json: Callable[[Any], Any] = lambda v: v
    #: (type, dialect) pairs whose property test cannot dodge it: strict xfail.
    unavoidable: frozenset[tuple[Any, str]] = field(default_factory=frozenset)


_TASK = m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING))


KNOWN_BUGS: tuple[KnownBug, ...] = ()


def _bugs_for(dialect: str) -> list[KnownBug]:
    return [b for b in KNOWN_BUGS if dialect in b.dialects]


def dodge_known_bugs(x: Any, dialect: str) -> Any:
    for bug in _bugs_for(dialect):
        x = rebuild(x, bug.dodge_model, bug.dodge_json)
    return x


# --------------------------------------------------------------------------- the matrix


def _matrix(dialects: tuple[str, ...], *, python_form: bool = False) -> list[Any]:
    """(type, dialect) params; ``python_form``: the values go through to_dict, not the dialect."""
    params = []
    for dialect in dialects:
        for tp in (*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES):
            if not a2a_st.expressible(tp, dialect):
                continue
            marks = []
            for bug in KNOWN_BUGS:
                if (tp, "python" if python_form else dialect) in bug.unavoidable:
                    marks.append(pytest.mark.xfail(strict=True, reason=bug.reason))
            params.append(pytest.param(tp, dialect, id=f"{dialect}-{_name(tp)}", marks=marks))
    return params


@pytest.mark.parametrize(("tp", "dialect"), _matrix(ALL_DIALECTS))
@given(data=st.data())
def test_roundtrip(tp: Any, dialect: str, data: st.DataObject) -> None:
    require(dialect)
    x = dodge_known_bugs(data.draw(a2a_st.strategy_for(tp, dialect), label="value"), dialect)
    as_type = tp if tp in a2a_st.UNION_TYPES else None
    if dialect == "python":
        wire = codec.to_dict(x, as_type=as_type)
        assert_identical(codec.from_dict(tp, wire), x)
        return
    encoded = codec.encode(x, dialect, as_type=as_type)
    assert isinstance(encoded, bytes)
    back = codec.decode(tp, encoded, dialect)
    assert back == x
    assert_identical(back, x)
    # The parsed-value API agrees with the bytes API.
    wire = codec.to_wire(x, dialect, as_type=as_type)
    assert first_difference(codec.loads(encoded), wire) is None
    assert codec.from_wire(tp, wire, dialect) == x
    # Text input decodes like bytes.
    assert codec.decode(tp, encoded.decode("utf-8"), dialect) == x


@pytest.mark.parametrize(("tp", "dialect"), _matrix(JSON_DIALECTS, python_form=True))
@given(data=st.data())
def test_to_dict_roundtrip_of_dialect_values(tp: Any, dialect: str, data: st.DataObject) -> None:
    """Every value a wire dialect can carry also survives the Python-dict form."""
    x = dodge_known_bugs(data.draw(a2a_st.strategy_for(tp, dialect), label="value"), "python")
    as_type = tp if tp in a2a_st.UNION_TYPES else None
    assert_identical(codec.from_dict(tp, codec.to_dict(x, as_type=as_type)), x)


@pytest.mark.parametrize(
    ("bug", "dialect"),
    [
        pytest.param(b, d, id=f"{d}-{b.id}")
        for b in KNOWN_BUGS
        for d in ALL_DIALECTS
        if d in b.dialects
    ],
)
def test_known_bug_example(bug: KnownBug, dialect: str, request: pytest.FixtureRequest) -> None:
    """The minimal example of each known bug (strict xfail: fix the codec, then drop the entry)."""
    require(dialect)
    request.applymarker(pytest.mark.xfail(strict=True, reason=bug.reason))
    tp, x = bug.example()
    assert_identical(roundtrip(x, tp, dialect), x)


def test_known_bug_dodges_are_complete() -> None:
    """The dodges really avoid their bug (else the property tests would be flaky)."""
    for bug in KNOWN_BUGS:
        tp, x = bug.example()
        dodged = rebuild(x, bug.dodge_model, bug.dodge_json)
        for dialect in bug.dialects:
            if (tp, dialect) in bug.unavoidable:
                continue
            if _unavailable_reason(dialect) is None:
                assert_identical(roundtrip(dodged, tp, dialect), dodged)


# --------------------------------------------------------------------------- JSON payload fidelity

_PAYLOAD = {
    "int": 18,
    "float": 18.0,
    "neg_zero": -0.0,
    "bool": True,
    "null": None,
    "zebra": "z",
    "apple": [1, 1.5, "x", False, None, {"b": 2, "a": 1}],
    "big": 2**64,
    "bigger": 2**64 + 1,
    "huge": 10**30,
    "huge_neg": -(10**30),
    "u64_max": 2**64 - 1,
    "i64_min": -(2**63),
    "i64_max": 2**63 - 1,
    "emoji 😀": "𝄞 non-BMP \U0010ffff",
    "nested": {"z": {"y": {"x": [18, 18.0]}}},
}


def _task_with(metadata: dict[str, Any], data: Any = None) -> m.Task:
    parts: tuple[m.Part, ...] = (m.Part.text("t"),)
    if data is not None:
        parts = (m.Part.data(data),)
    msg = m.Message(role=m.Role.USER, parts=parts, message_id="m")
    return m.Task(
        id="t",
        context_id="c",
        status=m.TaskStatus(state=m.TaskState.WORKING, message=msg),
        metadata=metadata,
        history=(msg,),
    )


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
def test_json_payload_types_order_and_big_ints_survive(dialect: str) -> None:
    require(dialect)
    task = _task_with(dict(_PAYLOAD), data=dict(reversed(list(_PAYLOAD.items()))))
    back = roundtrip(task, m.Task, dialect)
    assert_identical(back, task)
    meta = back.metadata
    assert type(meta["int"]) is int and meta["int"] == 18
    assert type(meta["float"]) is float
    assert meta["big"] == 2**64 and type(meta["big"]) is int
    assert list(meta) == list(_PAYLOAD)
    data = back.history[0].parts[0].data
    assert list(data) == list(reversed(list(_PAYLOAD)))


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_encoded_ints_are_json_ints(dialect: str) -> None:
    """18 is written as 18 (not 18.0) and key order is kept in the bytes themselves."""
    require(dialect)
    task = _task_with({"z": 18, "a": 18.0, "m": 2**70})
    encoded = codec.encode(task, dialect)
    assert b'"z":18,"a":18.0,"m":1180591620717411303424' in encoded


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
@pytest.mark.parametrize(
    "text",
    [
        "😀",
        "a\U0001f600b\U0010ffff",
        "\ud800",
        "\ud83d",  # the high half of 😀 alone
        "\ud83d\ud83d",
        "\x00\x1f\u2028\u2029\ufffe",
    ],
    ids=["emoji", "non-bmp", "lone-high", "half-emoji", "two-highs", "controls"],
)
def test_unicode_and_lone_surrogates_survive(dialect: str, text: str) -> None:
    require(dialect)
    msg = m.Message(
        role=m.Role.AGENT,
        parts=(m.Part.text(text),),
        message_id=f"id-{text}",
        context_id=text,
        metadata={text: text, "k": [text, {text: text}]},
    )
    assert_identical(roundtrip(msg, m.Message, dialect), msg)
    if dialect != "python":
        encoded = codec.encode(msg, dialect)
        # Lone surrogates are not UTF-8: they must be written as \\u escapes.
        encoded.decode("utf-8")
        assert_identical(codec.decode(m.Message, encoded.decode("utf-8"), dialect), msg)


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@pytest.mark.parametrize("low", ["\udc00", "\udfff", "\ude00\ude00"], ids=["dc00", "dfff", "two"])
def test_lone_low_surrogate_survives(dialect: str, low: str) -> None:
    require(dialect)
    msg = m.Message(
        role=m.Role.USER,
        parts=(m.Part.text(f"x{low}y"),),
        message_id="m",
        metadata={low: [low, {"k": f"{low}z"}]},
    )
    assert_identical(roundtrip(msg, m.Message, dialect), msg)


def test_adjacent_surrogates_decode_as_the_pair_they_spell() -> None:
    """JSON has no way to keep a Python str's separate halves apart: \\udbff\\udc00 *is* U+10FC00."""
    msg = m.Message(role=m.Role.USER, parts=(m.Part.text("\udbff\udc00"),), message_id="m")
    back = roundtrip(msg, m.Message, "1.0")
    assert back.parts[0].text == "\U0010fc00"


def _no_pairs(text: str) -> str:
    # A high surrogate followed by a low one spells another character in JSON
    # (test_adjacent_surrogates_decode_as_the_pair_they_spell): not a bug.
    return "".join(
        "?" if ("\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff") else a
        for a, b in zip(text, text[1:] + " ", strict=False)
    )


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@given(
    text=a2a_st.texts(surrogates=True, max_size=20),
    meta=a2a_st.json_objects(surrogates=True),
)
def test_arbitrary_text_with_surrogates_survives(
    dialect: str, text: str, meta: dict[str, Any]
) -> None:
    require(dialect)
    text = _no_pairs(text)
    meta = map_json(
        {_no_pairs(k): v for k, v in meta.items()},
        lambda v: _no_pairs(v) if isinstance(v, str) else v,
    )
    msg = m.Message(role=m.Role.USER, parts=(m.Part.text(text),), message_id="m", metadata=meta)
    assert_identical(roundtrip(msg, m.Message, dialect), msg)


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
@pytest.mark.parametrize(
    "stamp",
    [
        datetime(2025, 1, 31, 12, 0, tzinfo=UTC),
        datetime(2025, 1, 31, 12, 0, 0, 123000, tzinfo=UTC),
        datetime(2025, 1, 31, 12, 0, 0, 123456, tzinfo=UTC),
        datetime(2025, 1, 31, 12, 0, 0, 1, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        m.Timestamp.with_nanoseconds(datetime(2025, 1, 31, 12, 0, 0, 123456, tzinfo=UTC), 789),
        m.Timestamp.with_nanoseconds(datetime(2025, 1, 31, 12, 0, tzinfo=UTC), 1),
        m.Timestamp.with_nanoseconds(datetime(1, 1, 1, tzinfo=UTC), 1),
        m.Timestamp.with_nanoseconds(datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), 999),
    ],
    ids=[
        "seconds",
        "millis",
        "micros",
        "one-micro",
        "min",
        "max",
        "nanos",
        "one-nano",
        "min-plus-one-nano",
        "max-nanos",
    ],
)
def test_timestamps_survive(dialect: str, stamp: datetime) -> None:
    require(dialect)
    status = m.TaskStatus(state=m.TaskState.COMPLETED, timestamp=stamp)
    back = roundtrip(status, m.TaskStatus, dialect)
    assert back == status
    assert getattr(back.timestamp, "nanosecond", 0) == getattr(stamp, "nanosecond", 0)
    assert back.timestamp is not None and back.timestamp.utcoffset() == UTC.utcoffset(None)


def test_timestamp_wire_form_1_0() -> None:
    status = m.TaskStatus(
        state=m.TaskState.COMPLETED, timestamp=datetime(2025, 1, 31, 12, 0, 0, 123000, tzinfo=UTC)
    )
    assert codec.to_wire(status, "1.0") == {
        "state": "TASK_STATE_COMPLETED",
        "timestamp": "2025-01-31T12:00:00.123Z",
    }


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
def test_offsets_are_written_in_utc_keeping_nanoseconds(dialect: str) -> None:
    require(dialect)
    local = datetime(2025, 1, 31, 13, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    status = m.TaskStatus(
        state=m.TaskState.WORKING, timestamp=m.Timestamp.with_nanoseconds(local, 789)
    )
    back = roundtrip(status, m.TaskStatus, dialect)
    assert back == status
    assert back.timestamp is not None and back.timestamp.utcoffset() == timedelta(0)
    assert back.timestamp.nanosecond == 789
    if dialect != "python":
        assert codec.to_wire(status, dialect)["timestamp"] == "2025-01-31T12:00:00.123456789Z"


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
@pytest.mark.parametrize(
    "stamp",
    [
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=2))),
        datetime(9999, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-1))),
    ],
    ids=["before-year-1", "after-year-9999"],
)
def test_timestamps_outside_the_range_in_utc_are_refused(dialect: str, stamp: datetime) -> None:
    require(dialect)
    try:
        status = m.TaskStatus(state=m.TaskState.WORKING, timestamp=stamp)
    except InvalidModelError:
        return
    try:
        back = roundtrip(status, m.TaskStatus, dialect)
    except EncodeError:
        return
    assert back == status


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_sub_microsecond_digits_are_kept(dialect: str) -> None:
    require(dialect)
    state = {"0.3": "working"}.get(dialect, "TASK_STATE_WORKING")
    wire = {"state": state, "timestamp": "2025-01-31T13:00:00.123456789+01:00"}
    back = codec.from_wire(m.TaskStatus, wire, dialect)
    assert isinstance(back.timestamp, m.Timestamp)
    assert back.timestamp.nanosecond == 789
    assert back.timestamp.replace(tzinfo=None) == datetime(2025, 1, 31, 12, 0, 0, 123456)
    assert codec.to_wire(back, dialect)["timestamp"] == "2025-01-31T12:00:00.123456789Z"
    seven = {**wire, "timestamp": "2025-01-31T12:00:00.1234567Z"}
    assert codec.from_wire(m.TaskStatus, seven, dialect).timestamp.nanosecond == 700


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_bytes_survive(dialect: str) -> None:
    require(dialect)
    for raw in (b"", b"\x00", bytes(range(256)), b"\xff" * 7):
        part = m.Part.file(raw=raw, media_type="application/octet-stream")
        msg = m.Message(role=m.Role.USER, parts=(part,), message_id="m")
        assert_identical(roundtrip(msg, m.Message, dialect), msg)


# --------------------------------------------------------------------------- unions


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
def test_union_forms(dialect: str) -> None:
    require(dialect)
    msg = m.Message.agent("hi", context_id="c")
    event = m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=_TASK.status)
    for value, tp in (
        (_TASK, m.StreamResponse),
        (msg, m.StreamResponse),
        (event, m.StreamResponse),
        (_TASK, m.SendMessageResponse),
        (msg, m.SendMessageResponse),
    ):
        back = roundtrip(value, tp, dialect)
        assert type(back) is type(value)
        assert back == value


def test_union_wrappers_1_0() -> None:
    assert set(codec.to_wire(_TASK, "1.0", as_type=m.StreamResponse)) == {"task"}
    msg = m.Message.agent("hi")
    assert set(codec.to_wire(msg, "1.0", as_type=m.SendMessageResponse)) == {"message"}
    event = m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=_TASK.status)
    assert set(codec.to_wire(event, "1.0", as_type=m.StreamResponse)) == {"statusUpdate"}
    # Without as_type the bare object is written.
    assert "id" in codec.to_wire(_TASK, "1.0")


def test_union_rejects_non_member() -> None:
    event = m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=_TASK.status)
    with pytest.raises(EncodeError):
        codec.encode(event, "1.0", as_type=m.SendMessageResponse)


def test_union_kind_tags_0_3() -> None:
    require("0.3")
    assert codec.to_wire(_TASK, "0.3", as_type=m.StreamResponse)["kind"] == "task"
    event = m.TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=m.Artifact(parts=(m.Part.text("a"),))
    )
    assert codec.to_wire(event, "0.3", as_type=m.StreamResponse)["kind"] == "artifact-update"


# --------------------------------------------------------------------------- dialect rules of the strategies


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
def test_expressible_matches_codec(dialect: str) -> None:
    """``strategies.expressible`` agrees with the types the codec has a form for."""
    require(dialect)
    for tp in (*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES):
        if a2a_st.expressible(tp, dialect):
            continue
        with pytest.raises(TypeError, match="has no"):
            codec.from_wire(tp, {}, dialect)


def test_strategy_for_covers_every_model() -> None:
    assert a2a_st._check_complete() == []
    with pytest.raises(TypeError):
        a2a_st.strategy_for(int)
    with pytest.raises(ValueError):
        a2a_st.strategy_for(m.ListTasksRequest, "0.3")
    with pytest.raises(ValueError):
        a2a_st.tasks(dialect="2.0")
    assert a2a_st.from_model is a2a_st.strategy_for


@given(card=a2a_st.agent_cards(dialect="1.0"))
def test_strategy_rules_1_0(card: m.AgentCard) -> None:
    assert card.capabilities.state_transition_history is None
    for scheme in card.security_schemes.values():
        if isinstance(scheme, m.OAuth2SecurityScheme):
            assert scheme.flows.flow_count == 1


def _has_neg_19_digit_int(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_neg_19_digit_int(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_neg_19_digit_int(v) for v in value)
    return type(value) is int and -(10**19) < value < -(2**63)


def _has_lone_low_surrogate(text: str) -> bool:
    return any(
        "\udc00" <= ch <= "\udfff" and not (i and "\ud800" <= text[i - 1] <= "\udbff")
        for i, ch in enumerate(text)
    )


#: Values the strategies once had to avoid (codec bugs since fixed): they must be
#: generated again, so the property tests keep covering them.
COVERAGE: list[tuple[str, Callable[[], st.SearchStrategy[Any]], Callable[[Any], bool]]] = [
    (
        "1.0-last-empty-page",
        lambda: a2a_st.list_tasks_responses("1.0"),
        lambda r: not r.tasks and r.next_page_token == "" and r.total_size == 0,
    ),
    (
        "1.0-get-push-config-id",
        lambda: a2a_st.get_task_push_notification_config_requests("1.0"),
        lambda r: r.id is not None,
    ),
    ("json-neg-19-digits", lambda: a2a_st.json_objects(), _has_neg_19_digit_int),
    (
        "lone-low-surrogate",
        lambda: a2a_st.texts(surrogates=True),
        _has_lone_low_surrogate,
    ),
    (
        "nanosecond-timestamp",
        a2a_st.timestamps,
        lambda t: getattr(t, "nanosecond", 0) > 0,
    ),
    (
        "offset-nanosecond-timestamp",
        a2a_st.timestamps,
        lambda t: t.utcoffset() != timedelta(0) and getattr(t, "nanosecond", 0) > 0,
    ),
    ("0.3-no-oauth-flow", lambda: a2a_st.oauth_flows("0.3"), lambda f: f.flow_count == 0),
    ("0.3-oauth-flows", lambda: a2a_st.oauth_flows("0.3"), lambda f: f.flow_count > 1),
    ("0.3-http-no-oauth-flow", lambda: a2a_st.oauth_flows("0.3-http"), lambda f: not f.flow_count),
    ("python-no-oauth-flow", lambda: a2a_st.oauth_flows("python"), lambda f: not f.flow_count),
    ("python-oauth-flows", lambda: a2a_st.oauth_flows("python"), lambda f: f.flow_count > 2),
    (
        "0.3-other-schemes",
        lambda: a2a_st.authentication_infos("0.3"),
        lambda a: len(a.other_schemes) > 1,
    ),
    (
        "0.3-http-other-schemes",
        lambda: a2a_st.authentication_infos("0.3-http"),
        lambda a: a.other_schemes != (),
    ),
    (
        "python-other-schemes",
        lambda: a2a_st.authentication_infos("python"),
        lambda a: a.other_schemes != (),
    ),
    (
        "0.3-extended-card-false",
        lambda: a2a_st.agent_cards("0.3"),
        lambda c: c.capabilities.extended_agent_card is False,
    ),
    (
        "0.3-http-get-push-config-without-id",
        lambda: a2a_st.get_task_push_notification_config_requests("0.3-http"),
        lambda r: r.id is None,
    ),
    (
        "python-final",
        lambda: a2a_st.task_status_update_events("python"),
        lambda e: e.final,
    ),
    (
        "python-state-transition-history",
        lambda: a2a_st.agent_capabilities("python"),
        lambda c: c.state_transition_history is not None and c.extended_agent_card is not None,
    ),
    (
        "python-read-request-metadata",
        lambda: a2a_st.get_task_requests("python"),
        lambda r: r.metadata is not None,
    ),
    (
        "python-empty-part-strings",
        lambda: a2a_st.text_parts("python"),
        lambda p: p.filename == "" and p.media_type == "",
    ),
]


@pytest.mark.parametrize(
    ("strategy", "wanted"), [c[1:] for c in COVERAGE], ids=[c[0] for c in COVERAGE]
)
def test_strategies_cover_once_avoided_values(
    strategy: Callable[[], st.SearchStrategy[Any]], wanted: Callable[[Any], bool]
) -> None:
    # No shrinking: finding one example is the point.
    quick = settings(max_examples=2000, database=None, phases=[Phase.generate])
    find(strategy(), wanted, settings=quick)


@given(card=a2a_st.agent_cards(dialect="0.3"), task=a2a_st.tasks(dialect="0.3"))
def test_strategy_rules_0_3(card: m.AgentCard, task: m.Task) -> None:
    versions = {i.protocol_version for i in card.supported_interfaces}
    assert len(versions) == 1 and versions.pop().startswith("0.")
    assert all(i.tenant is None for i in card.supported_interfaces)
    for scheme in card.security_schemes.values():
        if isinstance(scheme, m.OAuth2SecurityScheme):
            assert scheme.flows.device_code is None
    assert task.context_id
    for msg in task.history:
        for part in msg.parts:
            if isinstance(part, m.DataPart):
                assert isinstance(part.data, dict)
            if isinstance(part, m.TextPart):
                assert part.filename is None and part.media_type is None


@given(value=a2a_st.json_values())
def test_json_values_are_json(value: Any) -> None:
    """json_values() gives exactly what JSON can hold, and the codec's JSON layer keeps it."""
    assert first_difference(codec.loads(codec.dumps(value)), value) is None


@pytest.mark.parametrize(
    "part",
    [
        m.Part.text("x", filename="", media_type=""),
        m.Part.file(raw=b"", filename="", media_type=""),
        m.Part.file(url="u", filename="", media_type=""),
        m.Part.data({}, filename="", media_type=""),
    ],
    ids=["text", "raw", "url", "data"],
)
def test_python_form_keeps_empty_optional_strings_on_parts(part: m.Part) -> None:
    assert_identical(codec.from_dict(m.Part, codec.to_dict(part)), part)
    assert codec.to_dict(part)["filename"] == codec.to_dict(part)["media_type"] == ""


def test_python_form_keeps_empty_optional_strings() -> None:
    msg = m.Message(role=m.Role.USER, parts=(m.Part.text("x"),), message_id="m", context_id="")
    assert_identical(codec.from_dict(m.Message, codec.to_dict(msg)), msg)


def test_v03_unspecified_role_is_an_encode_error() -> None:
    """0.3 JSON-RPC roles are user and agent only: UNSPECIFIED is a loss, not "unknown"."""
    require("0.3")
    msg = m.Message(role=m.Role.UNSPECIFIED, parts=(m.Part.text("x"),), message_id="m")
    with pytest.raises(EncodeError, match="role"):
        codec.encode(msg, "0.3")
    # lossy=True writes something, but never the undecodable "unknown".
    assert b'"unknown"' not in codec.encode(msg, "0.3", lossy=True)


@pytest.mark.parametrize("dialect", ["0.3", "0.3-http"])
@pytest.mark.parametrize("flag", [True, False])
def test_v03_standalone_capabilities_do_not_drop_extended_card_silently(
    dialect: str, flag: bool
) -> None:
    require(dialect)
    caps = m.AgentCapabilities(extended_agent_card=flag)
    with pytest.raises(EncodeError):
        codec.encode(caps, dialect)
    # On a card the flag travels as supportsAuthenticatedExtendedCard.
    card = m.AgentCard(
        name="a",
        description="b",
        version="1",
        skills=[m.AgentSkill(id="s", name="s", description="a skill", tags=["t"])],
        supported_interfaces=(
            m.AgentInterface(url="u", protocol_binding="JSONRPC", protocol_version="0.3.0"),
        ),
        capabilities=caps,
    )
    wire = codec.to_wire(card, dialect)
    assert "extendedAgentCard" not in wire["capabilities"]
    if flag or dialect == "0.3":
        assert wire["supportsAuthenticatedExtendedCard"] is flag
        assert codec.from_wire(m.AgentCard, wire, dialect) == card
    else:  # a plain proto3 bool: ProtoJSON leaves false out, and it reads back as unset
        assert "supportsAuthenticatedExtendedCard" not in wire
        back = codec.from_wire(m.AgentCard, wire, dialect)
        assert back.capabilities.extended_agent_card is None


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_lossy_encoding_drops_what_the_dialect_cannot_express(dialect: str) -> None:
    require(dialect)
    if dialect == "1.0":
        value: Any = m.AgentCapabilities(state_transition_history=True)
        expected: Any = m.AgentCapabilities()
    else:
        value = m.SendMessageRequest(message=m.Message.user("hi"), tenant="acme")
        expected = attrs.evolve(value, tenant=None)
    with pytest.raises(EncodeError):
        codec.encode(value, dialect)
    assert codec.decode(type(value), codec.encode(value, dialect, lossy=True), dialect) == expected


def test_decode_error_is_value_error() -> None:
    with pytest.raises(ValueError):
        codec.decode(m.Task, b"{}")
    with pytest.raises(DecodeError):
        codec.decode(m.Task, b"{}")


_CC_FLOW = m.ClientCredentialsOAuthFlow(token_url="https://t.example")
_PW_FLOW = m.PasswordOAuthFlow(token_url="https://p.example")


@pytest.mark.parametrize(
    "flows",
    [m.OAuthFlows(), m.OAuthFlows(client_credentials=_CC_FLOW, password=_PW_FLOW)],
    ids=["none", "two"],
)
def test_v10_oauth_flows_other_than_one_are_reported(flows: m.OAuthFlows) -> None:
    with pytest.raises(EncodeError):
        codec.encode(flows, "1.0")
    with pytest.raises(DecodeError):
        codec.decode(m.OAuthFlows, codec.encode(flows, "0.3"), "1.0")


@pytest.mark.parametrize("dialect", ["0.3", "0.3-http", "python"])
def test_oauth_flows_may_be_empty_outside_1_0(dialect: str) -> None:
    require(dialect)
    assert_identical(roundtrip(m.OAuthFlows(), m.OAuthFlows, dialect), m.OAuthFlows())
    if dialect != "python":
        assert codec.to_wire(m.OAuthFlows(), dialect) == {}


_NOT_JSON: list[Any] = [
    pytest.param({"a": float("nan")}, "nan is not a JSON number", id="nan"),
    pytest.param({"a": [float("inf")]}, "inf is not a JSON number", id="inf"),
    pytest.param({"a": [{"b": -float("inf")}]}, "-inf is not a JSON number", id="deep-inf"),
    pytest.param({"a": {1: "x"}}, "keys must be strings", id="nested-int-key"),
    pytest.param({"a": [{"b": {None: 1}}]}, "keys must be strings", id="deep-none-key"),
    pytest.param({"a": [object()]}, "object .* is not a JSON value", id="object"),
    pytest.param({"a": {"b": {1, 2}}}, "set .* is not a JSON value", id="set"),
    pytest.param({"a": ("x",)}, "tuple .* is not a JSON value", id="tuple"),
    pytest.param({"a": m.TaskState.WORKING}, "TaskState .* is not a JSON value", id="str-enum"),
]


@pytest.mark.parametrize(("payload", "problem"), _NOT_JSON)
def test_non_json_payloads_are_refused_at_construction(
    payload: dict[str, Any], problem: str
) -> None:
    """What JSON cannot hold never enters a model: refused with the field and the place."""
    with pytest.raises(InvalidModelError, match=rf"Task\.metadata: .*{problem}"):
        attrs.evolve(_TASK, metadata=payload)
    with pytest.raises(InvalidModelError, match=rf"DataPart\.data: .*{problem}"):
        m.Part.data(payload)
    with pytest.raises(InvalidModelError, match=rf"AgentExtension\.params: .*{problem}"):
        m.AgentExtension(uri="u", params=payload)


@pytest.mark.parametrize(("payload", "problem"), _NOT_JSON)
@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.3-http", "python"])
def test_non_json_payloads_are_refused_by_decoders(
    payload: dict[str, Any], problem: str, dialect: str
) -> None:
    """from_wire/from_dict take Python values: free-form members are checked at every depth."""
    require(dialect)
    good = attrs.evolve(_TASK, metadata={"ok": 1})
    if dialect == "python":
        wire = codec.to_dict(good)
        wire["metadata"] = payload
        with pytest.raises(DecodeError, match=rf"\$\.metadata: .*{problem}"):
            codec.from_dict(m.Task, wire)
        return
    wire = codec.to_wire(good, dialect)
    wire["metadata"] = payload
    with pytest.raises(DecodeError, match=rf"\$\.metadata: .*{problem}"):
        codec.from_wire(m.Task, wire, dialect)
    with pytest.raises(DecodeError, match=rf"\$\.metadata: .*{problem}"):
        codec.decode(m.Task, wire, dialect)


def test_data_part_payloads_are_checked_by_decoders() -> None:
    msg = m.Message.user("x")
    for dialect, part in (
        ("1.0", {"data": {"a": [float("nan")]}}),
        ("1.0", {"data": [{"a": 1, 2: 3}], "metadata": {"k": 1}}),
        ("0.3", {"kind": "data", "data": {"a": [float("nan")]}}),
        ("0.3-http", {"data": {"data": {"a": [float("nan")]}}}),
    ):
        wire = codec.to_wire(msg, dialect)
        wire["content" if dialect == "0.3-http" else "parts"] = [part]
        with pytest.raises(DecodeError, match=r"\.data: expected a JSON value: at "):
            codec.from_wire(m.Message, wire, dialect)
    wire = codec.to_wire(msg, "1.0")
    wire["parts"] = [{"text": "x", "metadata": {"a": {3: 1}}}]
    with pytest.raises(DecodeError, match=r"parts\[0\]\.metadata: .*keys must be strings"):
        codec.from_wire(m.Message, wire, "1.0")


def test_non_string_keys_added_after_construction_are_refused_by_encode() -> None:
    """A free-form dict mutated after construction: encode() refuses, never rewrites a key."""
    task = attrs.evolve(_TASK, metadata={"a": {}})
    assert task.metadata is not None
    task.metadata["a"][1] = "x"  # the model cannot see this: encode is the last line
    with pytest.raises(EncodeError, match="keys must be strings"):
        codec.encode(task, "1.0")
    task.metadata["a"] = {"big": 2**70, 2: "x"}  # also on the stdlib (big integer) path
    with pytest.raises(EncodeError, match="keys must be strings"):
        codec.encode(task, "1.0")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")], ids=str)
def test_non_finite_floats_in_data_parts_are_invalid(bad: float) -> None:
    for data in ({"a": bad}, [bad], bad, {"a": [bad]}):
        with pytest.raises(InvalidModelError, match=r"DataPart\.data"):
            m.Part.data(data)
