"""The documentation site: it builds in strict mode, and every Python block in it runs.

Blocks tagged ``<!-- example: NAME -->`` are run (and their output checked) by the test
module named in ``TAGGED``; every other ``python`` block of a page runs here, in order, in
one namespace per page, with top-level ``await`` allowed. Pages that talk to an agent use
``http://127.0.0.1:8000``: that address is replaced by a real ``a2a-models serve`` process
(the demo agent, in-memory store) started for this module on a free port.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _procs import free_port

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOC_URL = "http://127.0.0.1:8000"

_BLOCK = re.compile(
    r"<!-- docs-setup\n(?P<setup>.*?)^-->"
    r"|(?:<!-- (?P<kind>example|output): (?P<name>[\w-]+) -->\n)?```(?P<lang>[\w-]*)\n(?P<code>.*?)^```",
    re.DOTALL | re.MULTILINE,
)

#: Pages whose tagged blocks another test module runs.
TAGGED = {
    "server.md": "tests/test_custom_transport.py",
    "custom-transport.md": "tests/test_custom_transport.py",
    "mcp.md": "tests/mcp/test_mcp_docs.py",
}


def pages() -> list[str]:
    return sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))


def python_blocks(page: str) -> list[tuple[str | None, str]]:
    """``(tag, code)`` of every ``python`` block of ``page`` (``tag`` None when untagged)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [
        (match["name"], match["code"])
        for match in _BLOCK.finditer(text)
        if match["setup"] is None and match["lang"] == "python"
    ]


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``a2a-models serve`` (demo agent) on 127.0.0.1, stopped after the module."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_models", "serve", "--port", str(port), "--store", "memory:"],
        cwd=tmp_path_factory.mktemp("serve"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    pytest.fail(f"a2a-models serve did not start: {err}")
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("page", [p for p in pages() if p in TAGGED])
def test_tagged_blocks_have_a_runner(page: str) -> None:
    runner = ROOT / TAGGED[page]
    assert runner.is_file(), f"{page}: its tagged blocks are run by {runner}, which is missing"
    assert Path(page).name in runner.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", pages())
def test_tagged_blocks_only_on_pages_with_a_runner(page: str) -> None:
    tags = [tag for tag, _ in python_blocks(page) if tag is not None]
    assert not tags or page in TAGGED, f"{page}: tagged blocks {tags} that no test runs"


#: Runs every python block of one page (argv: page path, agent URL, block pattern) in order, in
#: one namespace: blocks with top-level ``await`` run in one event loop kept for the page (what
#: one starts, a later one may use), the others as plain code (they may call ``asyncio.run``). ``<!-- docs-setup ... -->`` comments hold code
#: the reader does not need to see (a scripted model server, say); they run in place. A fresh
#: interpreter per page, so that what a page registers or configures cannot leak elsewhere.
_RUNNER = """
import ast, asyncio, inspect, re, sys
page, url = sys.argv[1], sys.argv[2]
text = open(page, encoding="utf-8").read()
pattern = re.compile(sys.argv[3], re.DOTALL | re.MULTILINE)
namespace = {"__name__": "__docs__"}
loop = asyncio.new_event_loop()
for number, match in enumerate(pattern.finditer(text), 1):
    if match["setup"] is not None:
        source = match["setup"]
    elif match["lang"] == "python":
        source = match["code"]
    else:
        continue
    source = source.replace(%(doc_url)r, url)
    code = compile(source, f"{page}:block{number}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if code.co_flags & inspect.CO_COROUTINE:
        loop.run_until_complete(asyncio.wait_for(eval(code, namespace), 60))
    else:
        exec(code, namespace)
""" % {"doc_url": DOC_URL}  # noqa: UP031 (the runner code has its own braces)


def runnable(page: str) -> bool:
    text = (DOCS / page).read_text(encoding="utf-8")
    return any(m["lang"] == "python" or m["setup"] for m in _BLOCK.finditer(text))


@pytest.mark.parametrize("page", [p for p in pages() if runnable(p)])
def test_python_blocks_run(page: str, demo_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(DOCS / page), demo_url, _BLOCK.pattern],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, f"{page}:\n{result.stderr[-4000:]}"


def test_api_reference_lists_the_lazy_exports() -> None:
    # Lazily exporting packages build ``__all__`` at run time, which the API reference
    # generator cannot read, so their reference pages list the members: keep them equal.
    import a2a_models.adapters.http as http

    text = (DOCS / "reference" / "http.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^ {8}- (\w+)$", text, re.MULTILINE))
    assert listed == {name for name in http.__all__ if not name.isupper()}


def test_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is not installed (the docs extra is part of dev)"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "NO_MKDOCS_2_WARNING": "1",
    }
    result = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "server" / "index.html").is_file()
