"""Cost of OpenTelemetry tracing: SendMessage through ``a2a-models serve`` with and without ``--otel``.

Run: ``.venv/bin/python bench/otel.py`` (loopback only, a few minutes).

Real ``a2a-models serve`` processes (the echo agent of ``bench_echo_agent.py``;
the in-memory store, the cheapest request and so the largest ratio, or with
``--store sqlite`` the store ``serve`` uses when none is given): plain ones, and ones with ``--otel`` and
``OTEL_TRACES_EXPORTER=none OTEL_METRICS_EXPORTER=none`` per detail level
(``A2A_OTEL_DETAIL``: ``requests``, the default, then ``turns`` and
``store``): the SDK is configured, every request makes its spans and metric
points, nothing is exported. ``--sampled`` adds the default level with a 10%
head sampler. ``--floor`` adds a server whose only tracing is one bare SDK
span per request (``bench_span_floor.py``: started and ended, nothing else),
the least that any tracing of every request costs. One keep-alive client
sends SendMessage (JSON-RPC 1.0, sequential) to each in turn, request by
request, for a message answer (``hi``) and a task answer (``stream 1``: a
task with one status update, completed).

Reported per configuration: wall-clock p50 latency and the server's own CPU
time per request (per process, the median over rounds of 100 requests of the
CPU time its threads ran, from /proc/PID/task/*/schedstat in ns; then the mean
over the configuration's ``--processes`` processes), and the ratios to plain.
Identical processes differ by several percent on this machine (layout in
memory, which core), as much as the effect measured: hence several processes
per configuration, each row also showing its processes' spread (min-max),
and every turn round the servers in a new random order (see ``_round``).
For scale, the same run measures the a2a-sdk's server (``bench/http.py
--serve sdk``, its echo executor) plain and with the OpenTelemetry SDK
configured the same way (its own tracing then records spans): ``sdk+otel/sdk``
(``--no-sdk`` leaves it out). Each ratio line also gives the CPU time added
per request.
``--load N`` measures again under load: each server in turn is kept busy by
``N`` keep-alive connections sending SendMessage back to back (a minimal
HTTP/1.1 client, so that the client is not the bottleneck), in blocks taken in
a random order, one process per configuration; reported: the server's CPU
time per request and its requests per second. A busy server runs with warm
caches, an idle one with cold: the two show the range a deployment sees.
Target: the default level's CPU ratio <= 1.10. Exit status 1 when missed.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/http.py would shadow the standard library's http package.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time

import httpx

HERE = Path(__file__).resolve().parent
TARGET = 1.10


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """An ``a2a-models serve`` process, or with ``sdk`` the a2a-sdk's server
    (``bench/http.py --serve sdk``: its ``DefaultRequestHandler`` under uvicorn);
    ``otel``: the OpenTelemetry SDK configured, exporting nothing."""

    def __init__(
        self,
        otel: bool,
        sdk: bool = False,
        agent: str = "bench_echo_agent:Echo",
        store: str = "memory:",
        **otel_env: str,
    ) -> None:
        # Started from a copy of this environment: no A2A_OTEL_DETAIL of the caller's.
        otel_env.setdefault("A2A_OTEL_DETAIL", "requests")
        self.otel = otel
        self._folder: str | None = None
        self.port = _free_port()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(HERE.parent / "src"), *filter(None, [env.get("PYTHONPATH")])]
        )
        if sdk:
            command = [sys.executable, str(HERE / "http.py"), "--serve", "sdk"]
            command += ["--port", str(self.port)]
            # The SDK traces its request handler whenever a tracer provider is set.
            env["A2A_BENCH_OTEL"] = "1" if otel else "0"
        else:
            # The console script: `python -m` would put this folder (and bench/http.py) first.
            script = Path(sys.executable).with_name("a2a-models")
            if store == "sqlite":  # a database of its own per process, as deployed
                self._folder = tempfile.mkdtemp(prefix="a2a-otel-bench-")
                store = f"sqlite:///{self._folder}/tasks.db"
            command = [str(script), "serve", "--store", store]
            command += ["--agent", agent, "--port", str(self.port)]
            command += ["--log-level", "warning"]
            if otel:
                command.append("--otel")
        if otel:
            env.update(OTEL_TRACES_EXPORTER="none", OTEL_METRICS_EXPORTER="none")
            env.update(OTEL_LOGS_EXPORTER="none", **otel_env)
        self.proc = subprocess.Popen(command, cwd=HERE, env=env)
        ready = "/.well-known/agent-card.json" if sdk else "/healthz"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{self.url}{ready}", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("a2a-models serve did not start") from None
                time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu(self) -> float:
        """The CPU seconds the process's threads ran (scheduler statistics: ns, not ticks)."""
        total = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (FileNotFoundError, ProcessLookupError):  # a thread that just ended
                pass
        return total / 1e9

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def _body(i: int, text: str) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{i},"method":"SendMessage","params":{{"message":'
        f'{{"messageId":"m{i}","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}}}}}'
    ).encode()


#: Seeded: every run takes the same turns.
_ORDER = random.Random(13)


def _round(
    client: httpx.Client, servers: dict[str, Serve], text: str, n: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """``n`` requests to each server, taking turns request by request (so that every
    server sees the same load from the rest of the machine); latencies and CPU seconds.

    Each turn goes round the servers in a new random order: a server always
    called right after the same one measures systematically more (or less)
    CPU time here, by up to 7% (seen: whichever server followed ``plain``)."""
    latencies: dict[str, list[float]] = {name: [] for name in servers}
    cpu = {name: server.cpu() for name, server in servers.items()}
    order = list(servers.items())
    for i in range(n):
        _ORDER.shuffle(order)
        for name, server in order:
            start = time.perf_counter()
            reply = client.post(server.url + "/", content=_body(i, text))
            latencies[name].append(time.perf_counter() - start)
            assert reply.status_code == 200 and b'"result"' in reply.content, reply.content[:200]
    return latencies, {name: server.cpu() - cpu[name] for name, server in servers.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100, help="per round (default 100)")
    parser.add_argument("--rounds", type=int, default=30, help="per server and case (default 30)")
    parser.add_argument(
        "--processes", type=int, default=3, help="servers per configuration (default 3)"
    )
    parser.add_argument(
        "--sampled", action="store_true", help="also a server sampling 10%% of the traces"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also a server whose only tracing is one bare SDK span per request",
    )
    parser.add_argument(
        "--no-sdk",
        action="store_true",
        help="leave out the a2a-sdk's server (plain and with the OpenTelemetry SDK configured)",
    )
    parser.add_argument(
        "--store",
        choices=("memory", "sqlite"),
        default="memory",
        help="the servers' task store (default memory; sqlite: serve's own default)",
    )
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        metavar="N",
        help="also measure under load: N connections sending back to back (e.g. 8)",
    )
    args = parser.parse_args()
    # name -> (OpenTelemetry configured, the a2a-sdk's server, extra environment)
    configs: dict[str, tuple[bool, bool, dict[str, str]]] = {"plain": (False, False, {})}
    for level in ("requests", "turns", "store"):
        configs[level] = (True, False, {"A2A_OTEL_DETAIL": level})
    if args.sampled:
        # For information: a 10% head sampler (unsampled spans cost next to nothing).
        configs["requests10%"] = (
            True,
            False,
            {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"},
        )
    if args.floor:
        # For information: one bare SDK span per request and nothing else (bench_span_floor.py).
        configs["floor"] = (True, False, {"agent": "bench_span_floor:Echo"})
    if not args.no_sdk:
        # The official SDK's own tracing, measured the same way, for scale.
        configs["sdk"] = (False, True, {})
        configs["sdk+otel"] = (True, True, {})
    servers: dict[str, Serve] = {}
    try:
        # Interleaved (plain#0, requests#0, ..., plain#1, ...): all start alike.
        for i in range(args.processes):
            for config, (otel, sdk, env) in configs.items():
                store = "memory:" if args.store == "memory" else "sqlite"
                servers[f"{config}#{i}"] = Serve(otel, sdk, store=store, **env)
        worst = _measure(servers, list(configs), args.rounds, args.requests)
        if args.load:
            busy = {config: servers[f"{config}#0"] for config in configs}
            _measure_under_load(busy, args.load, seconds=2.0, blocks=8)
    finally:
        for server in servers.values():
            server.stop()
    ok = worst <= TARGET
    print(
        f"target: cpu requests/plain (the default level) <= {TARGET:.2f}x: "
        f"{'met' if ok else 'MISSED'} ({worst:.3f}x)"
    )
    return 0 if ok else 1


def _measure(servers: dict[str, Serve], configs: list[str], rounds: int, requests: int) -> float:
    """Print the table; the worst CPU ratio of the default level to plain."""
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    worst = 0.0
    with httpx.Client(headers=headers, timeout=30) as client:
        processes = len(servers) // len(configs)
        print(f"{rounds} rounds x {requests} sequential SendMessage per server, ", end="")
        print(f"{processes} server processes per configuration")
        print(f"{'case':10} {'server':11} {'p50 ms':>8} {'cpu us/req':>11} {'processes':>15}")
        for text in ("hi", "stream 1"):
            _round(client, servers, text, 200)  # warm up
            lat: dict[str, list[float]] = {k: [] for k in servers}
            cpu: dict[str, list[float]] = {k: [] for k in servers}
            for _ in range(rounds):
                latencies, used = _round(client, servers, text, requests)
                for name in servers:
                    lat[name] += latencies[name]
                    cpu[name].append(used[name] / requests)
            # Per process the median round (a burst of load elsewhere on the
            # machine moves a few rounds, not the figure), then the mean over
            # the configuration's processes.
            per: dict[str, float] = {}
            p50: dict[str, float] = {}
            for config in configs:
                names = [k for k in servers if k.split("#")[0] == config]
                medians = [statistics.median(cpu[k]) * 1e6 for k in names]
                per[config] = statistics.mean(medians)
                p50[config] = statistics.median([x for k in names for x in lat[k]]) * 1e3
                spread = f"{min(medians):.0f}-{max(medians):.0f}"
                print(
                    f"{text!r:10} {config:11} {p50[config]:8.3f} {per[config]:11.1f} {spread:>15}"
                )
            worst = max(worst, per["requests"] / per["plain"])
            for config in configs[1:]:
                base = "sdk" if config.startswith("sdk") else "plain"
                if config == base:
                    continue
                print(
                    f"{text!r:10} {config}/{base}: cpu {per[config] / per[base]:.3f}x "
                    f"(+{per[config] - per[base]:.1f} us), p50 {p50[config] / p50[base]:.3f}x"
                )
    return worst


def _request(i: int, text: str, port: int) -> bytes:
    body = _body(i, text)
    head = (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nA2A-Version: 1.0\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _send_until(port: int, text: str, deadline: float) -> int:
    """SendMessage back to back on one keep-alive connection until ``deadline``; how many."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    sent = 0
    try:
        while time.monotonic() < deadline:
            writer.write(_request(sent, text, port))
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length)
            assert head.startswith(b"HTTP/1.1 200") and b'"result"' in body, body[:200]
            sent += 1
    finally:
        writer.close()
    return sent


async def _load(port: int, text: str, connections: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    counts = await asyncio.gather(*(_send_until(port, text, deadline) for _ in range(connections)))
    return sum(counts)


def _measure_under_load(
    servers: dict[str, Serve], connections: int, seconds: float, blocks: int
) -> None:
    """Print CPU per request and throughput of each server kept busy by ``connections``
    connections, ``blocks`` blocks of ``seconds`` each, one server at a time."""
    configs = list(servers)
    print(f"\nunder load: {connections} connections sending back to back, ", end="")
    print(f"{blocks} blocks of {seconds:.0f} s per server, one server at a time")
    print(f"{'case':10} {'server':11} {'req/s':>8} {'cpu us/req':>11}")
    for text in ("hi", "stream 1"):
        for server in servers.values():  # warm up
            asyncio.run(_load(server.port, text, connections, 1.0))
        cpu: dict[str, list[float]] = {config: [] for config in configs}
        rate: dict[str, list[float]] = {config: [] for config in configs}
        order = list(servers.items())
        for _ in range(blocks):
            _ORDER.shuffle(order)
            for config, server in order:
                used, start = server.cpu(), time.perf_counter()
                done = asyncio.run(_load(server.port, text, connections, seconds))
                rate[config].append(done / (time.perf_counter() - start))
                cpu[config].append((server.cpu() - used) / done * 1e6)
        per = {config: statistics.median(cpu[config]) for config in configs}
        for config in configs:
            print(
                f"{text!r:10} {config:11} {statistics.median(rate[config]):8.0f} "
                f"{per[config]:11.1f}"
            )
        for config in configs[1:]:
            base = "sdk" if config.startswith("sdk") else "plain"
            if config != base:
                print(
                    f"{text!r:10} {config}/{base} under load: cpu {per[config] / per[base]:.3f}x "
                    f"(+{per[config] - per[base]:.1f} us)"
                )


if __name__ == "__main__":
    sys.exit(main())
