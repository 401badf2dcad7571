"""The examples of docs/mcp.md, executed as written.

Blocks tagged ``<!-- example: NAME -->`` run in order in one namespace; the
block tagged ``<!-- output: NAME -->`` is the exact output of that example.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
_TAGGED = re.compile(
    r"<!-- (?P<kind>example|output): (?P<name>[\w-]+) -->\n```(?P<lang>\w+)\n(?P<code>.*?)^```",
    re.DOTALL | re.MULTILINE,
)


def test_the_examples_run_and_print_what_the_page_shows() -> None:
    blocks = [(m["kind"], m["name"], m["code"]) for m in _TAGGED.finditer(DOC.read_text("utf-8"))]
    examples = [(name, code) for kind, name, code in blocks if kind == "example"]
    outputs = {name: code for kind, name, code in blocks if kind == "output"}
    assert [name for name, _ in examples] == ["skills", "tools", "toolbox"]
    namespace: dict[str, Any] = {"__name__": "docs_mcp"}
    for name, code in examples:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"docs/mcp.md:{name}", "exec"), namespace)
        assert out.getvalue() == outputs[name], name
