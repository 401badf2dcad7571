"""The models themselves: validation, factories, the task state machine, value semantics."""

from __future__ import annotations

import copy
import pickle
import typing
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_models import TRANSITIONS, TaskState, can_transition
from a2a_models import models as m
from a2a_models.errors import InvalidModelError
from a2a_models.models.rules import any_str
from a2a_models.testing import strategies as a2a_st

S = TaskState
TEXT = m.Part.text("t")
STATUS = m.TaskStatus(state=S.WORKING)
ART = m.Artifact(parts=(TEXT,), artifact_id="a")
IFACE = m.AgentInterface(url="https://a.example/rpc", protocol_binding="JSONRPC")
CC_FLOW = m.ClientCredentialsOAuthFlow(token_url="https://a.example/token")

#: The smallest valid keyword arguments of every concrete model class.
MINIMAL: dict[type[Any], dict[str, Any]] = {
    m.TextPart: {"text": "t"},
    m.FilePart: {"url": "https://a.example/f"},
    m.DataPart: {"data": {}},
    m.Message: {"role": m.Role.USER, "parts": (TEXT,)},
    m.Artifact: {"parts": (TEXT,)},
    m.TaskStatus: {"state": S.WORKING},
    m.Task: {"id": "t", "status": STATUS},
    m.TaskStatusUpdateEvent: {"task_id": "t", "context_id": "c", "status": STATUS},
    m.TaskArtifactUpdateEvent: {"task_id": "t", "context_id": "c", "artifact": ART},
    m.AuthenticationInfo: {"scheme": "Bearer"},
    m.TaskPushNotificationConfig: {"url": "https://hook.example"},
    m.AuthorizationCodeOAuthFlow: {"authorization_url": "https://a", "token_url": "https://t"},
    m.ClientCredentialsOAuthFlow: {"token_url": "https://t"},
    m.ImplicitOAuthFlow: {},
    m.PasswordOAuthFlow: {},
    m.DeviceCodeOAuthFlow: {"device_authorization_url": "https://d", "token_url": "https://t"},
    m.OAuthFlows: {"client_credentials": CC_FLOW},
    m.APIKeySecurityScheme: {"location": "header", "name": "X-Key"},
    m.HTTPAuthSecurityScheme: {"scheme": "Bearer"},
    m.OAuth2SecurityScheme: {"flows": m.OAuthFlows(client_credentials=CC_FLOW)},
    m.OpenIdConnectSecurityScheme: {"open_id_connect_url": "https://o"},
    m.MutualTlsSecurityScheme: {},
    m.SecurityRequirement: {},
    m.AgentInterface: {"url": "https://a", "protocol_binding": "JSONRPC"},
    m.AgentProvider: {"organization": "o", "url": "https://o"},
    m.AgentExtension: {},
    m.AgentCapabilities: {},
    m.AgentSkill: {"id": "s", "name": "n", "description": "d", "tags": ("t",)},
    m.AgentCardSignature: {"protected": "p", "signature": "s"},
    m.AgentCard: {
        "name": "n",
        "description": "d",
        "version": "1",
        "supported_interfaces": (IFACE,),
        "skills": (m.AgentSkill(id="s", name="n", description="d", tags=("t",)),),
    },
    m.SendMessageConfiguration: {},
    m.SendMessageRequest: {"message": m.Message(role=m.Role.USER, parts=(TEXT,))},
    m.GetTaskRequest: {"id": "t"},
    m.ListTasksRequest: {},
    m.ListTasksResponse: {"tasks": ()},
    m.CancelTaskRequest: {"id": "t"},
    m.SubscribeToTaskRequest: {"id": "t"},
    m.GetTaskPushNotificationConfigRequest: {"task_id": "t"},
    m.DeleteTaskPushNotificationConfigRequest: {"task_id": "t", "id": "c"},
    m.ListTaskPushNotificationConfigsRequest: {"task_id": "t"},
    m.ListTaskPushNotificationConfigsResponse: {},
    m.GetExtendedAgentCardRequest: {},
}

CONCRETE = tuple(t for t in a2a_st.MODEL_TYPES if t not in (m.Part, m.SecurityScheme))


def test_minimal_covers_every_model_and_is_valid() -> None:
    assert set(MINIMAL) == set(CONCRETE)
    for cls, kwargs in MINIMAL.items():
        obj = cls(**kwargs)
        attrs.validate(obj)


# --------------------------------------------------------------------------- wrong values per field


class _Opaque:
    """Not a JSON value, not a model."""


def _wrong_values(cls: type[Any], name: str, tp: Any) -> list[tuple[str, Any]]:
    """(label, value) pairs that are the wrong type for a field annotated ``tp``."""
    args = typing.get_args(tp)
    optional = type(None) in args
    if optional:
        tp = next(a for a in args if a is not type(None))
        args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    if name in ("metadata", "params", "header"):
        return [("list", []), ("int-key", {1: "x"}), ("str", "{}")]
    if tp is str:
        return [("int", 123), ("bytes", b"x")]
    if tp is bool:
        return [("int-1", 1), ("str", "true")]
    if tp is int:
        return [("str", "1"), ("float", 1.5), ("bool", True), ("too-big", 2**31)]
    if tp is datetime:
        return [("str", "2025-01-01T00:00:00Z"), ("naive", datetime(2025, 1, 1))]
    if tp is bytes:
        return [("str", "aGk=")]
    if tp in (TaskState, m.Role):
        return [("wire-name", next(iter(tp)).value)]
    if tp is typing.Any:  # DataPart.data
        return [("object", _Opaque()), ("tuple", (1, 2)), ("set", {1})]
    if origin is tuple:
        item = args[0]
        bad_item = 123 if item is str else _Opaque()
        return [("bad-item", (bad_item,))]
    if origin is dict:
        _key, value = args
        if value is str:
            return [("int-value", {"a": 1})]
        if typing.get_origin(value) is tuple:
            return [("int-scope", {"a": (1,)}), ("int-name", {1: ()})]
        return [("bad-value", {"x": _Opaque()}), ("not-dict", [("x", 1)])]
    if attrs.has(tp):
        return [("object", _Opaque()), ("str", "x")]
    raise AssertionError(f"no wrong values for {cls.__name__}.{name}: {tp!r}")


def _field_cases() -> list[Any]:
    cases = []
    for cls in CONCRETE:
        hints = typing.get_type_hints(cls)
        for a in attrs.fields(cls):
            tp = hints[a.name]
            for label, value in _wrong_values(cls, a.name, tp):
                cases.append(
                    pytest.param(cls, a.name, value, id=f"{cls.__name__}.{a.name}-{label}")
                )
    return cases


@pytest.mark.parametrize(("cls", "name", "value"), _field_cases())
def test_wrong_typed_field_names_class_and_field(cls: type[Any], name: str, value: Any) -> None:
    kwargs = {**MINIMAL[cls], name: value}
    if cls is m.FilePart and name == "raw":
        kwargs.pop("url")
    with pytest.raises(InvalidModelError) as info:
        cls(**kwargs)
    assert info.value.field == f"{cls.__name__}.{name}"
    assert str(info.value).startswith(f"{cls.__name__}.{name}: ")


def _required_fields(*, none_is_invalid: bool) -> list[Any]:
    cases = []
    for cls in CONCRETE:
        for a in attrs.fields(cls):
            if a.default is attrs.NOTHING:
                tp = typing.get_type_hints(cls)[a.name]
                if none_is_invalid and tp is typing.Any:
                    continue  # DataPart.data: null is a JSON value
                if none_is_invalid and typing.get_origin(tp) is tuple:
                    continue  # see test_sequence_fields_reject_non_sequences
                cases.append(pytest.param(cls, a.name, id=f"{cls.__name__}.{a.name}"))
    return cases


@pytest.mark.parametrize(("cls", "name"), _required_fields(none_is_invalid=True))
def test_required_field_none_names_class_and_field(cls: type[Any], name: str) -> None:
    with pytest.raises(InvalidModelError) as info:
        cls(**{**MINIMAL[cls], name: None})
    assert info.value.field == f"{cls.__name__}.{name}"


@pytest.mark.parametrize(("cls", "name"), _required_fields(none_is_invalid=False))
def test_required_field_omitted_is_a_type_error_naming_it(cls: type[Any], name: str) -> None:
    """Leaving a required argument out is Python's TypeError (not InvalidModelError)."""
    kwargs = dict(MINIMAL[cls])
    kwargs.pop(name)
    with pytest.raises(TypeError, match=name):
        cls(**kwargs)


def _sequence_fields() -> list[tuple[type[Any], str]]:
    out = []
    for cls in CONCRETE:
        hints = typing.get_type_hints(cls)
        for a in attrs.fields(cls):
            if typing.get_origin(hints[a.name]) is tuple or (cls, a.name) == (
                m.SecurityRequirement,
                "schemes",
            ):
                out.append((cls, a.name))
    return out


def _sequence_problems(value: Any, *, skip_parts: bool = False) -> list[str]:
    problems = []
    for cls, name in _sequence_fields():
        if skip_parts and name == "parts":
            continue  # Message/Artifact(parts="text") is a documented convenience
        try:
            cls(**{**MINIMAL[cls], name: value})
        except InvalidModelError as exc:
            if exc.field != f"{cls.__name__}.{name}":
                problems.append(f"{cls.__name__}.{name}: InvalidModelError names {exc.field!r}")
        except Exception as exc:
            problems.append(f"{cls.__name__}.{name}: {type(exc).__name__}: {exc}")
        else:
            problems.append(f"{cls.__name__}.{name}: accepted {value!r}")
    return problems


@pytest.mark.parametrize("value", [123, None], ids=["int", "None"])
def test_sequence_fields_reject_non_sequences(value: Any) -> None:
    assert _sequence_problems(value) == []


def test_sequence_fields_reject_strings() -> None:
    assert _sequence_problems("abc", skip_parts=True) == []


def _required_strings() -> list[Any]:
    """REQUIRED string fields: no default, or a generated default (ids) or a fixed one."""
    cases = []
    for cls in CONCRETE:
        hints = typing.get_type_hints(cls)
        for a in attrs.fields(cls):
            if hints[a.name] is str and a.validator is not any_str:
                cases.append(pytest.param(cls, a.name, id=f"{cls.__name__}.{a.name}"))
    return cases


@pytest.mark.parametrize(("cls", "name"), _required_strings())
def test_required_string_must_not_be_empty(cls: type[Any], name: str) -> None:
    with pytest.raises(InvalidModelError, match="must not be empty") as info:
        cls(**{**MINIMAL[cls], name: ""})
    assert info.value.field == f"{cls.__name__}.{name}"


@pytest.mark.parametrize(
    ("cls", "name", "value", "problem"),
    [
        (m.Message, "parts", (), "at least one"),
        (m.Artifact, "parts", (), "at least one"),
        (m.AgentSkill, "tags", (), "at least one"),
        (m.AgentCard, "supported_interfaces", (), "at least one"),
        (m.AgentCard, "default_input_modes", (), "at least one"),
        (m.AgentCard, "default_output_modes", (), "at least one"),
        (
            m.AgentCard,
            "skills",
            (),
            r"at least one AgentSkill \(a REQUIRED repeated field, spec §5\.7\)",
        ),
        (m.GetTaskRequest, "history_length", -1, "negative"),
        (m.SendMessageConfiguration, "history_length", -1, "negative"),
        (m.ListTasksRequest, "page_size", -5, "negative"),
        (m.GetTaskRequest, "history_length", 2**31, "int32"),
        (m.ListTasksResponse, "total_size", -(2**31) - 1, "int32"),
        (m.APIKeySecurityScheme, "location", "body", "header, query, cookie"),
        (m.TaskStatus, "timestamp", datetime(2025, 1, 1), "timezone-aware"),
        (m.DataPart, "data", {1: "x"}, "JSON value"),
        (m.DataPart, "data", [[_Opaque()]], "JSON value"),
        (m.Message, "metadata", {"a": 1, 2: "b"}, "keys must be strings"),
    ],
)
def test_value_rules(cls: type[Any], name: str, value: Any, problem: str) -> None:
    with pytest.raises(InvalidModelError, match=problem) as info:
        cls(**{**MINIMAL[cls], name: value})
    assert info.value.field == f"{cls.__name__}.{name}"


def test_invalid_model_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        m.Task(id="", status=STATUS)


@given(data=st.data())
@pytest.mark.parametrize("cls", a2a_st.MODEL_TYPES, ids=lambda c: c.__name__)
def test_generated_values_are_valid(cls: type[Any], data: st.DataObject) -> None:
    """Every strategy value passes the validators of every model it contains."""
    dialects = [d for d in a2a_st.DIALECTS if a2a_st.expressible(cls, d)]
    value = data.draw(a2a_st.strategy_for(cls, data.draw(st.sampled_from(dialects))))
    assert isinstance(value, cls)
    _validate_deep(value)


def _validate_deep(value: Any) -> None:
    if isinstance(value, tuple):
        for item in value:
            _validate_deep(item)
    elif isinstance(value, dict):
        for item in value.values():
            _validate_deep(item)
    elif attrs.has(type(value)):
        attrs.validate(value)
        for a in attrs.fields(type(value)):
            if a.name not in ("metadata", "data", "params", "header"):
                _validate_deep(getattr(value, a.name))


# --------------------------------------------------------------------------- parts


def test_part_factories() -> None:
    text = m.Part.text("hi", media_type="text/plain", metadata={"a": 1})
    assert type(text) is m.TextPart and text.text == "hi" and text.media_type == "text/plain"
    by_url = m.Part.file(url="https://x/y.pdf", filename="y.pdf")
    assert type(by_url) is m.FilePart and by_url.url == "https://x/y.pdf" and by_url.raw is None
    inline = m.Part.file(raw=b"\x00\x01", media_type="application/octet-stream")
    assert inline.raw == b"\x00\x01" and inline.url is None
    data = m.Part.data([1, "two", None])
    assert type(data) is m.DataPart and data.data == [1, "two", None]
    for p in (text, by_url, inline, data):
        assert isinstance(p, m.Part)


@pytest.mark.parametrize("kwargs", [{}, {"url": "u", "raw": b"x"}], ids=["neither", "both"])
def test_file_part_needs_exactly_one_of_raw_and_url(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidModelError, match="exactly one of raw"):
        m.Part.file(**kwargs)


def test_empty_file_content_is_still_content() -> None:
    assert m.Part.file(raw=b"").raw == b""
    assert m.Part.file(url="").url == ""


@pytest.mark.parametrize("value", [None, True, 0, -(2**80), 1.5, "", [], {}, [{"a": [None]}]])
def test_data_part_accepts_any_json_value(value: Any) -> None:
    assert m.Part.data(value).data == value


def test_abstract_bases_cannot_be_instantiated() -> None:
    with pytest.raises(TypeError, match="abstract"):
        m.Part()
    with pytest.raises(TypeError, match="abstract"):
        m.SecurityScheme()


def test_message_and_artifact_parts_conveniences() -> None:
    assert m.Artifact(parts="hello").parts == (m.Part.text("hello"),)
    assert m.Artifact(parts=TEXT).parts == (TEXT,)
    assert m.Artifact(parts=[TEXT, TEXT]).parts == (TEXT, TEXT)
    assert m.Message.user("a", m.Part.data({}), "b").text == "ab"


def test_oauth_flows_count() -> None:
    assert m.OAuthFlows(client_credentials=CC_FLOW).flow_count == 1
    two = m.OAuthFlows(
        client_credentials=CC_FLOW,
        implicit=m.ImplicitOAuthFlow(authorization_url="https://a"),
    )
    assert two.flow_count == 2


def test_security_requirement_scopes_become_tuples() -> None:
    req = m.SecurityRequirement(schemes={"oauth": ["read", "write"], "key": []})
    assert req.schemes == {"oauth": ("read", "write"), "key": ()}
    assert m.SecurityRequirement(schemes=[("a", ["x"])]).schemes == {"a": ("x",)}
    with pytest.raises(InvalidModelError, match="list of strings"):
        m.SecurityRequirement(schemes={"oauth": "read"})


# --------------------------------------------------------------------------- task states


TERMINAL = {S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED}
INTERRUPTED = {S.INPUT_REQUIRED, S.AUTH_REQUIRED}


def test_state_predicates() -> None:
    assert {s for s in S if s.is_terminal} == TERMINAL
    assert {s for s in S if s.is_interrupted} == INTERRUPTED
    assert {s for s in S if s.is_active} == {S.SUBMITTED, S.WORKING}
    for s in S:
        assert s.is_terminal + s.is_interrupted + s.is_active <= 1


def test_state_wire_names_and_proto_numbers() -> None:
    numbers = {
        S.UNSPECIFIED: 0,
        S.SUBMITTED: 1,
        S.WORKING: 2,
        S.COMPLETED: 3,
        S.FAILED: 4,
        S.CANCELED: 5,
        S.INPUT_REQUIRED: 6,
        S.REJECTED: 7,
        S.AUTH_REQUIRED: 8,
    }
    for state, number in numbers.items():
        assert state.value == f"TASK_STATE_{state.name}"
        assert state.proto_number == number
        assert S.from_proto_number(number) is state
    with pytest.raises(KeyError):
        S.from_proto_number(9)


def test_transition_table_shape() -> None:
    assert set(TRANSITIONS) == set(S)
    for old, targets in TRANSITIONS.items():
        assert isinstance(targets, frozenset)
        assert S.UNSPECIFIED not in targets, "nothing moves back to UNSPECIFIED"
        for new in S:
            assert can_transition(old, new) == old.can_transition_to(new) == (new in targets)


def test_terminal_states_are_absorbing() -> None:
    for state in TERMINAL:
        assert TRANSITIONS[state] == frozenset()
        assert not state.is_cancelable


def test_non_terminal_states_may_repeat_and_be_canceled() -> None:
    for state in set(S) - TERMINAL - {S.UNSPECIFIED}:
        assert state.can_transition_to(state), "a fresh status update keeps the state"
        assert state.is_cancelable
        assert TERMINAL <= TRANSITIONS[state]


def _reachable(start: TaskState) -> set[TaskState]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in TRANSITIONS[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_state_reachable_from_submitted() -> None:
    assert _reachable(S.SUBMITTED) == set(S) - {S.UNSPECIFIED}


def test_every_state_can_still_finish() -> None:
    for state in S:
        assert _reachable(state) & TERMINAL, f"{state} is a dead end"


def test_interrupted_states_resume() -> None:
    for state in INTERRUPTED:
        assert {S.WORKING, S.SUBMITTED} <= TRANSITIONS[state]
    assert S.WORKING not in TRANSITIONS[S.COMPLETED]
    assert S.SUBMITTED not in TRANSITIONS[S.WORKING]


@given(st.lists(st.sampled_from(list(S)), max_size=12))
def test_with_status_follows_the_table(states: list[TaskState]) -> None:
    task = m.Task.submitted(m.Message.user("go"))
    for new in states:
        old = task.state
        if can_transition(old, new):
            task = task.with_status(new)
            assert task.state is new
        else:
            with pytest.raises(InvalidModelError, match="illegal transition") as info:
                task.with_status(new)
            assert info.value.field == "Task.status"
            assert f"{old.name} -> {new.name}" in str(info.value)


# --------------------------------------------------------------------------- task helpers


def test_with_status_illegal_transition() -> None:
    done = m.Task(id="t", status=m.TaskStatus(state=S.COMPLETED))
    with pytest.raises(InvalidModelError, match="illegal transition COMPLETED -> WORKING") as info:
        done.with_status(S.WORKING)
    assert info.value.field == "Task.status"
    with pytest.raises(InvalidModelError):
        done.with_status(m.TaskStatus(state=S.COMPLETED))


def test_with_status_stamps_and_keeps_the_original() -> None:
    task = m.Task(id="t", status=m.TaskStatus(state=S.SUBMITTED))
    before = datetime.now(UTC)
    note = m.Message.agent("working on it")
    working = task.with_status(S.WORKING, note)
    assert task.state is S.SUBMITTED
    assert working.state is S.WORKING and working.status.message == note
    stamp = working.status.timestamp
    assert stamp is not None and stamp.utcoffset() == timedelta(0)
    assert stamp.microsecond % 1000 == 0
    assert before - timedelta(seconds=1) <= stamp <= datetime.now(UTC)
    explicit = m.TaskStatus(state=S.INPUT_REQUIRED)
    assert working.with_status(explicit).status is explicit


def test_add_artifact_replaces_same_id() -> None:
    a1 = m.Artifact(parts="one", artifact_id="a")
    b = m.Artifact(parts="b", artifact_id="b")
    a2 = m.Artifact(parts="two", artifact_id="a")
    task = m.Task(id="t", status=STATUS).add_artifact(a1).add_artifact(b)
    assert [x.artifact_id for x in task.artifacts] == ["a", "b"]
    replaced = task.add_artifact(a2)
    assert len(replaced.artifacts) == 2
    assert replaced.artifact("a") == a2 and replaced.artifact("b") == b
    assert task.artifact("a") == a1, "the original task is unchanged"
    assert replaced.artifact("missing") is None


def test_add_message_appends() -> None:
    task = m.Task(id="t", status=STATUS)
    first, second = m.Message.user("1"), m.Message.agent("2")
    assert task.add_message(first).add_message(second).history == (first, second)
    assert task.history == ()


def test_message_user_and_agent() -> None:
    u = m.Message.user("hi", m.Part.data({"k": 1}), context_id="c", task_id="t", metadata={"x": 1})
    assert u.role is m.Role.USER
    assert u.parts == (m.Part.text("hi"), m.Part.data({"k": 1}))
    assert (u.context_id, u.task_id, u.metadata) == ("c", "t", {"x": 1})
    uuid.UUID(u.message_id)
    a = m.Message.agent("yo")
    assert a.role is m.Role.AGENT and a.text == "yo"
    assert m.Message.user("same").message_id != m.Message.user("same").message_id
    with pytest.raises(InvalidModelError):
        m.Message.user()


def test_task_submitted() -> None:
    msg = m.Message.user("do it", context_id="ctx")
    task = m.Task.submitted(msg, metadata={"p": 1})
    assert task.state is S.SUBMITTED
    assert task.context_id == "ctx"
    uuid.UUID(task.id)
    assert task.history == (attrs.evolve(msg, task_id=task.id, context_id="ctx"),)
    assert task.status.timestamp is not None and task.status.timestamp.tzinfo is not None
    assert task.metadata == {"p": 1}
    fresh = m.Task.submitted()
    assert fresh.history == () and fresh.context_id and fresh.id != task.id
    pinned = m.Task.submitted(msg, task_id="T", context_id="C")
    assert (pinned.id, pinned.context_id) == ("T", "C")
    assert pinned.history[0].task_id == "T" and pinned.history[0].context_id == "C"


def test_card_helpers() -> None:
    skill = m.AgentSkill(id="s", name="n", description="d", tags=("t",))
    second = m.AgentInterface(url="https://b", protocol_binding="GRPC")
    card = m.AgentCard(
        name="n",
        description="d",
        version="1",
        supported_interfaces=(IFACE, second),
        skills=(skill,),
    )
    assert card.preferred_interface is IFACE
    assert card.skill("s") is skill and card.skill("x") is None
    assert card.default_input_modes == ("text/plain",)


def test_utc_now_is_aware_with_millisecond_precision() -> None:
    now = m.utc_now()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)
    assert now.microsecond % 1000 == 0


# --------------------------------------------------------------------------- value semantics


@pytest.mark.parametrize(
    "duplicate",
    [copy.copy, copy.deepcopy, lambda v: pickle.loads(pickle.dumps(v))],
    ids=["copy", "deepcopy", "pickle"],
)
def test_timestamp_copies_keep_nanoseconds(duplicate: Callable[[Any], Any]) -> None:
    stamp = m.Timestamp.with_nanoseconds(datetime(2000, 1, 1, tzinfo=UTC), 1)
    status = m.TaskStatus(state=TaskState.WORKING, timestamp=stamp)
    twin = duplicate(status)
    assert type(twin.timestamp) is m.Timestamp and twin.timestamp.nanosecond == 1
    assert twin == status and hash(twin) == hash(status)


def test_timestamp_equality_and_hash_include_nanoseconds() -> None:
    base = datetime(2000, 1, 1, 0, 0, 0, 5, tzinfo=UTC)
    one, two = (m.Timestamp.with_nanoseconds(base, n) for n in (1, 2))
    assert one != two and one != base and base != one
    assert m.Timestamp.with_nanoseconds(base, 0) == base
    assert hash(m.Timestamp.with_nanoseconds(base, 0)) == hash(base)
    assert m.Timestamp.with_nanoseconds(base, 1) == one
    assert hash(m.Timestamp.with_nanoseconds(base, 1)) == hash(one)
    with pytest.raises(ValueError):
        m.Timestamp.with_nanoseconds(base, 1000)


@given(data=st.data())
@pytest.mark.parametrize("cls", a2a_st.MODEL_TYPES, ids=lambda c: c.__name__)
def test_equal_values_hash_equal(cls: type[Any], data: st.DataObject) -> None:
    value = data.draw(a2a_st.strategy_for(cls, "python"))
    twin = copy.deepcopy(value)
    assert twin == value and twin is not value
    assert hash(twin) == hash(value)
    assert len({value, twin}) == 1
    assert value in {twin: 1}


@given(a=a2a_st.tasks(), b=a2a_st.tasks())
def test_hash_is_consistent_with_equality(a: m.Task, b: m.Task) -> None:
    if a == b:
        assert hash(a) == hash(b)
    assert (a == b) == (b == a)


def test_models_are_frozen() -> None:
    task = m.Task(id="t", status=STATUS)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        task.id = "u"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        TEXT.text = "x"  # type: ignore[misc]


def test_equality_is_by_value_and_class() -> None:
    assert m.Part.text("a") == m.Part.text("a")
    assert m.Part.text("a") != m.Part.text("b")
    assert m.Part.text("a", metadata={"k": 1}) != m.Part.text("a", metadata={"k": 2})
    assert m.Part.data("a") != m.Part.text("a")
    assert m.Part.file(url="a") != m.Part.text("a")
    assert m.Message(role=m.Role.USER, parts=(TEXT,), message_id="1") != m.Message(
        role=m.Role.USER, parts=(TEXT,), message_id="2"
    )
    # dict-valued fields do not take part in hashing, so such objects still hash.
    tagged = m.Task(id="t", status=STATUS, metadata={"a": [1]})
    assert hash(tagged) == hash(m.Task(id="t", status=STATUS, metadata={"b": 2}))
    assert tagged != m.Task(id="t", status=STATUS, metadata={"b": 2})
    assert {tagged, m.Task(id="t", status=STATUS, metadata={"a": [1]})} == {tagged}


def test_tuple_fields_accept_lists_and_compare_equal() -> None:
    a = m.Message(role=m.Role.USER, parts=[TEXT], message_id="1", extensions=["x"])
    b = m.Message(role=m.Role.USER, parts=(TEXT,), message_id="1", extensions=("x",))
    assert a == b and hash(a) == hash(b)
    assert type(a.parts) is tuple and type(a.extensions) is tuple
