"""Package-level promises: a light import, a curated public surface, typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import a2a_models

HEAVY = (
    "starlette",
    "uvicorn",
    "httpx",
    "psycopg",
    "asyncpg",
    "sqlite3",
    "mcp",
    "openai",
    "anthropic",
    "yaml",
    "google.protobuf",
    "pydantic",
    "a2a",
)


def test_import_pulls_in_no_adapter_dependency() -> None:
    code = (
        "import sys, a2a_models, a2a_models.codec, a2a_models.protocol, a2a_models.server, "
        "a2a_models.client, a2a_models.schema, a2a_models.tools, a2a_models.stores\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", out


def test_public_names_resolve() -> None:
    for name in a2a_models.__all__:
        assert getattr(a2a_models, name) is not None, name


def test_py_typed_marker_ships() -> None:
    assert (Path(a2a_models.__file__).parent / "py.typed").exists()
