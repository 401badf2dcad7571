"""The built-in checks; importing this package registers them (in report order)."""

from . import card, jsonrpc, methods, protocol, semantics, streaming

__all__ = ["card", "jsonrpc", "methods", "protocol", "semantics", "streaming"]
