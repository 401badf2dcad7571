"""SSE framing and parsing: the package's own code against httpx-sse and sse-starlette.

Measures, side by side in one run, on the same A2A status-update events:

* parsing: ``protocol.SSEParser.feed`` against ``httpx_sse``'s line and event decoders
  (what ``httpx_sse.aconnect_sse`` runs per chunk), with whole 64 KiB chunks and with one
  chunk per event (what a live stream delivers);
* framing: ``protocol.sse_frame`` against ``sse_starlette.ServerSentEvent(...).encode()``.

Prints events per second and the ratio (own / library). ``httpx-sse`` and
``sse-starlette`` come with the ``dev`` extra (sse-starlette also with ``mcp``).
"""

from __future__ import annotations

import argparse
import codecs
import sys
import time
from collections.abc import Callable
from pathlib import Path

from a2a_models import codec
from a2a_models import models as m
from a2a_models.protocol import SSEParser, sse_frame

# bench/http.py would shadow the standard library's http package (httpx imports it).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

EVENT = codec.dumps(
    codec.to_wire(
        m.TaskStatusUpdateEvent(
            task_id="3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f",
            context_id="9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
            status=m.TaskStatus(
                state=m.TaskState.WORKING,
                message=m.Message.agent("step 42 of the report is done"),
            ),
        ),
        "1.0",
        as_type=m.StreamResponse,
    )
)


def best(fn: Callable[[], int], repeats: int) -> float:
    """Events per second of ``fn`` (which returns how many it handled), best of ``repeats``."""
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = fn()
        rates.append(n / (time.perf_counter() - t0))
    return max(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        from httpx_sse._decoders import SSEDecoder, SSELineDecoder
        from sse_starlette.sse import ServerSentEvent
    except ImportError as exc:
        print(f"needs httpx-sse and sse-starlette (the dev extra): {exc}")
        return 2

    frames = [sse_frame(EVENT, id=str(i)) for i in range(1, args.events + 1)]
    stream = b"".join(frames)
    big = [stream[i : i + 65536] for i in range(0, len(stream), 65536)]

    def own(chunks: list[bytes]) -> Callable[[], int]:
        def run() -> int:
            p = SSEParser(max_event_size=64 * 1024 * 1024)
            return sum(len(p.feed(c)) for c in chunks)

        return run

    def lib(chunks: list[bytes]) -> Callable[[], int]:
        def run() -> int:
            text = codecs.getincrementaldecoder("utf-8")(errors="replace")
            lines, events, n = SSELineDecoder(), SSEDecoder(), 0
            for chunk in chunks:
                for line in lines.decode(text.decode(chunk)):
                    if events.decode(line) is not None:
                        n += 1
            return n

        return run

    assert own(big)() == lib(big)() == args.events  # both parse every event

    data = EVENT.decode()

    def own_frames() -> int:
        for i in range(args.events):
            sse_frame(EVENT, id=str(i))
        return args.events

    def lib_frames() -> int:
        for i in range(args.events):
            ServerSentEvent(data=data, id=str(i)).encode()
        return args.events

    rows = [
        ("parse, 64 KiB chunks", own(big), lib(big), "httpx-sse"),
        ("parse, one chunk per event", own(frames), lib(frames), "httpx-sse"),
        ("frame", own_frames, lib_frames, "sse-starlette"),
    ]
    print(f"{args.events:,} events of {len(EVENT)} bytes, best of {args.repeats}")
    print(f"{'':28} {'own ev/s':>12} {'library ev/s':>13} {'own/lib':>8}")
    for name, a, b, library in rows:
        ra, rb = best(a, args.repeats), best(b, args.repeats)
        print(f"{name:28} {ra:12,.0f} {rb:13,.0f} {ra / rb:7.2f}x  ({library})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
