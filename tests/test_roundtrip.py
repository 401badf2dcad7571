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
from datetime import UTC, datetime
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.errors import DecodeError, EncodeError, InvalidModelError
from a2a_models.testing import assert_identical, first_difference
from a2a_models.testing import strategies as a2a_st

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


_SKILL = m.AgentSkill(id="s", name="s", description="s", tags=("t",))
_IFACE = m.AgentInterface(url="https://a.example", protocol_binding="JSONRPC")
_CARD_NO_SKILLS = m.AgentCard(
    name="a", description="b", version="1", supported_interfaces=(_IFACE,)
)
_TASK = m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.WORKING))


def _dodge_skills(o: Any) -> Any:
    if isinstance(o, m.AgentCard) and not o.skills:
        return attrs.evolve(o, skills=(_SKILL,))
    return o


def _dodge_list_tasks(o: Any) -> Any:
    if isinstance(o, m.ListTasksResponse):
        return attrs.evolve(
            o,
            tasks=o.tasks or (_TASK,),
            next_page_token=o.next_page_token or "next",
            page_size=o.page_size or 1,
            total_size=o.total_size or 1,
        )
    return o


def _dodge_negative_i64(v: Any) -> Any:
    # -(10**19) < v < -(2**63): 19 digits, so orjson parses it (as a float).
    if type(v) is int and -(10**19) < v < -(2**63):
        return -(10**19)
    return v


def _dodge_python_lossy(o: Any) -> Any:
    o = _dodge_empty_flows(o)
    if isinstance(o, m.TaskStatusUpdateEvent) and o.final:
        return attrs.evolve(o, final=False)
    if isinstance(o, m.OAuthFlows) and o.flow_count > 1:
        first = next(
            n
            for n in (
                "authorization_code",
                "client_credentials",
                "implicit",
                "password",
                "device_code",
            )
            if getattr(o, n) is not None
        )
        return m.OAuthFlows(**{first: getattr(o, first)})
    if isinstance(o, m.AgentCapabilities) and o.state_transition_history is not None:
        return attrs.evolve(o, state_transition_history=None)
    if (
        isinstance(
            o,
            m.GetTaskRequest
            | m.SubscribeToTaskRequest
            | m.GetTaskPushNotificationConfigRequest
            | m.DeleteTaskPushNotificationConfigRequest
            | m.ListTaskPushNotificationConfigsRequest,
        )
        and o.metadata is not None
    ):
        return attrs.evolve(o, metadata=None)
    return o


def _dodge_v03_extended_false(o: Any) -> Any:
    if isinstance(o, m.AgentCapabilities) and o.extended_agent_card is False:
        return attrs.evolve(o, extended_agent_card=None)
    return o


def _dodge_v03_auth(o: Any) -> Any:
    if isinstance(o, m.TaskPushNotificationConfig) and o.authentication is not None:
        return attrs.evolve(o, authentication=None)
    return o


_CC_FLOW = m.ClientCredentialsOAuthFlow(token_url="https://t.example")


def _dodge_empty_flows(o: Any) -> Any:
    if isinstance(o, m.OAuthFlows) and o.flow_count == 0:
        return m.OAuthFlows(client_credentials=_CC_FLOW)
    return o


KNOWN_BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        id="v10-empty-skills-rejected",
        dialects=frozenset({"1.0"}),
        reason=(
            '1.0 encodes AgentCard(skills=()) as "skills": [] (REQUIRED, always emitted, as '
            "in the spec's §8.4.1 example) but decoding it fails with '$.skills: required "
            "field missing': the [] == unset rule is applied to a required-with-default field"
        ),
        example=lambda: (m.AgentCard, _CARD_NO_SKILLS),
        dodge_model=_dodge_skills,
    ),
    KnownBug(
        id="v10-list-tasks-last-page-rejected",
        dialects=frozenset({"1.0"}),
        reason=(
            "1.0 ListTasksResponse: the REQUIRED fields at their default values (tasks [], "
            'nextPageToken "" - which §3.1.4 mandates on the last page -, pageSize 0, '
            "totalSize 0) are emitted but rejected on decode as 'required field missing'"
        ),
        example=lambda: (
            m.ListTasksResponse,
            m.ListTasksResponse(tasks=(_TASK,), page_size=1, total_size=1),
        ),
        dodge_model=_dodge_list_tasks,
    ),
    KnownBug(
        id="json-negative-19-digit-ints-become-floats",
        dialects=frozenset(JSON_DIALECTS),
        reason=(
            "codec/_json.loads sends only 20+ digit runs to the exact parser, but negative "
            "19-digit integers below -2**63 (e.g. -9223372036854775809) overflow int64, and "
            "orjson silently parses them as floats: metadata {'n': -2**63-1} decodes as "
            "{'n': -9.223372036854776e+18}"
        ),
        example=lambda: (m.Task, attrs.evolve(_TASK, metadata={"n": -(2**63) - 1})),
        dodge_json=lambda v: map_json(v, _dodge_negative_i64),
    ),
    KnownBug(
        id="python-dict-form-is-lossy",
        dialects=frozenset({"python"}),
        reason=(
            "to_dict() uses the 1.0 tables: it silently drops TaskStatusUpdateEvent.final=True "
            "and raises EncodeError for valid models 1.0 cannot express (several OAuth flows, "
            "capabilities.state_transition_history, metadata on Get/Subscribe/push-config "
            "requests) - so a decoded 0.3 card cannot be turned into a dict"
        ),
        example=lambda: (
            m.TaskStatusUpdateEvent,
            m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=_TASK.status, final=True),
        ),
        dodge_model=_dodge_python_lossy,
    ),
    KnownBug(
        id="v03-extended-card-false-dropped",
        dialects=frozenset({"0.3"}),
        reason=(
            "0.3 JSON-RPC: capabilities.extended_agent_card=False is written as "
            '"supportsAuthenticatedExtendedCard": false but read back as None'
        ),
        example=lambda: (
            m.AgentCard,
            attrs.evolve(
                _CARD_NO_SKILLS,
                supported_interfaces=(attrs.evolve(_IFACE, protocol_version="0.3.0"),),
                capabilities=m.AgentCapabilities(extended_agent_card=False),
            ),
        ),
        dodge_model=_dodge_v03_extended_false,
    ),
    KnownBug(
        id="v03-authentication-info-other-schemes-unset",
        dialects=frozenset({"0.3", "0.3-http"}),
        reason=(
            "the 0.3 decoders never set AuthenticationInfo.other_schemes (added to the model "
            "later): decoded objects have an unset slot and ==/repr raise AttributeError"
        ),
        example=lambda: (m.AuthenticationInfo, m.AuthenticationInfo(scheme="Bearer")),
        dodge_model=_dodge_v03_auth,
        unavoidable=frozenset({(m.AuthenticationInfo, "0.3"), (m.AuthenticationInfo, "0.3-http")}),
    ),
    KnownBug(
        id="empty-oauth-flows-not-decodable",
        dialects=frozenset({"0.3", "0.3-http", "python"}),
        reason=(
            "the model allows OAuthFlows() with no flow ('0.3 allows any number, none "
            "included', and the 0.3 schema requires no member), the encoders write {} but "
            "the decoders reject it: 'expected at least one of authorizationCode, ...'"
        ),
        example=lambda: (m.OAuthFlows, m.OAuthFlows()),
        dodge_model=_dodge_empty_flows,
    ),
)


def _bugs_for(dialect: str) -> list[KnownBug]:
    return [b for b in KNOWN_BUGS if dialect in b.dialects]


def dodge_known_bugs(x: Any, dialect: str) -> Any:
    for bug in _bugs_for(dialect):
        x = rebuild(x, bug.dodge_model, bug.dodge_json)
    return x


#: (type, dialect) pairs the spec can express but the codec has no form for yet.
MISSING_FORMS: dict[tuple[Any, str], str] = {
    (m.GetTaskPushNotificationConfigRequest, "0.3-http"): (
        "0.3-http has no form for GetTaskPushNotificationConfigRequest, though the 0.3 proto "
        "defines it ({name: tasks/{id}/pushNotificationConfigs/{cfg}})"
    ),
    (m.DeleteTaskPushNotificationConfigRequest, "0.3-http"): (
        "0.3-http has no form for DeleteTaskPushNotificationConfigRequest, though the 0.3 "
        "proto defines it ({name: tasks/{id}/pushNotificationConfigs/{cfg}})"
    ),
}


# --------------------------------------------------------------------------- the matrix


def _matrix(dialects: tuple[str, ...], *, python_form: bool = False) -> list[Any]:
    """(type, dialect) params; ``python_form``: the values go through to_dict, not the dialect."""
    params = []
    for dialect in dialects:
        for tp in (*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES):
            if not a2a_st.expressible(tp, dialect):
                continue
            marks = []
            if (tp, dialect) in MISSING_FORMS and not python_form:
                marks.append(
                    pytest.mark.xfail(
                        strict=True, raises=TypeError, reason=MISSING_FORMS[(tp, dialect)]
                    )
                )
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


@pytest.mark.xfail(
    strict=True,
    reason=(
        "codec/_json.loads only routes \\uD800-\\uDBFF escapes (high surrogates) to the exact "
        "parser: a lone LOW surrogate (\\uDC00-\\uDFFF), which dumps() writes as an escape, "
        "makes orjson fail and decode() raises DecodeError 'expected valid JSON'"
    ),
)
@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_lone_low_surrogate_survives(dialect: str) -> None:
    require(dialect)
    msg = m.Message(role=m.Role.USER, parts=(m.Part.text("x\udfffy"),), message_id="m")
    assert_identical(roundtrip(msg, m.Message, dialect), msg)


def test_adjacent_surrogates_decode_as_the_pair_they_spell() -> None:
    """JSON has no way to keep a Python str's separate halves apart: \\udbff\\udc00 *is* U+10FC00."""
    msg = m.Message(role=m.Role.USER, parts=(m.Part.text("\udbff\udc00"),), message_id="m")
    back = roundtrip(msg, m.Message, "1.0")
    assert back.parts[0].text == "\U0010fc00"


def _no_lone_low(text: str) -> str:
    # Known bug (test_lone_low_surrogate_survives): lone low surrogates do not decode.
    out = []
    for i, ch in enumerate(text):
        low = "\udc00" <= ch <= "\udfff"
        paired = low and i > 0 and "\ud800" <= text[i - 1] <= "\udbff"
        out.append("?" if low and not paired else ch)
    return "".join(out)


def _no_pairs(text: str) -> str:
    # A high surrogate followed by a low one spells another character in JSON.
    return "".join(
        "?" if ("\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff") else a
        for a, b in zip(text, text[1:] + " ", strict=False)
    )


def _safe_text(text: str) -> str:
    return _no_lone_low(_no_pairs(text))


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@given(
    text=a2a_st.texts(surrogates=True, max_size=20),
    meta=a2a_st.json_objects(surrogates=True),
)
def test_arbitrary_text_with_surrogates_survives(
    dialect: str, text: str, meta: dict[str, Any]
) -> None:
    require(dialect)
    text = _safe_text(text)
    meta = map_json(
        {_safe_text(k): v for k, v in meta.items()},
        lambda v: _safe_text(v) if isinstance(v, str) else _dodge_negative_i64(v),
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
    ],
    ids=["seconds", "millis", "micros", "one-micro", "min", "max"],
)
def test_timestamps_survive(dialect: str, stamp: datetime) -> None:
    require(dialect)
    status = m.TaskStatus(state=m.TaskState.COMPLETED, timestamp=stamp)
    back = roundtrip(status, m.TaskStatus, dialect)
    assert back == status
    assert back.timestamp is not None and back.timestamp.utcoffset() == UTC.utcoffset(None)


def test_timestamp_wire_form_1_0() -> None:
    status = m.TaskStatus(
        state=m.TaskState.COMPLETED, timestamp=datetime(2025, 1, 31, 12, 0, 0, 123000, tzinfo=UTC)
    )
    assert codec.to_wire(status, "1.0") == {
        "state": "TASK_STATE_COMPLETED",
        "timestamp": "2025-01-31T12:00:00.123Z",
    }


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
        if (tp, dialect) in MISSING_FORMS:
            continue
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
    value = map_json(value, _dodge_negative_i64)
    assert first_difference(codec.loads(codec.dumps(value)), value) is None


@pytest.mark.xfail(
    strict=True,
    reason=(
        "to_dict drops Part.filename/media_type when they are '' (u_part tests truthiness), "
        "although the Python-dict form keeps '' everywhere else (e.g. Message.context_id='')"
    ),
)
def test_python_form_keeps_empty_optional_strings_on_parts() -> None:
    part = m.Part.text("x", filename="", media_type="")
    assert_identical(codec.from_dict(m.TextPart, codec.to_dict(part)), part)


def test_python_form_keeps_empty_optional_strings() -> None:
    msg = m.Message(role=m.Role.USER, parts=(m.Part.text("x"),), message_id="m", context_id="")
    assert_identical(codec.from_dict(m.Message, codec.to_dict(msg)), msg)


@pytest.mark.xfail(
    strict=True,
    reason=(
        '0.3 JSON-RPC encodes Role.UNSPECIFIED as "role": "unknown", which its own decoder '
        "rejects ('expected a role (user, agent)'); encode should raise EncodeError instead"
    ),
)
def test_v03_unspecified_role_is_not_silently_undecodable() -> None:
    require("0.3")
    msg = m.Message(role=m.Role.UNSPECIFIED, parts=(m.Part.text("x"),), message_id="m")
    try:
        encoded = codec.encode(msg, "0.3")
    except EncodeError:
        return
    assert codec.decode(m.Message, encoded, "0.3") == msg


@pytest.mark.xfail(
    strict=True,
    reason=(
        "0.3: a standalone AgentCapabilities(extended_agent_card=True) is encoded without "
        "complaint and the flag is silently lost (0.3 keeps it on the card); should raise "
        "EncodeError unless lossy=True"
    ),
)
def test_v03_standalone_capabilities_do_not_drop_extended_card_silently() -> None:
    require("0.3")
    caps = m.AgentCapabilities(extended_agent_card=True)
    with pytest.raises(EncodeError):
        codec.encode(caps, "0.3")


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


@pytest.mark.xfail(
    strict=True,
    reason=(
        "1.0 encodes OAuthFlows() (no flow; allowed by the model for 0.3) as {} without "
        "complaint, though the oneof needs exactly one flow and the decoder rejects {}; "
        "the model docstring says the 1.0 encoder reports it"
    ),
)
def test_v10_empty_oauth_flows_are_reported() -> None:
    with pytest.raises(EncodeError):
        codec.encode(m.OAuthFlows(), "1.0")


@pytest.mark.xfail(
    strict=True,
    reason=(
        "metadata/data are only checked at the top level, and encode() does not turn what "
        "JSON cannot hold into EncodeError: NaN is silently written as null (orjson), a "
        "nested non-string key is silently stringified (stdlib fallback), and an arbitrary "
        "object escapes as a bare TypeError"
    ),
)
@pytest.mark.parametrize(
    "payload",
    [{"a": float("nan")}, {"a": float("inf")}, {"a": {1: "x"}}, {"a": [object()]}],
    ids=["nan", "inf", "nested-int-key", "object"],
)
def test_non_json_payloads_are_rejected(payload: dict[str, Any]) -> None:
    try:
        task = attrs.evolve(_TASK, metadata=payload)
    except InvalidModelError:
        return
    with pytest.raises(EncodeError):
        codec.encode(task, "1.0")
