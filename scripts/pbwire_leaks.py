"""Refcount and leak check of the compiled gRPC reader/writer (``_pbwire``).

Runs the C functions in a loop on valid and invalid input, and fails if
``sys.getallocatedblocks()``, the process's RSS or the reference counts of the
objects the C code hands out (``None``, ``True``, ``False``, the enum members,
the model classes) keep growing or shrinking:

* whole-message plans (``MsgPlan.loads``, as ``from_proto`` calls them) on valid
  messages and on every truncation and many byte flips of them (most give up
  half-way, after building part of the model);
* ``from_proto`` of parsed messages (valid, and invalid ones the plan gives up on);
* the Struct/Value readers and writers on valid and give-up values;
* the 0.3 ProtoJSON writer (``JsonPlan.dumps``, as the 0.3 gRPC path calls it) on a
  task's ProtoJSON and on copies that give up at one place each (an unknown key,
  an enum name, bad base64, a NaN, a timestamp with an offset...), deep down.

``python scripts/pbwire_leaks.py [CONVERSIONS]`` (1,000,000 by default, each
case about 8,000 times: under a minute); ``tests/grpc_binding/test_pbwire_fuzz.py`` runs a short version.
"""

from __future__ import annotations

import functools
import gc
import os
import resource
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from a2a_models import models as m
from a2a_models._state import TaskState
from a2a_models.adapters.grpc import _convert, _v03
from a2a_models.adapters.grpc._pb import a2a_pb2 as pb
from a2a_models.adapters.grpc._pb import a2a_v03_pb2 as pb03
from a2a_models.protocol import METHODS, V0_3, encode_rest_result


def _task() -> m.Task:
    meta = {"a": 1, "b": [1.5, None, True, "x", {"c": []}], "d": {"e": -0.0}}
    parts = (
        m.TextPart(text="hello", metadata=meta),
        m.DataPart(data={"k": [1, 2, {"z": None}]}, filename="f.json"),
        m.FilePart(raw=b"\x00\x01", media_type="application/octet-stream"),
        m.FilePart(url="https://example.com/x"),
    )
    msg = m.Message(message_id="m1", role=m.Role.AGENT, parts=parts, metadata=meta)
    return m.Task(
        id="t1",
        context_id="c1",
        status=m.TaskStatus(
            state=TaskState.WORKING, message=msg, timestamp=datetime(2024, 1, 2, tzinfo=UTC)
        ),
        history=(msg, msg),
        artifacts=(m.Artifact(artifact_id="a1", parts=parts, metadata=meta),),
        metadata=meta,
    )


def cases() -> list[tuple[str, Callable[[], Any]]]:
    """(what, call) pairs: each call converts one input."""
    pbwire = _convert._pbwire
    plans = _convert._NS["_PLANS"]
    rev = _convert._REVERSE
    task = _convert.to_proto(_task())
    raw = task.SerializeToString()
    out: list[tuple[str, Callable[[], Any]]] = []
    loads = plans["Task"].loads
    # valid, then every truncation and flips at many positions
    out.append(("Task plan, valid", lambda: loads(raw)))
    for i in range(0, len(raw), max(len(raw) // 60, 1)):
        cut, flip = raw[:i], raw[:i] + bytes([raw[i] ^ 0x5A]) + raw[i + 1 :]
        out.append((f"Task plan, cut at {i}", functools.partial(loads, cut)))
        out.append((f"Task plan, flip at {i}", functools.partial(loads, flip)))
    # from_proto of parsed messages: valid, and invalid ones the plan gives up on
    out.append(("from_proto Task", lambda: _convert.from_proto(m.Task, task)))
    bad: Any = pb.Task()
    bad.CopyFrom(task)
    bad.status.state = 99  # an unknown enum number: DecodeError from the pure path
    bad.metadata.fields["bad"].SetInParent()  # a Value without a kind

    def invalid() -> None:
        try:
            _convert.from_proto(m.Task, bad)
        except ValueError:
            pass

    out.append(("from_proto invalid Task", invalid))
    # Struct / Value
    struct = task.metadata.SerializeToString()
    value = task.status.message.parts[1].data.SerializeToString()
    out += [
        ("struct_loads", lambda: pbwire.struct_loads(struct, rev)),
        ("struct_loads cut", lambda: pbwire.struct_loads(struct[:-3], rev)),
        (
            "struct_loads bad utf-8",
            lambda: pbwire.struct_loads(b"\n\x07\n\x01\xff\x12\x02\x08\x00", rev),
        ),
        ("value_loads", lambda: pbwire.value_loads(value, rev)),
        ("value_loads twice", lambda: pbwire.value_loads(value + value, rev)),
        ("struct_dumps", lambda: pbwire.struct_dumps({"a": [1, {"b": None}], "c": "d"})),
        ("struct_dumps gives up", lambda: pbwire.struct_dumps({"a": [1, {"b": object()}]})),
        ("value_dumps gives up", lambda: pbwire.value_dumps([1, 2**60, "x"])),
        ("value_dumps surrogate", lambda: pbwire.value_dumps(["\ud800"])),
    ]
    return out + _json_cases()


def _json_cases() -> list[tuple[str, Callable[[], Any]]]:
    """The 0.3 ProtoJSON writer: a task (every part kind), then one give-up each."""
    dumps = _v03._DUMPS[pb03.Task]
    wire = encode_rest_result(METHODS["GetTask"], _task(), V0_3)
    out: list[tuple[str, Callable[[], Any]]] = [("JsonPlan Task", lambda: dumps(wire))]

    def variant(what: str, change: Callable[[Any], None]) -> None:
        copy = _deep_copy(wire)
        change(copy)
        out.append((f"JsonPlan gives up: {what}", lambda: dumps(copy)))

    def last(w: Any) -> Any:  # the last message written
        return w["history"][-1]

    variant("unknown key", lambda w: last(w).update(nope=1))
    variant("enum name", lambda w: last(w).update(role="ROLE_NOBODY"))
    variant("bad base64", lambda w: last(w)["content"][2]["file"].update(fileWithBytes="a"))
    variant("NaN", lambda w: last(w)["metadata"]["b"].append(float("nan")))
    variant("big int", lambda w: w["artifacts"][0]["parts"][1]["data"]["data"].update(x=2**70))
    variant("timestamp", lambda w: w["status"].update(timestamp="2024-01-02T00:00:00+01:00"))
    variant("two oneof members", lambda w: last(w)["content"][0].update(data=None))
    variant("another message's key", lambda w: w.update(historyLength=1))
    return out


def _deep_copy(value: Any) -> Any:
    if value.__class__ is dict:
        return {k: _deep_copy(v) for k, v in value.items()}
    if value.__class__ is list:
        return [_deep_copy(v) for v in value]
    return value


#: Under AddressSanitizer freed memory waits in its quarantine (RSS grows to its size)
#: and PYTHONMALLOC=malloc leaves no blocks to count: there only refcounts are checked.
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")


def _watched() -> list[Any]:
    return [None, True, False, *TaskState, *m.Role, m.Task, m.Message, m.TextPart, m.DataPart]


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def check(conversions: int, *, verbose: bool = True) -> list[str]:
    """Run the cases round after round, ``conversions`` calls in all; the problems
    found (empty: none)."""
    todo = cases()
    iterations = max(conversions // len(todo), 1)
    for _what, call in todo:  # warm up: caches, interned strings, lazy imports
        for _ in range(50):
            call()
    gc.collect()
    blocks0, rss0 = sys.getallocatedblocks(), _rss_kb()
    refs0 = [sys.getrefcount(x) for x in _watched()]
    step = max(iterations // 4, 1)
    for i in range(1, iterations + 1):
        for _what, call in todo:
            call()
        if verbose and i % step == 0:
            gc.collect()
            print(
                f"{i:>8} x {len(todo)} calls: {sys.getallocatedblocks() - blocks0:+} blocks, "
                f"max RSS {_rss_kb() - rss0:+} kB",
                file=sys.stderr,
            )
    gc.collect()
    problems = []
    grown = sys.getallocatedblocks() - blocks0
    if grown > 200:
        problems.append(f"{grown} more allocated blocks after {iterations} rounds")
    if _rss_kb() - rss0 > 20_000 and not SANITIZED:
        problems.append(f"max RSS grew by {_rss_kb() - rss0} kB")
    for x, before in zip(_watched(), refs0, strict=True):
        drift = sys.getrefcount(x) - before
        if abs(drift) > 100:
            problems.append(f"refcount of {x!r} drifted by {drift}")
    return problems


def main() -> None:
    if _convert._pbwire is None or _convert._REVERSE is None:
        sys.exit("the accelerator (_pbwire) is not built: python scripts/build_accel.py")
    conversions = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    print(f"{conversions} conversions, {len(cases())} cases", file=sys.stderr)
    problems = check(conversions)
    for p in problems:
        print("LEAK?", p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
