"""Streamed tool arguments: the own incremental decoder vs ``jiter``'s partial mode.

Run: ``.venv/bin/python bench/partial_json.py`` (a few seconds).

An artifact is streamed as the ``content`` string of a tool call's JSON
arguments, chunk by chunk. For each chunk the LLM adapter needs the newly
decoded characters. Two ways, on the same chunks, in one run:

* own   - :class:`~a2a_models.adapters.llm._partial_json.StringFieldDecoder`
  (a state machine over each new chunk: linear in the text);
* jiter - ``jiter.from_json(buffer, partial_mode="trailing-strings")`` on the
  buffer so far after every chunk, emitting what was added to ``content``
  (the library way; each parse re-reads the whole buffer: quadratic).

Both must give exactly ``json.loads(whole)["content"]``; the script checks it,
then prints best-of-N milliseconds and the ratio jiter/own per case.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import jiter

from a2a_models.adapters.llm._partial_json import StringFieldDecoder

TEXT = (
    '## Findings\n\nThe graph has **3 nodes** \u2014 caf\u00e9, na\u00efve \U0001f600 "quoted" '
    "and a \\ backslash; tabs\tand newlines.\n"
)


def own(chunks: list[str]) -> str:
    decoder = StringFieldDecoder("content")
    return "".join(decoder.feed(chunk) for chunk in chunks)


def with_jiter(chunks: list[str]) -> str:
    buffer = b""
    sent = ""
    out: list[str] = []
    for chunk in chunks:
        buffer += chunk.encode("utf-8")
        value = jiter.from_json(buffer, partial_mode="trailing-strings")
        content = value.get("content") if isinstance(value, dict) else None
        if isinstance(content, str) and len(content) > len(sent):
            out.append(content[len(sent) :])
            sent = content
    return "".join(out)


def best(fn: Callable[[list[str]], str], chunks: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(chunks)
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    cases = [
        ("2 KB in 4-char chunks", 2_000, 4),
        ("20 KB in 4-char chunks", 20_000, 4),
        ("100 KB in 16-char chunks", 100_000, 16),
    ]
    print(f"{'case':28} {'own ms':>9} {'jiter ms':>9} {'jiter/own':>10}")
    for label, size, step in cases:
        content = (TEXT * (size // len(TEXT) + 1))[:size]
        whole = json.dumps({"name": "report", "content": content})
        chunks = [whole[i : i + step] for i in range(0, len(whole), step)]
        expected = json.loads(whole)["content"]
        assert own(chunks) == expected, "own decoder differs from json.loads"
        assert with_jiter(chunks) == expected, "jiter decoding differs from json.loads"
        repeat = 5 if size <= 20_000 else 2
        a, b = best(own, chunks, repeat), best(with_jiter, chunks, repeat)
        print(f"{label:28} {a:9.2f} {b:9.2f} {b / a:10.2f}")


if __name__ == "__main__":
    main()
