"""The built-in checks; importing this package registers them (in report order)."""

from . import card, grpc_binding, jsonrpc, methods, protocol, push, semantics, streaming

__all__ = [
    "card",
    "grpc_binding",
    "jsonrpc",
    "methods",
    "protocol",
    "push",
    "semantics",
    "streaming",
]
