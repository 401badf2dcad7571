"""Reference-leak check of the codec accelerator's bytes-direct reader and writer.

Decodes and encodes the medium ``Task`` of ``bench/codec.py`` (1.0 and 0.3)
in a loop, valid payloads and ones every path gives up on (truncated, invalid
UTF-8, a lone surrogate, a 20-digit integer, a duplicated member, a wrong
type deep inside, a file part the hook rejects) and models the writer gives up
on (NaN, a lone surrogate, a big integer in metadata), and prints
``sys.getallocatedblocks()`` and the RSS at checkpoints: they level off while
caches warm up, then stay (a leak of one block per call would add a block per
round and call); the check is the second half of the rounds. Run: ``PYTHONPATH=src python scripts/leakcheck_codec.py
[iterations]`` (default 100,000; exits 1 when the block count grows).
"""

from __future__ import annotations

import gc
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from codec import make_task

from a2a_models import codec
from a2a_models.errors import DecodeError, EncodeError


def _odd(meta: Any) -> Any:
    task = make_task(10, 2)
    object.__setattr__(task, "metadata", meta)  # (past the model's own check)
    return task


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    task = make_task(10, 2)
    cases: list[tuple[str, bytes]] = []
    for dialect in ("1.0", "0.3"):
        data = codec.encode(task, dialect)
        cut = data.index(b'"history"')
        cases += [
            (dialect, data),
            (dialect, data[: len(data) // 2]),
            (dialect, data[:cut] + b'"x":"\xff",' + data[cut:]),
            (dialect, data[:cut] + b'"x":"\\ud800",' + data[cut:]),
            (dialect, data[:cut] + b'"x":123456789012345678901,' + data[cut:]),
            (dialect, data[:cut] + b'"id":"dup",' + data[cut:]),
            (dialect, data.replace(b'"parts":[', b'"parts":[{"kind":"file","file":{}},', 1)),
            (dialect, data.replace(b'"role":"', b'"role":"x', 1)),
        ]
    odd = [_odd({"f": float("nan")}), _odd({"s": "\ud800"}), _odd({"i": 2**70})]
    checkpoints = {n // 10, n // 4, n // 2, n}
    base = None
    for i in range(1, n + 1):
        for dialect, payload in cases:
            try:
                codec.decode(type(task), payload, dialect)
            except DecodeError:
                pass
        for dialect in ("1.0", "0.3"):
            codec.encode(task, dialect)
            for obj in odd:
                try:
                    codec.encode(obj, dialect)
                except EncodeError:
                    pass
        if i in checkpoints or i == 1000:
            gc.collect()
            blocks = sys.getallocatedblocks()
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            print(f"{i:>8} rounds: {blocks:,} blocks, max RSS {rss:,} KiB", flush=True)
            if i == n // 2:
                base = blocks
    assert base is not None
    grown = sys.getallocatedblocks() - base
    print(f"blocks from round {n // 2:,} to the end: {grown:+,}")
    return 1 if grown > 50 else 0


if __name__ == "__main__":
    raise SystemExit(main())
