"""Regenerate the committed ``_pb`` modules from the A2A ``a2a.proto`` (developer tool).

``python -m a2a_models.adapters.grpc._protoc PATH/TO/a2a.proto`` (or ``nox -s protos``)
compiles the proto with ``grpcio-tools`` (a dev dependency) and rewrites the
output so that it lives inside this package:

* ``a2a_pb2.py`` registers ``a2a.proto`` in the package's *private* descriptor
  pool (:mod:`._pb._pool`), not the process-wide default pool: the official
  ``a2a-sdk`` registers its own, different ``a2a.proto`` with the same
  ``lf.a2a.v1`` symbols, and the default pool refuses a second definition.
  Both can then be imported in one process (the interop tests do).
* ``a2a_pb2_grpc.py`` imports its sibling relatively.

The proto text itself is not part of the project; the tests compare a fresh
generation with the committed files (``tests/test_grpc_convert.py``).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["OUTPUTS", "generate"]

#: The committed files, produced by :func:`generate`.
OUTPUTS = ("a2a_pb2.py", "a2a_pb2.pyi", "a2a_pb2_grpc.py")

_DEFAULT_POOL = "DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile("
_PRIVATE_POOL = "DESCRIPTOR = _PRIVATE_POOL.AddSerializedFile("
_POOL_IMPORT = "from ._pool import POOL as _PRIVATE_POOL\n"
_GRPC_IMPORT = "import a2a_pb2 as a2a__pb2"


def generate(proto: Path, out_dir: Path) -> list[Path]:
    """Compile ``proto`` into ``out_dir`` (the :data:`OUTPUTS`); returns their paths."""
    import google.api  # googleapis-common-protos: google/api/*.proto
    from grpc_tools import protoc  # dev dependency, never imported by the package

    api_root = Path(next(iter(google.api.__path__))).parent.parent
    wkt_root = Path(protoc.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        dst = Path(tmp) / "out"
        src.mkdir()
        dst.mkdir()
        shutil.copyfile(proto, src / "a2a.proto")
        code = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{src}",
                f"-I{api_root}",
                f"-I{wkt_root}",
                f"--python_out={dst}",
                f"--pyi_out={dst}",
                f"--grpc_python_out={dst}",
                str(src / "a2a.proto"),
            ]
        )
        if code != 0:
            raise RuntimeError(f"protoc failed (exit {code}) on {proto}")
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name in OUTPUTS:
            text = (dst / name).read_text(encoding="utf-8")
            text = _rewrite(name, text)
            target = out_dir / name
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def _rewrite(name: str, text: str) -> str:
    if name == "a2a_pb2.py":
        if _DEFAULT_POOL not in text:
            raise RuntimeError("unexpected protoc output: no default-pool registration")
        text = text.replace(_DEFAULT_POOL, _POOL_IMPORT + _PRIVATE_POOL, 1)
    elif name == "a2a_pb2_grpc.py":
        if _GRPC_IMPORT not in text:
            raise RuntimeError("unexpected grpc plugin output: no a2a_pb2 import")
        text = text.replace(_GRPC_IMPORT, "from . import a2a_pb2 as a2a__pb2", 1)
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
