"""The echo agent of ``bench/bench_echo_agent.py`` on the official a2a-sdk 0.3.x gRPC server
(``a2a.v1.A2AService``), for ``bench/grpc.py --only v03``.

Run by the 0.3 SDK's own interpreter (``.venv-a2a03``, see tests/interop/sdk03), which
cannot import this project: the agent's three behaviours are written here once more with
the SDK's ``TaskUpdater``. ``stream N``: a task with N ``working`` updates, then
``completed``; ``turn ...``: the task waits for input (a conversation, one turn a message);
anything else: one agent message echoing the text.

    python bench_sdk03_server.py GRPC_PORT

Prints ``ready`` once it listens; stops on SIGTERM.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, bench/ comes first on sys.path: its grpc.py would shadow the grpc package.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import asyncio
import signal

import grpc.aio
from a2a.grpc import a2a_pb2_grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils import new_agent_text_message

PORT = int(sys.argv[1])


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        task_id, context_id = context.task_id or "", context.context_id or ""
        words = text.split()
        stream = len(words) == 2 and words[0] == "stream" and words[1].isdigit()
        if words[:1] != ["turn"] and not stream:
            await event_queue.enqueue_event(new_agent_text_message(text, context_id=context_id))
            return
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.submitted),
                    history=[context.message],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)

        def say(words: str):
            return new_agent_text_message(words, context_id=context_id, task_id=task_id)

        if not stream:
            await updater.requires_input(say(f"got {text}"), final=True)
            return
        for i in range(int(words[1])):
            await updater.update_status(TaskState.working, say(f"step {i + 1}"))
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def main() -> None:
    card = AgentCard(
        name="bench echo",
        description="echoes",
        url=f"127.0.0.1:{PORT}",
        version="1.0.0",
        protocol_version="0.3.0",
        preferred_transport="GRPC",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["bench"])],
    )
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore())
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), server)
    server.add_insecure_port(f"127.0.0.1:{PORT}")
    await server.start()
    print("ready", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(1)


asyncio.run(main())
