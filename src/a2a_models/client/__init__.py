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

__all__ = [
    "A2AClient",
    "ClientCall",
    "ClientInterceptor",
    "ClientTimeoutError",
    "ClientEventStream",
    "InProcessClient",
    "StreamChunk",
    "set_default_interceptors",
]
