"""The verdicts of the client checks, from what the harness recorded and what the
driver reported."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import models as m
from ._client_checks import CLIENT_CHECKS, ClientCheckResult, Recorded
from ._registry import Status

__all__ = ["judge"]


def _state_name(value: Any) -> str:
    """``TASK_STATE_COMPLETED`` / ``completed`` / ``TaskState.COMPLETED`` → ``completed``."""
    text = str(value).rsplit(".", 1)[-1].lower().replace("-", "_")
    return text.removeprefix("task_state_")


def judge(
    requests: Sequence[Recorded],
    outcomes: Mapping[str, Any],
    *,
    base_url: str,
    binding: str,
    token: str,
    tasks: Iterable[m.Task],
    dropped: Iterable[str],
) -> list[ClientCheckResult]:
    """The verdict of every client check on the ``requests`` the harness recorded
    and the ``outcomes`` the driver reported. ``binding`` is the interface the card
    listed first, ``token`` the bearer token it expects, ``tasks`` the tasks it
    created and ``dropped`` the ids of the tasks whose stream it cut."""
    reqs = list(requests)
    a2a = [r for r in reqs if r.binding]
    base = base_url
    out: list[ClientCheckResult] = []

    def add(cid: str, status: Status, message: str = "", ev: Sequence[Recorded] = ()) -> None:
        out.append(
            ClientCheckResult(
                CLIENT_CHECKS[cid],
                status,
                message,
                tuple(r.exchange(base) for r in list(ev)[:4]),
            )
        )

    def verdict(
        cid: str, bad: list[tuple[Recorded, str]], none_msg: str = "", *, any_request: bool = False
    ) -> None:
        """SKIP without requests (A2A ones, or any with ``any_request``), FAIL on ``bad``."""
        if not (reqs if any_request else a2a):
            add(cid, Status.SKIP, f"the client sent no {'' if any_request else 'A2A '}request")
        elif bad:
            add(
                cid,
                Status.FAIL,
                "; ".join(dict.fromkeys(msg for _, msg in bad))[:600],
                [r for r, _ in bad],
            )
        else:
            add(cid, Status.PASS, none_msg)

    def flagged(kind: str, among: Sequence[Recorded]) -> list[tuple[Recorded, str]]:
        """The problems of ``kind`` the harness noted while reading each request."""
        return [(r, p.split(": ", 1)[1]) for r in among for p in r.problems if p.startswith(kind)]

    verdict("client.version-selection", flagged("version:", reqs), any_request=True)
    wrong_iface = flagged("interface:", reqs)
    wrong_iface += [
        (r, f"{r.binding} request, but the card lists {binding} first")
        for r in a2a
        if r.binding != binding
    ]
    verdict("client.interface-selection", wrong_iface, any_request=True)
    verdict("client.envelope", flagged("envelope:", a2a))
    verdict(
        "client.version-header",
        [
            (r, f"A2A-Version {r.headers.get('a2a-version', '(absent)')!r} on {r.op or r.path}")
            for r in a2a
            if r.headers.get("a2a-version", "").strip() != "1.0"
            and "A2A-Version=1.0" not in r.query
        ],
    )
    rest_bodies = [r for r in a2a if r.binding == "HTTP+JSON" and r.body]
    if rest_bodies:
        verdict(
            "client.content-type",
            [
                (r, f"{r.op}: Content-Type {r.headers.get('content-type', '(none)')!r}")
                for r in rest_bodies
                if r.headers.get("content-type", "").split(";")[0].strip() != "application/a2a+json"
            ],
        )
    else:
        add("client.content-type", Status.NOT_APPLICABLE, "no HTTP+JSON request with a body")
    verdict("client.request-shape", flagged("shape:", a2a))
    verdict(
        "client.auth-header",
        [
            (r, f"{r.op or r.path} without 'Authorization: Bearer <token>'")
            for r in a2a
            if r.headers.get("authorization", "") != f"Bearer {token}"
        ],
    )
    # ids
    sends = [
        r
        for r in a2a
        if r.op in ("SendMessage", "SendStreamingMessage")
        and isinstance(r.params, m.SendMessageRequest)
    ]
    seen: dict[str, Recorded] = {}
    bad_ids: list[tuple[Recorded, str]] = []
    input_task = next(
        (t for t in tasks if t.history and t.history[0].text.strip() == "input"),
        None,
    )
    for r in sends:
        mid = r.params.message.message_id
        if mid in seen:
            bad_ids.append((r, f"messageId {mid!r} reused"))
        seen[mid] = r
    follow = [
        r
        for r in sends
        if input_task is not None
        and r.params.message.text.strip() != "input"
        and r.params.message.task_id == input_task.id
    ]
    if input_task is not None and not follow:
        bad_ids.append(
            (
                sends[-1] if sends else a2a[-1],
                f"no follow-up message named the input-required task {input_task.id!r}",
            )
        )
    for r in follow:
        cid = r.params.message.context_id
        if cid not in (None, "", input_task.context_id if input_task else None):
            bad_ids.append((r, f"the follow-up's contextId {cid!r} is not the task's"))
    if not sends:
        add("client.ids", Status.SKIP, "the client sent no message")
    else:
        verdict("client.ids", bad_ids)
    # outcomes reported by the driver
    err = outcomes.get("error", {}).get("error")
    if "error" not in outcomes:
        add("client.error-handling", Status.SKIP, "the driver reported no 'error' outcome")
    elif err is None:
        add(
            "client.error-handling",
            Status.FAIL,
            "GetTask answered TaskNotFoundError (-32001), but the client reported no error",
            [r for r in a2a if r.op == "GetTask"],
        )
    elif re.search(r"-32001|task.?not.?found|404", str(err), re.I):
        add("client.error-handling", Status.PASS, f"surfaced as {err!r}")
    else:
        add(
            "client.error-handling",
            Status.FAIL,
            f"GetTask answered TaskNotFoundError (-32001); the client surfaced {err!r}",
            [r for r in a2a if r.op == "GetTask"],
        )
    st = outcomes.get("stream")
    if st is None:
        add("client.stream", Status.SKIP, "the driver reported no 'stream' outcome")
    elif _state_name(st.get("state")) == "completed" and st.get("events") == 5:
        add("client.stream", Status.PASS)
    else:
        add(
            "client.stream",
            Status.FAIL,
            f"the harness streamed 5 events ending COMPLETED; the client got {st}",
            [r for r in a2a if r.op == "SendStreamingMessage"],
        )
    dropped = list(dropped)
    resubs = [
        r
        for r in a2a
        if r.op == "SubscribeToTask"
        and isinstance(r.params, m.SubscribeToTaskRequest)
        and r.params.id in dropped
    ]
    rc = outcomes.get("reconnect")
    if not dropped:
        add("client.reconnect", Status.SKIP, "the client never streamed 'drop'")
    elif not resubs:
        add(
            "client.reconnect",
            Status.FAIL,
            "after the stream dropped, the client did not "
            "resubscribe (SubscribeToTask) to the task; outcome: " + json.dumps(rc),
            [r for r in a2a if r.op == "SendStreamingMessage"],
        )
    elif rc is None or _state_name(rc.get("state")) != "completed":
        add("client.reconnect", Status.FAIL, f"resubscribed, but reported {rc}", resubs)
    else:
        lei = [r.headers.get("last-event-id") for r in resubs]
        add(
            "client.reconnect",
            Status.PASS,
            "resubscribed with Last-Event-ID " + ", ".join(map(str, lei))
            if any(lei)
            else "resubscribed without Last-Event-ID (got the Task snapshot)",
            resubs,
        )
    order = list(CLIENT_CHECKS)
    return sorted(out, key=lambda r: order.index(r.check.id))
