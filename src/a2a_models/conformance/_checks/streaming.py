"""Streaming and lifecycle checks (spec §3.1.2, §3.5.2, §4.2, §9.4.2, §11.7; 0.3 §7.2)."""

from __future__ import annotations

import re
from typing import Any

from ... import models as m
from ..._state import TaskState
from .._context import CheckContext
from .._registry import STREAM_CONTRACT, Level, Requirement, check
from .._stream import StreamSession

MUST, SHOULD = Level.MUST, Level.SHOULD
STREAMING = (Requirement.STREAMING,)
CHUNKS = 3


async def _main_stream(ctx: CheckContext) -> StreamSession:
    """One SendStreamingMessage, read to its end: ``stream 3`` for the contract, else ``hello``."""
    text = f"stream {CHUNKS}" if ctx.has_contract else "hello"

    async def make() -> StreamSession:
        async with await ctx.stream("SendStreamingMessage", ctx.send_request(text)) as s:
            await s.collect(idle=8.0)
        if s.status is None:
            ctx.fail(f"SendStreamingMessage got no response: {s.transport_error}")
        return s

    return await ctx.prerequisite("main-stream", make)


def _events_or_fail(ctx: CheckContext, s: StreamSession) -> None:
    err = s.first_error()
    if err is not None:
        ctx.fail(f"SendStreamingMessage answered with an error: {err.describe()}")
    if not s.events:
        ctx.fail(f"the stream had no events ({s.outcome()})")


async def _main_stream_events(ctx: CheckContext) -> StreamSession:
    """The main stream; fails the check if it answered with an error or carried no events."""
    s = await _main_stream(ctx)
    _events_or_fail(ctx, s)
    return s


@check(
    "stream.content-type",
    "§9.1, §11.7",
    MUST,
    "Streaming answers HTTP 200 with Content-Type text/event-stream",
    requires=STREAMING,
)
async def stream_content_type(ctx: CheckContext) -> str | None:
    s = await _main_stream(ctx)
    ctx.expect(s.status == 200, f"HTTP {s.status}, expected 200")
    ctx.expect(s.is_sse, f"Content-Type {s.media_type or '(none)'!r}, expected text/event-stream")
    return None


@check(
    "stream.framing",
    "§9.4.2, §11.7",
    MUST,
    "Every SSE event's data is one JSON response (JSON-RPC: with the request id)",
    requires=STREAMING,
)
async def stream_framing(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    bad = [f"#{e.index}: {e.problem}" for e in s.events if e.problem]
    ctx.expect(not bad, "; ".join(bad))
    return f"{len(s.events)} events"


@check(
    "stream.events-decode",
    "§3.2.3, §5.5",
    MUST,
    "Every stream event decodes as a StreamResponse of the version",
    requires=STREAMING,
)
async def stream_decodes(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    bad = [f"#{e.index}: {e.decode_error}" for e in s.events if e.decode_error]
    ctx.expect(not bad, "; ".join(bad))
    return None


@check(
    "stream.first-event",
    "§3.1.2",
    MUST,
    "A stream starts with the Task, or is exactly one Message",
    requires=STREAMING,
)
async def stream_first_event(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    first = s.events[0]
    ctx.expect(first.kind in ("task", "message"), f"the first event is {first.describe()}")
    if first.kind == "message":
        ctx.expect(len(s.events) == 1, f"a Message stream carried {len(s.events)} events")
    return None


def _after_terminal(s: StreamSession) -> list[Any]:
    term = s.terminal_index
    if term is None:
        return []
    final = s.events[term]
    extra = s.events[term + 1 :]
    # §11.7: a final Task snapshot (in the same terminal state) MAY follow.
    if extra and extra[0].kind == "task" and extra[0].state is final.state:
        extra = extra[1:]
    return extra


@check(
    "stream.no-event-after-terminal",
    "§3.1.2, §11.7",
    MUST,
    "Nothing follows the terminal event (but an optional final Task snapshot)",
    requires=STREAMING,
)
async def stream_nothing_after_terminal(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    if s.terminal_index is None:
        ctx.skip("the stream reached no terminal state")
    extra = _after_terminal(s)
    ctx.expect(
        not extra, "events after the terminal event: " + ", ".join(e.describe() for e in extra)
    )
    return None


@check(
    "stream.closes-after-terminal",
    "§3.1.2",
    MUST,
    "The stream closes once the task is terminal",
    requires=STREAMING,
)
async def stream_closes(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    if s.terminal_index is None and s.transport_error is not None:
        # cut mid-way, or endless: the task's end never reached the client
        ctx.fail(
            f"no terminal state before the stream was cut off: {s.outcome()} (§3.1.2: the "
            "stream carries the task's updates until it is terminal or interrupted, then closes)"
        )
    if s.terminal_index is None:
        ctx.skip("the stream reached no terminal state")
    problem = f"the stream was still open {ctx.stream_grace:.1f}s after the terminal event"
    if not s.closed and ctx.version == "0.3":
        # 0.3 marks the last event (final: "If true, this is the final event in the stream
        # for this interaction.", §7.2.2) and says nothing of closing the stream after it.
        ctx.advise(
            f"advisory: {problem}, where 1.0 §3.1.2 closes it; 0.3 marks the final event "
            "(§7.2.2) and states no rule on closing"
        )
        return None
    ctx.expect(s.closed, problem)
    return None


def _step(e: Any) -> int | None:
    if e.kind == "status" and e.model.status.message is not None:
        match = re.fullmatch(r"step (\d+) of \d+", e.model.status.message.text)
        if match:
            return int(match.group(1))
    return None


def _chunks(s: StreamSession) -> list[m.TaskArtifactUpdateEvent]:
    return [e.model for e in s.events if e.kind == "artifact"]


@check(
    "stream.order",
    "§3.5.2, §3.1.2",
    MUST,
    "Events arrive in the order generated: Task, updates, completed last",
    requires=STREAM_CONTRACT,
)
async def stream_order(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    kinds = [e.describe() for e in s.events]

    def in_order(ok: bool, problem: str) -> None:
        """An order rule: 1.0's (§3.5.2, §3.1.2); 0.3 states none, so there an advisory."""
        if ok or ctx.version != "0.3":
            ctx.expect(ok, problem)
        else:
            ctx.advise(
                f"advisory: {problem}, where 1.0 §3.5.2 delivers events in the order "
                "generated; 0.3 states no order (§7.2.1: 'The server may send multiple "
                "response objects for a single request.')"
            )

    in_order(s.events[0].kind == "task", f"first event is not the Task: {kinds}")
    steps = [n for n in (_step(e) for e in s.events) if n is not None]
    in_order(steps == list(range(1, CHUNKS + 1)), f"working updates came as steps {steps}: {kinds}")
    chunk_texts = [
        "".join(p.text for p in c.artifact.parts if isinstance(p, m.TextPart)) for c in _chunks(s)
    ]
    in_order(
        chunk_texts == [f"chunk-{i}" for i in range(CHUNKS)],
        f"artifact chunks came as {chunk_texts}",
    )
    step_at = [i for i, e in enumerate(s.events) if _step(e) is not None]
    chunk_at = [i for i, e in enumerate(s.events) if e.kind == "artifact"]
    if step_at and chunk_at:
        in_order(max(step_at) < min(chunk_at), f"status steps and chunks are interleaved: {kinds}")
    # On both versions the stream carries the task to its end (0.3: the final event, §7.2.2).
    term = s.terminal_index
    ctx.expect(
        term is not None and s.events[term].state is TaskState.COMPLETED,
        f"the stream did not end COMPLETED: {kinds}",
    )
    assert term is not None
    in_order(
        not chunk_at or term > max(chunk_at), f"artifact chunks after the completed status: {kinds}"
    )
    return None


@check(
    "stream.artifact-chunks",
    "§4.2.2",
    MUST,
    "Chunks of one artifact share its id; append after the first; lastChunk on the last",
    requires=STREAM_CONTRACT,
)
async def stream_chunks(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    chunks = _chunks(s)
    ctx.expect(len(chunks) == CHUNKS, f"{len(chunks)} artifact events, expected {CHUNKS}")
    ids = {c.artifact.artifact_id for c in chunks}
    ctx.expect(len(ids) == 1, f"the chunks carry {len(ids)} artifact ids")
    appends = [c.append for c in chunks]
    lasts = [c.last_chunk for c in chunks]
    ctx.expect(appends == [False] + [True] * (CHUNKS - 1), f"append flags are {appends}")
    ctx.expect(lasts == [False] * (CHUNKS - 1) + [True], f"lastChunk flags are {lasts}")
    return None


@check(
    "stream.final-flag",
    "0.3 §7.2.2",
    MUST,
    "0.3: the terminal status-update has final=true, earlier ones final=false",
    versions=("0.3",),
    requires=STREAMING,
)
async def stream_final_flag(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    updates = [e for e in s.events if e.kind == "status"]
    if not updates:
        ctx.skip("the stream had no status-update events")
    flags = [bool(e.model.final) for e in updates]
    term = [e.is_terminal for e in updates]
    ctx.expect(
        flags == term,
        f"final flags {flags} for states {[e.state.name for e in updates if e.state]}",
    )
    return None


@check(
    "stream.message-only",
    "§3.1.2",
    MUST,
    "A Message answer streams as exactly one Message, then closes",
    requires=STREAM_CONTRACT,
)
async def stream_message_only(ctx: CheckContext) -> str | None:
    async with await ctx.stream("SendStreamingMessage", ctx.send_request("message")) as s:
        await s.collect(idle=8.0)
    _events_or_fail(ctx, s)
    kinds = [e.describe() for e in s.events]
    ctx.expect(
        len(s.events) == 1 and s.events[0].kind == "message",
        f"expected exactly one Message, got {kinds}",
    )
    ctx.expect(s.closed, "the stream stayed open after the Message")
    return None


# ---------------------------------------------------------------- lifecycle invariants


@check(
    "lifecycle.ids-stable",
    "§3.4.2, §4.2",
    MUST,
    "Stream events carry the Task's id and contextId; GetTask agrees",
    requires=STREAMING,
)
async def lifecycle_ids(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    first = s.events[0].model
    if not isinstance(first, m.Task):
        ctx.not_applicable("the agent answered with a Message, not a Task")
    bad = []
    for e in s.events[1:]:
        v = e.model
        tid = getattr(v, "task_id", None) if not isinstance(v, m.Task) else v.id
        cid = getattr(v, "context_id", None)
        if v is not None and (tid != first.id or cid != first.context_id):
            bad.append(f"#{e.index} has taskId={tid!r} contextId={cid!r}")
    ctx.expect(not bad, f"the Task is {first.id!r}/{first.context_id!r}, but " + "; ".join(bad))
    got = await ctx.read_task(first.id)
    ctx.expect(
        got.id == first.id and got.context_id == first.context_id,
        f"GetTask gives {got.id!r}/{got.context_id!r}",
    )
    return None


@check(
    "lifecycle.artifacts-assembled",
    "§4.2.2",
    MUST,
    "The task's artifact is the chunks assembled as append/lastChunk announced",
    requires=STREAM_CONTRACT,
)
async def lifecycle_artifacts(ctx: CheckContext) -> str | None:
    s = await _main_stream_events(ctx)
    first = s.events[0].model
    chunks = _chunks(s)
    if not isinstance(first, m.Task) or not chunks:
        ctx.skip("the stream had no task or no chunks")
    got = await ctx.read_task(first.id)
    art = got.artifact(chunks[0].artifact.artifact_id)
    ctx.expect(art is not None, f"the task has no artifact {chunks[0].artifact.artifact_id!r}")
    assert art is not None
    text = "".join(p.text for p in art.parts if isinstance(p, m.TextPart))
    want = "".join(f"chunk-{i}" for i in range(len(chunks)))
    ctx.expect(text == want, f"the assembled artifact reads {text!r}, expected {want!r}")
    return None


@check(
    "lifecycle.terminal-is-final",
    "§4.1.3, §3.1.5, §3.1.1",
    MUST,
    "A completed task stays completed after cancel and message attempts",
    requires=(Requirement.CONTRACT,),
)
async def lifecycle_terminal(ctx: CheckContext) -> str | None:
    task = await ctx.completed_task()
    await ctx.call("CancelTask", m.CancelTaskRequest(id=task.id))
    await ctx.send("more", task_id=task.id, context_id=task.context_id)
    got = await ctx.read_task(task.id)
    ctx.expect(
        got.status.state is TaskState.COMPLETED,
        f"the completed task is now {got.status.state.name}",
    )
    return None


@check(
    "lifecycle.history",
    "§3.7, §4.1.1",
    SHOULD,
    "The task history contains the message that was sent",
    requires=(Requirement.CONTRACT,),
)
async def lifecycle_history(ctx: CheckContext) -> str | None:
    msg = ctx.user_message("complete")
    res = await ctx.call("SendMessage", m.SendMessageRequest(message=msg))
    task = ctx.decode(res)
    if not isinstance(task, m.Task):
        ctx.fail(f"'complete' gave a {type(task).__name__}")
    got = await ctx.read_task(task.id)
    sent = [h for h in got.history if h.message_id == msg.message_id]
    ctx.expect(
        sent, f"the history ({len(got.history)} messages) lacks the sent message {msg.message_id!r}"
    )
    ctx.expect(
        sent[0].role is m.Role.USER and sent[0].text == "complete",
        "the history's copy of the sent message differs (role or text)",
    )
    return None


_TS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z")


def _timestamps(value: Any, path: str = "$") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("metadata", "data"):
                continue
            if k == "timestamp":
                out.append((f"{path}.{k}", v))
            else:
                out += _timestamps(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _timestamps(v, f"{path}[{i}]")
    return out


@check(
    "wire.timestamps",
    "§5.6.1",
    MUST,
    "Timestamps are ISO 8601 in UTC with a Z suffix",
    versions=("1.0",),
)
async def wire_timestamps(ctx: CheckContext) -> str | None:
    task = await ctx.any_task()
    raw = ctx.expect_result(await ctx.call("GetTask", m.GetTaskRequest(id=task.id)))
    stamps = _timestamps(raw)
    if not stamps:
        ctx.skip("the task carries no timestamps")
    bad = [f"{p}={v!r}" for p, v in stamps if not (isinstance(v, str) and _TS.fullmatch(v))]
    ctx.expect(not bad, "; ".join(bad))
    return None


_CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*|@type")
_ENUMS = {"state": re.compile(r"TASK_STATE_[A-Z_]+"), "role": re.compile(r"ROLE_[A-Z]+")}
_ENUMS_03 = {
    "state": re.compile(
        r"submitted|working|input-required|completed|canceled|failed|"
        r"rejected|auth-required|unknown"
    ),
    "role": re.compile(r"user|agent"),
}


def _names(value: Any, enums: dict[str, re.Pattern[str]], path: str = "$") -> list[str]:
    bad: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            where = f"{path}.{k}"
            if not _CAMEL.fullmatch(k):
                bad.append(f"{where}: not a camelCase name")
            if k in ("metadata", "data", "params"):
                continue
            if k in enums and not (isinstance(v, str) and enums[k].fullmatch(v)):
                bad.append(f"{where}={v!r}: not an enum name")
            bad += _names(v, enums, where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            bad += _names(v, enums, f"{path}[{i}]")
    return bad


@check(
    "wire.json-names",
    "§5.5",
    MUST,
    "Field names are camelCase; enums are the version's names (TASK_STATE_* / ROLE_*)",
)
async def wire_names(ctx: CheckContext) -> str | None:
    task = await ctx.any_task()
    raw = ctx.expect_result(await ctx.call("GetTask", m.GetTaskRequest(id=task.id)))
    enums = _ENUMS_03 if ctx.dialect == "0.3" else _ENUMS
    bad = _names(raw, enums)
    ctx.expect(not bad, "; ".join(bad[:10]))
    return None


__all__: list[str] = []
