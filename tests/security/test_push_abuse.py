"""Push abuse, against the real ``a2a-models serve`` process: webhook URLs checked when a config
is created, a limit of configs per task, a dead webhook logged once and tried once per later
notification, a bounded queue per webhook, a rate per task."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from _sec_support import V10, message, rpc

AGENT = ("--agent", "conformance")


def _create(client: httpx.Client, url: str, task_id: str, hook: str, id: int = 1) -> dict[str, Any]:
    body = rpc("CreateTaskPushNotificationConfig", {"taskId": task_id, "url": hook}, id)
    return client.post(url, json=body, headers=V10).json()


def _open_task(client: httpx.Client, url: str) -> str:
    reply = client.post(url, json=rpc("SendMessage", {"message": message("input")}), headers=V10)
    return str(reply.json()["result"]["task"]["id"])


@pytest.mark.parametrize(
    ("hook", "reason"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://127.0.0.1:9/hook", "loopback"),
        ("http://[::ffff:10.0.0.1]/hook", "private"),
        ("http://user:pw@93.184.215.14/hook", "credentials in URLs"),
    ],
)
def test_unsafe_webhook_is_refused_when_created(serve: Any, hook: str, reason: str) -> None:
    server = serve(*AGENT)
    with httpx.Client(timeout=10) as client:
        task_id = _open_task(client, server.url)
        reply = _create(client, server.url, task_id, hook)
        assert reply["error"]["code"] == -32602, reply
        assert reason in reply["error"]["message"], reply
        listed = client.post(
            server.url,
            json=rpc("ListTaskPushNotificationConfigs", {"taskId": task_id}),
            headers=V10,
        ).json()
        assert listed["result"].get("configs", []) == [], listed
        # The same rule on a config sent with the message: no task is created.
        send = rpc(
            "SendMessage",
            {
                "message": message("input"),
                "configuration": {"taskPushNotificationConfig": {"url": hook}},
            },
        )
        refused = client.post(server.url, json=send, headers=V10).json()
        assert refused["error"]["code"] == -32602 and reason in refused["error"]["message"]
        tasks = client.post(server.url, json=rpc("ListTasks", {}), headers=V10).json()
        assert [t["id"] for t in tasks["result"]["tasks"]] == [task_id]


def test_configs_per_task_are_limited(serve: Any) -> None:
    server = serve(*AGENT, "--push-max-configs", "3")
    with httpx.Client(timeout=10) as client:
        task_id = _open_task(client, server.url)
        ids = []
        for i in range(3):  # a literal public address: no DNS needed
            reply = _create(client, server.url, task_id, f"http://93.184.215.14/hook/{i}", i)
            ids.append(reply["result"]["id"])
        refused = _create(client, server.url, task_id, "http://93.184.215.14/hook/x", 9)
        assert refused["error"]["code"] == -32602
        assert "already has 3 push notification configs" in refused["error"]["message"]
        # Replacing one of the three is not a fourth.
        again = client.post(
            server.url,
            headers=V10,
            json=rpc(
                "CreateTaskPushNotificationConfig",
                {"taskId": task_id, "id": ids[0], "url": "http://93.184.215.14/other"},
            ),
        ).json()
        assert again["result"]["url"] == "http://93.184.215.14/other", again


class _Hook:
    """A webhook on 127.0.0.1 answering ``status`` (which may be changed); records arrival
    times and bodies."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.times: list[float] = []
        self.bodies: list[bytes] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                hook.bodies.append(self.rfile.read(int(self.headers.get("content-length", 0))))
                hook.times.append(time.monotonic())
                self.send_response(hook.status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook?secret=s3cr3t-query"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def failing_hook() -> Iterator[_Hook]:
    hook = _Hook(500)
    yield hook
    hook.close()


@pytest.fixture
def ok_hook() -> Iterator[_Hook]:
    hook = _Hook(200)
    yield hook
    hook.close()


def _wait(predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


#: An agent making 300 status updates at once, then completing.
CHATTY = """
from a2a_models.server import Agent


class Chatty(Agent):
    async def execute(self, context):
        for i in range(300):
            yield context.working(f"step {i}")
        yield context.complete()
"""


def _states(bodies: list[bytes]) -> list[str]:
    return [json.loads(b).get("statusUpdate", {}).get("status", {}).get("state") for b in bodies]


def test_a_dead_webhook_is_tried_once_per_burst_and_logged_once(
    serve: Any, failing_hook: _Hook, tmp_path: Path
) -> None:
    # Every notification to a dead webhook was tried 4 times (backoff 0.5, 1, 2 s: 4 s
    # each; 43 s for one that never answers) and logged, and all of them waited in
    # memory: a task of 300 updates kept its webhook's deliveries 20 minutes behind.
    # Then each was tried once; now only the newest of those waiting is.
    (tmp_path / "chatty_agent.py").write_text(CHATTY)  # serve's folder: importable
    server = serve(
        "--agent", "chatty_agent:Chatty", "--push-allow", "127.0.0.1", "--push-rate", "100"
    )
    send = rpc(
        "SendMessage",
        {
            "message": message("go"),  # submitted, 300 working, completed
            "configuration": {"taskPushNotificationConfig": {"url": failing_hook.url}},
        },
    )
    with httpx.Client(timeout=10) as client:
        reply = client.post(server.url, json=send, headers=V10).json()
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", reply
    assert _wait(lambda: "dropped" in server.text, 30), server.text
    assert _wait(lambda: _states(failing_hook.bodies)[-1:] == ["TASK_STATE_COMPLETED"], 30)
    # The tries of one notification have the same body: the first was tried 4 times;
    # of the newest 100 its queue kept, the webhook being down, only the newest (the
    # final status) was tried, once (before, each of the 100 was: 100 tries of up to
    # 10 s each for a webhook that never answers).
    bodies = failing_hook.bodies
    notifications = [b for i, b in enumerate(bodies) if i == 0 or b != bodies[i - 1]]
    assert len(bodies) == len(notifications) + 3, len(bodies)
    assert 2 <= len(notifications) <= 3, len(notifications)  # and one on its way
    lines = [line for line in server.output if "push notification" in line]
    assert len(lines) == 3, server.text
    assert "failed after 4 attempts: HTTP 500; it is down" in lines[0]
    skipped, dropped = (int(re.search(r"(\d+) push notification", line)[1]) for line in lines[1:])
    assert "skipped: its webhook is down, the newest is tried" in lines[1]
    assert 98 <= skipped <= 99  # of the newest 100, all but the newest (and the one on its way)
    assert "more than 100 were waiting for it, the oldest went first" in lines[2]
    assert len(notifications) + skipped + dropped == 302  # submitted, 300 working, completed

    failing_hook.status = 200  # back: the next notification is delivered at its one try
    send["params"]["message"] = message("again")
    with httpx.Client(timeout=10) as client:
        client.post(server.url, json=send, headers=V10).raise_for_status()
    assert _wait(lambda: "is back" in server.text, 20), server.text
    assert f"is back: {len(notifications)} notification(s) failed while it was down" in server.text
    assert "Traceback" not in server.text
    assert "s3cr3t-query" not in server.text  # the URL's query (often a secret) is not logged


def test_deliveries_per_task_are_rate_limited(serve: Any, ok_hook: _Hook) -> None:
    # A streamed task of 40 chunks makes more notifications than the burst (status and
    # artifact updates; once rate-limited, superseded statuses are skipped and waiting
    # chunks joined): the first 20 go at once, then at most 2 a second, up to the final.
    server = serve(*AGENT, "--push-allow", "127.0.0.1", "--push-rate", "2")
    send = rpc(
        "SendMessage",
        {
            "message": message("stream 40"),
            "configuration": {"taskPushNotificationConfig": {"url": ok_hook.url}},
        },
    )
    with httpx.Client(timeout=30) as client:
        reply = client.post(server.url, json=send, headers=V10).json()
    assert "result" in reply, reply
    assert _wait(lambda: b"TASK_STATE_COMPLETED" in b"".join(ok_hook.bodies), 20), ok_hook.bodies
    assert len(ok_hook.times) > 20, len(ok_hook.times)  # the burst was used up
    times = [t - ok_hook.times[0] for t in ok_hook.times]
    assert times[19] < 5.0, times  # at 2 a second the 20 would take 9.5 s
    # The bucket is empty now: the k-th delivery after the burst waits for k + 1
    # tokens. Measured from the first arrival (a load spike may delay one delivery
    # and so shorten the gap to the next: single gaps are no measure).
    early = [(k, t) for k, t in enumerate(times[20:]) if t < (k + 1) / 2 - 0.25]
    assert not early, (early, times)


def test_a_stop_delivers_the_failed_status_of_the_tasks_it_cut_short(
    serve: Any, ok_hook: _Hook
) -> None:
    # A graceful stop fails the tasks still working, and that status is what their
    # webhooks most need; the stop dropped every notification not yet sent.
    server = serve(*AGENT, "--push-allow", "127.0.0.1")
    send = rpc(
        "SendMessage",
        {
            "message": message("slow"),
            "configuration": {
                "returnImmediately": True,
                "taskPushNotificationConfig": {"url": ok_hook.url},
            },
        },
    )
    with httpx.Client(timeout=10) as client:
        reply = client.post(server.url, json=send, headers=V10).json()
    assert "result" in reply, reply
    assert _wait(lambda: ok_hook.bodies, 20), server.text
    assert server.stop() == 0, server.log()
    states = [json.loads(body).get("statusUpdate", {}).get("status", {}) for body in ok_hook.bodies]
    assert states[-1].get("state") == "TASK_STATE_FAILED", ok_hook.bodies
    assert "stopped before the task finished" in json.dumps(states[-1]), states[-1]
