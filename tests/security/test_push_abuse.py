"""Push abuse, against the real ``a2a-models serve`` process: webhook URLs checked when a config
is created, a limit of configs per task, one log line per failed delivery, a rate per task."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
    """A webhook on 127.0.0.1 answering ``status``; records arrival times."""

    def __init__(self, status: int) -> None:
        self.times: list[float] = []
        self.bodies: list[bytes] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                hook.bodies.append(self.rfile.read(int(self.headers.get("content-length", 0))))
                hook.times.append(time.monotonic())
                self.send_response(status)
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


def test_failed_delivery_is_one_log_line(serve: Any, failing_hook: _Hook) -> None:
    server = serve(*AGENT, "--push-allow", "127.0.0.1", log_level="info")
    send = rpc(
        "SendMessage",
        {
            "message": message("complete"),
            "configuration": {"taskPushNotificationConfig": {"url": failing_hook.url}},
        },
    )
    with httpx.Client(timeout=10) as client:
        reply = client.post(server.url, json=send, headers=V10).json()
    assert "result" in reply, reply

    # Each notification is tried 4 times (backoff 0.5, 1, 2 s) and then logged once;
    # a task's notifications go out one after another, so the next one's first try
    # follows the last line at once. Settled: every try so far accounted for by one
    # line per 4, and no new try for longer than the longest backoff (under load the
    # whole run takes seconds: waited for, not slept through).
    def failures() -> list[str]:
        return [line for line in server.output if "push notification" in line]

    def settled(hits: int) -> bool:
        return hits >= 4 and hits % 4 == 0 and len(failures()) == hits // 4

    deadline = time.monotonic() + 60
    seen, since = -1, time.monotonic()
    while True:
        hits = len(failing_hook.times)
        if hits != seen or not settled(hits):
            seen, since = hits, time.monotonic()
        elif time.monotonic() - since >= 3:
            break
        assert time.monotonic() < deadline, server.text
        time.sleep(0.05)
    lines = failures()
    assert len(lines) == len(failing_hook.times) // 4 >= 1, server.text
    assert "failed after 4 attempts: HTTP 500" in lines[0]
    assert "Traceback" not in server.text
    assert "s3cr3t-query" not in server.text  # the URL's query (often a secret) is not logged


def test_deliveries_per_task_are_rate_limited(serve: Any, ok_hook: _Hook) -> None:
    # Status events are pushed (a streamed task of 40 chunks makes ~23): the
    # first 20 go at once (the burst), then at most 2 a second.
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
    assert _wait(lambda: len(ok_hook.times) >= 23, 20), len(ok_hook.times)
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
