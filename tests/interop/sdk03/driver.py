"""The official a2a-sdk 0.3.x client against an agent: every operation, one JSON line each.

Run by the 0.3 SDK's own interpreter (``.venv-a2a03``); ``test_sdk03.py`` judges the lines.

    python driver.py URL TRANSPORT TOKEN

``ClientFactory`` builds the client from the agent's well-known card, as a deployed 0.3 client
does; TRANSPORT (``JSONRPC``, ``HTTP+JSON`` or ``GRPC``) is the one it may use. Each line is
``{"op": ..., "ok": true, ...what came back}`` or ``{"op": ..., "ok": false, "error": ...}``
where ``error`` is the SDK's exception: its class, and its JSON-RPC code, HTTP status or
gRPC status and message. The two push operations the 0.3 ``Client`` lacks (list, delete)
are sent by hand over JSON-RPC and gRPC (its own stub) and read with the SDK's own models.
Over gRPC the channel is ``grpc.aio.insecure_channel(url)`` of the card's URL, as the SDK's
samples make it, with the bearer token added to each call's metadata.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import grpc
import grpc.aio
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.grpc import a2a_pb2, a2a_pb2_grpc
from a2a.types import (
    DataPart,
    DeleteTaskPushNotificationConfigResponse,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigResponse,
    Message,
    Part,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
)
from a2a.utils import proto_utils

URL, TRANSPORT, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]


def out(op: str, **fields: Any) -> None:
    print(json.dumps({"op": op, **fields}), flush=True)


def message(text: str, *parts: Part, task_id: str | None = None) -> Message:
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=TextPart(text=text)), *parts],
        task_id=task_id,
    )


def error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, A2AClientJSONRPCError):
        return {"type": type(exc).__name__, "code": exc.error.code}
    if isinstance(exc, A2AClientHTTPError):
        return {"type": type(exc).__name__, "status": exc.status_code}
    if isinstance(exc, grpc.aio.AioRpcError):
        return {"type": type(exc).__name__, "code": exc.code().name, "message": exc.details()}
    return {"type": type(exc).__name__, "message": str(exc)[:300]}


async def run(op: str, work: Awaitable[dict[str, Any]]) -> dict[str, Any] | None:
    try:
        fields = await work
    except Exception as exc:  # what the SDK raised is the outcome
        out(op, ok=False, error=error(exc))
        return None
    out(op, ok=True, **fields)
    return fields


def task_fields(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "state": task.status.state.value,
        "artifacts": [
            "".join(p.root.text for p in a.parts if p.root.kind == "text")
            for a in task.artifacts or []
        ],
        "history": len(task.history or []),
    }


async def _bearer(continuation: Any, details: Any, request: Any) -> Any:
    """The token in the call's metadata (the 0.3 gRPC transport sends none of its own)."""
    metadata = [*(details.metadata or ()), ("authorization", f"Bearer {TOKEN}")]
    return await continuation(details._replace(metadata=metadata), request)


# grpc.aio files an interceptor under its first kind only: one object per kind.
class UnaryBearer(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await _bearer(continuation, details, request)


class StreamBearer(grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await _bearer(continuation, details, request)


def channel(url: str) -> Any:
    return grpc.aio.insecure_channel(url, interceptors=[UnaryBearer(), StreamBearer()])


async def events(stream: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in stream]


async def main() -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(timeout=30, headers=headers) as http:
        card = await A2ACardResolver(http, URL).get_agent_card()
        out("card", ok=True, name=card.name, secured=bool(card.security))

        def client(*, streaming: bool, polling: bool = False) -> Any:
            config = ClientConfig(
                streaming=streaming,
                polling=polling,
                supported_transports=[TRANSPORT],
                httpx_client=http,
                grpc_channel_factory=channel,
            )
            return ClientFactory(config).create(card)

        unary, streaming, polling = (
            client(streaming=False),
            client(streaming=True),
            client(streaming=False, polling=True),
        )

        async def send(text: str, *parts: Part) -> dict[str, Any]:
            (last,) = await events(unary.send_message(message(text, *parts)))
            if isinstance(last, Message):
                return {"reply": last.parts[0].root.text}
            return task_fields(last[0])

        done = await run("send", send("complete"))
        await run("send-message-reply", send("message"))
        raw = base64.b64encode(b"\x00\x01bytes").decode()
        parts = (
            Part(
                root=FilePart(
                    file=FileWithBytes(
                        bytes=raw, mime_type="application/octet-stream", name="a.bin"
                    )
                )
            ),
            Part(
                root=FilePart(
                    file=FileWithUri(
                        uri="https://example.com/b.png", mime_type="image/png", name="b.png"
                    )
                )
            ),
            Part(root=DataPart(data={"n": 1, "list": [1, "two", None], "nested": {"ok": True}})),
        )

        async def send_parts() -> dict[str, Any]:
            (last,) = await events(unary.send_message(message("echo parts", *parts)))
            task = await unary.get_task(TaskQueryParams(id=last[0].id))
            sent = task.history[0].parts[1:]
            return {"parts": [p.root.model_dump(mode="json", exclude_none=True) for p in sent]}

        await run("send-file-and-data", send_parts())

        async def stream(text: str) -> dict[str, Any]:
            got = await events(streaming.send_message(message(text)))
            last = got[-1][0]
            kinds = [type(u).__name__ if u is not None else "Task" for _, u in got]
            return {"kinds": kinds, **task_fields(last)}

        await run("stream", stream("stream 3"))
        if done is not None:
            tid = done["id"]
            await run("get", _get(unary, tid, 1))
            await run("cancel-completed", _cancel(unary, tid))
            await run("resubscribe-completed", _resubscribe(streaming, tid))
            config = TaskPushNotificationConfig(
                task_id=tid,
                push_notification_config=PushNotificationConfig(
                    id="c1",
                    url="http://127.0.0.1:9/hook",
                    token="tok",
                    authentication=PushNotificationAuthenticationInfo(
                        schemes=["Bearer"], credentials="cred"
                    ),
                ),
            )
            await run("push-set", _push(unary.set_task_callback(config)))
            params = GetTaskPushNotificationConfigParams(id=tid, push_notification_config_id="c1")
            await run("push-get", _push(unary.get_task_callback(params)))
            if TRANSPORT == "GRPC":
                grpc_url = next(i.url for i in card.additional_interfaces if i.transport == "GRPC")
                stub = a2a_pb2_grpc.A2AServiceStub(channel(grpc_url))
                list_request = a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{tid}")
                await run("push-list", _grpc_list(stub, list_request))
                name = f"tasks/{tid}/pushNotificationConfigs/c1"
                delete_request = a2a_pb2.DeleteTaskPushNotificationConfigRequest(name=name)
                await run("push-delete", _grpc_delete(stub, delete_request))
            if TRANSPORT == "JSONRPC":
                await run(
                    "push-list",
                    _rpc(
                        http,
                        "tasks/pushNotificationConfig/list",
                        {"id": tid},
                        ListTaskPushNotificationConfigResponse,
                    ),
                )
                delete = {"id": tid, "pushNotificationConfigId": "c1"}
                await run(
                    "push-delete",
                    _rpc(
                        http,
                        "tasks/pushNotificationConfig/delete",
                        delete,
                        DeleteTaskPushNotificationConfigResponse,
                    ),
                )
        await run("get-unknown", _get(unary, "no-such-task", None))
        await run("cancel-unknown", _cancel(unary, "no-such-task"))
        await run("resubscribe-unknown", _resubscribe(streaming, "no-such-task"))

        async def cancel_running() -> dict[str, Any]:
            (first,) = await events(polling.send_message(message("slow")))
            tid = first[0].id
            follow = streaming.resubscribe(TaskIdParams(id=tid)).__aiter__()
            opening = (await follow.__anext__())[0].status.state.value  # before the cancel
            canceled = await unary.cancel_task(TaskIdParams(id=tid))
            rest = [event async for event in follow]
            return {
                "submitted": first[0].status.state.value,
                "opening": opening,
                "canceled": canceled.status.state.value,
                "followed": rest[-1][0].status.state.value if rest else None,
            }

        await run("cancel-running", cancel_running())

        async def extended() -> dict[str, Any]:
            got = await unary.get_card()
            return {"name": got.name}

        await run("extended-card", extended())


async def _get(client: Any, tid: str, history: int | None) -> dict[str, Any]:
    return task_fields(await client.get_task(TaskQueryParams(id=tid, history_length=history)))


async def _cancel(client: Any, tid: str) -> dict[str, Any]:
    return task_fields(await client.cancel_task(TaskIdParams(id=tid)))


async def _resubscribe(client: Any, tid: str) -> dict[str, Any]:
    got = await events(client.resubscribe(TaskIdParams(id=tid)))
    return {"events": len(got)}


async def _push(work: Awaitable[TaskPushNotificationConfig]) -> dict[str, Any]:
    config = await work
    return {"config": config.model_dump(mode="json", exclude_none=True)}


async def _grpc_list(stub: Any, request: Any) -> dict[str, Any]:
    reply = await stub.ListTaskPushNotificationConfig(request)
    configs = [proto_utils.FromProto.task_push_notification_config(c) for c in reply.configs]
    return {"result": [c.model_dump(mode="json", exclude_none=True) for c in configs]}


async def _grpc_delete(stub: Any, request: Any) -> dict[str, Any]:
    await stub.DeleteTaskPushNotificationConfig(request)
    return {"result": None}


async def _rpc(
    http: httpx.AsyncClient, method: str, params: dict[str, Any], model: Any
) -> dict[str, Any]:
    reply = await http.post(
        URL, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    )
    parsed = model.model_validate(reply.json()).root  # the SDK's own reading of the answer
    return {"result": parsed.model_dump(mode="json", exclude_none=True).get("result")}


asyncio.run(main())
