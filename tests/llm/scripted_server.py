"""A scripted model server on loopback that speaks enough of two provider APIs for their SDKs.

* OpenAI chat completions: ``POST /v1/chat/completions`` - streaming (SSE
  ``data:`` chunks with ``choices[0].delta.content`` and
  ``delta.tool_calls[i].function.arguments`` fragments, an optional usage
  chunk, ``data: [DONE]``) and non-streaming.
* OpenAI Responses: ``POST /v1/responses`` - streaming (SSE events
  ``response.created``, ``response.output_item.added`` (message |
  function_call), ``response.output_text.delta``,
  ``response.function_call_arguments.delta``/``.done``,
  ``response.output_item.done``, then ``response.completed`` or
  ``response.incomplete``; an ``error`` event on failure) and non-streaming.
* Anthropic messages: ``POST /v1/messages`` - streaming (``message_start``,
  ``content_block_start`` (text | tool_use), ``ping``, ``content_block_delta``
  (text_delta | input_json_delta), ``content_block_stop``, ``message_delta``
  with the stop reason, ``message_stop``) and non-streaming.

Tests queue :class:`Turn` scripts with :meth:`ScriptedModelServer.script`;
each request consumes the next turn, whichever API it arrives on, and is
recorded in :attr:`ScriptedModelServer.requests` (API, path, headers, JSON
body). A turn gives text chunks, tool calls (with their argument fragments),
a provider-neutral stop reason, a delay between chunks, or an HTTP error
status; a stream can also fail or stop short mid-way. Client disconnects
from a live stream are counted and can be awaited.

Use the ``scripted_server`` fixture (``tests/llm/conftest.py``) or, outside
pytest::

    async with ScriptedModelServer() as server:
        server.script(Turn(text=["Hel", "lo"]))
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k")
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections import deque
from collections.abc import AsyncIterator, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

__all__ = ["RecordedRequest", "ScriptedModelServer", "ScriptedToolCall", "Turn"]

API = Literal["openai", "anthropic", "responses"]

_OPENAI_STOP = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "refusal": "content_filter",
}
_ANTHROPIC_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
    "refusal": "refusal",
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


# ------------------------------------------------------------------ scripts


@dataclass(frozen=True)
class ScriptedToolCall:
    """A tool call the scripted model makes.

    ``arguments`` is the JSON text to stream (it may be invalid on purpose) or
    an object to encode. The text is sent as ``chunks`` when given (they must
    concatenate to it), else in pieces of ``chunk_size`` characters, else in
    one piece.
    """

    name: str
    arguments: str | Mapping[str, Any] = "{}"
    chunks: Sequence[str] | None = None
    chunk_size: int | None = None
    id: str | None = None

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, separators=(",", ":"))

    def fragments(self) -> list[str]:
        text = self.arguments_text
        if self.chunks is not None:
            if "".join(self.chunks) != text:
                raise ValueError(f"the chunks of {self.name!r} do not concatenate to its arguments")
            return list(self.chunks)
        if self.chunk_size:
            return [text[i : i + self.chunk_size] for i in range(0, len(text), self.chunk_size)]
        return [text] if text else []


@dataclass(frozen=True)
class Turn:
    """One scripted model answer (or failure).

    ``stop`` is provider-neutral (``stop``, ``tool_calls``, ``length``,
    ``content_filter``/``refusal``) or a raw provider value; by default
    ``tool_calls`` when the turn calls tools, else ``stop``. ``delay`` (s)
    separates consecutive chunks. ``status`` answers with that HTTP error
    instead (``error_type``/``error_message`` fill the provider's error body,
    ``headers`` are added). ``error_after`` sends a provider error event after
    that many chunks of a stream; ``truncate_after`` ends the stream there
    without a finish; ``garbage_after`` sends an event whose data is not JSON
    there. ``usage`` is ``(input_tokens, output_tokens)``.
    """

    text: Sequence[str] = ()
    tool_calls: Sequence[ScriptedToolCall] = ()
    stop: str | None = None
    delay: float = 0.0
    status: int | None = None
    error_type: str | None = None
    error_message: str = "scripted failure"
    headers: Mapping[str, str] = field(default_factory=dict)
    error_after: int | None = None
    truncate_after: int | None = None
    garbage_after: int | None = None
    usage: tuple[int, int] = (11, 7)

    def stop_reason(self) -> str:
        if self.stop is not None:
            return self.stop
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received."""

    api: API
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


# ------------------------------------------------------------------- server


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without signal handlers, polling or shutdown grace sleeps (tests start many)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.exit_requested = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def main_loop(self) -> None:
        await self.exit_requested.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(2):
                while self.server_state.tasks:
                    await asyncio.sleep(0.005)
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel()
        for server in self.servers:
            await server.wait_closed()


class ScriptedModelServer:
    """The scripted server (Starlette + uvicorn on 127.0.0.1, a free port)."""

    def __init__(self) -> None:
        self._turns: deque[Turn] = deque()
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0
        self.completed_streams = 0
        self._changed = asyncio.Condition()
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._port: int | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
                Route("/v1/messages", self._anthropic, methods=["POST"]),
                Route("/v1/responses", self._responses, methods=["POST"]),
            ]
        )

    # ---- scripting

    def script(self, *turns: Turn) -> None:
        """Queue turns; each request consumes the next one."""
        self._turns.extend(turns)

    @property
    def pending(self) -> int:
        """Turns not consumed yet."""
        return len(self._turns)

    def bodies(self, api: API | None = None) -> list[Mapping[str, Any]]:
        """The JSON bodies received (of one API)."""
        return [r.body for r in self.requests if api is None or r.api == api]

    @property
    def last(self) -> RecordedRequest:
        return self.requests[-1]

    # ---- addresses

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("the scripted server is not running")
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_base_url(self) -> str:
        """``base_url`` for ``openai.AsyncOpenAI`` (ends in ``/v1``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """``base_url`` for ``anthropic.AsyncAnthropic`` (the SDK adds ``/v1/messages``)."""
        return self.url

    # ---- lifecycle

    async def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.setblocking(False)
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        server = _EmbeddedServer(config)
        self._server = server
        self._task = asyncio.create_task(server.serve(sockets=[sock]))
        async with asyncio.timeout(5):
            while not server.started:
                if self._task.done():
                    self._task.result()
                await asyncio.sleep(0.005)
        self._port = int(sock.getsockname()[1])

    async def stop(self) -> None:
        server, task = self._server, self._task
        if server is None or task is None:
            return
        server.should_exit = True
        server.exit_requested.set()
        try:
            await asyncio.wait_for(task, 5)
        finally:
            self._server = self._task = None

    async def __aenter__(self) -> ScriptedModelServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # ---- observing streams

    async def wait_for_disconnects(self, count: int = 1, timeout: float = 5.0) -> None:
        """Wait until the server has seen ``count`` clients hang up on a live stream."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: self.disconnects >= count)

    async def _note(self, *, disconnected: bool) -> None:
        async with self._changed:
            if disconnected:
                self.disconnects += 1
            else:
                self.completed_streams += 1
            self._changed.notify_all()

    # ---- endpoints

    async def _take(self, request: Request, api: API) -> tuple[Turn | None, Mapping[str, Any]]:
        raw = await request.body()
        body: Mapping[str, Any] = json.loads(raw) if raw else {}
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(RecordedRequest(api, request.url.path, headers, body))
        return (self._turns.popleft() if self._turns else None), body

    async def _openai(self, request: Request) -> Response:
        turn, body = await self._take(request, "openai")
        if turn is None:
            return _openai_error(500, "server_error", "no scripted turn left", {})
        if turn.status is not None:
            kind, code = _OPENAI_ERROR_TYPES.get(turn.status, ("server_error", None))
            return _openai_error(
                turn.status, turn.error_type or kind, turn.error_message, turn.headers, code
            )
        model = str(body.get("model", "scripted"))
        if not body.get("stream"):
            return JSONResponse(_openai_completion(turn, model), headers=dict(turn.headers))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return _LiveStream(self, _openai_stream(turn, model, include_usage), turn)

    async def _responses(self, request: Request) -> Response:
        turn, body = await self._take(request, "responses")
        if turn is None:
            return _openai_error(500, "server_error", "no scripted turn left", {})
        if turn.status is not None:
            kind, code = _OPENAI_ERROR_TYPES.get(turn.status, ("server_error", None))
            return _openai_error(
                turn.status, turn.error_type or kind, turn.error_message, turn.headers, code
            )
        model = str(body.get("model", "scripted"))
        if not body.get("stream"):
            return JSONResponse(_responses_object(turn, model), headers=dict(turn.headers))
        return _LiveStream(self, _responses_stream(turn, model), turn)

    async def _anthropic(self, request: Request) -> Response:
        turn, body = await self._take(request, "anthropic")
        if turn is None:
            return _anthropic_error(500, "api_error", "no scripted turn left", {})
        if turn.status is not None:
            kind = turn.error_type or _ANTHROPIC_ERROR_TYPES.get(turn.status, "api_error")
            return _anthropic_error(turn.status, kind, turn.error_message, turn.headers)
        model = str(body.get("model", "scripted"))
        if not body.get("stream"):
            return JSONResponse(_anthropic_message(turn, model), headers=dict(turn.headers))
        return _LiveStream(self, _anthropic_stream(turn, model), turn)


class _LiveStream(StreamingResponse):
    """An SSE response that notices the client hanging up (and says so to the server)."""

    def __init__(self, server: ScriptedModelServer, chunks: AsyncIterator[bytes], turn: Turn):
        super().__init__(chunks, media_type="text/event-stream", headers=dict(turn.headers))
        self.server = server
        self.chunks = chunks
        self.turn = turn

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )

        async def produce() -> None:
            sent = 0
            async for chunk in self.chunks:
                if sent and self.turn.delay:
                    await asyncio.sleep(self.turn.delay)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                sent += 1
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        async def hang_up() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        producer = asyncio.ensure_future(produce())
        watcher = asyncio.ensure_future(hang_up())
        try:
            done, _ = await asyncio.wait({producer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (producer, watcher):
                task.cancel()
        failed = producer in done and producer.exception() is not None
        await self.server._note(disconnected=watcher in done or failed)


# -------------------------------------------------------------- OpenAI API


#: An SSE event (``{event}``: its ``event:`` line, if any) whose data is not JSON.
_GARBAGE = '{event}data: {{"choices": [{{"delta": \n\n'


def _sse_data(payload: Mapping[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def _openai_error(
    status: int,
    kind: str,
    message: str,
    headers: Mapping[str, str],
    code: str | None = None,
) -> Response:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        status_code=status,
        headers=dict(headers),
    )


def _openai_chunk(
    model: str, delta: Mapping[str, Any], finish: str | None = None
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}],
    }


def _call_id(call: ScriptedToolCall, position: int, prefix: str) -> str:
    return call.id or f"{prefix}{position}"


async def _openai_stream(turn: Turn, model: str, include_usage: bool) -> AsyncIterator[bytes]:
    events: list[bytes] = [_sse_data(_openai_chunk(model, {"role": "assistant", "content": ""}))]
    events += [_sse_data(_openai_chunk(model, {"content": text})) for text in turn.text]
    for position, call in enumerate(turn.tool_calls):
        head = {
            "index": position,
            "id": _call_id(call, position, "call_"),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(_sse_data(_openai_chunk(model, {"tool_calls": [head]})))
        for fragment in call.fragments():
            piece = {"index": position, "function": {"arguments": fragment}}
            events.append(_sse_data(_openai_chunk(model, {"tool_calls": [piece]})))
    stop = _OPENAI_STOP.get(turn.stop_reason(), turn.stop_reason())
    events.append(_sse_data(_openai_chunk(model, {}, stop)))
    if include_usage:
        prompt, completion = turn.usage
        usage_chunk = _openai_chunk(model, {})
        usage_chunk["choices"] = []
        usage_chunk["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        events.append(_sse_data(usage_chunk))
    events.append(_sse_data("[DONE]"))
    failure = _sse_data(
        {"error": {"message": turn.error_message, "type": turn.error_type or "server_error"}}
    )
    for count, event in enumerate(events):
        if turn.error_after is not None and count == turn.error_after:
            yield failure
            return
        if turn.truncate_after is not None and count == turn.truncate_after:
            return
        if turn.garbage_after is not None and count == turn.garbage_after:
            yield _GARBAGE.format(event="").encode()
            return
        yield event


def _openai_completion(turn: Turn, model: str) -> dict[str, Any]:
    prompt, completion = turn.usage
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(turn.text) or None,
        "refusal": None,
    }
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(call, position, "call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text},
            }
            for position, call in enumerate(turn.tool_calls)
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _OPENAI_STOP.get(turn.stop_reason(), turn.stop_reason()),
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


# ----------------------------------------------------------- Responses API


def _responses_items(turn: Turn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": "msg_0",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "".join(turn.text), "annotations": []}],
            }
        )
    for position, call in enumerate(turn.tool_calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{position}",
                "call_id": _call_id(call, position, "call_"),
                "name": call.name,
                "arguments": call.arguments_text,
                "status": "completed",
            }
        )
    return items


def _responses_object(turn: Turn, model: str, *, status: str | None = None) -> dict[str, Any]:
    prompt, completion = turn.usage
    stop = turn.stop_reason()
    reason = {
        "length": "max_output_tokens",
        "content_filter": "content_filter",
        "refusal": "content_filter",
    }.get(stop)
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 1700000000,
        "model": model,
        "status": status or ("incomplete" if reason else "completed"),
        "incomplete_details": {"reason": reason} if reason else None,
        "error": None,
        "output": _responses_items(turn),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _responses_stream(turn: Turn, model: str) -> AsyncIterator[bytes]:
    counter = iter(range(1_000_000))

    def event(kind: str, **payload: Any) -> bytes:
        data = {"type": kind, "sequence_number": next(counter), **payload}
        return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

    async def produce() -> AsyncIterator[bytes]:
        events = [
            event(
                "response.created",
                response=_responses_object(turn, model, status="in_progress") | {"output": []},
            )
        ]
        index = 0
        if turn.text:
            item = {
                "type": "message",
                "id": "msg_0",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            events.append(event("response.output_item.added", output_index=index, item=item))
            for piece in turn.text:
                events.append(
                    event(
                        "response.output_text.delta",
                        item_id="msg_0",
                        output_index=index,
                        content_index=0,
                        delta=piece,
                        logprobs=[],
                    )
                )
            done = _responses_items(turn)[0]
            events.append(event("response.output_item.done", output_index=index, item=done))
            index += 1
        for position, call in enumerate(turn.tool_calls):
            item_id = f"fc_{position}"
            head = {
                "type": "function_call",
                "id": item_id,
                "call_id": _call_id(call, position, "call_"),
                "name": call.name,
                "arguments": "",
                "status": "in_progress",
            }
            events.append(event("response.output_item.added", output_index=index, item=head))
            for fragment in call.fragments():
                events.append(
                    event(
                        "response.function_call_arguments.delta",
                        item_id=item_id,
                        output_index=index,
                        delta=fragment,
                    )
                )
            events.append(
                event(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=index,
                    arguments=call.arguments_text,
                    name=call.name,
                )
            )
            done = {**head, "arguments": call.arguments_text, "status": "completed"}
            events.append(event("response.output_item.done", output_index=index, item=done))
            index += 1
        final = _responses_object(turn, model)
        events.append(event(f"response.{final['status']}", response=final))
        failure = event(
            "error", code=turn.error_type or "server_error", message=turn.error_message, param=None
        )
        for count, chunk in enumerate(events):
            if turn.error_after is not None and count == turn.error_after:
                yield failure
                return
            if turn.truncate_after is not None and count == turn.truncate_after:
                return
            if turn.garbage_after is not None and count == turn.garbage_after:
                yield _GARBAGE.format(event="event: response.output_text.delta\n").encode()
                return
            yield chunk

    return produce()


# ----------------------------------------------------------- Anthropic API


def _sse_event(name: str, payload: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


def _anthropic_error(status: int, kind: str, message: str, headers: Mapping[str, str]) -> Response:
    return JSONResponse(
        {"type": "error", "error": {"type": kind, "message": message}},
        status_code=status,
        headers=dict(headers),
    )


async def _anthropic_stream(turn: Turn, model: str) -> AsyncIterator[bytes]:
    prompt, completion = turn.usage
    events: list[bytes] = [
        _sse_event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_scripted",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": prompt, "output_tokens": 1},
                },
            },
        )
    ]
    index = 0
    if turn.text:
        events.append(
            _sse_event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        events.append(_sse_event("ping", {"type": "ping"}))
        for text in turn.text:
            events.append(
                _sse_event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": text},
                    },
                )
            )
        events.append(
            _sse_event("content_block_stop", {"type": "content_block_stop", "index": index})
        )
        index += 1
    for position, call in enumerate(turn.tool_calls):
        events.append(
            _sse_event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": _call_id(call, position, "toolu_"),
                        "name": call.name,
                        "input": {},
                    },
                },
            )
        )
        for fragment in call.fragments():
            events.append(
                _sse_event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": fragment},
                    },
                )
            )
        events.append(
            _sse_event("content_block_stop", {"type": "content_block_stop", "index": index})
        )
        index += 1
    events.append(
        _sse_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _ANTHROPIC_STOP.get(turn.stop_reason(), turn.stop_reason()),
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": completion},
            },
        )
    )
    events.append(_sse_event("message_stop", {"type": "message_stop"}))
    failure = _sse_event(
        "error",
        {
            "type": "error",
            "error": {"type": turn.error_type or "overloaded_error", "message": turn.error_message},
        },
    )
    for count, event in enumerate(events):
        if turn.error_after is not None and count == turn.error_after:
            yield failure
            return
        if turn.truncate_after is not None and count == turn.truncate_after:
            return
        if turn.garbage_after is not None and count == turn.garbage_after:
            yield _GARBAGE.format(event="event: content_block_delta\n").encode()
            return
        yield event


def _anthropic_message(turn: Turn, model: str) -> dict[str, Any]:
    prompt, completion = turn.usage
    content: list[dict[str, Any]] = []
    if turn.text:
        content.append({"type": "text", "text": "".join(turn.text)})
    for position, call in enumerate(turn.tool_calls):
        content.append(
            {
                "type": "tool_use",
                "id": _call_id(call, position, "toolu_"),
                "name": call.name,
                "input": json.loads(call.arguments_text or "{}"),
            }
        )
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP.get(turn.stop_reason(), turn.stop_reason()),
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }
