"""The SSE parser (W3C EventSource rules) and serializer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_models.protocol import (
    SSEError,
    SSEEvent,
    SSEParser,
    format_comment,
    format_event,
)


def parse(*chunks: bytes, parser: SSEParser | None = None) -> list[SSEEvent]:
    parser = parser or SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    parser.close()
    return events


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


def normalized(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ------------------------------------------------------------------------ the W3C rules


def test_fields_and_dispatch() -> None:
    events = parse(b"event: update\nid: 7\nretry: 1500\ndata: hello\n\n")
    assert events == [SSEEvent("hello", "update", "7", 1500)]


def test_multi_line_data_is_joined_with_lf() -> None:
    assert parse(b"data: a\ndata: b\ndata:\ndata: c\n\n")[0].data == "a\nb\n\nc"


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending(eol: bytes) -> None:
    stream = eol.join([b"data: x", b"id: 1", b"", b"data: y", b"", b""])
    assert [(e.data, e.id) for e in parse(stream)] == [("x", "1"), ("y", "1")]


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    events = parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert [e.data for e in events] == ["a\nb"]


def test_comments_and_unknown_fields_are_ignored() -> None:
    assert parse(b": keep-alive\nfoo: bar\ndata: x\n: more\n\n") == [SSEEvent("x")]


def test_only_one_leading_space_is_removed() -> None:
    assert parse(b"data:  two\ndata:none\n\n")[0].data == " two\nnone"


def test_a_field_without_colon_has_an_empty_value() -> None:
    assert parse(b"data\ndata\n\n")[0].data == "\n"


def test_leading_bom_is_skipped_once() -> None:
    assert parse(b"\xef\xbb", b"\xbfdata: x\n\n") == [SSEEvent("x")]
    # A second BOM is part of the field name, so the line is an unknown field.
    assert parse(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [SSEEvent("y")]


def test_id_persists_and_is_ignored_with_nul() -> None:
    events = parse(b"id: 1\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\nid\ndata: d\n\n")
    assert [(e.data, e.id) for e in events] == [("a", "1"), ("b", "1"), ("c", "1"), ("d", "")]


def test_id_is_kept_even_without_data() -> None:
    parser = SSEParser()
    assert parse(b"id: 42\n\n", parser=parser) == []
    assert parser.last_event_id == "42"


def test_retry_needs_digits() -> None:
    parser = SSEParser()
    parse(b"retry: 10\nretry: 1x\nretry: -5\nretry: \n", parser=parser)
    assert parser.retry == 10


def test_event_type_resets_after_dispatch_and_after_empty_events() -> None:
    events = parse(b"event: a\n\ndata: x\n\nevent: b\ndata: y\n\ndata: z\n\n")
    assert [(e.event, e.data) for e in events] == [("message", "x"), ("b", "y"), ("message", "z")]


def test_unterminated_event_is_discarded() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: done\n\ndata: partial\n") == [SSEEvent("done")]
    assert parser.pending
    parser.close()
    assert not parser.pending


def test_invalid_utf8_is_replaced() -> None:
    assert parse(b"data: \xff\xfe ok\n\n")[0].data == "\ufffd\ufffd ok"


def test_utf8_sequence_split_across_chunks() -> None:
    raw = "data: grüße 👋\n\n".encode()
    assert parse(*[raw[i : i + 1] for i in range(len(raw))])[0].data == "grüße 👋"


def test_size_limit() -> None:
    parser = SSEParser(max_event_size=14)
    parser.feed(b"data: 12345\ndata: 67890\n")  # 12 characters of data so far
    with pytest.raises(SSEError):
        parser.feed(b"data: abc\n")
    with pytest.raises(SSEError):  # one long unterminated line
        SSEParser(max_event_size=10).feed(b"data: 0123456789012")


# ------------------------------------------------------------------------ the serializer


def test_format_event() -> None:
    assert format_event('{"a":1}') == b'data: {"a":1}\n\n'
    assert format_event(b"x\ny", id="3", event="e", retry=100) == (
        b"event: e\nid: 3\nretry: 100\ndata: x\ndata: y\n\n"
    )
    assert format_event("") == b"data: \n\n"
    assert parse(format_event("")) == [SSEEvent("")]


@pytest.mark.parametrize(
    "kwargs", [{"id": "a\nb"}, {"id": "a\x00"}, {"event": "x\ry"}, {"retry": -1}]
)
def test_format_event_refuses_what_cannot_be_framed(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        format_event("x", **kwargs)  # type: ignore[arg-type]


def test_comment_is_ignored_by_the_parser() -> None:
    assert parse(format_comment("ping") + format_event("x") + format_comment("a\nb")) == [
        SSEEvent("x")
    ]


# ------------------------------------------------------------------------ properties

_texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
_ids = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x00"), max_size=10)
_names = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), min_size=1, max_size=10
)


@given(
    st.lists(st.tuples(_texts, st.none() | _ids, st.none() | _names), max_size=6),
    st.lists(st.integers(min_value=0, max_value=2000), max_size=12),
)
def test_round_trip_under_any_chunking(
    items: list[tuple[str, str | None, str | None]], cuts: list[int]
) -> None:
    stream = b"".join(format_event(data, id, event) for data, id, event in items)
    events = parse(*split(stream, cuts))
    assert len(events) == len(items)
    last_id = ""
    for event, (data, id, name) in zip(events, items, strict=True):
        last_id = id if id is not None else last_id
        assert event.data == normalized(data)
        assert event.id == last_id
        assert event.event == (name or "message")


@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=300), max_size=8))
def test_chunking_never_changes_the_result(data: bytes, cuts: list[int]) -> None:
    whole = SSEParser()
    expected = parse(data, parser=whole)
    pieces = SSEParser()
    assert parse(*split(data, cuts), parser=pieces) == expected
    assert pieces.last_event_id == whole.last_event_id
    assert pieces.retry == whole.retry


@given(st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=1, max_size=5), _texts)
def test_mixed_line_endings(endings: list[str], text: str) -> None:
    lines = [f"data: {line}" for line in normalized(text).split("\n")]
    body = ""
    for i, line in enumerate(lines):
        body += line + endings[i % len(endings)]
    body += "\n\n"  # a CR before it merges with the first LF; the second ends the event
    assert [e.data for e in parse(body.encode())] == [normalized(text)]
