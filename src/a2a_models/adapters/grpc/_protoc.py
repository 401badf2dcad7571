"""Regenerate the committed ``_pb`` modules from the A2A ``a2a.proto`` files (developer tool).

``python -m a2a_models.adapters.grpc._protoc PATH/TO/a2a.proto`` (or ``nox -s protos``)
compiles one of the two protos with ``grpcio-tools`` (a dev dependency) and
rewrites the output so that it lives inside this package. Which one it is
comes from its ``package`` line (:data:`TARGETS`): 1.0's ``lf.a2a.v1`` makes
``a2a_pb2*``, 0.3's ``a2a.v1`` makes ``a2a_v03_pb2*``.

* ``<stem>_pb2.py`` registers the proto in a *private* descriptor pool of its
  own (:mod:`._pb._pool`), not the process-wide default pool: the official
  ``a2a-sdk`` registers its own, different ``a2a.proto`` with the same
  ``lf.a2a.v1`` symbols (its 0.3 line and its 1.x compat layer: ``a2a.v1``),
  and the default pool refuses a second definition. They can then be
  imported in one process (the interop tests do).
* ``<stem>_pb2_grpc.py`` imports its sibling relatively.

The proto text itself is not part of the project; the tests compare a fresh
generation with the committed files (``tests/test_grpc_convert.py``).
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["OUTPUTS", "TARGETS", "generate", "outputs", "target"]

#: proto package -> (the committed modules' stem, the pool of ``_pb._pool`` they register in).
TARGETS = {"lf.a2a.v1": ("a2a", "POOL"), "a2a.v1": ("a2a_v03", "POOL_V03")}


def outputs(stem: str) -> tuple[str, str, str]:
    """The committed files :func:`generate` makes for the modules named ``stem``."""
    return (f"{stem}_pb2.py", f"{stem}_pb2.pyi", f"{stem}_pb2_grpc.py")


#: The 1.0 files.
OUTPUTS = outputs("a2a")

_DEFAULT_POOL = "DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile("
_PRIVATE_POOL = "DESCRIPTOR = _PRIVATE_POOL.AddSerializedFile("
_PACKAGE = re.compile(r"^package\s+([\w.]+)\s*;", re.M)


def target(proto_text: str) -> tuple[str, str]:
    """The (stem, pool name) of a proto, from its ``package`` line."""
    found = _PACKAGE.search(proto_text)
    package = found.group(1) if found else None
    if package not in TARGETS:
        raise ValueError(f"not an A2A proto: package {package!r}, expected one of {list(TARGETS)}")
    return TARGETS[package]


def generate(proto: Path, out_dir: Path) -> list[Path]:
    """Compile ``proto`` into ``out_dir`` (its :func:`outputs`); returns their paths."""
    import google.api  # googleapis-common-protos: google/api/*.proto
    from grpc_tools import protoc  # dev dependency, never imported by the package

    stem, pool = target(proto.read_text(encoding="utf-8"))
    api_root = Path(next(iter(google.api.__path__))).parent.parent
    wkt_root = Path(protoc.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        dst = Path(tmp) / "out"
        src.mkdir()
        dst.mkdir()
        # The file name is the modules' stem, and the name the pool registers.
        shutil.copyfile(proto, src / f"{stem}.proto")
        code = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{src}",
                f"-I{api_root}",
                f"-I{wkt_root}",
                f"--python_out={dst}",
                f"--pyi_out={dst}",
                f"--grpc_python_out={dst}",
                str(src / f"{stem}.proto"),
            ]
        )
        if code != 0:
            raise RuntimeError(f"protoc failed (exit {code}) on {proto}")
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name in outputs(stem):
            text = (dst / name).read_text(encoding="utf-8")
            text = _rewrite(name, text, stem, pool)
            path = out_dir / name
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def _rewrite(name: str, text: str, stem: str, pool: str) -> str:
    if name == f"{stem}_pb2.py":
        if _DEFAULT_POOL not in text:
            raise RuntimeError("unexpected protoc output: no default-pool registration")
        pool_import = f"from ._pool import {pool} as _PRIVATE_POOL\n"
        text = text.replace(_DEFAULT_POOL, pool_import + _PRIVATE_POOL, 1)
    elif name == f"{stem}_pb2_grpc.py":
        grpc_import = f"import {stem}_pb2 as {stem.replace('_', '__')}__pb2"
        if grpc_import not in text:
            raise RuntimeError(f"unexpected grpc plugin output: no {stem}_pb2 import")
        text = text.replace(grpc_import, f"from . {grpc_import}", 1)
    return text


def main(argv: list[str] | None = None) -> int:
    """``python -m a2a_models.adapters.grpc._protoc a2a.proto [OUT_DIR]``."""
    args = sys.argv[1:] if argv is None else argv
    if not args or len(args) > 2:
        print("usage: python -m a2a_models.adapters.grpc._protoc a2a.proto [OUT_DIR]")
        return 2
    out = Path(args[1]) if len(args) == 2 else Path(__file__).parent / "_pb"
    for path in generate(Path(args[0]), out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
