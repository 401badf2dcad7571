"""The echo agent ``bench/http.py --mode serve`` runs through ``a2a-models serve``.

``a2a-models serve --agent bench_echo_agent:Echo`` (run from this folder).
The text ``stream N`` makes a task with N ``working`` updates, then
``completed``; anything else gets one agent message echoing the text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from a2a_models.server import Agent, AgentEvent, RequestContext


class Echo(Agent):
    """Echoes the user's text (``stream N``: a task with N status updates)."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text
        words = text.split()
        if words[:1] == ["turn"]:  # a conversation: every turn waits for the next message
            yield context.ask(f"got {text}")
            return
        if len(words) == 2 and words[0] == "stream" and words[1].isdigit():
            for i in range(int(words[1])):
                yield context.working(f"step {i + 1}")
            yield context.complete()
            return
        yield context.reply(text)
