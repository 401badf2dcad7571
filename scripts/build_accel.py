"""Build the optional compiled codec accelerator in place.

Two extension modules: ``a2a_models.codec._speedups`` (the JSON codec's plans)
and ``a2a_models.adapters.grpc._pbwire`` (protobuf Struct/Value bytes). Run:
``python scripts/build_accel.py`` (needs a C compiler and the Python headers;
a few seconds). Each lands next to its source (ignored by git); the codec and
the gRPC binding use them from then on, and ``A2A_CODEC_PURE=1`` turns them off. ``--clean`` removes it. The wheel build runs the same code when
``A2A_BUILD_ACCEL=1`` (see ``hatch_build.py``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "a2a_models"
#: The C sources, each one extension module next to it.
SOURCES = (PACKAGE / "codec" / "_speedups.c", PACKAGE / "adapters" / "grpc" / "_pbwire.c")


def target(source: Path, directory: Path | None = None) -> Path:
    """Where the module built from ``source`` goes (the interpreter's extension suffix)."""
    return (directory or source.parent) / (
        source.stem + str(sysconfig.get_config_var("EXT_SUFFIX"))
    )


def build_all(directory: Path | None = None, *, quiet: bool = False) -> list[Path]:
    """Build every module, in place or into ``directory``; the built files."""
    return [build(source, target(source, directory), quiet=quiet) for source in SOURCES]


def build(source: Path, out: Path, *, quiet: bool = False) -> Path:
    """Compile ``source`` with the compiler and flags Python was built with."""
    # $CC overrides the compiler (as with setuptools); linking stays what Python used.
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    ldshared = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    ccshared = shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC")
    include = sysconfig.get_paths()["include"]
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / (source.stem + ".o")
        compile_cmd = [
            *cc,
            *ccshared,
            "-O2",
            "-Wall",
            "-Werror",
            f"-I{include}",
            "-c",
            str(source),
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
        for source in SOURCES:
            target(source).unlink(missing_ok=True)
        return
    for path in build_all():
        print(f"built {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
