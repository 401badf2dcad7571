"""Make ``src/`` importable when the package is not installed in the venv."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("a2a_models") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
