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
from ._client_checks import ClientCheckResult, ClientReport, Recorded
from ._client_judge import judge

__all__ = ["ClientHarness", "parse_outcomes"]

UNKNOWN_TASK: Final = "a2a-conformance-unknown-task"


_JSONRPC_METHODS = {
    "SendMessage": m.SendMessageRequest,
    "SendStreamingMessage": m.SendMessageRequest,
    "GetTask": m.GetTaskRequest,
    "ListTasks": m.ListTasksRequest,
    "CancelTask": m.CancelTaskRequest,
    "SubscribeToTask": m.SubscribeToTaskRequest,
}


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

                raise TaskNotFoundError.of(msg.task_id)
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
                    raise TaskNotFoundError.of(tid)
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

        async def received(request: Request, binding: str = "") -> Recorded:
            return Recorded(
                request.method,
                request.url.path,
                request.url.query,
                {k.lower(): v for k, v in request.headers.items()},
                await request.body(),
                binding=binding,
            )

        async def handle(request: Request, binding: str) -> Response:
            rec = await received(request, binding)
            harness._read(rec)
            harness._record(rec)
            rid = None
            if binding == "JSONRPC":
                with contextlib.suppress(ValueError, AttributeError):
                    rid = json.loads(rec.body).get("id")
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
                        raise TaskNotFoundError.of(rec.params.id)
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
            rec = await received(request)
            rec.problems.append(
                f"interface: {request.method} {request.url.path} is not a declared interface"
            )
            rec.status = 404
            harness._record(rec)
            return Response("not a declared interface", status_code=404)

        async def future(request: Request) -> Response:
            rec = await received(request)
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
                rid = json.loads(rec.body).get("id")
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
        return judge(
            self.requests,
            outcomes,
            base_url=self.url,
            binding=self.binding,
            token=self.token,
            tasks=self._tasks.values(),
            dropped=self._dropped,
        )

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
