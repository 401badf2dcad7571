"""Memory ``a2a-models serve`` holds for stream readers that stop reading (large events).

Starts ``a2a-models serve --agent bench_echo_agent:Echo`` on a store, opens ``--readers``
streams (``SendStreamingMessage`` of ``chunks E KB``: one artifact in E chunks of KB
kilobytes each, then ``completed``) whose clients stop reading after the response
headers, waits until every task has completed, and prints the server's resident memory
(``VmRSS``, and its peak ``VmHWM``, from ``/proc``). Then the readers resume: each must
get every event of its task, in order (event ids 1 .. E + 2). The same run with readers
that keep reading gives the baseline.

* HTTP (SSE): raw sockets with a small receive buffer that read nothing after the headers;
* ``--grpc``: a client process opens the streams, takes their first event and is stopped
  (``SIGSTOP``), so it reads nothing more from its socket; ``SIGCONT`` resumes it;
* ``--front-end``: ``serve --front-end`` and one ``a2a-models worker`` on PostgreSQL (the
  agent runs in the worker; the front end hears of events through ``NOTIFY``).

``--store memory:`` keeps every event in the process anyway (the store is in memory):
what a stalled reader adds shows with ``sqlite:///...`` and ``postgresql://...``.

    python bench/stall.py --store sqlite --readers 4 --events 200 --kb 256
    python bench/stall.py --store sqlite --grpc
    python bench/stall.py --store postgres --front-end
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# bench/http.py would shadow the standard library's http package (urllib imports it).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]
import urllib.request  # noqa: E402

HERE = Path(__file__).resolve().parent
PG_DSN = os.environ.get("A2A_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
SERVING = re.compile(r"a2a-models: serving .* at (\S+)")
EVENT_ID = re.compile(rb"(?m)^id: ?(\d+)\r?$")


def command() -> list[str]:
    script = Path(sys.executable).with_name("a2a-models")
    return [str(script)] if script.exists() else [sys.executable, "-m", "a2a_models"]


def env() -> dict[str, str]:
    # Run in this folder (``--agent`` looks there), which is not on the path: its http.py
    # would shadow the standard library's.
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(args: list[str], ready: re.Pattern[str] | None = SERVING) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env(), cwd=HERE
    )
    if ready is None:
        return proc
    assert proc.stdout is not None
    for line in proc.stdout:
        if ready.search(line):
            return proc
    raise RuntimeError(f"{args[:3]} stopped before serving (exit {proc.wait()})")


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def memory(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def request(text: str, method: str) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {
                "message": {
                    "messageId": os.urandom(8).hex(),
                    "role": "ROLE_USER",
                    "parts": [{"text": text}],
                }
            },
        }
    ).encode()


def completed(port: int) -> int:
    """How many tasks of the store are completed (``ListTasks``)."""
    call = urllib.request.Request(
        f"http://127.0.0.1:{port}/",
        data=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "ListTasks",
                "params": {"status": "TASK_STATE_COMPLETED", "pageSize": 100},
            }
        ).encode(),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    with urllib.request.urlopen(call, timeout=30) as answer:
        return len(json.loads(answer.read())["result"].get("tasks", []))


def wait_completed(port: int, count: int, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while completed(port) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {count} tasks completed in {timeout:g} s")
        time.sleep(0.2)


class SSEReader:
    """One SendStreamingMessage over a raw socket that reads only when told to."""

    def __init__(self, port: int, text: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect(("127.0.0.1", port))
        body = request(text, "SendStreamingMessage")
        self.sock.sendall(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: text/event-stream\r\nA2A-Version: 1.0\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        self.data = b""
        while b"\r\n\r\n" not in self.data:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("the server closed the stream before its headers")
            self.data += chunk

    def read_all(self) -> list[int]:
        """The rest of the stream; returns the event ids it carried."""
        while not self.data.endswith(b"\r\n0\r\n\r\n"):
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                break
            self.data += chunk
        self.sock.close()
        return [int(n) for n in EVENT_ID.findall(self.data)]


GRPC_CLIENT = r"""
import os, sys, threading, grpc
from a2a_models.adapters.grpc._pb import a2a_pb2
from a2a_models.adapters.grpc._events import event_id_of
port, readers, text, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
channel = grpc.insecure_channel(
    f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", -1)]
)
call = channel.unary_stream(
    "/lf.a2a.v1.A2AService/SendStreamingMessage",
    request_serializer=lambda m: m.SerializeToString(),
    response_deserializer=a2a_pb2.StreamResponse.FromString,
)
streams = []
for _ in range(readers):
    message = a2a_pb2.Message(message_id=os.urandom(8).hex(), role=a2a_pb2.ROLE_USER)
    message.parts.add(text=text)
    stream = call(a2a_pb2.SendMessageRequest(message=message), metadata=(("a2a-version", "1.0"),))
    streams.append((stream, [int(event_id_of(next(stream)))]))
print("opened", flush=True)
if mode == "stall":
    sys.stdin.readline()  # stopped meanwhile (SIGSTOP), resumed (SIGCONT), then told to read
def read(stream, ids):
    ids.extend(int(event_id_of(event)) for event in stream)
threads = [threading.Thread(target=read, args=s) for s in streams]
for t in threads:
    t.start()
for t in threads:
    t.join()
for _, ids in streams:
    print(" ".join(map(str, ids)), flush=True)
"""


def run(args: argparse.Namespace, stalled: bool) -> dict[str, Any]:
    port = free_port()
    grpc_port = free_port()
    folder = tempfile.mkdtemp(prefix="a2a-stall-")
    schema = f"stall_bench_{os.getpid()}"
    if args.store == "sqlite":
        store = f"sqlite:///{folder}/tasks.db"
    elif args.store == "postgres":
        store = f"{PG_DSN}?schema={schema}"
    else:
        store = "memory:"
    serve = [*command(), "serve", "--agent", "bench_echo_agent:Echo", "--store", store]
    serve += ["--port", str(port), "--log-level", "warning"]
    if args.grpc:
        serve += ["--grpc-port", str(grpc_port)]
    worker = None
    if args.front_end:
        serve.append("--front-end")
    server = start(serve)
    try:
        if args.front_end:
            worker = start(
                [*command(), "worker", "--store", store, "--agent", "bench_echo_agent:Echo"],
                ready=re.compile(r"a2a-models: worker .* running"),
            )
        text = f"chunks {args.events} {args.kb}"
        completed(port)  # warm
        before = memory(server.pid)[0]
        peak = 0.0
        if args.grpc:
            mode = "stall" if stalled else "read"
            client = subprocess.Popen(
                [sys.executable, "-c", GRPC_CLIENT, str(grpc_port), str(args.readers), text, mode],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env(),
                cwd=folder,  # not here: bench/grpc.py would shadow grpc
            )
            assert client.stdout is not None and client.stdin is not None
            client.stdout.readline()
            if stalled:
                client.send_signal(signal.SIGSTOP)
                wait_completed(port, args.readers)
                time.sleep(1.0)
                rss, peak = memory(server.pid)
                client.send_signal(signal.SIGCONT)
                client.stdin.write("\n")
                client.stdin.flush()
            ids = [[int(n) for n in client.stdout.readline().split()] for _ in range(args.readers)]
            client.wait(60)
            if not stalled:
                rss, peak = memory(server.pid)
        else:
            readers = [SSEReader(port, text) for _ in range(args.readers)]
            if stalled:
                wait_completed(port, args.readers)
                time.sleep(1.0)
                rss, peak = memory(server.pid)
            with concurrent.futures.ThreadPoolExecutor(args.readers) as pool:
                ids = list(pool.map(SSEReader.read_all, readers))
            if not stalled:
                rss, peak = memory(server.pid)
        expected = list(range(1, args.events + 3))
        complete = sum(found == expected for found in ids)
        return {"before": before, "rss": rss, "peak": peak, "complete": complete}
    finally:
        if worker is not None:
            stop(worker)
        stop(server)
        if args.store == "postgres":
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import psycopg; psycopg.connect({PG_DSN!r}, "
                    f"autocommit=True).execute('DROP SCHEMA IF EXISTS {schema} CASCADE')",
                ],
                check=False,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("memory", "sqlite", "postgres"), default="sqlite")
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--events", type=int, default=200, help="artifact chunks per task")
    parser.add_argument("--kb", type=int, default=256, help="kilobytes per chunk")
    parser.add_argument("--grpc", action="store_true", help="stream over gRPC")
    parser.add_argument("--front-end", action="store_true", help="serve --front-end + worker")
    args = parser.parse_args(argv)
    if args.front_end and args.store != "postgres":
        parser.error("--front-end needs --store postgres")
    data = args.readers * args.events * args.kb / 1024
    print(
        f"{'gRPC' if args.grpc else 'SSE'}, store {args.store}"
        f"{' (front end + worker)' if args.front_end else ''}: {args.readers} streams of "
        f"{args.events} chunks x {args.kb} KiB ({data:.0f} MiB in all)"
    )
    print(f"{'readers':<10} {'RSS before':>11} {'RSS after':>10} {'peak':>8} {'complete':>9}")
    ok = True
    for stalled in (False, True):
        result = run(args, stalled)
        ok = ok and result["complete"] == args.readers
        print(
            f"{'stalled' if stalled else 'reading':<10} {result['before']:>8.0f} MiB"
            f" {result['rss']:>6.0f} MiB {result['peak']:>4.0f} MiB"
            f" {result['complete']:>5}/{args.readers}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
