"""``a2a-models worker`` and ``serve --front-end`` refuse a store workers cannot share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "A2A_STORE"}
    return subprocess.run(
        [sys.executable, "-m", "a2a_models", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )


def test_a_worker_needs_a_postgresql_store(tmp_path: Path) -> None:
    done = _run("worker", "--store", "sqlite:///tasks.db", tmp_path=tmp_path)
    assert done.returncode == 2
    assert "--store must be the front ends' postgresql://" in done.stderr
    done = _run("worker", tmp_path=tmp_path)
    assert done.returncode == 2


def test_a_front_end_needs_a_postgresql_store(tmp_path: Path) -> None:
    done = _run("serve", "--front-end", "--port", "0", "--store", "memory:", tmp_path=tmp_path)
    assert done.returncode == 2
    assert "--front-end needs a postgresql:// store" in done.stderr


def test_the_worker_command_is_listed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "a2a_models", "worker", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for option in ("--store", "--agent", "--concurrency", "--lease-ttl", "--grace"):
        assert option in done.stdout
