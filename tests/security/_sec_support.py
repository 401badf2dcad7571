"""A real ``a2a-models serve`` process for the security tests (127.0.0.1, stopped by the test)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import pytest
from _procs import CliProcess, cli_env, free_port

START_TIMEOUT = 30.0


class Server(CliProcess):
    """``a2a-models serve ARGS`` (see :class:`CliProcess`)."""

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
        args = [
            "serve",
            "--port",
            str(self.port),
            "--log-level",
            log_level,
            *(("--store", store) if store else ()),
            *args,
        ]
        super().__init__(args, name="serve", cwd=cwd, env=cli_env(env))

    def wait_ready(self, timeout: float = START_TIMEOUT) -> Self:
        return super().wait_ready(timeout)

    def wait(self, timeout: float = 20.0) -> int | None:
        return super().wait(timeout)


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
