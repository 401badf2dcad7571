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
#: Further C files linked into a module (by its main source's name).
PARTS = {"_speedups.c": ("_read.c", "_write.c")}
#: ``--sanitize``: AddressSanitizer and UndefinedBehaviorSanitizer (gcc or clang), for
#: tests only; stop at the first report. Run Python with the ASan runtime first:
#: ``PYTHONMALLOC=malloc LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0``.
SANITIZE = [
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
    "-O1",
    "-g",
]


def target(source: Path, directory: Path | None = None) -> Path:
    """Where the module built from ``source`` goes (the interpreter's extension suffix)."""
    return (directory or source.parent) / (
        source.stem + str(sysconfig.get_config_var("EXT_SUFFIX"))
    )


def build_all(
    directory: Path | None = None, *, quiet: bool = False, sanitize: bool = False
) -> list[Path]:
    """Build every module, in place or into ``directory``; the built files."""
    return [
        build(source, target(source, directory), quiet=quiet, sanitize=sanitize)
        for source in SOURCES
    ]


def build(source: Path, out: Path, *, quiet: bool = False, sanitize: bool = False) -> Path:
    """Compile ``source`` (and its ``PARTS``) with the compiler and flags Python was built with."""
    # $CC overrides the compiler (as with setuptools); linking stays what Python used.
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    ldshared = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    ccshared = shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC")
    include = sysconfig.get_paths()["include"]
    extra = SANITIZE if sanitize else []
    sources = [source, *(source.parent / name for name in PARTS.get(source.name, ()))]
    with tempfile.TemporaryDirectory() as tmp:
        objs = [Path(tmp) / (src.stem + ".o") for src in sources]
        flags = [*ccshared, "-O2", "-Wall", "-Werror", *extra, f"-I{include}"]
        cmds = [
            [*cc, *flags, "-c", str(src), "-o", str(obj)]
            for src, obj in zip(sources, objs, strict=True)
        ]
        cmds.append([*ldshared, *extra, *map(str, objs), "-o", str(out)])
        for cmd in cmds:
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
        help="build with AddressSanitizer and UBSan (run Python with "
        "LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0)",
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
