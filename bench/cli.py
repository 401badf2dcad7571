"""Start-up time of the ``a2a-models`` command, side by side with bare Python.

Prints the median of N fresh processes (default 5) for each of:

* ``python -c pass`` (the interpreter alone, the floor),
* ``python -c "import a2a_models"``,
* ``a2a-models --help`` (the console script; the target is at most 150 ms),
* ``a2a-models send --help`` (a subcommand's help: still no HTTP client or rich),
* ``import argparse`` and, when installed, ``import click`` / ``import typer``: what the
  parser library alone costs (the reason the command line keeps argparse).

Run: ``python bench/cli.py [--runs N]`` (exit status 1 when the target is missed). On a loaded machine the absolute
figures move; the differences to the first line are what the CLI costs.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_MS = 150.0


def _median_ms(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per command")
    runs = parser.parse_args().runs
    script = Path(sys.executable).with_name("a2a-models")
    cli = [str(script)] if script.exists() else [shutil.which("a2a-models") or "a2a-models"]
    cases = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("import a2a_models", [sys.executable, "-c", "import a2a_models"]),
        ("a2a-models --help", [*cli, "--help"]),
        ("a2a-models send --help", [*cli, "send", "--help"]),
    ]
    # Why argparse: what the usual CLI libraries cost to import, next to it.
    cases.append(("import argparse", [sys.executable, "-c", "import argparse"]))
    for library in ("click", "typer"):
        if importlib.util.find_spec(library) is not None:
            cases.append((f"import {library}", [sys.executable, "-c", f"import {library}"]))
    for _, command in cases:  # warm the file cache
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    results = {name: _median_ms(command, runs) for name, command in cases}
    floor = results["python -c pass"]
    print(f"median of {runs} fresh processes")
    for name, ms in results.items():
        extra = f"  (+{ms - floor:.0f} ms over bare python)" if name != "python -c pass" else ""
        print(f"  {name:<24} {ms:7.1f} ms{extra}")
    help_ms = results["a2a-models --help"]
    verdict = "ok" if help_ms <= TARGET_MS else "OVER"
    print(f"a2a-models --help: {help_ms:.0f} ms, target <= {TARGET_MS:.0f} ms: {verdict}")
    if help_ms > TARGET_MS:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
