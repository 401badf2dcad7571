"""``module:object`` entries: how a workspace names Python objects (workflows, hooks,
context providers)."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["EntryError", "import_object"]


class EntryError(ValueError):
    """A ``module:object`` entry that is malformed or cannot be imported."""


def _import_module(module: str, base_dir: Path | None) -> Any:
    if module.endswith(".py") or "/" in module:
        # A file of the workspace: loaded under a private module name.
        if base_dir is None:
            raise EntryError("a file entry needs the workspace directory")
        path = (base_dir / module).resolve()
        if not path.is_file():
            raise EntryError(f"no such file: {module}")
        name = "_a2a_models_workflow_" + re.sub(r"\W", "_", str(path))
        existing = sys.modules.get(name)
        if existing is not None:
            return existing
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise EntryError(f"cannot load {module}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except Exception as exc:
            del sys.modules[name]
            raise EntryError(f"importing {module} failed: {exc!r}") from exc
        return mod
    try:
        return importlib.import_module(module)
    except Exception as exc:
        raise EntryError(f"cannot import {module!r}: {exc!r}") from exc


def import_object(entry: str, *, base_dir: str | Path | None = None) -> Any:
    """The object an entry names: ``package.module:name`` (``name`` may be dotted),
    or ``path/to/file.py:name`` relative to ``base_dir`` (the workspace).

    Raises :class:`EntryError` saying what is wrong (malformed, module missing,
    import failed, no such attribute).
    """
    if not isinstance(entry, str):
        raise EntryError(f"expected 'module:object', got {type(entry).__name__}")
    module_name, _, attr = entry.rpartition(":")
    if not module_name or not attr:
        raise EntryError(f"expected 'module:object', got {entry!r}")
    obj: Any = _import_module(module_name, Path(base_dir) if base_dir is not None else None)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise EntryError(f"{module_name!r} has no {attr!r}") from None
    return obj
