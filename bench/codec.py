"""Codec benchmark: a2a_models vs plain orjson (the floor) vs the official a2a-sdk.

Run: ``.venv/bin/python bench/codec.py`` (about 15 s of CPU time).

For three payloads (a small SendMessageRequest, a medium Task with a 10-message
history and 2 artifacts, a large Task with 200 messages and 20 artifacts) it
times, on the same JSON bytes:

* floor   - ``orjson.loads(bytes)`` / ``orjson.dumps(plain_dict)``
* codec   - ``decode(T, bytes, "1.0")`` / ``encode(obj, "1.0")``, with the
            compiled accelerator when it is built (``scripts/build_accel.py``)
* pure    - the same calls on the pure-Python path (what ``A2A_CODEC_PURE=1``
            or a build without the accelerator gives), timed in the same run
* SDK     - ``json_format.ParseDict(json.loads(bytes), a2a.types.T())`` /
            ``json.dumps(MessageToDict(pb))`` (what the SDK does on the wire)

* msgspec - typed ``msgspec`` Structs of the same Task shape (written here,
            the fastest-peer reference: what the best Python library does)

and prints best-of-N microseconds, ratios and whether the targets hold (for
the medium and large Task, in both 1.0 and 0.3 JSON-RPC): decode <= 2.5x
floor, encode <= 3.5x floor, at least 20x faster than the SDK's 1.0 path and
at least 5x faster than its 0.3 pydantic path. A second table does the same
for the 0.3 JSON-RPC dialect against the SDK's 0.3 pydantic models.

The "pure-Python bound" lines time an unchecked decoder/encoder of the same
Task (orjson plus the same objects built the fastest way, trusting every
member): how far from orjson pure Python is before it checks anything.

Options: ``--quick`` (fewer repeats), ``--only small|medium|large``;
``--import-time`` measures the import cost instead (fresh interpreters).
"""

from __future__ import annotations

import argparse
import enum
import gc
import json
import sys
import time
import timeit
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# Running ``python bench/codec.py`` puts bench/ first on sys.path, where a
# sibling script (http.py, ...) would shadow the standard library.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import orjson

try:
    import a2a_models  # noqa: F401  (the installed package, or PYTHONPATH's)
except ImportError:  # a bare checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from a2a_models import codec
from a2a_models import models as m

DECODE_TARGET = 2.5  # x plain orjson.loads (issue #17)
ENCODE_TARGET = 3.5  # x plain orjson.dumps
SDK_TARGET = 20.0  # x faster than the SDK's 1.0 path (protobuf json_format)
SDK03_TARGET = 5.0  # x faster than the SDK's 0.3 path (pydantic)


# --------------------------------------------------------------------------- payloads

T0 = datetime(2025, 6, 1, 12, 0, 0, 123000, tzinfo=UTC)


def _data(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"record-{i}",
        "ok": i % 2 == 0,
        "tags": ["alpha", f"t{i % 7}"],
        "nested": {"level": 2, "values": [i, i * 2, i * 3], "note": None},
    }


def _parts(i: int) -> list[m.Part]:
    """A varied mix: mostly text, then data, file by url, inline file, text with metadata."""
    kind = i % 5
    parts: list[m.Part] = [m.Part.text(f"Message {i}: summarise the Q3 report, please.")]
    if kind == 1:
        parts.append(m.Part.data(_data(i)))
    elif kind == 2:
        parts.append(
            m.Part.file(
                url=f"https://files.example.com/doc-{i}.pdf",
                media_type="application/pdf",
                filename=f"doc-{i}.pdf",
            )
        )
    elif kind == 3:
        parts.append(
            m.Part.file(raw=bytes(range(48)), media_type="image/png", filename=f"img-{i}.png")
        )
    elif kind == 4:
        parts.append(m.Part.text("Follow-up", metadata={"lang": "en", "confidence": 97}))
    return parts


def _message(i: int, task_id: str, context_id: str) -> m.Message:
    return m.Message(
        role=m.Role.USER if i % 2 == 0 else m.Role.AGENT,
        parts=_parts(i),
        message_id=f"msg-{i:05d}-5c1e2d7a",
        context_id=context_id,
        task_id=task_id,
        metadata={"turn": i, "source": "bench"} if i % 3 == 0 else None,
    )


def _artifact(i: int) -> m.Artifact:
    parts: list[m.Part] = [
        m.Part.text(f"Artifact {i}: revenue grew 12% quarter on quarter."),
        m.Part.data({"summary": _data(i), "rows": [_data(i * 10 + j) for j in range(2)]}),
    ]
    if i % 2:
        parts.append(
            m.Part.file(url=f"https://files.example.com/out-{i}.csv", media_type="text/csv")
        )
    return m.Artifact(
        artifact_id=f"art-{i:04d}",
        name=f"result-{i}",
        description="generated output",
        parts=parts,
        metadata={"index": i},
    )


def make_task(n_messages: int, n_artifacts: int) -> m.Task:
    tid, cid = "task-7f3c2b1a-9d8e-4f6a-b5c4-3e2d1f0a9b8c", "ctx-1a2b3c4d-5e6f"
    status_msg = m.Message(
        role=m.Role.AGENT,
        parts=[m.Part.text("Working on it")],
        message_id="status-msg-1",
        task_id=tid,
        context_id=cid,
    )
    return m.Task(
        id=tid,
        context_id=cid,
        status=m.TaskStatus(
            state=m.TaskState.WORKING, message=status_msg, timestamp=T0 + timedelta(seconds=5)
        ),
        history=[_message(i, tid, cid) for i in range(n_messages)],
        artifacts=[_artifact(i) for i in range(n_artifacts)],
        metadata={"owner": "bench", "priority": 3, "labels": ["a", "b"]},
    )


def make_send() -> m.SendMessageRequest:
    return m.SendMessageRequest(
        message=m.Message(
            role=m.Role.USER,
            parts=[m.Part.text("What is the weather in Paris?")],
            message_id="9229e770-767c-417b-a0b0-f0741243c589",
            context_id="ctx-1a2b3c4d-5e6f",
        ),
        configuration=m.SendMessageConfiguration(accepted_output_modes=("text/plain",)),
    )


# --------------------------------------------------------------------------- timing

#: CPU time of this thread by default: on a shared machine wall-clock time
#: also counts the time other processes hold the CPU (``--wall`` to use it).
TIMER: Callable[[], float] = time.thread_time
#: Keep the garbage collector running while timing (timeit turns it off).
KEEP_GC = False


def race(cands: dict[str, Callable[[], Any]], rounds: int, budget: float) -> dict[str, float]:
    """Best per-call µs of each candidate (timeit, best of ``rounds`` repeats).

    The candidates run round-robin, one repeat each per round, so a change in
    machine load affects them all alike and the ratios stay meaningful.
    """
    # timeit switches the collector off; setup=gc.enable is its documented undo.
    setup: Any = gc.enable if KEEP_GC else "pass"
    timers = {k: timeit.Timer(fn, setup=setup, timer=TIMER) for k, fn in cands.items()}
    numbers = {}
    for k, timer in timers.items():
        timer.timeit(3)  # warm up (caches, specialisation)
        t = timer.timeit(10) / 10
        numbers[k] = max(1, int(budget / max(t, 1e-7)))
    best = dict.fromkeys(cands, float("inf"))
    for _ in range(rounds):
        for k, timer in timers.items():
            gc.collect()
            best[k] = min(best[k], timer.timeit(numbers[k]) / numbers[k])
    return {k: v * 1e6 for k, v in best.items()}


def _sdk() -> tuple[Any, Any, Any] | None:
    try:
        import a2a.types as pb
        from google.protobuf import json_format  # type: ignore[import-untyped]
    except ImportError:
        return None
    return pb, json_format.ParseDict, json_format.MessageToDict


def _sdk03() -> Any:
    try:
        from a2a.compat.v0_3 import types as v03
    except ImportError:
        return None
    return v03


# --------------------------------------------------------------------------- msgspec
# msgspec Structs of the Task shape in 1.0 and 0.3 JSON-RPC: the fastest-peer
# reference. Written for this benchmark only: typed Structs (enums,
# timestamps, base64 bytes, tagged 0.3 parts) for the same bytes, so msgspec
# decodes and re-encodes what the codec does, with its own (C) type checks. It
# does not check the oneofs or the state machine, which the codec does.
# (Module level: msgspec resolves the string annotations in module globals.)

try:
    import msgspec
    from msgspec import UNSET, Struct, UnsetType
except ImportError:
    msgspec = None

MSGSPEC: tuple[Any, Any] | None = None
if msgspec is not None:
    Json = Any  # free-form JSON values
    States10 = enum.Enum("States10", {s.value: s.value for s in m.TaskState}, type=str)
    Roles10 = enum.Enum("Roles10", {r.value: r.value for r in m.Role}, type=str)
    opts: dict[str, Any] = {"rename": "camel", "omit_defaults": True, "kw_only": True}

    class Part10(Struct, **opts):  # type: ignore[call-arg]
        text: str | UnsetType = UNSET
        raw: bytes | UnsetType = UNSET
        url: str | UnsetType = UNSET
        data: Json | UnsetType = UNSET
        metadata: dict[str, Json] | UnsetType = UNSET
        filename: str | UnsetType = UNSET
        media_type: str | UnsetType = UNSET

    class Message10(Struct, **opts):  # type: ignore[call-arg]
        role: Roles10  # type: ignore[valid-type]
        parts: list[Part10]
        message_id: str
        context_id: str | UnsetType = UNSET
        task_id: str | UnsetType = UNSET
        metadata: dict[str, Json] | UnsetType = UNSET
        extensions: list[str] | UnsetType = UNSET
        reference_task_ids: list[str] | UnsetType = UNSET

    class Status10(Struct, **opts):  # type: ignore[call-arg]
        state: States10  # type: ignore[valid-type]
        message: Message10 | UnsetType = UNSET
        timestamp: datetime | UnsetType = UNSET

    class Artifact10(Struct, **opts):  # type: ignore[call-arg]
        parts: list[Part10]
        artifact_id: str
        name: str | UnsetType = UNSET
        description: str | UnsetType = UNSET
        metadata: dict[str, Json] | UnsetType = UNSET
        extensions: list[str] | UnsetType = UNSET

    class Task10(Struct, **opts):  # type: ignore[call-arg]
        id: str
        status: Status10
        context_id: str | UnsetType = UNSET
        artifacts: list[Artifact10] | UnsetType = UNSET
        history: list[Message10] | UnsetType = UNSET
        metadata: dict[str, Json] | UnsetType = UNSET

    States03 = enum.Enum(
        "States03",
        {
            "submitted": "submitted",
            "working": "working",
            "input-required": "input-required",
            "completed": "completed",
            "canceled": "canceled",
            "failed": "failed",
            "rejected": "rejected",
            "auth-required": "auth-required",
            "unknown": "unknown",
        },
        type=str,
    )
    tagged: dict[str, Any] = {**opts, "tag_field": "kind"}

    class File03(Struct, **opts):  # type: ignore[call-arg]
        raw: bytes | UnsetType = msgspec.field(default=UNSET, name="bytes")
        uri: str | UnsetType = UNSET
        mime_type: str | UnsetType = UNSET
        name: str | UnsetType = UNSET

    class TextPart03(Struct, tag="text", **tagged):  # type: ignore[call-arg]
        text: str
        metadata: dict[str, Json] | UnsetType = UNSET

    class FilePart03(Struct, tag="file", **tagged):  # type: ignore[call-arg]
        file: File03
        metadata: dict[str, Json] | UnsetType = UNSET

    class DataPart03(Struct, tag="data", **tagged):  # type: ignore[call-arg]
        data: dict[str, Json]
        metadata: dict[str, Json] | UnsetType = UNSET

    Part03 = TextPart03 | FilePart03 | DataPart03

    class Message03(Struct, tag="message", **tagged):  # type: ignore[call-arg]
        message_id: str
        role: str
        parts: list[Part03]  # type: ignore[valid-type]
        context_id: str | UnsetType = UNSET
        task_id: str | UnsetType = UNSET
        metadata: dict[str, Json] | UnsetType = UNSET

    class Status03(Struct, **opts):  # type: ignore[call-arg]
        state: States03  # type: ignore[valid-type]
        message: Message03 | UnsetType = UNSET
        timestamp: str | UnsetType = UNSET

    class Artifact03(Struct, **opts):  # type: ignore[call-arg]
        artifact_id: str
        parts: list[Part03]  # type: ignore[valid-type]
        name: str | UnsetType = UNSET
        description: str | UnsetType = UNSET
        metadata: dict[str, Json] | UnsetType = UNSET

    class Task03(Struct, tag="task", **tagged):  # type: ignore[call-arg]
        id: str
        context_id: str
        status: Status03
        artifacts: list[Artifact03] | UnsetType = UNSET
        history: list[Message03] | UnsetType = UNSET
        metadata: dict[str, Json] | UnsetType = UNSET

    MSGSPEC = (msgspec.json.Decoder(Task10), msgspec.json.Decoder(Task03)), msgspec.json.encode


# --------------------------------------------------------------------------- pure-Python bound


def _bound_codec() -> tuple[Callable[[bytes], m.Task], Callable[[m.Task], bytes]]:
    """The least a pure-Python codec can do for the 1.0 Task: no checks at all.

    Decoding parses with orjson and builds the same frozen slotted instances
    the codec returns, the fastest way the codec knows (its builder twins),
    trusting every member; encoding writes the same dicts without asking
    anything. Everything the real codec adds (type checks, required members,
    ProtoJSON defaults, aliases, error paths) is left out, so the distance of
    this bound to orjson shows what pure Python costs before any checking.
    """
    import binascii

    from a2a_models.codec.facts import builder

    Tb, Sb, Mb, Ab = (builder(c) for c in (m.Task, m.TaskStatus, m.Message, m.Artifact))
    TPb, DPb, FPb = builder(m.TextPart), builder(m.DataPart), builder(m.FilePart)
    TP, DP, FP = m.TextPart, m.DataPart, m.FilePart
    roles = {r.value: r for r in m.Role}
    states = {s.value: s for s in m.TaskState}
    a2b, b2a = binascii.a2b_base64, binascii.b2a_base64
    iso = datetime.fromisoformat

    def part(d: dict[str, Any]) -> Any:
        g = d.get
        t = g("text")
        if t is not None:
            p: Any = TPb()
            p.text = t
            c: Any = TP
        elif "data" in d:
            p = DPb()
            p.data = d["data"]
            c = DP
        else:
            p = FPb()
            raw = g("raw")
            p.raw = a2b(raw) if raw is not None else None
            p.url = g("url")
            c = FP
        p.metadata, p.filename, p.media_type = g("metadata"), g("filename"), g("mediaType")
        p.__class__ = c
        return p

    def message(d: dict[str, Any]) -> Any:
        g = d.get
        o: Any = Mb()
        o.message_id, o.context_id, o.task_id = d["messageId"], g("contextId"), g("taskId")
        o.role = roles[d["role"]]
        o.parts = tuple(map(part, d["parts"]))
        o.metadata = g("metadata")
        o.extensions = o.reference_task_ids = ()
        o.__class__ = m.Message
        return o

    def artifact(d: dict[str, Any]) -> Any:
        g = d.get
        o: Any = Ab()
        o.artifact_id, o.name, o.description = d["artifactId"], g("name"), g("description")
        o.parts = tuple(map(part, d["parts"]))
        o.metadata = g("metadata")
        o.extensions = ()
        o.__class__ = m.Artifact
        return o

    def decode(data: bytes) -> m.Task:
        d = orjson.loads(data)
        s = d["status"]
        st: Any = Sb()
        st.state = states[s["state"]]
        msg = s.get("message")
        st.message = message(msg) if msg is not None else None
        ts = s.get("timestamp")
        st.timestamp = iso(ts) if ts is not None else None
        st.__class__ = m.TaskStatus
        o: Any = Tb()
        o.id, o.context_id, o.status = d["id"], d["contextId"], st
        o.artifacts = tuple(map(artifact, d.get("artifacts", ())))
        o.history = tuple(map(message, d.get("history", ())))
        o.metadata = d.get("metadata")
        o.__class__ = m.Task
        return o  # type: ignore[no-any-return]

    def u_part(p: Any) -> dict[str, Any]:
        c = p.__class__
        if c is TP:
            r = {"text": p.text}
        elif c is DP:
            r = {"data": p.data}
        elif p.raw is not None:
            r = {"raw": b2a(p.raw, newline=False).decode("ascii")}
        else:
            r = {"url": p.url}
        if p.metadata is not None:
            r["metadata"] = p.metadata
        if p.filename is not None:
            r["filename"] = p.filename
        if p.media_type is not None:
            r["mediaType"] = p.media_type
        return r

    def u_message(o: Any) -> dict[str, Any]:
        r = {"messageId": o.message_id}
        if o.context_id is not None:
            r["contextId"] = o.context_id
        if o.task_id is not None:
            r["taskId"] = o.task_id
        r["role"] = o.role.value
        r["parts"] = [u_part(p) for p in o.parts]
        if o.metadata is not None:
            r["metadata"] = o.metadata
        return r

    def u_artifact(o: Any) -> dict[str, Any]:
        r = {"artifactId": o.artifact_id}
        if o.name is not None:
            r["name"] = o.name
        if o.description is not None:
            r["description"] = o.description
        r["parts"] = [u_part(p) for p in o.parts]
        if o.metadata is not None:
            r["metadata"] = o.metadata
        return r

    def encode(o: Any) -> bytes:
        s = o.status
        st: dict[str, Any] = {"state": s.state.value}
        if s.message is not None:
            st["message"] = u_message(s.message)
        if s.timestamp is not None:
            st["timestamp"] = codec.format_timestamp(s.timestamp)
        r = {"id": o.id, "contextId": o.context_id, "status": st}
        if o.artifacts:
            r["artifacts"] = [u_artifact(a) for a in o.artifacts]
        if o.history:
            r["history"] = [u_message(h) for h in o.history]
        if o.metadata is not None:
            r["metadata"] = o.metadata
        return orjson.dumps(r)

    return decode, encode


BOUND = _bound_codec()


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.1f}" if x < 1000 else f"{x:,.0f}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "-"
    return f"{a / b:.2f}x"


def _on_pure_path(call: Callable[[], Any], tp: Any, obj: Any, dialect: str) -> Callable[[], Any]:
    """``call`` (a public decode/encode of ``tp``/``obj``) on the pure-Python path.

    The codec caches its picked functions per type and dialect; for the call
    the entries point at the pure ones (two dict stores, ~40 ns), so both
    columns go through the same public wrapper.
    """
    dkey, ekey = (tp, dialect, False), (type(obj), dialect)
    codec.decode(tp, codec.encode(obj, dialect), dialect)  # fill both caches
    dec, enc = codec._DECODERS[dkey], codec._ENCODERS[ekey]
    pure_dec = (dec[0], dec[0], None)
    pure_enc = (getattr(enc[0], "fallback", enc[0]), enc[1], None)
    decoders, encoders = codec._DECODERS, codec._ENCODERS

    def run() -> Any:
        decoders[dkey], encoders[ekey] = pure_dec, pure_enc
        try:
            return call()
        finally:
            decoders[dkey], encoders[ekey] = dec, enc

    return run


def _candidates(
    obj: Any, tp: type[Any], sdk_name: str, sdk: tuple[Any, Any, Any] | None, v03: Any
) -> dict[str, Callable[[], Any]]:
    """What is timed for one payload, all from the same bytes."""
    data = codec.encode(obj, "1.0")
    plain = orjson.loads(data)
    data03 = codec.encode(obj, "0.3")
    plain03 = orjson.loads(data03)
    cands: dict[str, Callable[[], Any]] = {
        "floor_d": lambda: orjson.loads(data),
        "floor_e": lambda: orjson.dumps(plain),
        "dec": lambda: codec.decode(tp, data, "1.0"),
        "enc": lambda: codec.encode(obj, "1.0"),
        "f03_d": lambda: orjson.loads(data03),
        "f03_e": lambda: orjson.dumps(plain03),
        "d03": lambda: codec.decode(tp, data03, "0.3"),
        "e03": lambda: codec.encode(obj, "0.3"),
    }
    if codec.accelerated():
        cands["dec_p"] = _on_pure_path(cands["dec"], tp, obj, "1.0")
        cands["enc_p"] = _on_pure_path(cands["enc"], tp, obj, "1.0")
        cands["d03_p"] = _on_pure_path(cands["d03"], tp, obj, "0.3")
        cands["e03_p"] = _on_pure_path(cands["e03"], tp, obj, "0.3")
    if sdk is not None:
        pb, parse_dict, to_dict = sdk
        cls = getattr(pb, sdk_name)
        msg = parse_dict(json.loads(data), cls())
        cands["sdk_d"] = lambda: parse_dict(json.loads(data), cls())
        cands["sdk_e"] = lambda: json.dumps(to_dict(msg)).encode()
    ms = MSGSPEC if tp is m.Task else None
    if ms is not None:
        (dec10, dec03), ms_encode = ms
        s10, s03 = dec10.decode(data), dec03.decode(data03)
        # The same content both ways (member order and timestamp digits may
        # differ: compare what the codec reads back).
        assert codec.decode(tp, ms_encode(s10), "1.0") == obj
        assert codec.decode(tp, ms_encode(s03), "0.3") == obj
        cands["ms_d"] = lambda: dec10.decode(data)
        cands["ms_e"] = lambda: ms_encode(s10)
        cands["ms03_d"] = lambda: dec03.decode(data03)
        cands["ms03_e"] = lambda: ms_encode(s03)
    if tp is m.Task:
        b_dec, b_enc = BOUND
        # The same objects, and the same JSON (member order may differ).
        assert b_dec(data) == obj and orjson.loads(b_enc(obj)) == plain
        cands["b_d"] = lambda: b_dec(data)
        cands["b_e"] = lambda: b_enc(obj)
    if v03 is not None:
        pcls = v03.Task if tp is m.Task else v03.MessageSendParams
        pobj = pcls.model_validate_json(data03)
        cands["p_d"] = lambda: pcls.model_validate_json(data03)
        cands["p_e"] = lambda: orjson.dumps(
            pobj.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
    return cands


def run(names: list[str], rounds: int, budget: float) -> bool:
    sdk = _sdk()
    v03 = _sdk03()
    payloads: dict[str, tuple[Any, type[Any], str]] = {
        "small": (make_send(), m.SendMessageRequest, "SendMessageRequest"),
        "medium": (make_task(10, 2), m.Task, "Task"),
        "large": (make_task(200, 20), m.Task, "Task"),
    }
    all_ok = True
    rows: list[list[str]] = []
    rows03: list[list[str]] = []
    checks: list[str] = []
    bounds: list[str] = []
    pures: list[str] = []
    for name in names:
        obj, tp, sdk_name = payloads[name]
        data = codec.encode(obj, "1.0")
        plain = orjson.loads(data)
        assert codec.decode(tp, data, "1.0") == obj
        assert codec.encode(codec.decode(tp, data, "1.0"), "1.0") == data
        assert orjson.dumps(plain) == data  # the floor writes the same bytes
        data03 = codec.encode(obj, "0.3")
        assert codec.decode(tp, data03, "0.3") == obj
        assert orjson.dumps(orjson.loads(data03)) == data03

        r = race(_candidates(obj, tp, sdk_name, sdk, v03), rounds, budget)
        floor_d, floor_e, dec, enc = r["floor_d"], r["floor_e"], r["dec"], r["enc"]
        sdk_d, sdk_e = r.get("sdk_d"), r.get("sdk_e")
        ms_d, ms_e = r.get("ms_d"), r.get("ms_e")
        rows.append(
            [
                f"{name} decode",
                f"{len(data):,}",
                _fmt(floor_d),
                _fmt(dec),
                _fmt(r.get("dec_p")),
                _fmt(sdk_d),
                _fmt(ms_d),
                _ratio(dec, floor_d),
                _ratio(sdk_d, dec),
                _ratio(ms_d, floor_d),
            ]
        )
        rows.append(
            [
                f"{name} encode",
                "",
                _fmt(floor_e),
                _fmt(enc),
                _fmt(r.get("enc_p")),
                _fmt(sdk_e),
                _fmt(ms_e),
                _ratio(enc, floor_e),
                _ratio(sdk_e, enc),
                _ratio(ms_e, floor_e),
            ]
        )
        if name != "small":
            for what, val, floor, target, sdk_t in (
                ("decode", dec, floor_d, DECODE_TARGET, sdk_d),
                ("encode", enc, floor_e, ENCODE_TARGET, sdk_e),
            ):
                ok = val / floor <= target
                all_ok &= ok
                line = (
                    f"{name:6} 1.0 {what}: {val / floor:5.2f}x floor "
                    f"(target <= {target:.1f}x) {'OK' if ok else 'MISS'}"
                )
                if sdk_t is not None:
                    sok = sdk_t / val >= SDK_TARGET
                    all_ok &= sok
                    line += (
                        f"; {sdk_t / val:5.1f}x faster than SDK "
                        f"(target >= {SDK_TARGET:.0f}x) {'OK' if sok else 'MISS'}"
                    )
                checks.append(line)
            if "dec_p" in r:
                pures.append(
                    f"{name:6} 1.0: decode {r['dec_p'] / floor_d:4.2f}x floor "
                    f"({dec / r['dec_p']:4.2f} of it accelerated), encode "
                    f"{r['enc_p'] / floor_e:4.2f}x floor ({enc / r['enc_p']:4.2f})"
                )
                pures.append(
                    f"{name:6} 0.3: decode {r['d03_p'] / r['f03_d']:4.2f}x floor "
                    f"({r['d03'] / r['d03_p']:4.2f}), encode "
                    f"{r['e03_p'] / r['f03_e']:4.2f}x floor ({r['e03'] / r['e03_p']:4.2f})"
                )
            b_d, b_e = r["b_d"], r["b_e"]
            bounds.append(
                f"{name:6} 1.0: decode {b_d / floor_d:4.2f}x floor ({dec / b_d:4.2f}x of it "
                f"is the codec's checks), encode {b_e / floor_e:4.2f}x floor "
                f"({enc / b_e:4.2f}x)"
            )
        f03_d, f03_e, d03, e03 = r["f03_d"], r["f03_e"], r["d03"], r["e03"]
        p_d, p_e = r.get("p_d"), r.get("p_e")
        if name != "small":
            for what, val, floor, target, sdk_t in (
                ("decode", d03, f03_d, DECODE_TARGET, p_d),
                ("encode", e03, f03_e, ENCODE_TARGET, p_e),
            ):
                ok = val / floor <= target
                all_ok &= ok
                line = (
                    f"{name:6} 0.3 {what}: {val / floor:5.2f}x floor "
                    f"(target <= {target:.1f}x) {'OK' if ok else 'MISS'}"
                )
                if sdk_t is not None:
                    sok = sdk_t / val >= SDK03_TARGET
                    all_ok &= sok
                    line += (
                        f"; {sdk_t / val:5.1f}x faster than SDK pydantic "
                        f"(target >= {SDK03_TARGET:.0f}x) {'OK' if sok else 'MISS'}"
                    )
                checks.append(line)
        m3_d, m3_e = r.get("ms03_d"), r.get("ms03_e")
        rows03.append(
            [
                f"{name} decode",
                f"{len(data03):,}",
                _fmt(f03_d),
                _fmt(d03),
                _fmt(r.get("d03_p")),
                _fmt(p_d),
                _fmt(m3_d),
                _ratio(d03, f03_d),
                _ratio(p_d, d03),
                _ratio(m3_d, f03_d),
            ]
        )
        rows03.append(
            [
                f"{name} encode",
                "",
                _fmt(f03_e),
                _fmt(e03),
                _fmt(r.get("e03_p")),
                _fmt(p_e),
                _fmt(m3_e),
                _ratio(e03, f03_e),
                _ratio(p_e, e03),
                _ratio(m3_e, f03_e),
            ]
        )

    clock = "wall-clock" if TIMER is time.perf_counter else "thread CPU time"
    gc_note = "GC on" if KEEP_GC else "GC off (timeit default)"
    head = [
        "payload",
        "bytes",
        "orjson µs",
        "codec µs",
        "pure µs",
        "SDK µs",
        "msgspec µs",
        "codec/orjson",
        "SDK/codec",
        "msgspec/orjson",
    ]
    print(
        f"A2A 1.0 (ProtoJSON) - best of {rounds}, {clock}, {gc_note}; "
        "SDK = a2a-sdk protobuf json_format"
    )
    _table(head, rows)
    print()
    print(
        "A2A 0.3 JSON-RPC - SDK column = a2a.compat.v0_3 pydantic "
        "(model_validate_json / model_dump+orjson)"
    )
    _table(head, rows03)
    print()
    print(f"codec column: {'compiled accelerator' if codec.accelerated() else 'pure Python'}")
    if pures:
        print("Pure-Python path (same run; accelerated time / pure time in brackets):")
        for line in pures:
            print("  " + line)
        print()
    if bounds:
        print("Pure-Python bound (orjson + the same objects, no checks at all; codec / bound):")
        for line in bounds:
            print("  " + line)
        print()
    print("Targets:")
    for line in checks:
        print("  " + line)
    print("ALL TARGETS MET" if all_ok else "SOME TARGETS MISSED")
    return all_ok


_IMPORT_CASES = (
    ("import a2a_models", "import a2a_models"),
    ("from a2a_models import Task", "from a2a_models import Task"),
    ("from a2a_models import codec", "from a2a_models import codec"),
    (
        "+ first 1.0 encode/decode",
        "from a2a_models import codec, Message\n"
        "codec.decode(Message, codec.encode(Message.user('hi')))",
    ),
)
_IMPORT_PROBE = """
import time
t0 = time.perf_counter(); c0 = time.process_time()
{code}
c1 = time.process_time(); t1 = time.perf_counter()
print((t1 - t0) * 1e3, (c1 - c0) * 1e3)
"""


def import_times(runs: int = 5) -> None:
    """Median wall-clock and CPU ms of each import, each in ``runs`` fresh interpreters."""
    import statistics
    import subprocess

    print(
        f"Import cost - median of {runs} fresh interpreters (ms; CPU time is less "
        "sensitive to machine load than wall-clock)"
    )
    rows = []
    for label, code in _IMPORT_CASES:
        probe = _IMPORT_PROBE.format(code=code)
        subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True)  # warm
        walls, cpus = [], []
        for _ in range(runs):
            out = subprocess.run(
                [sys.executable, "-c", probe], check=True, capture_output=True, text=True
            ).stdout.split()
            walls.append(float(out[0]))
            cpus.append(float(out[1]))
        rows.append([label, f"{statistics.median(walls):.1f}", f"{statistics.median(cpus):.1f}"])
    _table(["what", "wall ms", "CPU ms"], rows)


def _table(head: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*head))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(fmt.format(*r))


def main() -> None:
    global TIMER, KEEP_GC
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    ap.add_argument("--wall", action="store_true", help="time wall-clock, not thread CPU time")
    ap.add_argument("--gc", action="store_true", help="keep the garbage collector on")
    ap.add_argument("--only", choices=["small", "medium", "large"], action="append")
    ap.add_argument(
        "--import-time",
        action="store_true",
        help="only measure the import cost (fresh interpreters)",
    )
    args = ap.parse_args()
    if args.import_time:
        import_times()
        return
    if args.wall:
        TIMER = time.perf_counter
    if args.gc:
        KEEP_GC = True
    names = args.only or ["small", "medium", "large"]
    rounds, budget = (5, 0.005) if args.quick else (9, 0.015)
    ok = run(names, rounds, budget)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
