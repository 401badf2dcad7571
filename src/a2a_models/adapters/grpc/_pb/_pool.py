"""The private descriptor pool holding ``a2a.proto`` and the files it imports.

The generated ``a2a_pb2`` registers itself here instead of the default pool
(see :mod:`a2a_models.adapters.grpc._protoc`), so another ``lf.a2a.v1``
definition in the same process (the ``a2a-sdk``'s) does not collide with it.
Messages of the two pools are wire-compatible; only their Python classes
differ.
"""

from __future__ import annotations

from typing import Any

from google.api import annotations_pb2, client_pb2, field_behavior_pb2
from google.protobuf import descriptor_pool, empty_pb2, struct_pb2, timestamp_pb2

__all__ = ["POOL"]

POOL = descriptor_pool.DescriptorPool()


def _add(file: Any, done: set[str]) -> None:
    if file.name in done:
        return
    for dep in file.dependencies:
        _add(dep, done)
    POOL.AddSerializedFile(file.serialized_pb)
    done.add(file.name)


_done: set[str] = set()
for _module in (
    annotations_pb2,
    client_pb2,
    field_behavior_pb2,
    empty_pb2,
    struct_pb2,
    timestamp_pb2,
):
    _add(_module.DESCRIPTOR, _done)
del _done, _module
