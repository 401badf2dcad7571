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


#: ``--sanitize``: AddressSanitizer and UndefinedBehaviorSanitizer (gcc or clang), for
#: tests only. Run Python with the ASan runtime first: ``PYTHONMALLOC=malloc
#: LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0``.
SANITIZE = [
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
    "-g",
]


def build_all(
    directory: Path | None = None, *, quiet: bool = False, sanitize: bool = False
) -> list[Path]:
    """Build every module, in place or into ``directory``; the built files."""
    return [
        build(source, target(source, directory), quiet=quiet, sanitize=sanitize)
        for source in SOURCES
    ]


def build(source: Path, out: Path, *, quiet: bool = False, sanitize: bool = False) -> Path:
    """Compile ``source`` with the compiler and flags Python was built with
    (``sanitize``: instrumented with ASan and UBSan, see :data:`SANITIZE`)."""
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
            "-O1" if sanitize else "-O2",
            *(SANITIZE if sanitize else ()),
            "-Wall",
            "-Werror",
            f"-I{include}",
            "-c",
            str(source),
            "-o",
            str(obj),
        ]
        link_cmd = [*ldshared, *(SANITIZE if sanitize else ()), str(obj), "-o", str(out)]
        for cmd in (compile_cmd, link_cmd):
            if not quiet:
                print(" ".join(cmd))
            subprocess.run(cmd, check=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clean", action="store_true", help="remove the built module")
    ap.add_argument(
        "--sanitize",
        action="store_true",
        help="instrument with AddressSanitizer and UBSan (tests only; rebuild without after)",
    )
    args = ap.parse_args()
    if args.clean:
        for source in SOURCES:
            target(source).unlink(missing_ok=True)
        return
    for path in build_all(sanitize=args.sanitize):
        print(f"built {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
