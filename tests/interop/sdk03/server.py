"""The official a2a-sdk 0.3.x server running the conformance contract: a helloworld-style
sample agent, served the way deployed 0.3 agents serve it (JSON-RPC at ``/``, the 0.3
HTTP+JSON routes at ``/v1/...``, the 0.3 gRPC service ``a2a.v1.A2AService``).

Run by the 0.3 SDK's own interpreter (``.venv-a2a03``, made by ``scripts/test.sh``), which
has neither this project nor its dependencies: it cannot import ``a2a_models``, so the
contract (``a2a_models.conformance``'s module docstring) is implemented here once more with
the SDK's ``TaskUpdater``, and its two texts come on the command line.

    python server.py HTTP_PORT GRPC_PORT ARTIFACT_TEXT REPLY_TEXT

Prints ``ready`` once both servers listen; stops on SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys

import grpc
import httpx
import uvicorn
from a2a.grpc import a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
)
from a2a.utils import new_agent_text_message

HTTP_PORT, GRPC_PORT = int(sys.argv[1]), int(sys.argv[2])
ARTIFACT_TEXT, REPLY_TEXT = sys.argv[3], sys.argv[4]
URL = f"http://127.0.0.1:{HTTP_PORT}"


def parse_command(text: str) -> tuple[str, int]:
    words = text.strip().lower().split()
    if not words:
        return "echo", 0
    if words[0] == "stream":
        count = int(words[1]) if len(words) > 1 and words[1].isdigit() else 3
        return "stream", max(1, min(20, count))
    simple = {"complete", "message", "input", "auth", "slow", "fail", "reject"}
    return (words[0], 0) if len(words) == 1 and words[0] in simple else ("echo", 0)


class ContractExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.cancels: dict[str, asyncio.Event] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)

        def say(words: str):
            return new_agent_text_message(words, context_id=context_id, task_id=task_id)

        if context.current_task is not None:  # the answer to input/auth-required
            await updater.start_work()
            await updater.add_artifact(
                [Part(root=TextPart(text=f"received: {text}"))], name="answer"
            )
            await updater.complete()
            return
        command, count = parse_command(text)
        if command == "message":
            await event_queue.enqueue_event(
                new_agent_text_message(REPLY_TEXT, context_id=context_id)
            )
            return
        await event_queue.enqueue_event(
            Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.submitted),
                history=[context.message],
            )
        )
        if command == "reject":
            await updater.reject(say("rejected"))
            return
        await updater.start_work()
        if command in ("complete", "echo"):
            body = ARTIFACT_TEXT if command == "complete" else text
            await event_queue.enqueue_event(
                TaskArtifactUpdateEvent(
                    task_id=task_id,
                    context_id=context_id,
                    artifact=Artifact(
                        artifact_id=f"art-{task_id}",
                        name="result",
                        parts=[Part(root=TextPart(text=body))],
                    ),
                )
            )
            await updater.complete()
        elif command == "input":
            await updater.requires_input(say("input required"))
        elif command == "auth":
            await updater.requires_auth(say("auth required"))
        elif command == "fail":
            await updater.failed(say("failed"))
        elif command == "stream":
            for i in range(count):
                await asyncio.sleep(0.005)
                await updater.update_status(TaskState.working, say(f"step {i + 1} of {count}"))
            for i in range(count):
                await asyncio.sleep(0.005)
                await updater.add_artifact(
                    [Part(root=TextPart(text=f"chunk-{i}"))],
                    artifact_id=f"stream-{task_id}",
                    name="stream" if i == 0 else None,
                    append=i > 0,
                    last_chunk=i == count - 1,
                )
            await updater.complete()
        elif command == "slow":
            canceled = self.cancels.setdefault(task_id, asyncio.Event())
            try:
                await asyncio.wait_for(canceled.wait(), 300)
            except TimeoutError:
                await updater.failed(say("slow: no cancel"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        self.cancels.setdefault(task_id, asyncio.Event()).set()
        await TaskUpdater(event_queue, task_id, context.context_id or "").cancel()


def card(name: str) -> AgentCard:
    return AgentCard(
        name=name,
        description="a2a-sdk 0.3 server running the conformance contract",
        url=URL,
        version="1.0.0",
        protocol_version="0.3.0",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(transport="JSONRPC", url=URL),
            AgentInterface(transport="HTTP+JSON", url=URL),
            AgentInterface(transport="GRPC", url=f"127.0.0.1:{GRPC_PORT}"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        supports_authenticated_extended_card=True,
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="a2a-conformance",
                name="conformance",
                description="the conformance contract",
                tags=["conformance"],
            )
        ],
    )


async def main() -> None:
    public, extended = card("sdk 0.3 conformance agent"), card("sdk 0.3 extended card")
    configs = InMemoryPushNotificationConfigStore()
    async with httpx.AsyncClient(timeout=5) as webhooks:
        handler = DefaultRequestHandler(
            agent_executor=ContractExecutor(),
            task_store=InMemoryTaskStore(),
            push_config_store=configs,
            push_sender=BasePushNotificationSender(webhooks, configs),
        )
        app = A2ARESTFastAPIApplication(public, handler, extended_agent_card=extended).build()
        A2AStarletteApplication(public, handler, extended_agent_card=extended).add_routes_to_app(
            app, rpc_url="/"
        )
        web = uvicorn.Server(
            uvicorn.Config(
                app, host="127.0.0.1", port=HTTP_PORT, log_level="warning", lifespan="off"
            )
        )
        rpc = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(public, handler), rpc)
        rpc.add_insecure_port(f"127.0.0.1:{GRPC_PORT}")
        await rpc.start()
        serving = asyncio.ensure_future(web.serve())
        while not web.started:
            if serving.done():
                serving.result()
            await asyncio.sleep(0.01)
        print("ready", flush=True)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        web.should_exit = True
        await serving
        await rpc.stop(1)


asyncio.run(main())
