"""The private descriptor pools holding each ``a2a.proto`` and the files it imports.

The generated ``a2a_pb2`` (1.0, ``lf.a2a.v1``) registers itself in :data:`POOL`
and ``a2a_v03_pb2`` (0.3, ``a2a.v1``) in :data:`POOL_V03` instead of the
default pool (see :mod:`a2a_models.adapters.grpc._protoc`), so another
definition of the same symbols in the same process (the ``a2a-sdk``'s) does
not collide with them. Messages of the pools are wire-compatible with the
SDK's; only their Python classes differ.
"""

from __future__ import annotations

from typing import Any

from google.api import annotations_pb2, client_pb2, field_behavior_pb2
from google.protobuf import descriptor_pool, empty_pb2, struct_pb2, timestamp_pb2

__all__ = ["POOL", "POOL_V03"]

# What both protos import.
_IMPORTS = (annotations_pb2, client_pb2, field_behavior_pb2, empty_pb2, struct_pb2, timestamp_pb2)


def _add(pool: Any, file: Any, done: set[str]) -> None:
    if file.name in done:
        return
    for dep in file.dependencies:
        _add(pool, dep, done)
    pool.AddSerializedFile(file.serialized_pb)
    done.add(file.name)


def _new_pool() -> Any:
    pool = descriptor_pool.DescriptorPool()
    done: set[str] = set()
    for module in _IMPORTS:
        _add(pool, module.DESCRIPTOR, done)
    return pool


POOL = _new_pool()
POOL_V03 = _new_pool()
