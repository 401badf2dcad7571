"""Every third-party module ``src/a2a_models`` imports is declared in pyproject.toml.

A dependency that arrives only as another package's dependency (``httpx2`` via
``openai``, ``anyio`` via ``mcp``) breaks the day that package drops it, and
makes ``mypy --strict`` depend on what else happens to be installed.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "a2a_models"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += extra
    return {_normalize(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0]) for spec in specs}


def _imported() -> dict[str, str]:
    """Top-level third-party module -> first file importing it."""
    out: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("a2a_models", "__future__"):
                    continue
                out.setdefault(top, str(path.relative_to(REPO)))
    return out


def test_every_imported_distribution_is_declared() -> None:
    owners = md.packages_distributions()
    declared = _declared()
    missing = {}
    for module, where in _imported().items():
        dists = owners.get(module)
        if not dists:
            missing[module] = f"{where}: no installed distribution provides it"
            continue
        if not any(_normalize(d) in declared for d in dists):
            missing[module] = f"{where}: {dists} is not in pyproject.toml"
    assert not missing, missing


def test_the_scan_finds_the_known_imports() -> None:
    imported = _imported()
    assert {"attrs", "orjson", "starlette", "httpx"} <= set(imported)
    assert "json" not in imported and "a2a_models" not in imported
