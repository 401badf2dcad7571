"""conformance-client driver for this project's HTTP client (a2a_models.adapters.http)."""

from __future__ import annotations

import asyncio
import json
import os

from a2a_models import models as m
from a2a_models.adapters.http import connect
from a2a_models.errors import JSONRPCError


def out(**kw: object) -> None:
    print(json.dumps(kw), flush=True)


async def main() -> None:
    url = os.environ["A2A_CONFORMANCE_URL"]
    headers = {"Authorization": f"Bearer {os.environ['A2A_CONFORMANCE_TOKEN']}"}
    async with await connect(url, headers=headers) as client:
        task = await client.send_message(m.Message.user("complete"))
        out(scenario="send", state=task.status.state.name)

        events = [e async for e in client.send_streaming_message(m.Message.user("stream"))]
        last = events[-1]
        state = last.status.state.name if hasattr(last, "status") else "?"
        out(scenario="stream", events=len(events), state=state)

        first = await client.send_message(m.Message.user("input"))
        second = await client.send_message(
            m.Message.user("more", task_id=first.id, context_id=first.context_id)
        )
        out(scenario="multi-turn", states=[first.status.state.name, second.status.state.name])

        try:
            await client.get_task("a2a-conformance-unknown-task")
            out(scenario="error", error=None)
        except JSONRPCError as exc:
            out(scenario="error", error=f"{type(exc).__name__} {exc.code}")

        state = "?"
        async for e in client.send_streaming_message(m.Message.user("drop")):
            st = getattr(e, "status", None)
            if st is not None:
                state = st.state.name
        out(scenario="reconnect", state=state)


asyncio.run(main())
