"""Resuming a dropped stream: what every network client binding shares.

When a ``SendStreamingMessage`` or ``SubscribeToTask`` stream breaks before
the task reached a final state, :func:`resumed_stream` re-subscribes to the
task after the last event id it saw (the binding carries the id: SSE
``Last-Event-ID`` over HTTP, ``last-event-id`` metadata over gRPC) and goes
on yielding events as if nothing happened, up to ``Reconnect.attempts``
times in a row.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs

from .. import models as m
from .._closing import aclose_if_closable
from ..errors import InvalidParamsError, TransportError, UnsupportedOperationError

__all__ = [
    "ENDED_TASK_REFUSALS",
    "BrokenStreamError",
    "Reconnect",
    "ended_task",
    "resumed_stream",
]

#: The errors a server refuses a subscription with when the task has ended: 1.0's
#: UnsupportedOperationError (§3.1.6); 0.3 names none, and the a2a-sdk 0.3.x answers
#: InvalidParams ("Task ... is in terminal state"). :func:`ended_task` tells them apart.
ENDED_TASK_REFUSALS = (UnsupportedOperationError, InvalidParamsError)


async def ended_task(
    refusal: Exception, task_id: str, get_task: Callable[[str], Awaitable[m.Task]]
) -> m.Task:
    """The task whose subscription was refused with ``refusal`` (one of
    :data:`ENDED_TASK_REFUSALS`) because it ended; ``refusal`` is raised again when
    it was an InvalidParams about something else (the task has not ended)."""
    task = await get_task(task_id)
    if not isinstance(refusal, UnsupportedOperationError) and not task.status.state.is_terminal:
        raise refusal
    return task


class BrokenStreamError(TransportError):
    """A stream broke, went silent or ended before its last event.

    ``last_event_id`` is the id of the last event received (``None``: none
    had an id); the clients resume from there on their own before giving up.
    ``quiet``: the server had accepted the stream and then only stayed silent
    (a resumption after that does not count as a failed attempt).
    """

    def __init__(
        self, message: str, last_event_id: str | None = None, *, quiet: bool = False
    ) -> None:
        super().__init__(message)
        self.last_event_id = last_event_id
        self.quiet = quiet


@attrs.frozen(slots=True, kw_only=True)
class Reconnect:
    """How a dropped stream is resumed.

    Up to ``attempts`` reconnections in a row (the count restarts after an
    event that moves the stream on: a new event id, or an update; the Task
    snapshot a resumed stream starts with is not one), waiting ``delay * multiplier**n`` seconds (at most
    ``max_delay``; a ``retry:`` field sent by the server replaces ``delay``),
    with up to 10 % jitter. ``attempts=0`` turns resumption off.
    """

    attempts: int = 3
    delay: float = 0.25
    multiplier: float = 2.0
    max_delay: float = 10.0

    def wait(self, attempt: int, server_retry: float | None = None) -> float:
        """Seconds to wait before reconnection number ``attempt`` (0-based)."""
        base = self.delay if server_retry is None else server_retry
        seconds = min(self.max_delay, base * self.multiplier**attempt)
        return float(seconds * (1 + random.random() / 10))


def _task_id(item: object) -> str | None:
    if isinstance(item, m.Task):
        return item.id
    if isinstance(item, m.TaskStatusUpdateEvent | m.TaskArtifactUpdateEvent):
        return item.task_id
    return None


def _moves_on(event_id: str | None, item: object, last_id: str | None) -> bool:
    """Whether an event of a resumed stream is news: a server that answered each
    resumption with the same Task snapshot (and then hung up) would otherwise
    be reconnected to forever, the count of attempts restarting every time."""
    if event_id is not None and event_id != last_id:
        return True
    return not isinstance(item, m.Task)


def _ends_stream(item: object, previous: bool) -> bool:
    """Whether a stream may end after ``item`` (given the answer for the item before)."""
    if isinstance(item, m.Message):
        return True
    if isinstance(item, m.TaskStatusUpdateEvent) and item.final:
        return True  # 0.3 marks the last event
    state = m.state_of(item)
    if state is None:
        return previous  # an artifact update does not change the state
    return state.is_terminal or state.is_interrupted


Items = AsyncIterator[tuple[str | None, m.StreamResponse]]


async def resumed_stream(
    open_stream: Callable[[str, Any, str | None], Items],
    name: str,
    params: Any,
    resume_after: str | None,
    *,
    reconnect: Reconnect,
    get_task: Callable[[str], Awaitable[m.Task]],
    broken: Callable[[str, str | None], BrokenStreamError],
    server_retry: Callable[[], float | None] = lambda: None,
) -> Items:
    """``open_stream(name, params, resume_after)``, resumed with ``SubscribeToTask`` when it drops.

    ``broken(message, last_event_id)`` makes the binding's error for a stream
    that ended early; ``get_task`` reports a task that ended while the client
    was away. A :class:`TransportError` that is not a :class:`BrokenStreamError`
    on the first attempt (no connection at all) is raised as it is.
    """
    task_id: str | None = params.id if isinstance(params, m.SubscribeToTaskRequest) else None
    last_id = resume_after
    finished = False
    failures = 0
    resuming = False
    inner = open_stream(name, params, resume_after)
    while True:
        error: TransportError
        try:
            async for event_id, item in inner:
                if not resuming or _moves_on(event_id, item, last_id):
                    failures = 0
                if event_id is not None:
                    last_id = event_id
                task_id = task_id or _task_id(item)
                finished = _ends_stream(item, finished)
                yield event_id, item
            if finished:
                return
            error = broken("the stream ended before the task did", last_id)
        except TransportError as exc:
            if finished:
                return  # everything arrived; only the close was unclean
            if not resuming and not isinstance(exc, BrokenStreamError):
                raise  # never connected: nothing to resume
            error = exc
        except ENDED_TASK_REFUSALS as refusal:
            if not resuming or task_id is None:
                raise
            # The task ended while we were away: report where it ended.
            yield None, await ended_task(refusal, task_id, get_task)
            return
        finally:
            await aclose_if_closable(inner)
        if isinstance(error, BrokenStreamError) and error.quiet:
            failures = 0  # the server answered, then had nothing to say: not a failure
        if task_id is None or failures >= reconnect.attempts:
            if isinstance(error, BrokenStreamError):
                error.last_event_id = last_id  # of the whole stream, not the last try
                raise error
            if resuming:
                raise broken(
                    f"the stream broke and resuming it failed: {error}", last_id
                ) from error
            raise error
        await asyncio.sleep(reconnect.wait(failures, server_retry()))
        failures += 1
        resuming = True
        inner = open_stream("SubscribeToTask", m.SubscribeToTaskRequest(id=task_id), last_id)
