"""The A2A 1.0 gRPC binding (``lf.a2a.v1.A2AService``): ``pip install a2a-models[grpc]``.

* :class:`GrpcServer` - serves any :class:`~a2a_models.server.A2AServer`
  (an :class:`~a2a_models.server.AgentServer` shares its engine and store
  with the HTTP app) over ``grpc.aio``; :class:`A2AServicer` is its handler
  for a ``grpc.aio`` server of your own.
* :class:`GrpcClient` - the :class:`~a2a_models.client.A2AClient` transport
  (same operations, interceptors and exceptions as the HTTP clients).
* :func:`to_proto` / :func:`from_proto` - direct model <-> protobuf
  conversion; :func:`proto_class` names the message class of a model;
  :data:`pb` is the generated ``lf.a2a.v1`` module (``a2a_pb2``).
* ``*_KEEPALIVE_TIME``, ``KEEPALIVE_TIMEOUT``, ``MIN_CLIENT_PING_INTERVAL`` - the
  default HTTP/2 keep-alive pings (seconds) of the client and the server.

Importing :mod:`a2a_models` never imports this package; names load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._client import DEFAULT_MAX_RESPONSE_BYTES, GrpcClient, grpc_target
    from ._convert import from_proto, proto_class, to_proto
    from ._keepalive import (
        CLIENT_KEEPALIVE_TIME,
        KEEPALIVE_TIMEOUT,
        MIN_CLIENT_PING_INTERVAL,
        SERVER_KEEPALIVE_TIME,
    )
    from ._pb import a2a_pb2 as pb
    from ._server import DEFAULT_MAX_MESSAGE_BYTES, SERVICE_NAME, A2AServicer, GrpcServer

__all__ = [
    "CLIENT_KEEPALIVE_TIME",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "SERVICE_NAME",
    "A2AServicer",
    "GrpcClient",
    "GrpcServer",
    "KEEPALIVE_TIMEOUT",
    "MIN_CLIENT_PING_INTERVAL",
    "SERVER_KEEPALIVE_TIME",
    "from_proto",
    "grpc_target",
    "pb",
    "proto_class",
    "to_proto",
]

_WHERE = {
    "DEFAULT_MAX_RESPONSE_BYTES": "._client",
    "GrpcClient": "._client",
    "grpc_target": "._client",
    "from_proto": "._convert",
    "proto_class": "._convert",
    "to_proto": "._convert",
    "CLIENT_KEEPALIVE_TIME": "._keepalive",
    "KEEPALIVE_TIMEOUT": "._keepalive",
    "MIN_CLIENT_PING_INTERVAL": "._keepalive",
    "SERVER_KEEPALIVE_TIME": "._keepalive",
    "DEFAULT_MAX_MESSAGE_BYTES": "._server",
    "SERVICE_NAME": "._server",
    "A2AServicer": "._server",
    "GrpcServer": "._server",
}


def __getattr__(name: str) -> Any:
    if name == "pb":
        module = importlib.import_module("._pb.a2a_pb2", __name__)
        globals()[name] = module
        return module
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
