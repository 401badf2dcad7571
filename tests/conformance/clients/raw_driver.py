"""A conformance-client driver on plain httpx (JSON-RPC 1.0), with one optional fault.

``A2A_DRIVER_FAULT`` breaks exactly one rule, so the harness's checks can be proven:
no-version-header, no-auth, jsonrpc-1.0, float-id, reused-message-id, follow-up-without-task,
wrong-path, bad-role, error-swallowed, stream-cut-short, no-resubscribe, first-interface-once
(the first call goes to the card's first JSON-RPC interface whatever its version)."""

from __future__ import annotations

import json
import os
import uuid

import httpx

FAULT = os.environ.get("A2A_DRIVER_FAULT", "")
URL = os.environ["A2A_CONFORMANCE_URL"]
HEADERS = {"Content-Type": "application/json"}
if FAULT != "no-version-header":
    HEADERS["A2A-Version"] = "1.0"
if FAULT != "no-auth":
    HEADERS["Authorization"] = f"Bearer {os.environ['A2A_CONFORMANCE_TOKEN']}"
FIXED_ID = str(uuid.uuid4())
_n = 0


def out(**kw: object) -> None:
    print(json.dumps(kw), flush=True)


def body(method: str, params: dict) -> dict:
    global _n
    _n += 1
    return {
        "jsonrpc": "1.0" if FAULT == "jsonrpc-1.0" else "2.0",
        "id": _n + 0.5 if FAULT == "float-id" else _n,
        "method": method,
        "params": params,
    }


def message(text: str, **extra: str) -> dict:
    mid = FIXED_ID if FAULT == "reused-message-id" else str(uuid.uuid4())
    role = "user" if FAULT == "bad-role" else "ROLE_USER"
    return {"message": {"messageId": mid, "role": role, "parts": [{"text": text}], **extra}}


def sse(response: httpx.Response) -> list[dict]:
    events = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            events.append(json.loads(line[5:]))
    return events


with httpx.Client(headers=HEADERS, timeout=10) as http:
    card = http.get(f"{URL}/.well-known/agent-card.json").json()
    rpc = next(
        i["url"]
        for i in card["supportedInterfaces"]
        if i["protocolBinding"] == "JSONRPC" and i["protocolVersion"] == "1.0"
    )
    if FAULT == "first-interface-once":
        first = next(
            i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "JSONRPC"
        )
        http.post(first, json=body("GetTask", {"id": "probe"}))
    if FAULT == "wrong-path":
        rpc = URL + "/"

    def call(method: str, params: dict) -> dict:
        return http.post(rpc, json=body(method, params)).json()

    res = call("SendMessage", message("complete")).get("result", {})
    out(scenario="send", state=res.get("task", {}).get("status", {}).get("state"))

    with http.stream("POST", rpc, json=body("SendStreamingMessage", message("stream"))) as r:
        events = sse(r)
    if FAULT == "stream-cut-short":
        events = events[:2]
    last = events[-1]["result"] if events else {}
    state = (last.get("statusUpdate") or last.get("task") or {}).get("status", {}).get("state")
    out(scenario="stream", events=len(events), state=state)

    first = call("SendMessage", message("input")).get("result", {}).get("task", {})
    extra = (
        {}
        if FAULT == "follow-up-without-task"
        else {"taskId": first.get("id"), "contextId": first.get("contextId")}
    )
    second = call("SendMessage", message("more", **extra)).get("result", {}).get("task", {})
    out(
        scenario="multi-turn",
        states=[first.get("status", {}).get("state"), second.get("status", {}).get("state")],
    )

    err = call("GetTask", {"id": "a2a-conformance-unknown-task"}).get("error", {})
    out(scenario="error", error=None if FAULT == "error-swallowed" else err.get("code"))

    task_id, state, last_id = None, None, None
    try:
        with http.stream("POST", rpc, json=body("SendStreamingMessage", message("drop"))) as r:
            for line in r.iter_lines():
                if line.startswith("id:"):
                    last_id = line[3:].strip()
                if line.startswith("data:"):
                    res = json.loads(line[5:])["result"]
                    task_id = task_id or res.get("task", {}).get("id")
                    state = (
                        (res.get("statusUpdate") or res.get("task") or {})
                        .get("status", {})
                        .get("state")
                    )
    except httpx.HTTPError:
        pass
    if FAULT != "no-resubscribe" and task_id:
        with http.stream(
            "POST",
            rpc,
            json=body("SubscribeToTask", {"id": task_id}),
            headers={"Last-Event-ID": last_id or ""},
        ) as r:
            for ev in sse(r):
                res = ev["result"]
                state = (res.get("statusUpdate") or res.get("task") or {}).get("status", {}).get(
                    "state"
                ) or state
    out(scenario="reconnect", state=state)
