"""The incremental decoder of the artifact tool's ``content``: equal to ``json.loads``."""

from __future__ import annotations

import json
import random

import pytest

from a2a_models.adapters.llm import StringFieldDecoder

SAMPLES = [
    "",
    "plain",
    'quote " backslash \\ slash / controls \b\f\n\r\t',
    "unicode é ü 中文 and emoji \U0001f600\U0001f680",
    "lone surrogates \ud83d then \ude00 and \ud800\ud800",
    "x" * 300,
]


def _documents(content: str) -> list[str]:
    return [
        json.dumps({"content": content}),
        json.dumps({"content": content}, ensure_ascii=False),
        json.dumps(
            {
                "name": 'a "b" {c}',
                "n": [1, {"content": "nested"}],
                "content": content,
                "after": {"x": "}"},
            }
        ),
        json.dumps({"flag": True, "num": -1.5e3, "nul": None, "content": content}, indent=2),
    ]


@pytest.mark.parametrize("content", SAMPLES)
def test_every_chunking_decodes_to_json_loads(content: str) -> None:
    rng = random.Random(len(content))
    for document in _documents(content):
        expected = json.loads(document)["content"]
        for _ in range(25):
            decoder = StringFieldDecoder("content")
            pieces: list[str] = []
            i = 0
            while i < len(document):
                step = rng.randint(1, 7)
                pieces.append(decoder.feed(document[i : i + step]))
                i += step
            assert "".join(pieces) == expected
            assert decoder.complete and not decoder.failed


def test_one_character_at_a_time_streams_progressively() -> None:
    decoder = StringFieldDecoder("content")
    document = json.dumps({"content": "abc\\n\u00e9"})
    out = [decoder.feed(ch) for ch in document]
    assert "".join(out) == "abc\\n\u00e9"
    assert sum(1 for o in out if o) == len("abc\\n\u00e9")
    assert decoder.started and decoder.complete


def test_missing_field_and_malformed_input() -> None:
    decoder = StringFieldDecoder("content")
    assert decoder.feed('{"name": "x"}') == ""
    assert not decoder.started
    broken = StringFieldDecoder("content")
    assert broken.feed('["content"]') == ""
    assert broken.failed
    first_only = StringFieldDecoder("content")
    assert first_only.feed('{"content": "a", "content": "b"}') == "a"


@pytest.mark.parametrize("content", [s for s in SAMPLES if "surrogates" not in s])
def test_after_every_chunk_it_has_what_jiter_partial_mode_has(content: str) -> None:
    # jiter's partial mode (the library way, kept out because it re-parses the
    # whole buffer on every chunk: see bench/partial_json.py) is the reference
    # for how much of the value is decodable at each point.
    jiter = pytest.importorskip("jiter")
    for document in _documents(content):
        decoder = StringFieldDecoder("content")
        so_far = ""
        for end in range(1, len(document) + 1):
            so_far += decoder.feed(document[end - 1])
            partial = jiter.from_json(document[:end].encode(), partial_mode="trailing-strings")
            expected = partial.get("content", "") if isinstance(partial, dict) else ""
            if not isinstance(expected, str):  # the nested {"content": ...} is skipped
                expected = ""
            assert so_far == expected, (document[:end], so_far, expected)
