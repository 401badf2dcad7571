"""A stdio MCP server written without the SDK, to send bytes the SDK would not.

Its tools: ``latin1`` answers with text encoded in Latin-1 (not UTF-8) in the
middle of an otherwise valid JSON-RPC line; ``garbage`` answers with the start of
a JSON-RPC line cut short (not JSON); ``not_jsonrpc`` answers with a JSON object
that is no JSON-RPC message; ``chatty`` writes a line of plain text (a stray
``print()``) before its proper answer; ``echo`` answers properly."""

from __future__ import annotations

import json
import sys

out = sys.stdout.buffer
TOOLS = ["latin1", "garbage", "not_jsonrpc", "chatty", "echo"]


def write(line: bytes) -> None:
    out.write(line + b"\n")
    out.flush()


def answer(request_id: object, result: dict[str, object]) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode())


def text(value: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": value}]}


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
        answer(
            request_id,
            {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]},
        )
    elif method == "tools/call":
        tool = message["params"]["name"]
        if tool == "latin1":
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": text("@@")})
            write(line.encode().replace(b"@@", "café".encode("latin-1")))
        elif tool == "garbage":
            line = json.dumps({"jsonrpc": "2.0", "result": text("x" * 5000), "id": request_id})
            write(line[:4000].encode())
        elif tool == "not_jsonrpc":
            write(json.dumps({"answer": "x" * 5000, "id": request_id}).encode())
        elif tool == "chatty":
            write(b"calling the weather service...")
            answer(request_id, text("sunny"))
        else:
            answer(request_id, text("echo"))
    elif method == "ping":
        answer(request_id, {})
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())
