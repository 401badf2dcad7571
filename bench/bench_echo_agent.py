"""The echo agent of the benchmarks, ours and the official SDK's alike.

``a2a-models serve --agent bench_echo_agent:Echo`` (run from this folder) is what
``bench/http.py --mode serve`` and ``bench/otel.py`` run; ``bench/http.py`` and
``bench/grpc.py`` serve :class:`Echo` in process and :func:`sdk_echo_executor` in
the SDK's server. The text ``stream N`` makes a task with N ``working`` updates,
then ``completed``; ``chunks N`` a task with one artifact streamed in N chunks
(``append`` after the first, ``lastChunk`` on the last), then ``completed``
(``bench/http.py --mode chunks``; ``chunks N KIB``: N versions of an artifact of KIB
kibibytes, for ``bench/stall.py``); anything else gets one agent message echoing
the text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from a2a_models.server import Agent, AgentEvent, RequestContext


def stream_steps(text: str, command: str = "stream") -> int | None:
    """N for the text ``stream N`` (``command N``; ``None``: an echo)."""
    words = text.split()
    if len(words) == 2 and words[0] == command and words[1].isdigit():
        return int(words[1])
    return None


#: What each chunk of ``chunks N`` holds (an LLM streams a few tokens at a time).
CHUNK_TEXT = "a few streamed tokens, "


class Echo(Agent):
    """Echoes the user's text (``stream N``: a task with N status updates)."""

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        text = context.message.text
        words = text.split()
        if words[:1] == ["turn"]:  # a conversation: every turn waits for the next message
            yield context.ask(f"got {text}")
            return
        steps = stream_steps(text)
        if steps is not None:
            for i in range(steps):
                yield context.working(f"step {i + 1}")
            yield context.complete()
            return
        chunks = stream_steps(" ".join(words[:2]), "chunks")
        kib = int(words[2]) if len(words) == 3 and words[2].isdigit() else None
        if chunks is not None and (len(words) == 2 or kib is not None):
            # ``chunks N KIB`` (bench/stall.py): N versions of an artifact of KIB kibibytes,
            # each replacing the last (appended, the task would grow by N x KIB).
            for i in range(chunks):
                yield context.artifact(
                    CHUNK_TEXT if kib is None else f"{i:08}".ljust(kib * 1024, "x"),  # one each
                    append=i > 0 and kib is None,
                    last_chunk=i == chunks - 1,
                    artifact_id="report",
                )
            yield context.complete()
            return
        yield context.reply(text)


def sdk_echo_executor() -> Any:
    """An instance of the same agent as an a2a-sdk ``AgentExecutor`` (SDK imported here)."""
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.agent_execution import RequestContext as SDKContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks import TaskUpdater
    from a2a.types import a2a_pb2 as pb

    class SDKEcho(AgentExecutor):
        async def execute(self, context: SDKContext, event_queue: EventQueue) -> None:
            assert context.message is not None and context.task_id and context.context_id
            text = context.get_user_input()
            steps = stream_steps(text)
            if steps is None:
                await event_queue.enqueue_event(
                    pb.Message(
                        message_id=f"reply-{context.message.message_id}",
                        role=pb.ROLE_AGENT,
                        context_id=context.context_id,
                        parts=[pb.Part(text=text)],
                    )
                )
                return
            await event_queue.enqueue_event(
                pb.Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            for i in range(steps):
                await updater.update_status(
                    pb.TASK_STATE_WORKING,
                    updater.new_agent_message([pb.Part(text=f"step {i + 1}")]),
                )
            await updater.complete()

        async def cancel(self, context: SDKContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    return SDKEcho()
