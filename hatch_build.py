"""Hatch build hook: compile the optional codec accelerator when asked.

By default (``A2A_BUILD_ACCEL`` unset or ``auto``) the build tries to compile
the C sources (``codec/_speedups.c``, ``adapters/grpc/_pbwire.c``; with
``scripts/build_accel.py``, the compiler Python was built with) into the wheel,
which then gets a platform tag, and falls back to the pure-Python wheel with a
warning when that fails (no compiler, no headers), as C-accelerated packages
usually do. ``A2A_BUILD_ACCEL=1`` makes a failed build an error;
``A2A_BUILD_ACCEL=0`` builds the pure-Python wheel without trying. Editable
installs build it in place, next to the source.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class AccelBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        mode = os.environ.get("A2A_BUILD_ACCEL", "").strip().lower() or "auto"
        if mode in ("0", "no", "false"):
            return
        sys.path.insert(0, str(Path(self.root) / "scripts"))
        try:
            import build_accel
        finally:
            sys.path.pop(0)
        self._tmp: str | None = None
        try:
            if version == "editable":
                build_accel.build_all(quiet=True)  # in place: the editable install imports src/
                return
            self._tmp = tempfile.mkdtemp(prefix="a2a-accel-")
            built = build_accel.build_all(Path(self._tmp), quiet=True)
        except Exception as exc:
            if mode != "auto":
                raise
            self.app.display_warning(f"codec accelerator not built ({exc}): pure-Python wheel")
            return
        for path, source in zip(built, build_accel.SOURCES, strict=True):
            inside = source.parent.relative_to(build_accel.PACKAGE.parent)
            build_data["force_include"][str(path)] = f"{inside.as_posix()}/{path.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
