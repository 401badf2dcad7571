"""Deliberately broken servers: each is the engine-backed conformance server with one
rule violated, and names the check(s) that must catch it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
from starlette.applications import Starlette

from a2a_models import models as m
from a2a_models._state import TaskState
from a2a_models.conformance import ConformanceAgent, conformance_card
from a2a_models.errors import InternalError, TaskNotFoundError
from a2a_models.models import ProtocolBinding
from a2a_models.server import AgentServer, CallContext, EventStream

from ._servers import dual_card_json, engine_app


def _card(url: str) -> m.AgentCard:
    return conformance_card(url, bindings=(ProtocolBinding.JSONRPC,))


def good(url: str, server_cls: type[AgentServer] = AgentServer, **kw: Any) -> Starlette:
    card = _card(url)
    return engine_app(server_cls(ConformanceAgent(), card), dual_card_json(card), **kw)


class _WrongNotFoundCode(AgentServer):
    async def on_cancel_task(self, request: m.CancelTaskRequest, call: CallContext) -> m.Task:
        try:
            return await super().on_cancel_task(request, call)
        except TaskNotFoundError:
            raise InternalError("no such task") from None


def _is_terminal_status(item: Any) -> bool:
    return isinstance(item, m.TaskStatusUpdateEvent) and item.status.state.is_terminal


class _AfterTerminal(AgentServer):
    """SendStreamingMessage: one more status update after the terminal one."""

    async def on_send_streaming_message(self, request: m.SendMessageRequest,
                                        call: CallContext) -> EventStream:
        inner = await super().on_send_streaming_message(request, call)

        async def events() -> AsyncIterator[Any]:
            async for seq, item in inner:
                yield seq, item
                if _is_terminal_status(item):
                    extra = attrs.evolve(item, status=m.TaskStatus.now(TaskState.WORKING))
                    yield seq + 1, extra
                    return

        return _Stream(events(), inner)


class _NeverCloses(AgentServer):
    """SendStreamingMessage: the stream stays open after the terminal event."""

    async def on_send_streaming_message(self, request: m.SendMessageRequest,
                                        call: CallContext) -> EventStream:
        inner = await super().on_send_streaming_message(request, call)

        async def events() -> AsyncIterator[Any]:
            async for seq, item in inner:
                yield seq, item
                if _is_terminal_status(item):
                    await asyncio.sleep(30)
                    return

        return _Stream(events(), inner)


class _Stream:
    """An EventStream-like async iterator that closes its source."""

    def __init__(self, gen: AsyncIterator[Any], inner: Any) -> None:
        self._gen = gen
        self._inner = inner

    def __aiter__(self) -> _Stream:
        return self

    async def __anext__(self) -> Any:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        await self._gen.aclose()  # type: ignore[attr-defined]
        await self._inner.aclose()


def _missing_description(url: str) -> Starlette:
    card = _card(url)
    wire = dual_card_json(card)
    del wire["description"]
    return engine_app(AgentServer(ConformanceAgent(), card), wire)


#: name → (app factory, the checks it must fail, by id)
BROKEN: dict[str, tuple[Callable[[str], Starlette], set[str]]] = {
    "wrong-task-not-found-code": (lambda url: good(url, _WrongNotFoundCode),
                                  {"cancel.unknown-task"}),
    "event-after-terminal": (lambda url: good(url, _AfterTerminal),
                             {"stream.no-event-after-terminal"}),
    "card-missing-required-field": (_missing_description, {"card.valid"}),
    "500-on-malformed-json": (lambda url: good(url, malformed_status=500),
                              {"robustness.malformed-bodies"}),
    "stream-never-closes": (lambda url: good(url, _NeverCloses),
                            {"stream.closes-after-terminal"}),
}
