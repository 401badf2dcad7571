"""Extract the normative sentences of the A2A specification into the shipped catalogue.

Usage: ``python scripts/gen_requirements.py [SPEC_DIR]`` (default ``../shared/a2a-spec``).
Writes ``src/a2a_models/conformance/_catalogue_data.py``; ``--check`` exits 1 if that
file is stale instead of writing it. The spec text is read, never committed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from a2a_models.conformance._catalogue import (  # noqa: E402
    extract,
    headings_of,
    render_module,
    rows_of,
)

OUT = ROOT / "src" / "a2a_models" / "conformance" / "_catalogue_data.py"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    spec_dir = Path(args[0]) if args else ROOT.parent / "shared" / "a2a-spec"
    texts = {
        v: (spec_dir / v / "specification.md").read_text(encoding="utf-8")
        for v in ("1.0.1", "0.3.0")
    }
    catalogues = {v: extract(t, v) for v, t in texts.items()}
    headings = {".".join(v.split(".")[:2]): headings_of(t) for v, t in texts.items()}
    text = render_module(catalogues, headings)
    if check:
        # compare the data, not the text: a code formatter may restyle the generated module
        shipped: dict[str, object] = {}
        exec(compile(OUT.read_text(encoding="utf-8"), str(OUT), "exec"), shipped)
        if shipped["ROWS"] != rows_of(catalogues) or shipped.get("HEADINGS") != headings:
            print(f"{OUT} is stale: run scripts/gen_requirements.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    # keep the generated module in the project's style (a dev tool; skipped when absent)
    subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(OUT)], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
