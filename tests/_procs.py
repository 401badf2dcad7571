"""What the tests that start real processes share: the ``a2a-models`` command and its
processes (:class:`CliProcess`), free ports (on 127.0.0.1) and the PostgreSQL they use.
``tests/`` is on ``sys.path`` (its ``conftest.py`` puts it there)."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

import pytest

#: The PostgreSQL of the tests (CI's and every machine's: trust auth, database ``test``).
PG_DSN = os.environ.get("A2A_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def a2a_command() -> list[str]:
    """The ``a2a-models`` console script of this interpreter (``python -m`` without it)."""
    script = Path(sys.executable).with_name("a2a-models")
    return [str(script)] if script.exists() else [sys.executable, "-m", "a2a_models"]


def free_port() -> int:
    """A port nothing listens on (right now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cli_env(
    extra: Mapping[str, str] | None = None, *, pythonpath: Path | str | None = None
) -> dict[str, str]:
    """This environment for a child ``a2a-models``: unbuffered output, ``extra`` on top and
    ``pythonpath`` (a folder of test agents) ahead of ``PYTHONPATH``."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(extra or {})}
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    return env


#: The line ``serve`` (and ``demo``, ``agent run``) prints once it accepts requests.
SERVING = re.compile(r"a2a-models: serving .* at (\S+)")


class CliProcess:
    """``a2a-models ARGS`` (or ``program ARGS``) in a subprocess; all it prints (stdout and
    stderr) is collected by a thread into ``output``. Stop it with :meth:`stop` or
    :meth:`kill` (a fixture that starts it should do so at its end)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        name: str = "a2a-models",
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        ready: re.Pattern[str] | str = SERVING,
        program: Sequence[str] | None = None,
    ) -> None:
        self.name = name
        #: The line :meth:`wait_ready` waits for (its first group, if any, is ``url``).
        self.ready = re.compile(ready)
        self.url = ""
        self.proc = subprocess.Popen(
            [*(a2a_command() if program is None else program), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=cwd,
            env=dict(env) if env is not None else cli_env(),
        )
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._eof = threading.Event()
        threading.Thread(target=self._pump, daemon=True, name=f"{name}-output").start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line.rstrip("\n"))
            self._lines.put(line)
        self._lines.put(None)
        self._eof.set()

    @property
    def text(self) -> str:
        """Everything it printed so far."""
        return "\n".join(self.output)

    def log(self, last: int = 200) -> str:
        """Its last ``last`` lines, headed by its name, for a failure message."""
        lines = "\n".join(self.output[-last:])
        return f"--- output of {self.name} (pid {self.pid}) ---\n{lines}"

    def wait_for(self, pattern: re.Pattern[str] | str, timeout: float = 30.0) -> re.Match[str]:
        """The match of the first line from now on that ``pattern`` finds (the test
        fails if the process ends or ``timeout`` passes first)."""
        wanted = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                pytest.fail(f"{self.name} exited ({self.proc.wait()}) first\n{self.log()}")
            match = wanted.search(line)
            if match:
                return match
        pytest.fail(f"{self.name} printed no {wanted.pattern!r} within {timeout} s\n{self.log()}")

    def wait_ready(self, timeout: float = 30.0) -> Self:
        """Wait for its ``ready`` line (killed if it does not come); ``url`` is the
        address the line gives, if it gives one."""
        try:
            match = self.wait_for(self.ready, timeout)
        except BaseException:
            self.kill()
            raise
        if match.re.groups:
            self.url = match.group(1)
        return self

    def wait(self, timeout: float = 10.0) -> int | None:
        """The exit code once it ends by itself (``None``: still running after ``timeout``)."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._eof.wait(5)  # all its output is in self.output
        return code

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None:
        """Send ``sig``; the exit code, or ``None`` if it had to be killed after ``timeout``."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.wait(timeout)
        if code is None:
            self.kill()
        return code

    def kill(self) -> None:
        """SIGKILL (nothing if it has ended)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)
        self._eof.wait(5)
