"""Decoding hostile input: only ``DecodeError`` may escape, always with a ``$`` path, fast.

Hypothesis feeds every decoder (every model type and union alias, every
dialect) with arbitrary JSON values, arbitrary bytes and text, objects built
from the A2A member names, and mutated valid payloads (a member deleted, a
leaf replaced by a value of another type, deep nesting, huge numbers, bad
base64, bad timestamps, bad enum values, unknown members). Whatever decodes
must be a valid model of the requested type.

Known decoder bugs are strict xfails with minimal examples; the property
tests accept only those results (see ``_KNOWN_INVALID_OUTPUT``) so they stay
green and keep looking for new ones.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import time
import typing
from datetime import timedelta
from typing import Any

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from a2a_models import codec
from a2a_models import models as m
from a2a_models.errors import DecodeError, EncodeError, InvalidModelError
from a2a_models.testing import strategies as a2a_st

# Every test here runs on the pure codec and on the compiled accelerator.
pytestmark = pytest.mark.usefixtures("codec_path")

JSON_DIALECTS = ("1.0", "0.3", "0.3-http")
ALL_DIALECTS = (*JSON_DIALECTS, "python")
#: A decode that takes longer than this (seconds) counts as a hang.
TIME_LIMIT = 10.0


def _valid_path(path: str) -> bool:
    """Whether ``path`` is ``$`` followed by ``.name``, ``[index]`` or ``['key']`` segments."""
    if not path.startswith("$"):
        return False
    i = 1
    while i < len(path):
        if path[i] == ".":
            # A Python identifier (str.isidentifier, as the codec decides: "A·" is
            # one though \w does not match "·"); other keys are written ['key'].
            end = min(j for j in (path.find(".", i + 1), path.find("[", i + 1), len(path)) if j > 0)
            if not path[i + 1 : end].isidentifier():
                return False
            i = end
        elif path.startswith("[", i):
            digits = re.compile(r"\[\d+\]").match(path, i)
            if digits is not None:
                i = digits.end()
                continue
            # A Python string literal (repr of the key), then "]".
            end = i + 2
            while True:
                end = path.find("]", end)
                if end < 0:
                    return False
                try:
                    key = ast.literal_eval(path[i + 1 : end])
                except (SyntaxError, ValueError):
                    end += 1
                    continue
                if not isinstance(key, str):
                    return False
                break
            i = end + 1
        else:
            return False
    return True


@functools.cache
def _unavailable_reason(dialect: str) -> str | None:
    try:
        codec.from_wire(m.TaskStatus, {}, dialect)
    except NotImplementedError as exc:
        return f"dialect {dialect} is not implemented yet ({exc!r})"
    except DecodeError:
        pass
    return None


def require(dialect: str) -> None:
    reason = _unavailable_reason(dialect)
    if reason is not None:
        pytest.skip(reason)


@functools.cache
def _has_form(tp: Any, dialect: str) -> bool:
    try:
        codec.from_wire(tp, None, dialect)
    except TypeError as exc:
        if "has no" in str(exc):
            return False
        raise
    except DecodeError:
        pass
    return True


def _name(tp: Any) -> str:
    return {m.StreamResponse: "StreamResponse", m.SendMessageResponse: "SendMessageResponse"}.get(
        tp, getattr(tp, "__name__", repr(tp))
    )


def _instance_of(tp: Any) -> tuple[type[Any], ...]:
    args = typing.get_args(tp)
    return tuple(args) if args else (tp,)


# --------------------------------------------------------------------------- known decoder bugs

#: Reported; each has a strict-xfail example below, and the property tests
#: accept these (and only these) invalid results so they keep looking for others.
_KNOWN_INVALID_OUTPUT: dict[str, re.Pattern[str]] = {}


def _known_invalid(problem: str, dialect: str) -> bool:
    pattern = _KNOWN_INVALID_OUTPUT.get(dialect)
    return pattern is not None and pattern.search(problem) is not None


def _validation_problems(value: Any) -> list[str]:
    """Every model-validator complaint about ``value`` and the models inside it."""
    problems: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, tuple):
            for item in v:
                walk(item)
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)
        elif attrs.has(type(v)):
            for a in attrs.fields(type(v)):
                try:
                    value = getattr(v, a.name)
                except AttributeError:
                    problems.append(f"{type(v).__name__}.{a.name}: not set (AttributeError)")
                    continue
                if a.validator is not None:
                    try:
                        a.validator(v, a, value)
                    except InvalidModelError as exc:
                        problems.append(str(exc))
                if a.name not in ("metadata", "data", "params", "header"):
                    walk(value)

    walk(value)
    return problems


def check_decode(tp: Any, payload: Any, dialect: str, *, strict: bool = False) -> Any:
    """Decode ``payload``; only DecodeError may escape; results must be valid ``tp`` values."""
    start = time.perf_counter()
    try:
        if isinstance(payload, bytes | str):
            result = codec.decode(tp, payload, dialect, strict=strict)
        elif dialect == "python":
            result = codec.from_dict(tp, payload, strict=strict)
        else:
            result = codec.from_wire(tp, payload, dialect, strict=strict)
    except DecodeError as exc:
        elapsed = time.perf_counter() - start
        assert elapsed < TIME_LIMIT, f"decode took {elapsed:.1f}s before failing"
        assert exc.path.startswith("$"), exc.path
        assert _valid_path(exc.path), f"malformed JSON path {exc.path!r}"
        assert exc.expected, "empty error message"
        assert str(exc) == f"{exc.path}: {exc.expected}"
        return None
    elapsed = time.perf_counter() - start
    assert elapsed < TIME_LIMIT, f"decode took {elapsed:.1f}s"
    assert isinstance(result, _instance_of(tp)), type(result)
    problems = [p for p in _validation_problems(result) if not _known_invalid(p, dialect)]
    assert problems == [], f"decoded an invalid model: {problems}"
    return result


def _matrix() -> list[Any]:
    return [
        pytest.param(tp, dialect, id=f"{dialect}-{_name(tp)}")
        for dialect in ALL_DIALECTS
        for tp in (*a2a_st.MODEL_TYPES, *a2a_st.UNION_TYPES)
    ]


def _prepare(tp: Any, dialect: str) -> None:
    require(dialect)
    if not _has_form(tp, dialect):
        pytest.skip(f"{_name(tp)} has no {dialect} form")


# --------------------------------------------------------------------------- input strategies

_ENUM_WORDS = [
    *(s.value for s in m.TaskState),
    *(r.value for r in m.Role),
    "submitted",
    "working",
    "completed",
    "canceled",
    "unknown",
    "input-required",
    "user",
    "agent",
    "TASK_STATE_CANCELLED",
    "task",
    "message",
    "status-update",
    "artifact-update",
    "text",
    "file",
    "data",
    "apiKey",
    "http",
    "oauth2",
    "openIdConnect",
    "mutualTLS",
    "header",
    "query",
    "cookie",
    "JSONRPC",
    "GRPC",
    "HTTP+JSON",
    "0.3.0",
    "1.0",
    "2025-01-31T12:00:00Z",
    "2025-01-31T12:00:00.123456+00:00",
    "aGVsbG8=",
    "tasks/abc",
    "tasks/t/pushNotificationConfigs/c",
]


def _member_names() -> list[str]:
    names = {
        "kind",
        "type",
        "in",
        "file",
        "bytes",
        "uri",
        "mimeType",
        "name",
        "content",
        "fileWithUri",
        "fileWithBytes",
        "task",
        "message",
        "statusUpdate",
        "artifactUpdate",
        "status_update",
        "artifact_update",
        "list",
        "schemes",
        "pushNotificationConfig",
        "pushNotificationConfigId",
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "transport",
        "supportsAuthenticatedExtendedCard",
        "security",
        "blocking",
        "pushNotification",
        "parent",
        "configs",
        "apiKeySecurityScheme",
        "httpAuthSecurityScheme",
        "oauth2SecurityScheme",
        "openIdConnectSecurityScheme",
        "mtlsSecurityScheme",
        "api_key_security_scheme",
        "authorizationCode",
        "clientCredentials",
        "implicit",
        "password",
        "deviceCode",
        "raw",
        "text",
        "data",
    }
    for cls in a2a_st.MODEL_TYPES:
        for a in attrs.fields(cls):
            names.add(a.name)
            head, *rest = a.name.split("_")
            names.add(head + "".join(w.capitalize() for w in rest))
    return sorted(names)


_MEMBERS = _member_names()

_leaf = st.one_of(
    a2a_st.json_scalars(surrogates=True),
    st.sampled_from(_ENUM_WORDS),
)

#: Objects built from A2A member names: they get past the first checks and
#: reach the nested decoders.
shaped_json: st.SearchStrategy[Any] = st.recursive(
    _leaf,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(_MEMBERS), children, max_size=6)
    ),
    max_leaves=25,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for seg in path:
        value = value[seg]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = _get(value, path[:-1])
    parent[path[-1]] = new
    return value


def _json_type(v: Any) -> str:
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, int | float):
        return "number"
    return type(v).__name__


_BAD_BASE64 = ["!!!", "a", "abcde", "é", "YQ=x", "Y Q==", "-_-_*", "====", "\ud800", 12, None, []]
_BAD_TIMESTAMPS = [
    "",
    "yesterday",
    "2025-13-01T00:00:00Z",
    "2025-01-01T25:00:00Z",
    "2025-02-30T00:00:00Z",
    "2025-01-01",
    "2025-01-01T00:00:00+24:00",
    "2025-01-01T00:00:00.1234567890Z",
    "10000-01-01T00:00:00Z",
    "+2025-01-01T00:00:00Z",
    "2025-01-01T00:00:00Q",
    "\ud800" * 20,
    12345,
    1.5,
    True,
    [],
    {},
]
_HUGE_NUMBERS = [
    2**31,
    -(2**31) - 1,
    2**63,
    2**64,
    10**30,
    -(10**30),
    10**4000,
    -(10**4000),
    1e308,
    -1e308,
    5e-324,
    1.5,
    -0.0,
    float(2**53),
]
_BASE64_KEYS = {"raw", "bytes", "fileWithBytes"}
_TIMESTAMP_KEYS = {"timestamp", "statusTimestampAfter", "status_timestamp_after"}
_DEEP = "\x00deep\x00"


@st.composite
def mutated_payloads(draw: st.DrawFn, tp: Any, dialect: str) -> Any:
    """A valid payload of ``tp`` in ``dialect`` with one thing broken.

    Returns the wire value, or bytes (for deep nesting, built as text).
    """
    strategy_dialect = dialect if a2a_st.expressible(tp, dialect) else "python"
    value = draw(a2a_st.strategy_for(tp, strategy_dialect), label="valid value")
    as_type = tp if tp in a2a_st.UNION_TYPES else None
    try:
        if dialect == "python":
            wire = codec.to_dict(value, as_type=as_type)
        else:
            wire = codec.to_wire(value, dialect, as_type=as_type)
    except Exception:
        assume(False)  # not expressible here: nothing to mutate
    paths = _paths(wire)
    op = draw(
        st.sampled_from(
            ["delete", "retype", "deep", "huge", "base64", "timestamp", "enum", "unknown", "null"]
        ),
        label="mutation",
    )
    if op == "base64":
        paths = [p for p in paths if p and p[-1] in _BASE64_KEYS] or paths
    elif op == "timestamp":
        paths = [p for p in paths if p and p[-1] in _TIMESTAMP_KEYS] or paths
    path = draw(st.sampled_from(paths), label="path")
    old = _get(wire, path)
    if op == "delete":
        if not path:
            return {}
        parent = _get(wire, path[:-1])
        del parent[path[-1]]
        return wire
    if op == "retype":
        new = draw(
            a2a_st.json_values(max_leaves=4).filter(lambda v: _json_type(v) != _json_type(old)),
            label="replacement",
        )
        return _set(wire, path, new)
    if op == "huge":
        return _set(wire, path, draw(st.sampled_from(_HUGE_NUMBERS)))
    if op == "base64":
        return _set(wire, path, draw(st.sampled_from(_BAD_BASE64)))
    if op == "timestamp":
        return _set(wire, path, draw(st.sampled_from(_BAD_TIMESTAMPS)))
    if op == "enum":
        return _set(
            wire, path, draw(st.sampled_from([*_ENUM_WORDS, "", 99, -1, 2**40, "TASK_STATE_"]))
        )
    if op == "unknown":
        target = _get(wire, path)
        if isinstance(target, dict):
            target[draw(st.sampled_from(["zzUnknown", "kind", "type", "@type"]))] = draw(
                shaped_json
            )
            return wire
        return _set(wire, path, {"zzUnknown": target})
    if op == "null":
        return _set(wire, path, None)
    # deep: replace the node by thousands of nested arrays/objects, as text.
    depth = draw(st.sampled_from([50, 1000, 1025, 5000, 100_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    inner = draw(st.sampled_from(["1", "null", '"x"', "[]", "{}"]))
    if dialect == "python":
        return _set(wire, path, _nest(min(depth, 2000), opener == "["))
    text = json.dumps(_set(wire, path, _DEEP), ensure_ascii=True, default=str)
    marker = json.dumps(_DEEP)
    return text.replace(marker, opener * depth + inner + closer * depth, 1).encode()


def _nest(depth: int, as_list: bool) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


def _to_bytes(wire: Any) -> bytes:
    return json.dumps(wire, ensure_ascii=True).encode()


# --------------------------------------------------------------------------- properties


@pytest.mark.parametrize(("tp", "dialect"), _matrix())
@given(data=st.data())
def test_hostile_input(tp: Any, dialect: str, data: st.DataObject) -> None:
    """Arbitrary JSON, objects of A2A member names, or a mutated valid payload."""
    _prepare(tp, dialect)
    kind = data.draw(st.sampled_from(["arbitrary", "shaped", "mutated", "mutated"]), label="kind")
    if kind == "arbitrary":
        payload = data.draw(a2a_st.json_values(max_leaves=15, surrogates=True), label="payload")
    elif kind == "shaped":
        payload = data.draw(shaped_json, label="payload")
    else:
        payload = data.draw(mutated_payloads(tp, dialect), label="payload")
    check_decode(tp, payload, dialect)
    if isinstance(payload, bytes):
        return
    check_decode(tp, payload, dialect, strict=True)
    if dialect != "python":
        check_decode(tp, _to_bytes(payload), dialect)


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@pytest.mark.parametrize("tp", [m.Task, m.AgentCard, m.StreamResponse, m.Part], ids=_name)
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_arbitrary_bytes(tp: Any, dialect: str, data: bytes) -> None:
    _prepare(tp, dialect)
    check_decode(tp, data, dialect)
    try:
        text = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return
    check_decode(tp, text, dialect)


# --------------------------------------------------------------------------- large and deep input


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@pytest.mark.parametrize(
    "payload",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b'{"id":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":'
        + b"[" * 5000
        + b"]" * 5000
        + b"}",
        b"1" * 5000,
        b"-" + b"9" * 4400,
        b"1e999999",
        b'"' + b"\\ud800" * 10_000 + b'"',
        b"\xff\xfe{}",
        b"\xef\xbb\xbf{}",
        b"",
        b"   ",
        b"NaN",
        b'{"id":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":{"x":NaN}}',
        b'{"id":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":{"x":Infinity}}',
        b'{"id":"t","id":"u","status":{"state":"TASK_STATE_WORKING"}}',
    ],
    ids=[
        "deep-arrays",
        "deep-objects",
        "deep-metadata",
        "5000-digits",
        "4400-digit-negative",
        "huge-exponent",
        "many-lone-surrogates",
        "utf16-bom",
        "utf8-bom",
        "empty",
        "blank",
        "nan",
        "nan-in-metadata",
        "infinity-in-metadata",
        "duplicate-key",
    ],
)
def test_pathological_documents(dialect: str, payload: bytes) -> None:
    require(dialect)
    for tp in (m.Task, m.StreamResponse, m.AgentCard):
        check_decode(tp, payload, dialect)


@pytest.mark.parametrize("dialect", ALL_DIALECTS)
def test_large_documents_decode_quickly(dialect: str) -> None:
    require(dialect)
    part = {"1.0": {"text": "x"}, "0.3": {"kind": "text", "text": "x"}}.get(dialect, {"text": "x"})
    message = {
        "1.0": {"messageId": "m", "role": "ROLE_USER", "parts": [part] * 20_000},
        "0.3": {"kind": "message", "messageId": "m", "role": "user", "parts": [part] * 20_000},
        "0.3-http": {"messageId": "m", "role": "ROLE_USER", "content": [part] * 20_000},
        "python": {"message_id": "m", "role": "ROLE_USER", "parts": [part] * 20_000},
    }[dialect]
    result = check_decode(m.Message, message, dialect)
    assert result is not None and len(result.parts) == 20_000
    # The one bad part is found (and reported with its index) quickly too.
    message[("content" if dialect == "0.3-http" else "parts")][-1] = {"nope": 1}
    start = time.perf_counter()
    with pytest.raises(DecodeError, match=r"\[19999\]"):
        codec.from_wire(m.Message, message, dialect)
    assert time.perf_counter() - start < TIME_LIMIT


# --------------------------------------------------------------------------- exact paths and messages

_WORKING_10 = {"state": "TASK_STATE_WORKING"}
_CARD_10 = {
    "name": "a",
    "description": "b",
    "version": "1",
    "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
    "capabilities": {},
    "defaultInputModes": ["t"],
    "defaultOutputModes": ["t"],
    "skills": [{"id": "s", "name": "n", "description": "d", "tags": ["t"]}],
}


def _msg10(*parts: Any) -> dict[str, Any]:
    return {"role": "ROLE_USER", "messageId": "m", "parts": list(parts)}


EXACT: list[tuple[str, Any, Any, str]] = [
    (
        "1.0",
        m.Task,
        {
            "id": "x",
            "status": _WORKING_10,
            "history": [_msg10({"text": "a"}, {"text": "b", "url": "u"})],
        },
        "$.history[0].parts[1]: expected exactly one of text, raw, url, data",
    ),
    (
        "1.0",
        m.Task,
        {"id": "x", "status": _WORKING_10, "history": [_msg10({"text": "a"}, {"metadata": {}})]},
        "$.history[0].parts[1]: expected exactly one of text, raw, url, data",
    ),
    ("1.0", m.Task, {"status": _WORKING_10}, "$.id: required field missing"),
    ("1.0", m.Task, {"id": 5, "status": _WORKING_10}, "$.id: expected a string, got number"),
    ("1.0", m.Task, [], "$: expected an object (Task), got array"),
    (
        "1.0",
        m.Task,
        {"id": "x", "status": _WORKING_10, "metadata": []},
        "$.metadata: expected an object, got array",
    ),
    (
        "1.0",
        m.Task,
        {"id": "x", "status": {"state": "TASK_STATE_WORKING", "timestamp": "yesterday"}},
        "$.status.timestamp: expected an RFC 3339 timestamp like 2025-01-31T12:00:00Z, got 'yesterday'",
    ),
    (
        "1.0",
        m.Task,
        {
            "id": "x",
            "status": _WORKING_10,
            "artifacts": [{"artifactId": "a", "parts": [{"raw": "!!!"}]}],
        },
        "$.artifacts[0].parts[0].raw: expected base64 data, got '!!!'",
    ),
    (
        "1.0",
        m.AgentCard,
        {
            **_CARD_10,
            "securitySchemes": {
                "my key": {
                    "oauth2SecurityScheme": {
                        "flows": {"clientCredentials": {"tokenUrl": 5, "scopes": {}}}
                    }
                }
            },
        },
        "$.securitySchemes['my key'].oauth2SecurityScheme.flows.clientCredentials.tokenUrl: expected a string, got number",
    ),
    (
        "1.0",
        m.AgentCard,
        {
            **_CARD_10,
            "skills": [
                {
                    **_CARD_10["skills"][0],
                    "securityRequirements": [{"schemes": {"oauth": {"list": ["a", 3]}}}],
                }
            ],
        },
        "$.skills[0].securityRequirements[0].schemes.oauth.list[1]: expected a string, got number",
    ),
    (
        "1.0",
        m.StreamResponse,
        {"task": {"id": "x", "status": {}}},
        "$.task.status.state: required field missing",
    ),
    (
        "1.0",
        m.StreamResponse,
        {"task": {"id": "x", "status": _WORKING_10}, "message": _msg10({"text": "a"})},
        "$: expected exactly one of task, message, statusUpdate, artifactUpdate",
    ),
    (
        "1.0",
        m.SendMessageRequest,
        {"message": _msg10({"text": "a"}), "configuration": {"historyLength": "many"}},
        "$.configuration.historyLength: expected an integer, got string",
    ),
    (
        "1.0",
        m.GetTaskRequest,
        {"id": "x", "historyLength": 2**40},
        "$.historyLength: 1099511627776 is outside the int32 range",
    ),
    ("1.0", m.Task, b'{"id": ', "$: expected valid JSON"),
    (
        "0.3",
        m.Task,
        {
            "id": "x",
            "contextId": "c",
            "kind": "task",
            "status": {"state": "working"},
            "history": [
                {
                    "kind": "message",
                    "role": "user",
                    "messageId": "m",
                    "parts": [{"kind": "text", "text": "a"}, {"kind": "file", "file": {}}],
                }
            ],
        },
        "$.history[0].parts[1].file: expected exactly one of bytes, uri",
    ),
    (
        "0.3",
        m.Task,
        {"id": "x", "contextId": "c", "kind": "message", "status": {"state": "working"}},
        "$.kind: expected 'task', got 'message'",
    ),
    (
        "0.3",
        m.StreamResponse,
        {"kind": "status"},
        "$.kind: expected kind to be one of task, message, status-update, artifact-update, got 'status'",
    ),
    (
        "0.3",
        m.Part,
        {"kind": "file", "file": {"bytes": "%%%"}},
        "$.file.bytes: expected base64 data, got '%%%'",
    ),
    (
        "0.3-http",
        m.Part,
        {"file": {"fileWithBytes": "%%%"}},
        "$.file.fileWithBytes: expected base64 data, got '%%%'",
    ),
    (
        "0.3-http",
        m.GetTaskRequest,
        {"name": "task/abc"},
        "$.name: expected a resource name like tasks/<id>, got 'task/abc'",
    ),
    (
        "python",
        m.Task,
        {"id": "x", "status": {"state": "TASK_STATE_WORKING", "timestamp": 5}},
        "$.status.timestamp: expected an RFC 3339 timestamp string, got number",
    ),
]


@pytest.mark.parametrize(
    ("dialect", "tp", "payload", "message"),
    [
        pytest.param(*case, id=f"{case[0]}-{i}-{case[3].split(':')[0]}")
        for i, case in enumerate(EXACT)
    ],
)
def test_exact_error_paths(dialect: str, tp: Any, payload: Any, message: str) -> None:
    require(dialect)
    with pytest.raises(DecodeError) as info:
        codec.decode(tp, payload, dialect)
    if message.endswith("expected valid JSON"):
        assert str(info.value).startswith(message)
    else:
        assert str(info.value) == message
    assert info.value.path == message.split(": ")[0]


def test_strict_mode_rejects_unknown_members_with_their_path() -> None:
    payload = {"id": "x", "status": {"state": "TASK_STATE_WORKING", "extra": 1}}
    assert codec.decode(m.Task, payload).id == "x"
    with pytest.raises(DecodeError) as info:
        codec.decode(m.Task, payload, strict=True)
    assert info.value.path == "$.status.extra"


def test_decode_of_a_subclass_checks_the_variant() -> None:
    with pytest.raises(DecodeError, match="expected a TextPart, got a DataPart"):
        codec.decode(m.TextPart, {"data": {}})


# --------------------------------------------------------------------------- once-known bugs (fixed)


def _deep_with(inner: bytes) -> bytes:
    return b"[" * 100_000 + inner + b"]" * 100_000


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@pytest.mark.parametrize(
    "payload",
    [
        _deep_with(b"1" * 25),
        _deep_with(b"-" + b"9" * 19),
        _deep_with(b'"\\ud800"'),
        _deep_with(b'"\\udfff"'),
        b'{"a":' * 100_000 + b'"\\udc00"' + b"}" * 100_000,
    ],
    ids=["long-digit-run", "negative-19-digits", "high-surrogate", "low-surrogate", "objects"],
)
def test_deep_input_on_the_fallback_parser(dialect: str, payload: bytes) -> None:
    """Input the exact (stdlib) parser handles is deep too: DecodeError, not RecursionError."""
    require(dialect)
    with pytest.raises(DecodeError) as info:
        codec.decode(m.Task, payload, dialect)
    assert info.value.path == "$"
    assert check_decode(m.Task, payload, dialect) is None


@pytest.mark.parametrize("dialect", ["1.0", "python", "0.3", "0.3-http"])
@pytest.mark.parametrize(
    "stamp",
    [
        "0001-01-01T00:00:00+01:00",
        "0001-01-01T00:59:59.999999999+01:00",
        "9999-12-31T23:59:59-01:00",
        "9999-12-31T23:59:00.5-00:01",
    ],
)
def test_timestamps_leaving_the_range_in_utc_are_decode_errors(dialect: str, stamp: str) -> None:
    require(dialect)
    state = "working" if dialect == "0.3" else "TASK_STATE_WORKING"
    with pytest.raises(DecodeError, match="out of range") as info:
        codec.from_wire(m.TaskStatus, {"state": state, "timestamp": stamp}, dialect)
    assert info.value.path == "$.timestamp"


@pytest.mark.parametrize("dialect", ["1.0", "python", "0.3", "0.3-http"])
def test_timestamps_at_the_edges_of_the_range_in_utc_decode(dialect: str) -> None:
    require(dialect)
    state = "working" if dialect == "0.3" else "TASK_STATE_WORKING"
    for stamp in ("0001-01-01T01:00:00+01:00", "9999-12-31T22:59:59.999999999-01:00"):
        status = codec.from_wire(m.TaskStatus, {"state": state, "timestamp": stamp}, dialect)
        assert status.timestamp is not None and status.timestamp.utcoffset() == timedelta(0)


_NEGATIVE_COUNTS: dict[str, list[tuple[Any, Any]]] = {
    "1.0": [
        (m.GetTaskRequest, {"id": "t", "historyLength": -1}),
        (m.ListTasksRequest, {"pageSize": -3}),
        (m.ListTasksRequest, {"historyLength": "-1"}),
        (m.ListTaskPushNotificationConfigsRequest, {"taskId": "t", "pageSize": -1}),
        (m.SendMessageConfiguration, {"historyLength": -1}),
    ],
    "python": [
        (m.GetTaskRequest, {"id": "t", "history_length": -1}),
        (m.ListTasksRequest, {"page_size": -3}),
        (m.SendMessageConfiguration, {"history_length": -1}),
    ],
    "0.3": [
        (m.GetTaskRequest, {"id": "t", "historyLength": -1}),
        (m.SendMessageConfiguration, {"historyLength": -1}),
    ],
    "0.3-http": [
        (m.GetTaskRequest, {"name": "tasks/t", "historyLength": -1}),
        (m.SendMessageConfiguration, {"historyLength": "-2"}),
    ],
}


@pytest.mark.parametrize(
    ("dialect", "tp", "payload"),
    [
        pytest.param(d, tp, payload, id=f"{d}-{tp.__name__}-{i}")
        for d, cases in _NEGATIVE_COUNTS.items()
        for i, (tp, payload) in enumerate(cases)
    ],
)
def test_negative_counts_are_decode_errors(dialect: str, tp: Any, payload: Any) -> None:
    require(dialect)
    with pytest.raises(DecodeError, match="negative"):
        codec.from_wire(tp, payload, dialect)


@pytest.mark.parametrize(
    ("dialect", "payload"),
    [
        pytest.param("1.0", {"apiKeySecurityScheme": {"location": "body", "name": "k"}}),
        pytest.param("1.0", {"apiKeySecurityScheme": {"location": "HEADER", "name": "k"}}),
        pytest.param("python", {"api_key_security_scheme": {"location": "", "name": "k"}}),
        pytest.param("0.3", {"type": "apiKey", "in": "body", "name": "k"}),
        pytest.param("0.3-http", {"apiKeySecurityScheme": {"location": "path", "name": "k"}}),
    ],
)
def test_api_key_location_must_be_header_query_or_cookie(dialect: str, payload: Any) -> None:
    require(dialect)
    with pytest.raises(DecodeError, match="header, query, cookie"):
        codec.from_wire(m.SecurityScheme, payload, dialect)


@pytest.mark.parametrize(
    ("tp", "payload", "path"),
    [
        (
            m.Message,
            {"role": "ROLE_USER", "message_id": "", "parts": [{"text": "a"}]},
            "$.message_id",
        ),
        (m.Task, {"id": "", "status": {"state": "TASK_STATE_WORKING"}}, "$.id"),
        (
            m.Artifact,
            {"artifact_id": "", "parts": [{"text": "a"}]},
            "$.artifact_id",
        ),
    ],
    ids=["message-id", "task-id", "artifact-id"],
)
def test_python_dialect_rejects_empty_required_strings(tp: Any, payload: Any, path: str) -> None:
    with pytest.raises(DecodeError) as info:
        codec.from_dict(tp, payload)
    assert info.value.path == path


@pytest.mark.parametrize(
    ("dialect", "payload"),
    [
        ("0.3", {"schemes": ["Bearer"]}),
        ("0.3-http", {"schemes": ["Bearer"]}),
        ("0.3", {"schemes": ["Bearer", "Basic"]}),
        ("0.3-http", {"schemes": ["Bearer", "Basic", "Digest"], "credentials": "c"}),
    ],
    ids=["0.3", "0.3-http", "0.3-two-schemes", "0.3-http-three-schemes"],
)
def test_v03_authentication_info_other_schemes(dialect: str, payload: Any) -> None:
    require(dialect)
    info = codec.from_wire(m.AuthenticationInfo, payload, dialect)
    assert info.scheme == payload["schemes"][0]
    assert info.other_schemes == tuple(payload["schemes"][1:])
    assert codec.to_wire(info, dialect) == payload
    assert _validation_problems(info) == []
    if len(payload["schemes"]) > 1:
        with pytest.raises(EncodeError, match="one authentication scheme"):
            codec.to_wire(info, "1.0")
        assert codec.to_wire(info, "1.0", lossy=True)["scheme"] == payload["schemes"][0]


@pytest.mark.parametrize("dialect", ["0.3", "0.3-http"])
@pytest.mark.parametrize("schemes", [[""], ["Bearer", ""], [], None, ["Bearer", 3]], ids=str)
def test_v03_bad_authentication_schemes(dialect: str, schemes: Any) -> None:
    require(dialect)
    payload = {} if schemes is None else {"schemes": schemes}
    with pytest.raises(DecodeError) as info:
        codec.from_wire(m.AuthenticationInfo, payload, dialect)
    assert info.value.path.startswith("$.schemes")
