"""Client conformance: a scripted reference server that judges a client's requests.

:class:`ClientHarness` serves an A2A 1.0 agent on 127.0.0.1 (JSON-RPC and
HTTP+JSON, streaming, bearer authentication). Its card lists the interface
under test first. A *driver* (any program using the client under test, or a
pytest test) plays the scenarios below against it; the harness records every
request, answers from its script, and judges the requests against
:data:`CLIENT_CHECKS`.

The driver reads ``A2A_CONFORMANCE_URL`` (the agent's base URL; its card is at
``/.well-known/agent-card.json``) and ``A2A_CONFORMANCE_TOKEN`` (a bearer
token), and performs, in order, printing one JSON object per line:

1. ``send``: SendMessage text ``complete`` → ``{"scenario": "send", "state": S}``
2. ``stream``: SendStreamingMessage ``stream`` →
   ``{"scenario": "stream", "events": N, "state": S}``
3. ``multi-turn``: SendMessage ``input``, then a follow-up text on that task →
   ``{"scenario": "multi-turn", "states": [S1, S2]}``
4. ``error``: GetTask of id ``a2a-conformance-unknown-task`` →
   ``{"scenario": "error", "error": "<code or error type>"}``
5. ``reconnect``: SendStreamingMessage ``drop`` (the harness cuts the stream
   before the end; the client should resubscribe) → ``{"scenario": "reconnect", "state": S}``

``S`` is the task state as the client names it (``TASK_STATE_COMPLETED``,
``completed``, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shlex
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from .. import codec
from .. import models as m
from .._state import TaskState
from ..errors import DecodeError
from ._registry import Exchange, Level, Status

__all__ = [
    "CLIENT_CHECKS",
    "ClientCheck",
    "ClientCheckResult",
    "ClientHarness",
    "ClientReport",
    "main",
    "render_client_report",
]

UNKNOWN_TASK: Final = "a2a-conformance-unknown-task"


@attrs.frozen(slots=True)
class ClientCheck:
    """One rule for clients, judged from the requests the client sent."""

    id: str
    section: str
    level: Level
    title: str


def _c(id: str, section: str, level: Level, title: str) -> tuple[str, ClientCheck]:
    return id, ClientCheck(id, section, level, title)


CLIENT_CHECKS: Final[dict[str, ClientCheck]] = dict(
    [
        _c(
            "client.interface-selection",
            "§8.3.2 (0.3: §5.6.3)",
            Level.MUST,
            "Requests go to the URL of the first interface the card declares for the binding",
        ),
        _c(
            "client.version-selection",
            "§8.3.2, §3.6",
            Level.MUST,
            "The client skips an interface of a protocol version it does not speak (the card lists "
            "an A2A 2.0 interface first) and sends nothing there",
        ),
        _c(
            "client.envelope",
            "§9.3 (0.3: §6.11.1)",
            Level.MUST,
            "JSON-RPC requests are JSON-RPC 2.0 Request objects with a string or integer id, "
            "sent as application/json",
        ),
        _c(
            "client.version-header",
            "§3.6.1, §9.2, §11.2",
            Level.MUST,
            "Every 1.0 request carries A2A-Version: 1.0 (Major.Minor)",
        ),
        _c(
            "client.request-shape",
            "§5.5, §5.7, §3.2",
            Level.MUST,
            "Request params decode strictly as the method's request type of the version",
        ),
        _c(
            "client.ids",
            "§3.4.2, §3.4.3",
            Level.MUST,
            "Message ids are unique; a follow-up names the existing task and its context",
        ),
        _c(
            "client.auth-header",
            "§3.1.11, §7.3",
            Level.MUST,
            "Requests carry the credentials of the scheme the card declares",
        ),
        _c(
            "client.error-handling",
            "§3.3.2 (0.3: §11.2.2)",
            Level.MUST,
            "An A2A error answer reaches the caller as that error (code / type)",
        ),
        _c(
            "client.stream",
            "§3.1.2",
            Level.MUST,
            "A stream is read to its terminal event, in order",
        ),
        _c(
            "client.content-type",
            "§11.1",
            Level.SHOULD,
            "HTTP+JSON request bodies are sent as application/a2a+json",
        ),
        _c(
            "client.reconnect",
            "§3.1.6, §3.7",
            Level.SHOULD,
            "After a stream drops before the terminal event, the client resubscribes "
            "(SubscribeToTask, ideally with Last-Event-ID) and reaches the terminal state",
        ),
    ]
)

_JSONRPC_METHODS = {
    "SendMessage": m.SendMessageRequest,
    "SendStreamingMessage": m.SendMessageRequest,
    "GetTask": m.GetTaskRequest,
    "ListTasks": m.ListTasksRequest,
    "CancelTask": m.CancelTaskRequest,
    "SubscribeToTask": m.SubscribeToTaskRequest,
}


@attrs.define
class Recorded:
    """One request the client sent, how the harness read it, and what it answered."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    op: str = ""
    binding: str = ""
    params: Any = None
    problems: list[str] = attrs.field(factory=list)
    status: int = 0
    answer: str = ""

    def exchange(self, base: str) -> Exchange:
        return Exchange(
            method=self.method,
            url=base + self.path + (f"?{self.query}" if self.query else ""),
            request_headers=tuple(self.headers.items()),
            request_body=self.body.decode("utf-8", "replace")[:2000],
            status=self.status,
            response_body=self.answer[:2000],
        )


@attrs.frozen(slots=True)
class ClientCheckResult:
    check: ClientCheck
    status: Status
    message: str = ""
    evidence: tuple[Exchange, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        from ._coverage import requirements_of

        return {
            "id": self.check.id,
            "title": self.check.title,
            "section": self.check.section,
            "level": self.check.level.value,
            "status": self.status.value,
            "message": self.message,
            "requirements": list(requirements_of(self.check.id)),
            "evidence": [e.to_dict() for e in self.evidence],
        }


@attrs.define
class ClientReport:
    binding: str
    command: str
    results: list[ClientCheckResult]
    outcomes: dict[str, Any]
    exit_code: int | None
    stderr: str = ""

    @property
    def failed_must(self) -> list[ClientCheckResult]:
        return [r for r in self.results if r.status is Status.FAIL and r.check.level is Level.MUST]

    def result(self, check_id: str) -> ClientCheckResult:
        return next(r for r in self.results if r.check.id == check_id)

    def assert_conformant(self, *, level: Level = Level.MUST) -> None:
        """Raise AssertionError (with the report) if a check at ``level`` or stronger failed."""
        levels = (Level.MUST,) if level is Level.MUST else (Level.MUST, Level.SHOULD)
        bad = [r for r in self.results if r.status is Status.FAIL and r.check.level in levels]
        if bad:
            raise AssertionError(render_client_report(self))


def _state_name(value: Any) -> str:
    """``TASK_STATE_COMPLETED`` / ``completed`` / ``TaskState.COMPLETED`` → ``completed``."""
    text = str(value).rsplit(".", 1)[-1].lower().replace("-", "_")
    return text.removeprefix("task_state_")


class ClientHarness:
    """The reference server and its judge. Use as a context manager (starts and stops it)."""

    def __init__(
        self,
        *,
        binding: str = "JSONRPC",
        host: str = "127.0.0.1",
        port: int = 0,
        drop_after: int = 2,
    ) -> None:
        if binding not in ("JSONRPC", "HTTP+JSON"):
            raise ValueError(f"binding must be JSONRPC or HTTP+JSON, not {binding!r}")
        self.binding = binding
        self.token = secrets.token_urlsafe(16)
        self.requests: list[Recorded] = []
        self.card_fetches = 0
        self._host, self._port = host, port
        self._drop_after = drop_after
        self._tasks: dict[str, m.Task] = {}
        self._dropped: dict[str, int] = {}  # task id → SSE events sent before the drop
        self._pending: dict[str, list[Any]] = {}  # task id → its whole event list
        self._lock = threading.Lock()
        self.url = ""
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> ClientHarness:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._port))
        self._sock = sock
        self.url = f"http://{self._host}:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            self._app(),
            log_level="critical",
            lifespan="off",
            loop="asyncio",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])), daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the reference server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(5)
        if self._sock is not None:
            self._sock.close()

    @property
    def env(self) -> dict[str, str]:
        """What a driver process needs."""
        return {
            "A2A_CONFORMANCE_URL": self.url,
            "A2A_CONFORMANCE_TOKEN": self.token,
            "A2A_CONFORMANCE_BINDING": self.binding,
        }

    def card(self) -> dict[str, Any]:
        interfaces = [("JSONRPC", f"{self.url}/jsonrpc"), ("HTTP+JSON", f"{self.url}/rest")]
        interfaces.sort(key=lambda i: i[0] != self.binding)
        # first: the same binding in a protocol version no client speaks yet (§8.3.2: clients
        # select the first interface they SUPPORT)
        future = {
            "url": f"{self.url}/v2/{'jsonrpc' if self.binding == 'JSONRPC' else 'rest'}",
            "protocolBinding": self.binding,
            "protocolVersion": "2.0",
        }
        return {
            "name": "a2a-models client conformance harness",
            "description": "A scripted A2A agent that judges the client's requests",
            "version": "1.0.0",
            "supportedInterfaces": [
                future,
                *(
                    {"url": url, "protocolBinding": b, "protocolVersion": "1.0"}
                    for b, url in interfaces
                ),
            ],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [
                {
                    "id": "client-conformance",
                    "name": "client conformance",
                    "description": "scripted scenarios",
                    "tags": ["conformance"],
                }
            ],
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        }

    # ------------------------------------------------------------------ the script

    def _new_task(self, msg: m.Message, state: TaskState) -> m.Task:
        task = m.Task(
            id=f"task-{uuid.uuid4().hex[:12]}",
            context_id=msg.context_id or f"ctx-{uuid.uuid4().hex[:12]}",
            status=m.TaskStatus.now(state),
            history=(msg,),
        )
        self._tasks[task.id] = task
        return task

    def _set(
        self, task: m.Task, state: TaskState, text: str | None = None, artifact: str | None = None
    ) -> m.Task:
        status = m.TaskStatus.now(state, m.Message.agent(text) if text else None)
        arts = task.artifacts + (
            (m.Artifact(artifact_id="result", parts=(m.TextPart(artifact),)),) if artifact else ()
        )
        task = attrs.evolve(task, status=status, artifacts=arts)
        self._tasks[task.id] = task
        return task

    def _on_send(self, req: m.SendMessageRequest) -> m.Task | m.Message:
        msg = req.message
        text = msg.text.strip()
        if msg.task_id:
            task = self._tasks.get(msg.task_id)
            if task is None:
                from ..errors import TaskNotFoundError

                raise TaskNotFoundError(f"task {msg.task_id!r} not found")
            return self._set(
                attrs.evolve(task, history=(*task.history, msg)),
                TaskState.COMPLETED,
                artifact=f"received: {text}",
            )
        if text == "input":
            task = self._new_task(msg, TaskState.SUBMITTED)
            return self._set(task, TaskState.INPUT_REQUIRED, "send any text to finish")
        task = self._new_task(msg, TaskState.SUBMITTED)
        return self._set(task, TaskState.COMPLETED, artifact="done")

    def _stream_events(self, req: m.SendMessageRequest) -> tuple[list[Any], bool]:
        """(events, drop): ``drop`` cuts the connection after ``drop_after`` events."""
        msg = req.message
        task = self._new_task(msg, TaskState.SUBMITTED)
        ctx = task.context_id or ""
        events: list[Any] = [task]
        working = self._set(task, TaskState.WORKING, "step 1")
        events.append(
            m.TaskStatusUpdateEvent(task_id=task.id, context_id=ctx, status=working.status)
        )
        for i in range(2):
            events.append(
                m.TaskArtifactUpdateEvent(
                    task_id=task.id,
                    context_id=ctx,
                    append=i > 0,
                    last_chunk=i == 1,
                    artifact=m.Artifact(artifact_id="stream", parts=(m.TextPart(f"chunk-{i}"),)),
                )
            )
        done = self._set(working, TaskState.COMPLETED, artifact="chunk-0chunk-1")
        events.append(m.TaskStatusUpdateEvent(task_id=task.id, context_id=ctx, status=done.status))
        drop = msg.text.strip() == "drop"
        if drop:
            self._tasks[task.id] = working  # the rest is sent on resubscription
            self._pending[task.id] = events
            self._dropped[task.id] = self._drop_after
        return events, drop

    # ------------------------------------------------------------------ recording and judging

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)

    def _read(self, rec: Recorded) -> None:
        """Fill ``op``/``params``/``problems`` of a recorded A2A request."""
        if rec.binding == "JSONRPC":
            ctype = rec.headers.get("content-type", "")
            if not ctype.split(";")[0].strip().lower() == "application/json":
                rec.problems.append(
                    f"envelope: Content-Type {ctype or '(none)'!r}, expected application/json"
                )
            try:
                env = json.loads(rec.body)
            except ValueError:
                rec.problems.append("envelope: the body is not JSON")
                return
            if not isinstance(env, dict):
                rec.problems.append("envelope: the body is not a JSON object")
                return
            if env.get("jsonrpc") != "2.0":
                rec.problems.append(f"envelope: jsonrpc is {env.get('jsonrpc')!r}, expected '2.0'")
            rid = env.get("id")
            if (
                "id" not in env
                or rid is None
                or isinstance(rid, bool | float)
                or not isinstance(rid, str | int)
            ):
                rec.problems.append(f"envelope: id {rid!r} is not a string or integer")
            rec.op = str(env.get("method", ""))
            if rec.op not in _JSONRPC_METHODS:
                rec.problems.append(f"envelope: method {rec.op!r} is not an A2A 1.0 method here")
                return
            raw = env.get("params")
            if not isinstance(raw, dict):
                rec.problems.append(f"envelope: params is {type(raw).__name__}, expected an object")
                return
        else:
            rec.op, raw = self._rest_op(rec)
            if not rec.op:
                rec.problems.append(f"interface: {rec.method} {rec.path} is no HTTP+JSON route")
                return
        try:
            rec.params = codec.from_wire(_JSONRPC_METHODS[rec.op], raw, "1.0")
        except DecodeError as exc:
            rec.problems.append(f"shape: {rec.op} params: {exc}")

    def _rest_op(self, rec: Recorded) -> tuple[str, Any]:
        path = rec.path.removeprefix("/rest")
        body: Any = {}
        if rec.body:
            try:
                body = json.loads(rec.body)
            except ValueError:
                rec.problems.append("shape: the body is not JSON")
                return "", None
        if rec.method == "POST" and path == "/message:send":
            return "SendMessage", body
        if rec.method == "POST" and path == "/message:stream":
            return "SendStreamingMessage", body
        match = re.fullmatch(r"/tasks/([^/:]+)(:cancel|:subscribe)?", path)
        if match:
            tid = match.group(1)
            if match.group(2) == ":cancel" and rec.method == "POST":
                return "CancelTask", {**(body if isinstance(body, dict) else {}), "id": tid}
            if match.group(2) == ":subscribe" and rec.method in ("GET", "POST"):
                return "SubscribeToTask", {"id": tid}
            if match.group(2) is None and rec.method == "GET":
                q = dict(p.split("=", 1) for p in rec.query.split("&") if "=" in p)
                out: dict[str, Any] = {"id": tid}
                if "historyLength" in q:
                    out["historyLength"] = (
                        int(q["historyLength"])
                        if q["historyLength"].isdigit()
                        else q["historyLength"]
                    )
                return "GetTask", out
        if rec.method == "GET" and path == "/tasks":
            return "ListTasks", {}
        return "", None

    # ------------------------------------------------------------------ the ASGI app

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        from ..errors import JSONRPCError, TaskNotFoundError, UnsupportedOperationError
        from ..protocol import METHODS

        harness = self

        async def card(request: Request) -> Response:
            harness.card_fetches += 1
            return JSONResponse(harness.card(), headers={"Cache-Control": "max-age=60"})

        def sse(frames: list[tuple[int, bytes]], drop: bool) -> Any:
            async def gen() -> Any:
                for n, (eid, data) in enumerate(frames):
                    if drop and n >= harness._drop_after:
                        raise ConnectionResetError("the harness drops this stream on purpose")
                    yield f"id: {eid}\n".encode() + b"data: " + data + b"\n\n"
                    await asyncio.sleep(0.005)

            return gen()

        def stream_items(rec: Recorded) -> tuple[list[Any], int, bool]:
            """(events, SSE id of the first, drop after ``drop_after``)."""
            if rec.op == "SendStreamingMessage":
                events, drop = harness._stream_events(rec.params)
                return events, 1, drop
            tid = rec.params.id
            pending = harness._pending.get(tid)
            if pending is None:
                if tid not in harness._tasks:
                    raise TaskNotFoundError(f"task {tid!r} not found")
                task = harness._tasks[tid]
                if task.status.state.is_terminal:
                    raise UnsupportedOperationError("the task is already terminal")
                return [task], 1, False
            resume = rec.headers.get("last-event-id", "").strip()
            start = int(resume) if resume.isdigit() else harness._drop_after
            snapshot = harness._tasks[tid]
            harness._tasks[tid] = harness._final(pending)
            rest = pending[start:]
            if resume.isdigit():
                return rest, start + 1, False
            # no Last-Event-ID: the Task as it is now first (§3.1.6), then what follows
            return [snapshot, *rest], start, False

        async def handle(request: Request, binding: str) -> Response:
            body = await request.body()
            rec = Recorded(
                request.method,
                request.url.path,
                request.url.query,
                {k.lower(): v for k, v in request.headers.items()},
                body,
                binding=binding,
            )
            harness._read(rec)
            harness._record(rec)
            rid = None
            if binding == "JSONRPC":
                with contextlib.suppress(ValueError, AttributeError):
                    rid = json.loads(body).get("id")
            try:
                if rec.params is None:
                    from ..errors import InvalidRequestError

                    raise InvalidRequestError("; ".join(rec.problems) or "unreadable request")
                if rec.headers.get("authorization", "") != f"Bearer {harness.token}":
                    rec.status = 401
                    rec.answer = "missing or wrong bearer token"
                    return Response(
                        rec.answer,
                        status_code=401,
                        headers={"WWW-Authenticate": 'Bearer realm="a2a"'},
                    )
                spec = METHODS[rec.op]
                if spec.streaming:
                    items, first_id, drop = stream_items(rec)
                    frames = []
                    for i, item in enumerate(items):
                        wire = _stream_wire(item)
                        payload = (
                            {"jsonrpc": "2.0", "id": rid, "result": wire}
                            if binding == "JSONRPC"
                            else wire
                        )
                        frames.append((first_id + i, json.dumps(payload).encode()))
                    rec.status = 200
                    rec.answer = (
                        f"SSE, {len(frames)} events"
                        if not drop
                        else f"SSE, dropped after {harness._drop_after} events"
                    )
                    return StreamingResponse(sse(frames, drop), media_type="text/event-stream")
                if rec.op == "SendMessage":
                    result: Any = harness._on_send(rec.params)
                    wire = codec.to_wire(result, "1.0")
                    wire = {"task": wire} if isinstance(result, m.Task) else {"message": wire}
                elif rec.op == "GetTask":
                    task = harness._tasks.get(rec.params.id)
                    if task is None:
                        raise TaskNotFoundError(f"task {rec.params.id!r} not found")
                    wire = codec.to_wire(task, "1.0")
                else:
                    raise UnsupportedOperationError(f"{rec.op} is not part of the client script")
            except JSONRPCError as exc:
                error_response: Response = _error_response(rec, exc, binding, rid)
                return error_response
            rec.status = 200
            content = json.dumps(
                {"jsonrpc": "2.0", "id": rid, "result": wire} if binding == "JSONRPC" else wire
            )
            rec.answer = content
            return Response(
                content,
                media_type="application/json" if binding == "JSONRPC" else "application/a2a+json",
            )

        async def jsonrpc(request: Request) -> Response:
            return await handle(request, "JSONRPC")

        async def rest(request: Request) -> Response:
            return await handle(request, "HTTP+JSON")

        async def stray(request: Request) -> Response:
            body = await request.body()
            rec = Recorded(
                request.method,
                request.url.path,
                request.url.query,
                {k.lower(): v for k, v in request.headers.items()},
                body,
            )
            rec.problems.append(
                f"interface: {request.method} {request.url.path} is not a declared interface"
            )
            rec.status = 404
            harness._record(rec)
            return Response("not a declared interface", status_code=404)

        async def future(request: Request) -> Response:
            body = await request.body()
            rec = Recorded(
                request.method,
                request.url.path,
                request.url.query,
                {k.lower(): v for k, v in request.headers.items()},
                body,
            )
            rec.problems.append(
                f"version: {request.method} {request.url.path} is the A2A 2.0 "
                f"interface, sent with A2A-Version "
                f"{rec.headers.get('a2a-version', '(absent)')!r}"
            )
            harness._record(rec)
            from ..errors import VersionNotSupportedError

            exc = VersionNotSupportedError("this interface speaks A2A 2.0 only")
            rid = None
            with contextlib.suppress(ValueError, AttributeError):
                rid = json.loads(body).get("id")
            answer: Response = _error_response(
                rec, exc, "JSONRPC" if request.url.path.endswith("jsonrpc") else "HTTP+JSON", rid
            )
            return answer

        methods = ["GET", "POST", "PUT", "DELETE"]
        return Starlette(
            routes=[
                Route("/v2/{rest:path}", future, methods=methods),
                Route("/.well-known/agent-card.json", card),
                Route("/jsonrpc", jsonrpc, methods=["POST"]),
                Route("/rest/{rest:path}", rest, methods=methods),
                Route("/{other:path}", stray, methods=methods),
            ]
        )

    def _final(self, events: list[Any]) -> m.Task:
        first: m.Task = events[0]
        last = events[-1]
        return attrs.evolve(
            first,
            status=last.status,
            artifacts=(m.Artifact(artifact_id="stream", parts=(m.TextPart("chunk-0chunk-1"),)),),
        )

    # ------------------------------------------------------------------ verdicts

    def judge(self, outcomes: Mapping[str, Any]) -> list[ClientCheckResult]:
        """The verdict of every client check on what was recorded and what the driver said."""
        reqs = list(self.requests)
        a2a = [r for r in reqs if r.binding]
        base = self.url
        out: list[ClientCheckResult] = []

        def add(cid: str, status: Status, message: str = "", ev: Sequence[Recorded] = ()) -> None:
            out.append(
                ClientCheckResult(
                    CLIENT_CHECKS[cid],
                    status,
                    message,
                    tuple(r.exchange(base) for r in list(ev)[:4]),
                )
            )

        def verdict(cid: str, bad: list[tuple[Recorded, str]], none_msg: str = "") -> None:
            if not a2a:
                add(cid, Status.SKIP, "the client sent no A2A request")
            elif bad:
                add(
                    cid,
                    Status.FAIL,
                    "; ".join(dict.fromkeys(msg for _, msg in bad))[:600],
                    [r for r, _ in bad],
                )
            else:
                add(cid, Status.PASS, none_msg)

        wrong_version = [
            (r, p.split(": ", 1)[1]) for r in reqs for p in r.problems if p.startswith("version:")
        ]
        if not reqs:
            add("client.version-selection", Status.SKIP, "the client sent no request")
        elif wrong_version:
            add(
                "client.version-selection",
                Status.FAIL,
                "; ".join(dict.fromkeys(msg for _, msg in wrong_version))[:600],
                [r for r, _ in wrong_version],
            )
        else:
            add("client.version-selection", Status.PASS)
        wrong_iface = [
            (r, p.split(": ", 1)[1]) for r in reqs for p in r.problems if p.startswith("interface:")
        ]
        wrong_iface += [
            (r, f"{r.binding} request, but the card lists {self.binding} first")
            for r in a2a
            if r.binding != self.binding
        ]
        if not reqs:
            add("client.interface-selection", Status.SKIP, "the client sent no request")
        elif wrong_iface:
            add(
                "client.interface-selection",
                Status.FAIL,
                "; ".join(dict.fromkeys(msg for _, msg in wrong_iface))[:600],
                [r for r, _ in wrong_iface],
            )
        else:
            add("client.interface-selection", Status.PASS)
        verdict(
            "client.envelope",
            [
                (r, p.split(": ", 1)[1])
                for r in a2a
                for p in r.problems
                if p.startswith("envelope:")
            ],
        )
        verdict(
            "client.version-header",
            [
                (r, f"A2A-Version {r.headers.get('a2a-version', '(absent)')!r} on {r.op or r.path}")
                for r in a2a
                if r.headers.get("a2a-version", "").strip() != "1.0"
                and "A2A-Version=1.0" not in r.query
            ],
        )
        rest_bodies = [r for r in a2a if r.binding == "HTTP+JSON" and r.body]
        if rest_bodies:
            verdict(
                "client.content-type",
                [
                    (r, f"{r.op}: Content-Type {r.headers.get('content-type', '(none)')!r}")
                    for r in rest_bodies
                    if r.headers.get("content-type", "").split(";")[0].strip()
                    != "application/a2a+json"
                ],
            )
        else:
            add("client.content-type", Status.NOT_APPLICABLE, "no HTTP+JSON request with a body")
        verdict(
            "client.request-shape",
            [(r, p.split(": ", 1)[1]) for r in a2a for p in r.problems if p.startswith("shape:")],
        )
        verdict(
            "client.auth-header",
            [
                (r, f"{r.op or r.path} without 'Authorization: Bearer <token>'")
                for r in a2a
                if r.headers.get("authorization", "") != f"Bearer {self.token}"
            ],
        )
        # ids
        sends = [
            r
            for r in a2a
            if r.op in ("SendMessage", "SendStreamingMessage")
            and isinstance(r.params, m.SendMessageRequest)
        ]
        seen: dict[str, Recorded] = {}
        bad_ids: list[tuple[Recorded, str]] = []
        input_task = next(
            (t for t in self._tasks.values() if t.history and t.history[0].text.strip() == "input"),
            None,
        )
        for r in sends:
            mid = r.params.message.message_id
            if mid in seen:
                bad_ids.append((r, f"messageId {mid!r} reused"))
            seen[mid] = r
        follow = [
            r
            for r in sends
            if input_task is not None
            and r.params.message.text.strip() != "input"
            and r.params.message.task_id == input_task.id
        ]
        if input_task is not None and not follow:
            bad_ids.append(
                (
                    sends[-1] if sends else a2a[-1],
                    f"no follow-up message named the input-required task {input_task.id!r}",
                )
            )
        for r in follow:
            cid = r.params.message.context_id
            if cid not in (None, "", input_task.context_id if input_task else None):
                bad_ids.append((r, f"the follow-up's contextId {cid!r} is not the task's"))
        if not sends:
            add("client.ids", Status.SKIP, "the client sent no message")
        else:
            verdict("client.ids", bad_ids)
        # outcomes reported by the driver
        err = outcomes.get("error", {}).get("error")
        if "error" not in outcomes:
            add("client.error-handling", Status.SKIP, "the driver reported no 'error' outcome")
        elif err is None:
            add(
                "client.error-handling",
                Status.FAIL,
                "GetTask answered TaskNotFoundError (-32001), but the client reported no error",
                [r for r in a2a if r.op == "GetTask"],
            )
        elif re.search(r"-32001|task.?not.?found|404", str(err), re.I):
            add("client.error-handling", Status.PASS, f"surfaced as {err!r}")
        else:
            add(
                "client.error-handling",
                Status.FAIL,
                f"GetTask answered TaskNotFoundError (-32001); the client surfaced {err!r}",
                [r for r in a2a if r.op == "GetTask"],
            )
        st = outcomes.get("stream")
        if st is None:
            add("client.stream", Status.SKIP, "the driver reported no 'stream' outcome")
        elif _state_name(st.get("state")) == "completed" and st.get("events") == 5:
            add("client.stream", Status.PASS)
        else:
            add(
                "client.stream",
                Status.FAIL,
                f"the harness streamed 5 events ending COMPLETED; the client got {st}",
                [r for r in a2a if r.op == "SendStreamingMessage"],
            )
        dropped = list(self._dropped)
        resubs = [
            r
            for r in a2a
            if r.op == "SubscribeToTask"
            and isinstance(r.params, m.SubscribeToTaskRequest)
            and r.params.id in dropped
        ]
        rc = outcomes.get("reconnect")
        if not dropped:
            add("client.reconnect", Status.SKIP, "the client never streamed 'drop'")
        elif not resubs:
            add(
                "client.reconnect",
                Status.FAIL,
                "after the stream dropped, the client did not "
                "resubscribe (SubscribeToTask) to the task; outcome: " + json.dumps(rc),
                [r for r in a2a if r.op == "SendStreamingMessage"],
            )
        elif rc is None or _state_name(rc.get("state")) != "completed":
            add("client.reconnect", Status.FAIL, f"resubscribed, but reported {rc}", resubs)
        else:
            lei = [r.headers.get("last-event-id") for r in resubs]
            add(
                "client.reconnect",
                Status.PASS,
                "resubscribed with Last-Event-ID " + ", ".join(map(str, lei))
                if any(lei)
                else "resubscribed without Last-Event-ID (got the Task snapshot)",
                resubs,
            )
        order = list(CLIENT_CHECKS)
        return sorted(out, key=lambda r: order.index(r.check.id))

    def report(self, outcomes: Mapping[str, Any], *, command: str = "(in-process)") -> ClientReport:
        """Judge what the client sent so far, with the scenario ``outcomes`` it reported."""
        return ClientReport(self.binding, command, self.judge(outcomes), dict(outcomes), None)

    def run(
        self,
        command: Sequence[str],
        *,
        timeout: float = 120.0,
        extra_env: Mapping[str, str] | None = None,
    ) -> ClientReport:
        """Run the driver ``command`` against this harness and judge it."""
        env = {**os.environ, **self.env, **(extra_env or {})}
        try:
            proc = subprocess.run(
                list(command), env=env, capture_output=True, text=True, timeout=timeout, check=False
            )
            stdout, stderr, code = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            stderr = f"the driver ran over {timeout}s"
            code = None
        outcomes = parse_outcomes(stdout)
        return ClientReport(
            self.binding, shlex.join(command), self.judge(outcomes), outcomes, code, stderr[-4000:]
        )


def parse_outcomes(stdout: str) -> dict[str, Any]:
    """The driver's JSON lines by scenario (other lines are ignored)."""
    out: dict[str, Any] = {}
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict) and "scenario" in value:
                out[str(value["scenario"])] = value
    return out


def _stream_wire(item: Any) -> dict[str, Any]:
    key = {
        m.Task: "task",
        m.Message: "message",
        m.TaskStatusUpdateEvent: "statusUpdate",
        m.TaskArtifactUpdateEvent: "artifactUpdate",
    }[type(item)]
    return {key: codec.to_wire(item, "1.0")}


def _error_response(rec: Recorded, exc: Any, binding: str, rid: Any) -> Any:
    from starlette.responses import Response

    if binding == "JSONRPC":
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {"code": exc.code, "message": exc.message, "data": list(exc.details())},
            }
        )
        rec.status, rec.answer = 200, body
        return Response(body, media_type="application/json")
    status = {-32001: 404, -32004: 400, -32009: 400, -32600: 400, -32602: 400}.get(exc.code, 500)
    reason = {
        -32001: "TASK_NOT_FOUND",
        -32004: "UNSUPPORTED_OPERATION",
        -32009: "VERSION_NOT_SUPPORTED",
    }.get(exc.code, "INVALID")
    body = json.dumps(
        {
            "error": {
                "code": status,
                "status": "NOT_FOUND" if status == 404 else "INVALID_ARGUMENT",
                "message": exc.message,
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": reason,
                        "domain": "a2a-protocol.org",
                    }
                ],
            }
        }
    )
    rec.status, rec.answer = status, body
    return Response(body, status_code=status, media_type="application/a2a+json")


def render_client_report(report: ClientReport, fmt: str = "text") -> str:
    """The report as ``text`` or ``json``."""
    if fmt == "json":
        return (
            json.dumps(
                {
                    "binding": report.binding,
                    "command": report.command,
                    "driverExitCode": report.exit_code,
                    "outcomes": report.outcomes,
                    "failedMust": len(report.failed_must),
                    "results": [r.to_dict() for r in report.results],
                },
                indent=2,
            )
            + "\n"
        )
    lines = [
        f"A2A client conformance ({report.binding})",
        f"  driver: {report.command}  (exit {report.exit_code})",
        "",
    ]
    for r in report.results:
        lines.append(
            f"{r.status.value.upper():<5} {r.check.level.value:<6} {r.check.id:<28} "
            f"{r.check.section:<22} {r.message[:140]}"
        )
    lines.append("")
    lines.append(
        "RESULT: "
        + (
            "NOT CONFORMANT (a MUST check failed)"
            if report.failed_must
            else "conformant (no MUST check failed)"
        )
    )
    failures = [r for r in report.results if r.status is Status.FAIL]
    for r in failures:
        lines += ["", f"{r.check.id}: {r.message}"]
        lines += ["    " + ln for ex in r.evidence[:2] for ln in ex.render().splitlines()]
    if report.stderr.strip() and (report.exit_code or failures):
        lines += ["", "driver stderr (tail):", report.stderr[-1500:]]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, *, prog: str = "a2a-models conformance-client") -> int:
    """``conformance-client [--binding B] [--report text|json] -- COMMAND...``."""
    import argparse

    p = argparse.ArgumentParser(
        prog=prog,
        description="Start a scripted reference A2A server on 127.0.0.1, run a "
        "client driver COMMAND against it (it gets A2A_CONFORMANCE_URL and "
        "A2A_CONFORMANCE_TOKEN) and judge every request the client sent. Exits 1 if a MUST "
        "check failed.",
    )
    p.add_argument(
        "--binding",
        choices=["jsonrpc", "rest"],
        default="jsonrpc",
        help="the interface the card lists first (default jsonrpc)",
    )
    p.add_argument(
        "--port", type=int, default=0, help="port of the reference server (default: any)"
    )
    p.add_argument("--timeout", type=float, default=120.0, help="seconds the driver may run")
    p.add_argument("--report", choices=["text", "json"], default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the driver command (after --)")
    args = p.parse_args(list(argv) if argv is not None else None)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("a driver COMMAND is required (after --)")
    binding = "JSONRPC" if args.binding == "jsonrpc" else "HTTP+JSON"
    with ClientHarness(binding=binding, port=args.port) as harness:
        report = harness.run(command, timeout=args.timeout)
    text = render_client_report(report, args.report)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 1 if report.failed_must else 0
