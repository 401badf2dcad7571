"""Eager tasks: an asyncio task whose first step runs at once, inside the task.

Python 3.12 has this built in (``eager_start``); on 3.11 a small back-port
switches the current task and runs the first step in the task's context.
An agent that answers without waiting (a direct reply, say) is thus done
before the caller looks, with no round trip through the event loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable, Coroutine, Generator
from typing import Any

__all__ = ["start_eager_task"]


class _Started(Coroutine[Any, Any, None]):
    """A coroutine whose first step already ran; the task that owns it does the rest."""

    __slots__ = ("_coro", "_fresh", "_outcome", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, None]) -> None:
        self._coro = coro
        self._fresh = True
        self._yielded: Any = None
        #: How the first step ended: ``None`` (it waits), or the exception it raised.
        self._outcome: BaseException | None = None

    def first_step(self) -> None:
        try:
            self._yielded = self._coro.send(None)
        except BaseException as exc:  # StopIteration too: re-raised by the task's first step
            self._outcome = exc

    def send(self, value: Any) -> Any:
        if self._fresh:
            self._fresh = False
            outcome = self._outcome
            if outcome is not None:
                self._outcome = None
                raise outcome
            yielded, self._yielded = self._yielded, None
            return yielded
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        if isinstance(typ, BaseException):
            exc = typ
        elif isinstance(val, BaseException):
            exc = val
        else:
            exc = typ() if val is None else typ(val)
        if tb is not None:
            exc = exc.with_traceback(tb)
        if self._fresh:
            self._fresh = False
            if self._outcome is not None:
                self._outcome = None
                raise exc  # canceled after the coroutine was done
            yielded, self._yielded = self._yielded, None
            if isinstance(exc, asyncio.CancelledError) and asyncio.isfuture(yielded):
                yielded.cancel()  # what Task.cancel does to the future a task waits on
        return self._coro.throw(exc)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("only an asyncio task runs this")  # pragma: no cover

    def __iter__(self) -> _Started:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def __getattr__(self, name: str) -> Any:
        # cr_frame, __qualname__...: the task's repr shows the real coroutine.
        return getattr(self._coro, name)


def _enter_leave() -> tuple[Callable[..., None], Callable[..., None]] | None:
    enter = getattr(asyncio.tasks, "_enter_task", None)
    leave = getattr(asyncio.tasks, "_leave_task", None)
    return (enter, leave) if callable(enter) and callable(leave) else None


_SWITCH = _enter_leave()


if sys.version_info >= (3, 12):  # pragma: no cover (the checks run on 3.11)

    def start_eager_task(coro: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        """An asyncio task whose first step runs now, in the task (an eager task)."""
        return asyncio.Task(coro, loop=asyncio.get_running_loop(), name=name, eager_start=True)

else:

    def start_eager_task(coro: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        """An asyncio task whose first step runs now, in the task (3.12's eager start).

        The task is created as usual; its first step runs right away with
        the task as the current one and in its context, and the step the
        loop then schedules carries on from where that one stopped.
        """
        loop = asyncio.get_running_loop()
        if _SWITCH is None:  # pragma: no cover
            return loop.create_task(coro, name=name)
        enter, leave = _SWITCH
        context = contextvars.copy_context()
        started = _Started(coro)
        task: asyncio.Task[None] = loop.create_task(started, name=name, context=context)
        current = asyncio.current_task(loop)
        if current is not None:
            leave(loop, current)
        enter(loop, task)
        try:
            context.run(started.first_step)
        finally:
            leave(loop, task)
            if current is not None:
                enter(loop, current)
        return task
