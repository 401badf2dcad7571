"""Clients: the abstract base every transport subclasses, and the in-process transport."""

from ._base import (
    A2AClient,
    ClientCall,
    ClientEventStream,
    ClientInterceptor,
    ClientTimeoutError,
    StreamChunk,
    set_default_interceptors,
)
from ._inprocess import InProcessClient
from ._resume import (
    ENDED_TASK_REFUSALS,
    BrokenStreamError,
    Reconnect,
    ended_task,
    resumed_stream,
)

__all__ = [
    "ENDED_TASK_REFUSALS",
    "A2AClient",
    "BrokenStreamError",
    "ClientCall",
    "ClientInterceptor",
    "ClientTimeoutError",
    "ClientEventStream",
    "InProcessClient",
    "Reconnect",
    "StreamChunk",
    "ended_task",
    "resumed_stream",
    "set_default_interceptors",
]
