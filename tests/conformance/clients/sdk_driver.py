"""conformance-client driver for the official Python SDK client (a2a-sdk).

It reports what the library does: a dropped stream is not resubscribed by hand."""

from __future__ import annotations

import asyncio
import json
import os

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import a2a_pb2 as pb


def out(**kw: object) -> None:
    print(json.dumps(kw), flush=True)


def msg(text: str, **kw: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=new_text_message(text, role=pb.Role.ROLE_USER, **kw))


def state_of(event: pb.StreamResponse) -> str | None:
    if event.HasField("task"):
        return pb.TaskState.Name(event.task.status.state)
    if event.HasField("status_update"):
        return pb.TaskState.Name(event.status_update.status.state)
    return None


async def main() -> None:
    url = os.environ["A2A_CONFORMANCE_URL"]
    auth = {"Authorization": f"Bearer {os.environ['A2A_CONFORMANCE_TOKEN']}"}
    bindings = ["JSONRPC", "HTTP+JSON"]
    unary = await create_client(
        url,
        ClientConfig(
            streaming=False,
            supported_protocol_bindings=bindings,
            httpx_client=httpx.AsyncClient(headers=auth),
        ),
        resolver_http_kwargs={"headers": auth},
    )
    streaming = await create_client(
        url,
        ClientConfig(
            streaming=True,
            supported_protocol_bindings=bindings,
            httpx_client=httpx.AsyncClient(headers=auth),
        ),
        resolver_http_kwargs={"headers": auth},
    )

    events = [e async for e in unary.send_message(msg("complete"))]
    out(scenario="send", state=state_of(events[-1]))

    events = [e async for e in streaming.send_message(msg("stream"))]
    out(scenario="stream", events=len(events), state=state_of(events[-1]))

    first = [e async for e in unary.send_message(msg("input"))][-1].task
    second = [
        e
        async for e in unary.send_message(
            msg("more", task_id=first.id, context_id=first.context_id)
        )
    ][-1]
    out(scenario="multi-turn", states=[pb.TaskState.Name(first.status.state), state_of(second)])

    try:
        await unary.get_task(pb.GetTaskRequest(id="a2a-conformance-unknown-task"))
        out(scenario="error", error=None)
    except Exception as exc:  # the SDK's error type is what we report
        out(scenario="error", error=f"{type(exc).__name__}: {exc}")

    state = None
    try:
        async for e in streaming.send_message(msg("drop")):
            state = state_of(e) or state
    except Exception as exc:
        out(scenario="reconnect", state=state, error=f"{type(exc).__name__}: {exc}")
    else:
        out(scenario="reconnect", state=state)
    await unary.close()
    await streaming.close()


asyncio.run(main())
