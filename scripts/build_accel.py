"""Build the optional compiled codec accelerator (``a2a_models.codec._speedups``) in place.

Run: ``python scripts/build_accel.py`` (needs a C compiler and the Python headers;
about 5 s). The extension lands next to its source in ``src/a2a_models/codec/``
(ignored by git); the codec uses it from then on, and ``A2A_CODEC_PURE=1`` turns
it off. ``--clean`` removes it. The wheel build runs the same code when
``A2A_BUILD_ACCEL=1`` (see ``hatch_build.py``).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "a2a_models" / "codec" / "_speedups.c"


def target(directory: Path = SOURCE.parent) -> Path:
    """Where the built module goes (the interpreter's extension suffix)."""
    return directory / ("_speedups" + str(sysconfig.get_config_var("EXT_SUFFIX")))


def build(out: Path | None = None, *, quiet: bool = False) -> Path:
    """Compile ``_speedups.c`` with the compiler and flags Python was built with."""
    out = out or target()
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    ldshared = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    ccshared = shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC")
    include = sysconfig.get_paths()["include"]
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "_speedups.o"
        compile_cmd = [
            *cc,
            *ccshared,
            "-O2",
            "-Wall",
            "-Werror",
            f"-I{include}",
            "-c",
            str(SOURCE),
            "-o",
            str(obj),
        ]
        link_cmd = [*ldshared, str(obj), "-o", str(out)]
        for cmd in (compile_cmd, link_cmd):
            if not quiet:
                print(" ".join(cmd))
            subprocess.run(cmd, check=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clean", action="store_true", help="remove the built module")
    args = ap.parse_args()
    if args.clean:
        target().unlink(missing_ok=True)
        return
    print(f"built {build()}", file=sys.stderr)


if __name__ == "__main__":
    main()
