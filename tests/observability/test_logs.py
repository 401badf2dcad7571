"""Log records carry the trace and task ids; a refused request is one line, no traceback."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator

import pytest
from _otel_support import Telemetry, card

from a2a_models import Message, Task
from a2a_models.adapters.http import HTTPClient, HTTPServer
from a2a_models.errors import TaskNotFoundError
from a2a_models.observability import JSONLogFormatter
from a2a_models.server import Agent, AgentEvent, AgentServer, RequestContext

agent_log = logging.getLogger("a2a_models.test_agent")


class Logging(Agent):
    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        agent_log.info("working on it")
        yield context.artifact("ok")
        yield context.complete()


async def test_records_carry_trace_and_task_ids(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, "a2a_models"):
        async with (
            HTTPServer(AgentServer(Logging(), card("l"))) as http,
            HTTPClient(http.url + "/") as client,
        ):
            task = await client.send_message(Message.user("hi"))
            with pytest.raises(TaskNotFoundError):
                await client.get_task("missing-task")
    assert isinstance(task, Task)
    (working,) = [r for r in caplog.records if r.getMessage() == "working on it"]
    (turn,) = telemetry.named("a2a.agent.turn")
    line = json.loads(JSONLogFormatter().format(working))
    assert line["trace_id"] == format(turn.context.trace_id, "032x")
    assert line["span_id"] == format(turn.context.span_id, "016x")
    assert line["task_id"] == task.id
    assert line["context_id"] == task.context_id
    assert line["level"] == "INFO" and line["logger"] == "a2a_models.test_agent"

    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1
    (record,) = refused
    assert record.exc_info is None
    assert record.getMessage() == (
        "GetTask refused: -32001 TaskNotFoundError (task 'missing-task' not found)"
    )
    assert record.task_id == "missing-task"  # type: ignore[attr-defined]
    assert "\n" not in JSONLogFormatter().format(record)


async def test_a_huge_bogus_id_makes_a_small_log_line_and_span(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    # A 1 MB id was put whole into the refused request's log line and its span's
    # a2a.task.id: telemetry grew with what a caller sent.
    bogus = "h" * 1_000_000
    with caplog.at_level(logging.INFO, "a2a_models"):
        async with (
            HTTPServer(AgentServer(Logging(), card("l"))) as http,
            HTTPClient(http.url + "/") as client,
        ):
            with pytest.raises(TaskNotFoundError):
                await client.get_task(bogus)
    (record,) = [r for r in caplog.records if "refused" in r.getMessage()]
    line = JSONLogFormatter().format(record)
    assert len(line) < 2_000, len(line)
    assert "(1000000 characters)" in json.loads(line)["task_id"]
    # The server's span and the client's: both name the id, cut.
    shown = [
        str(span.attributes["a2a.task.id"])
        for span in telemetry.spans()
        if span.attributes and "a2a.task.id" in span.attributes
    ]
    assert len(shown) >= 2
    assert all(len(s) < 400 and s.endswith("(1000000 characters)") for s in shown), shown
