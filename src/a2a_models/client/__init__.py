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
from ._resume import BrokenStreamError, Reconnect, resumed_stream

__all__ = [
    "A2AClient",
    "BrokenStreamError",
    "ClientCall",
    "ClientInterceptor",
    "ClientTimeoutError",
    "ClientEventStream",
    "InProcessClient",
    "Reconnect",
    "StreamChunk",
    "resumed_stream",
    "set_default_interceptors",
]
