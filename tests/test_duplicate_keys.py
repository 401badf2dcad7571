"""A member name given twice in one JSON object is refused, naming its path.

RFC 8259 §4 leaves a repeated name's meaning open ("unpredictable"), I-JSON (RFC 7493
§2.3) forbids it and protobuf's ProtoJSON parser refuses it; read last-wins, one of
the values is silently lost. ``codec.loads`` (every wire body, response, stream event,
card) and ``codec.decode`` (the accelerator's bytes reader too) raise a
``DecodeError`` at the member's path instead, on both codec paths, identically.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_direct_codec import emit

from a2a_models import codec
from a2a_models import models as m
from a2a_models.codec import _fast, _json
from a2a_models.errors import DecodeError

pytestmark = pytest.mark.usefixtures("codec_path")

TWICE = "given more than once (the names in an object must be unique)"


class _Pairs(list[tuple[str, Any]]):
    """An object as the reference parser saw it: every member, in order."""


def reference_twice(text: str | bytes) -> set[str]:
    """The path of every member named twice in ``text`` (the standard library keeping
    every pair), rendered as the codec renders paths."""
    tree = json.loads(text, object_pairs_hook=_Pairs)
    found: set[str] = set()

    def walk(v: Any, path: list[str | int]) -> None:
        if isinstance(v, _Pairs):
            seen: set[str] = set()
            for k, x in v:
                if k in seen:
                    found.add(_json.where([*path, k]))
                seen.add(k)
                walk(x, [*path, k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, [*path, i])

    walk(tree, [])
    return found


def refused(data: bytes | str) -> DecodeError:
    with pytest.raises(DecodeError) as caught:
        codec.loads(data)
    assert str(caught.value) == f"{caught.value.path}: {TWICE}"
    return caught.value


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"a":1,"a":2}', "$.a"),
        ('{"a":1,"b":{"c":[{"d":1,"e":2,"d":3}]}}', "$.b.c[0].d"),
        ('[0,{"x":{}},{"y":1,"y":1}]', "$[2].y"),
        ('{"a":1,"\\u0061":2}', "$.a"),  # the same name once decoded
        ('{"\\u00e9":1,"é":2}', "$.é"),
        ('{"\\ud834\\udd1e":1,"𝄞":2}', "$['𝄞']"),
        ('{"a\\"":1,"a\\u0022":2}', "$['a\"']"),
        ('{"a:b":1,"a:b":2}', "$['a:b']"),
        ('{"":1,"":2}', "$['']"),
        ('{"n":123456789012345678901234567890,"n":1}', "$.n"),  # the exact (stdlib) parser
        ('{"s":"\\ud800","s":1}', "$.s"),  # a lone surrogate: the stdlib parser too
        ('{"a":{"x":1,"x":2},"a":3}', "$.a"),  # the outermost first
        (' {\n "a" : 1 ,\n "a" : 2 }\n', "$.a"),
    ],
)
def test_a_name_given_twice_is_refused_with_its_path(text: str, path: str) -> None:
    assert refused(text).path == path
    assert refused(text.encode("utf-8", "surrogatepass")).path == path
    assert path in reference_twice(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',  # the same name in other objects
        '{"a":"x:y","b":"\\":\\"","c\\\\":"\\\\","d":"\\\\\\":"}',  # ':' and '"' in strings
        '{"a":1,"A":2,"a ":3,"\\u0062":4}',
        '"a:b"',
        "[]",
        '{"big":123456789012345678901234567890}',
    ],
)
def test_distinct_names_are_kept(text: str) -> None:
    assert codec.loads(text) == json.loads(text)


# --------------------------------------------------------------------------- fuzz

_NAMES = st.sampled_from(["a", "b", "é", "a:b", 'q"', "\\", "𝄞", "", "a\\:"])
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=':"\\{}[],ab\u00e9\U0001d11e', max_size=6),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.lists(st.tuples(_NAMES, inner), max_size=5).map(_Pairs)
    ),
    max_leaves=25,
)


def _text(v: Any, draw: Any) -> str:
    """JSON text of ``v`` (a _Pairs object keeps its repeated names), written by
    test_direct_codec's emit: random white space, escapes and number forms."""
    if isinstance(v, _Pairs):
        body = ",".join(emit(k, draw) + ":" + _text(x, draw) for k, x in v)
        return "{" + body + "}"
    if isinstance(v, list):
        return "[" + ",".join(_text(x, draw) for x in v) + "]"
    return emit(v, draw)


@given(data=st.data())
@settings(max_examples=300)
def test_fuzz_agrees_with_a_parser_keeping_every_pair(data: st.DataObject) -> None:
    text = _text(data.draw(_VALUES, label="value"), data.draw)
    paths = reference_twice(text)
    for form in (text, text.encode("utf-8", "surrogatepass")):
        if paths:
            assert refused(form).path in paths, text
        else:
            assert codec.loads(form) == json.loads(text), text
    # The compiled and the pure member counts agree, on every valid text.
    raw, value = text.encode("utf-8"), json.loads(text)
    assert _json.unique_keys(raw, value) == (not paths)
    native = _fast.unique_keys()
    if native is not None:
        assert native(raw, value) == (not paths)


# --------------------------------------------------------------------------- adversarial


def test_deep_nesting_names_the_whole_path_bounded() -> None:
    depth = 900  # (orjson parses up to 1024 levels; the standard library's limit is near)
    text = '{"a":' * depth + '{"x":1,"x":2}' + "}" * depth
    path = refused(text).path
    assert path.startswith("$.a.a.a") and path.endswith(".a.a.x")
    assert len(path) <= 3 + _json.ID_LIMIT  # cut in the middle: start ... end
    assert codec.loads('{"a":' * depth + '{"x":1}' + "}" * depth) is not None


def test_many_members_are_counted_once_each() -> None:
    """100,000 names: kept, or refused at the one repeated, with no pairwise comparing
    (the test counts; the standard library parses only a text that failed it)."""
    names = [f"k{i}" for i in range(100_000)]
    text = "{" + ",".join(f'"{k}":{i}' for i, k in enumerate(names)) + "}"
    assert len(codec.loads(text)) == 100_000
    assert refused(text[:-1] + ',"k99999":0}').path == "$.k99999"
    assert refused(text[:-1] + ',"k\\u0030":0}').path == "$.k0"


def test_backslash_runs_before_a_quote() -> None:
    for n in range(6):
        name = "\\\\" * n  # n escaped backslashes: the quote after them closes the name
        text = f'{{"{name}":1,"{name}\\"":2,"b":":"}}'
        assert len(codec.loads(text)) == 3
        assert refused(f'{{"{name}":1,"{name}":2}}').path == _json.where(["\\" * n])


def test_a_huge_name_is_cut_in_the_message() -> None:
    name = "h" * 1_000_000
    error = refused(f'{{"{name}":1,"{name}":2}}')
    assert error.path == "$['" + "h" * 64 + "'... (1000000 characters)]"


# --------------------------------------------------------------------------- decode


MESSAGE_10 = '"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]'
MESSAGE_03 = '"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"x"}]'


@pytest.mark.parametrize(
    ("dialect", "tp", "text", "path"),
    [
        ("1.0", m.Message, f'{{{MESSAGE_10},"messageId":"n"}}', "$.messageId"),
        ("1.0", m.Message, f'{{{MESSAGE_10},"metadata":{{"k":1,"k":2}}}}', "$.metadata.k"),
        ("1.0", m.Message, f'{{{MESSAGE_10},"zz":1,"zz":2}}', "$.zz"),  # unknown, ignored
        (
            "1.0",
            m.Message,
            '{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","text":"y"}]}',
            "$.parts[0].text",
        ),
        (
            "1.0",
            m.Message,
            '{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"a":{"b":1,"b":1}}}]}',
            "$.parts[0].data.a.b",
        ),
        ("0.3", m.Message, f'{{{MESSAGE_03},"kind":"message"}}', "$.kind"),  # a constant
        (
            "0.3",
            m.Message,
            '{"kind":"message","messageId":"m","role":"user","parts":'
            '[{"kind":"file","file":{"uri":"u","uri":"v"}}]}',
            "$.parts[0].file.uri",
        ),
        (
            "0.3-http",
            m.Message,
            '{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}],"content":[]}',
            "$.content",
        ),
        ("1.0", m.SendMessageRequest, f'{{"message":{{{MESSAGE_10},"role":"ROLE_USER"}}}}',
         "$.message.role"),
        ("1.0", m.Message, f'{{{MESSAGE_10},' + ",".join(f'"u{i}":{i}' for i in range(20)) +
         ',"u3":0}', "$.u3"),  # more unknown members than the reader keeps
    ],
)  # fmt: skip
def test_decode_refuses_a_name_twice(dialect: str, tp: Any, text: str, path: str) -> None:
    for data in (text.encode(), text):
        with pytest.raises(DecodeError) as caught:
            codec.decode(tp, data, dialect)
        assert caught.value.path == path
        assert caught.value.expected == TWICE
    read = codec._decoder(tp, dialect, False)[2]
    if read is not None:  # the bytes reader gave up (the existing path said why)
        assert read(text.encode()) is None


def test_decode_keeps_other_members_once_each() -> None:
    text = f'{{{MESSAGE_10},"zz":1,"zy":2,"metadata":{{"zz":{{"zz":1}}}}}}'
    message = codec.decode(m.Message, text.encode())
    assert message.metadata == {"zz": {"zz": 1}}
    many = f"{{{MESSAGE_10}," + ",".join(f'"u{i}":{i}' for i in range(20)) + "}"
    assert codec.decode(m.Message, many.encode()).message_id == "m"


# --------------------------------------------------------------------------- clients


def test_clients_refuse_a_reply_naming_a_member_twice() -> None:
    """JSON-RPC responses and stream events, HTTP+JSON results and events, agent cards."""
    from a2a_models.adapters.http import decode_card
    from a2a_models.errors import InvalidAgentResponseError
    from a2a_models.protocol import decode_rest_result, method_for, parse_response

    with pytest.raises(InvalidAgentResponseError) as rpc:
        parse_response(b'{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","id":"u"}}}')
    assert str(rpc.value) == f"[-32006] Invalid JSON-RPC response: $.result.task.id: {TWICE}"
    task = b'{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING","state":"x"}}'
    with pytest.raises(DecodeError) as rest:
        decode_rest_result(method_for("GetTask", "1.0"), task, "1.0")
    assert rest.value.path == "$.status.state"
    card = b'{"name":"a","name":"b","description":"d","version":"1","supportedInterfaces":[]}'
    with pytest.raises(DecodeError) as found:
        decode_card(card)
    assert found.value.path == "$.name"


def test_the_compiled_count_takes_any_bytes() -> None:
    """Not JSON (a caller's bytes, cut texts): an answer, never a read past the end."""
    native = _fast.unique_keys()
    if native is None:
        return
    for raw in (b"\\", b'"\\', b'"a\\', b"", b":", b"\\u003", b"x" * 9 + b"\\u003a", b'{"a":'):
        assert native(raw, {}) in (True, False)
    with pytest.raises(TypeError):
        native("text", {})
