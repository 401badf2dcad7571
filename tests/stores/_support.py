"""Small helpers for driving the engine in the store tests."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from types import FrameType
from typing import Any

from a2a_models import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
)
from a2a_models.models import StreamResponse
from a2a_models.server import (
    Agent,
    AgentEvent,
    EventStream,
    RequestContext,
    StreamItem,
    TaskStore,
    apply_event,
)

Execute = Callable[[RequestContext], AsyncIterator[AgentEvent]]


def make_card() -> AgentCard:
    return AgentCard(
        name="store test agent",
        description="an agent for the store tests",
        version="1.0.0",
        skills=[AgentSkill(id="s", name="s", description="a skill", tags=["t"])],
        supported_interfaces=[AgentInterface(url="http://test/a2a", protocol_binding="JSONRPC")],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
    )


class FuncAgent(Agent):
    """An agent made of an async generator function."""

    def __init__(self, execute: Execute) -> None:
        self._execute = execute
        self.canceled: list[RequestContext] = []

    def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        return self._execute(context)

    async def cancel(self, context: RequestContext) -> None:
        self.canceled.append(context)


def send(text: str = "hello", *, return_immediately: bool = False) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message.user(text),
        configuration=SendMessageConfiguration(return_immediately=return_immediately),
    )


async def collect(stream: EventStream, timeout: float = 5.0) -> list[StreamItem]:
    """Every item of ``stream`` (fails the test if it does not end in time)."""

    async def run() -> list[StreamItem]:
        return [item async for item in stream]

    return await asyncio.wait_for(run(), timeout)


def _package_code(code: Any) -> bool:
    name: str = code.co_filename
    return "a2a_models" in name or name.startswith("<attrs generated")


class Lines:
    """Counts the lines of the package's Python code run on this thread."""

    def __init__(self) -> None:
        self.count = 0

    def _local(self, frame: FrameType, event: str, arg: object) -> Any:
        if event == "line":
            self.count += 1
        return self._local

    def _global(self, frame: FrameType, event: str, arg: object) -> Any:
        return self._local if _package_code(frame.f_code) else None

    def __enter__(self) -> Lines:
        self._before = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._before)


async def commit(store: TaskStore, task_id: str, event: StreamResponse) -> None:
    """What the engine's writer does with an event: read without history, apply, write back."""
    stored = await store.get(task_id, None, history_length=0)
    assert stored is not None
    task = apply_event(stored.task, event)
    await store.update(task, stored.version, event=event, history_offset=stored.history_offset)


def old_push_config(database: Any, task_id: str, config_id: str, url: str) -> None:
    """Store a push config as a version before migration 12 did (no ``dialect`` column),
    in the SQLite file ``database`` or the PostgreSQL ``(dsn, schema)``: for the tests
    that build a database with the migrations of an older version."""
    import json
    import sqlite3

    data = json.dumps({"id": config_id, "url": url, "taskId": task_id})
    if not isinstance(database, tuple):
        with sqlite3.connect(database) as db:
            db.execute(
                "INSERT INTO a2a_push_configs (task_id, config_id, position, config)"
                " VALUES (?, ?, (SELECT coalesce(max(position), 0) + 1 FROM a2a_push_configs"
                " WHERE task_id = ?), ?)",
                (task_id, config_id, task_id, data),
            )
        return
    import psycopg

    dsn, schema = database
    with psycopg.connect(dsn) as conn:
        conn.execute(
            f'INSERT INTO "{schema}".a2a_push_configs (task_id, config_id, config)'
            " VALUES (%s, %s, %s::jsonb)",
            (task_id, config_id, data),
        )
