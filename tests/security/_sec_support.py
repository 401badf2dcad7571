"""A real ``a2a-models serve`` process for the security tests (127.0.0.1, stopped by the test)."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from _procs import a2a_command, free_port

START_TIMEOUT = 30.0


class Server:
    """``a2a-models serve ARGS``; all its output (stdout and stderr) is kept in ``output``."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        log_level: str = "warning",
        store: str | None = "memory:",
    ) -> None:
        self.port = free_port()
        self.args = [
            *a2a_command(),
            "serve",
            "--port",
            str(self.port),
            "--log-level",
            log_level,
            *(("--store", store) if store else ()),
            *args,
        ]
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=cwd,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        self.output: list[str] = []
        self.url = ""
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._eof = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line.rstrip("\n"))
            self._lines.put(line)
        self._lines.put(None)
        self._eof.set()

    @property
    def log(self) -> str:
        return "\n".join(self.output)

    def wait_ready(self) -> Server:
        deadline = time.monotonic() + START_TIMEOUT
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                pytest.fail(f"serve exited ({self.proc.wait()}) while starting:\n{self.log}")
            match = re.search(r"a2a-models: serving .* at (\S+)", line)
            if match:
                self.url = match.group(1)
                return self
        pytest.fail(f"serve did not start within {START_TIMEOUT} s:\n{self.log}")

    def exit_code(self, timeout: float = 20.0) -> int:
        code = self.proc.wait(timeout)
        self._eof.wait(5)
        return code

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._eof.wait(5)


@pytest.fixture
def serve(tmp_path: Path) -> Any:
    """``serve(*args, env=..., ready=True)``: a started server; all are stopped at the end."""
    started: list[Server] = []

    def start(
        *args: str,
        env: Mapping[str, str] | None = None,
        ready: bool = True,
        log_level: str = "warning",
        store: str | None = "memory:",
    ) -> Server:
        server = Server(args, cwd=tmp_path, env=env, log_level=log_level, store=store)
        started.append(server)
        return server.wait_ready() if ready else server

    yield start
    for server in started:
        server.stop()


def rpc(method: str, params: dict[str, Any], id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def message(text: str) -> dict[str, Any]:
    return {"messageId": f"m-{time.monotonic_ns()}", "role": "ROLE_USER", "parts": [{"text": text}]}


V10 = {"A2A-Version": "1.0"}
