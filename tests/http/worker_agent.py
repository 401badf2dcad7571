"""The agent the worker tests run (``a2a-models worker --agent worker_agent:WorkerAgent``).

``work N DELAY``: ``N`` ``working`` updates (metadata: the worker's pid and the
step), one every ``DELAY`` seconds, then an artifact ``ran by PID`` and
``completed``. ``chunks N``: one artifact streamed in ``N`` chunks. Anything
else: a direct reply ``echo: <text>``.

Each turn appends ``start TASK PID TIME`` and ``end TASK PID TIME`` lines to
the file named by ``WORKER_AGENT_LOG`` (if set), so a test can check that no
task ran in two processes at once. No imports from the test suite: a worker
subprocess loads it with only ``tests/http`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator

from a2a_models import TaskState
from a2a_models.server import Agent, AgentEvent, RequestContext


def _note(kind: str, task_id: str) -> None:
    path = os.environ.get("WORKER_AGENT_LOG")
    if path:
        # One write of a short line with O_APPEND: lines of processes never mix.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{kind} {task_id} {os.getpid()} {time.time():.6f}\n".encode())
        finally:
            os.close(fd)


class WorkerAgent(Agent):
    """Works ``N`` steps, then completes (see the module docstring)."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        words = context.message.text.split()
        if len(words) == 2 and words[0] == "chunks":
            # One artifact streamed in N chunks "c0 ", "c1 ", ...
            count = int(words[1])
            yield context.working()
            for i in range(count):
                yield context.artifact(
                    f"c{i} ", artifact_id="chunks", append=i > 0, last_chunk=i == count - 1
                )
            yield context.complete()
            return
        if len(words) != 3 or words[0] != "work":
            yield context.reply(f"echo: {context.message.text}")
            return
        steps, delay = int(words[1]), float(words[2])
        pid = os.getpid()
        _note("start", context.task_id)
        try:
            for i in range(1, steps + 1):
                yield context.status(
                    TaskState.WORKING, f"step {i} of {steps}", metadata={"pid": pid, "step": i}
                )
                await asyncio.sleep(delay)
            yield context.artifact(f"ran by {pid}", name="result")
            yield context.complete(f"completed {steps} steps")
        finally:
            _note("end", context.task_id)


class RestartableWorkerAgent(WorkerAgent):
    """:class:`WorkerAgent` whose turns are run again when their worker dies."""

    restartable = True
