"""A stdio MCP server written without the SDK, to send bytes the SDK would not:
its one tool ``latin1`` answers with text encoded in Latin-1 (not UTF-8) in the
middle of an otherwise valid JSON-RPC line."""

from __future__ import annotations

import json
import sys

out = sys.stdout.buffer


def answer(request_id: object, result: dict[str, object]) -> None:
    out.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n")
    out.flush()


for line in sys.stdin.buffer:
    message = json.loads(line)
    request_id, method = message.get("id"), message.get("method")
    if request_id is None:
        continue  # a notification
    if method == "initialize":
        answer(
            request_id,
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            },
        )
    elif method == "tools/list":
        answer(request_id, {"tools": [{"name": "latin1", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        text = {"content": [{"type": "text", "text": "@@"}]}
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": text}).encode()
        out.write(line.replace(b"@@", "café".encode("latin-1")) + b"\n")
        out.flush()
    elif method == "ping":
        answer(request_id, {})
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        out.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n")
        out.flush()
