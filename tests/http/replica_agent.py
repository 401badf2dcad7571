"""The agent the scale-out tests serve (``a2a-models serve --agent replica_agent:ReplicaAgent``).

The message text picks the behaviour:

* ``steps N [DELAY]`` - a long task: ``N`` ``working`` status updates whose
  text is ``step i of N``, one every ``DELAY`` seconds (default 0.1), then
  one artifact (``done after N steps``) and ``completed``. The task's log
  thus holds ``1 + N + 2`` events: the task, the N updates, the artifact and
  the final status.
* anything else - a direct reply ``echo: <text>`` (no task).

Canceling stops the task between steps (the engine discards what the agent
yields after the cancel; the replica running it learns of a cancel made on
another replica at its next write).

The module has no imports from the test suite, so a server subprocess can
load it with only ``tests/http`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from a2a_models import TaskState
from a2a_models.server import Agent, AgentEvent, RequestContext

DEFAULT_DELAY = 0.1


def parse(text: str) -> tuple[int, float] | None:
    """``(steps, delay)`` for a ``steps N [DELAY]`` text, else ``None``."""
    words = text.split()
    if len(words) not in (2, 3) or words[0] != "steps":
        return None
    return int(words[1]), float(words[2]) if len(words) == 3 else DEFAULT_DELAY


class ReplicaAgent(Agent):
    """Streams ``N`` slow status updates, then completes (see the module docstring)."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        plan = parse(context.message.text)
        if plan is None:
            yield context.reply(f"echo: {context.message.text}")
            return
        steps, delay = plan
        pid = os.getpid()
        for i in range(1, steps + 1):
            # The metadata says which replica (process) produced the event.
            yield context.status(
                TaskState.WORKING, f"step {i} of {steps}", metadata={"pid": pid, "step": i}
            )
            await asyncio.sleep(delay)
        yield context.artifact(f"done after {steps} steps", name="result")
        yield context.complete(f"completed {steps} steps")
