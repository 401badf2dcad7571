"""``a2a-models serve --otel`` (a real process) and running without OpenTelemetry."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
from _procs import PG_DSN, CliProcess, a2a_command, cli_env, free_port


def _wait_healthy(proc: subprocess.Popen[str], port: int) -> None:
    """Until ``/healthz`` answers 200 (the server is up), for at most a minute."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, f"{proc.args} did not start"
        time.sleep(0.2)


def test_serve_otel_exports_spans_with_the_console_exporter() -> None:
    port = free_port()
    env = dict(os.environ, OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none")
    env["OTEL_SERVICE_NAME"] = "otel-cli-test"
    command = [sys.executable, "-m", "a2a_models", "serve", "--otel", "--store", "memory:"]
    command += ["--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_healthy(proc, port)
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            },
        }
        parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        reply = httpx.post(
            f"http://127.0.0.1:{port}/",
            json=body,
            headers={"A2A-Version": "1.0", "traceparent": parent},
            timeout=30,
        )
        assert reply.status_code == 200 and "result" in reply.json()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert '"name": "lf.a2a.v1.A2AService/SendMessage"' in out
    assert '"trace_id": "0x0af7651916cd43dd8448eb211c80319c"' in out  # the caller's trace
    assert '"parent_id": "0xb7ad6b7169203331"' in out
    assert '"service.name": "otel-cli-test"' in out
    assert '"rpc.system": "jsonrpc"' in out


_WITHOUT_OTEL = r"""
import asyncio, sys
sys.modules["opentelemetry"] = None  # as if the extra were not installed
from a2a_models import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Message
from a2a_models import observability
from a2a_models.client import InProcessClient
from a2a_models.server import Agent, AgentServer

class Echo(Agent):
    async def execute(self, context):
        yield context.artifact(context.message.text)
        yield context.complete()

async def main():
    card = AgentCard(
        name="x", description="x", version="1",
        skills=[AgentSkill(id="s", name="s", description="s", tags=["t"])],
        supported_interfaces=[AgentInterface(url="http://x/", protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(), default_input_modes=["text/plain"], default_output_modes=["text/plain"],
    )
    async with InProcessClient(AgentServer(Echo(), card)) as client:
        task = await client.send_message(Message.user("hi"))
    print(task.status.state.value)
    print(observability.instrument_if_configured())
    try:
        observability.instrument()
    except ImportError as exc:
        print(exc)
    print(sorted(m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m]))

asyncio.run(main())
"""


def test_without_opentelemetry_everything_works_and_instrument_says_what_to_install() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_OTEL],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "TASK_STATE_COMPLETED",
        "False",
        "a2a_models.observability needs OpenTelemetry: pip install 'a2a-models[otel]'",
        "[]",
    ]


def test_worker_otel_continues_the_callers_trace_in_its_turn_span(tmp_path: object) -> None:
    """``serve --front-end --otel`` + ``worker --otel``: the queued turn joins the caller's trace."""
    import uuid

    import psycopg

    dsn = PG_DSN
    schema = f"a2a_otel_worker_{uuid.uuid4().hex[:10]}"
    store = f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}&channel={schema}"
    env = dict(os.environ, OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none")
    env["A2A_OTEL_DETAIL"] = "turns"
    port = free_port()
    base = [sys.executable, "-m", "a2a_models"]
    front = subprocess.Popen(
        [*base, "serve", "--front-end", "--otel", "--store", store, "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    worker = None
    try:
        _wait_healthy(front, port)
        worker = subprocess.Popen(
            [*base, "worker", "--otel", "--store", store, "--log-level", "warning"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            },
        }
        trace_id = uuid.uuid4().hex
        reply = httpx.post(
            f"http://127.0.0.1:{port}/",
            json=body,
            headers={"A2A-Version": "1.0", "traceparent": f"00-{trace_id}-b7ad6b7169203331-01"},
            timeout=60,
        )
        result = reply.json()["result"]
        assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED", result
    finally:
        outputs = []
        for proc in filter(None, [worker, front]):
            proc.send_signal(signal.SIGTERM)
            outputs.append(proc.communicate(timeout=60))
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    (worker_out, worker_err), (front_out, _) = outputs
    assert worker is not None and worker.returncode == 0, worker_err
    # The worker's turn span is in the caller's trace, and so is the front end's server span.
    assert '"name": "a2a.agent.turn"' in worker_out, worker_out[-2000:]
    assert f'"trace_id": "0x{trace_id}"' in worker_out
    assert f'"trace_id": "0x{trace_id}"' in front_out


def _spans(text: str) -> list[dict[str, object]]:
    """The spans the console exporter printed in ``text`` (each an indented JSON object)."""
    decoder = json.JSONDecoder()
    spans = []
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.rstrip() == "{":
            span, _ = decoder.raw_decode(text, offset)
            spans.append(span)
        offset += len(line)
    return spans


def test_send_otel_starts_the_trace_the_server_continues() -> None:
    # The client commands had no --otel: a trace could not start at the command line.
    env = cli_env({"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"})
    port = free_port()
    args = ["serve", "--otel", "--store", "memory:", "--port", str(port)]
    server = CliProcess(args, name="serve", env={**env, "OTEL_SERVICE_NAME": "the-agent"})
    server.wait_ready(60)
    try:
        sent = subprocess.run(
            [*a2a_command(), "send", "--otel", "--no-stream", "--json", server.url, "hi"],
            env={**env, "OTEL_SERVICE_NAME": "the-cli"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        assert server.stop() == 0
    assert sent.returncode == 0, sent.stderr
    (client,) = [s for s in _spans(sent.stdout) if s["kind"] == "SpanKind.CLIENT"]
    assert client["name"] == "lf.a2a.v1.A2AService/SendMessage"
    assert client["resource"]["attributes"]["service.name"] == "the-cli"  # type: ignore[index]
    (served,) = [s for s in _spans(server.text) if s["kind"] == "SpanKind.SERVER"]
    assert served["name"] == "lf.a2a.v1.A2AService/SendMessage"
    assert served["parent_id"] == client["context"]["span_id"]  # type: ignore[index]
    assert served["context"]["trace_id"] == client["context"]["trace_id"]  # type: ignore[index]


def test_a_client_command_says_when_otel_cannot_start() -> None:
    env = cli_env({"A2A_OTEL_DETAIL": "everything"})
    sent = subprocess.run(
        [*a2a_command(), "get", "--otel", "http://127.0.0.1:9/", "some-task"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert sent.returncode == 2
    assert sent.stderr.startswith("a2a-models get: --otel: A2A_OTEL_DETAIL must be one of"), (
        sent.stderr
    )
