"""The ``async with`` of what holds resources: objects released by ``aclose()``
(:class:`AsyncClosing`) and services run from ``start()`` to ``stop()``
(:class:`AsyncRunning`).

Streams, clients, servers, brokers and stores of every layer share these,
so the module sits at the bottom, beside :mod:`._state`.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator, AsyncIterator
from types import TracebackType
from typing import Self, TypeVar

__all__ = ["AsyncClosing", "AsyncRunning", "GeneratorStream", "aclose_if_closable"]

T = TypeVar("T")


class AsyncClosing(abc.ABC):
    """An object whose :meth:`aclose` releases what it holds; ``async with obj:`` gives
    ``obj`` and closes it on the way out (an exception still propagates)."""

    __slots__ = ()

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release what the object holds."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class AsyncRunning(abc.ABC):
    """A service that runs from :meth:`start` to :meth:`stop`; ``async with obj:``
    starts it, gives ``obj`` and stops it on the way out (an exception still propagates)."""

    __slots__ = ()

    @abc.abstractmethod
    async def start(self) -> object:
        """Start running (a server returns its port)."""

    @abc.abstractmethod
    async def stop(self) -> None:
        """Stop running; idempotent."""

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


class GeneratorStream(AsyncClosing, AsyncIterator[T]):
    """The items of an async generator; closing the stream closes the generator
    (its ``finally`` blocks run), from the task that iterates it."""

    __slots__ = ("_generator",)

    def __init__(self, generator: AsyncGenerator[T, None]) -> None:
        self._generator = generator

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        return await self._generator.__anext__()

    async def aclose(self) -> None:
        await self._generator.aclose()


async def aclose_if_closable(resource: object) -> None:
    """``await resource.aclose()`` if it has one (an async generator, a store, a
    broker); a plain iterator or object holds nothing to release."""
    closer = getattr(resource, "aclose", None)
    if closer is not None:
        await closer()
