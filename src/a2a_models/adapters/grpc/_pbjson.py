"""ProtoJSON -> protobuf bytes in C: plans of the optional accelerator (``_pbwire.JsonPlan``).

The 0.3 gRPC path answers with the codec's 0.3 ProtoJSON of a result (a dict of
str, int, bool, list and dict), which :mod:`._protojson` fills into a message,
member by member, for protobuf to serialize: ~1.5 µs a short message, more than
the whole 1.0 path. A :class:`JsonPlans` writes the same bytes from the dict in C,
with one plan per message of the proto file, built from its descriptors.

A plan gives up (None) whenever the generated fill functions might not answer
for themselves (see ``_pbwire_json.h``), and the caller then runs them (and
``json_format`` after them) as before: what it writes is what they fill, in the
bytes protobuf serializes it to, save the order of a ``Struct``'s entries (the
dict's here, the hash table's there; maps are unordered in protobuf).
tests/grpc_binding/test_pbjson.py holds it to that.
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor

from ._protojson import _unb64

__all__ = ["JsonPlans"]

_STRUCT: Final = "google.protobuf.Struct"
_TIMESTAMP: Final = "google.protobuf.Timestamp"


class _Unplannable(Exception):
    pass


class JsonPlans:
    """The plans of every message of ``file`` that ``native`` (``_pbwire``) can write;
    a message with a field of another kind (a map, a well-known type other than
    ``Struct`` and ``Timestamp``) has none."""

    def __init__(self, file: FileDescriptor, native: Any) -> None:
        self._native = native
        self._plans: dict[str, Any] = {}
        for desc in file.message_types_by_name.values():
            self._plan(desc)
        self.dumps: Final[dict[Any, Any]] = {
            desc: plan.dumps
            for desc in file.message_types_by_name.values()
            if (plan := self._plans.get(desc.full_name)) is not None
        }

    def dumps_for(self, cls: Any) -> Any:
        """``cls``'s writer (``dict -> bytes | None``), or None if it has no plan."""
        return self.dumps.get(cls.DESCRIPTOR)

    def _plan(self, desc: Descriptor) -> Any:
        name = desc.full_name
        if name in self._plans:
            return self._plans[name]
        plan = self._native.JsonPlan()
        self._plans[name] = plan  # before its fields: a message may contain itself
        try:
            oneofs = {o.full_name: i + 1 for i, o in enumerate(desc.oneofs)}
            if len(oneofs) > 8:
                raise _Unplannable(f"{name}: {len(oneofs)} oneofs")
            fields = []
            for fd in sorted(desc.fields, key=lambda f: f.number):
                kind, arg = self._field(fd)
                oneof = fd.containing_oneof
                fields.append(
                    (fd.json_name, fd.number, kind, oneofs[oneof.full_name] if oneof else 0, arg)
                )
            plan.setup(tuple(fields))
        except _Unplannable:
            self._plans[name] = None
        return self._plans[name]

    def _field(self, fd: FieldDescriptor) -> tuple[int, Any]:
        native, repeated = self._native, fd.is_repeated
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            sub = fd.message_type
            if sub.GetOptions().map_entry:
                raise _Unplannable(f"{fd.full_name}: a map")
            if sub.full_name in (_STRUCT, _TIMESTAMP) and not repeated:
                return (native.J_STRUCT if sub.full_name == _STRUCT else native.J_TS), None
            if sub.full_name.startswith("google.protobuf."):
                raise _Unplannable(f"{fd.full_name}: {sub.full_name}")
            nested = self._plan(sub)
            if nested is None:
                raise _Unplannable(f"{fd.full_name}: {sub.full_name} has no plan")
            return (native.J_LIST_MSG if repeated else native.J_MSG), nested
        if repeated:
            if fd.type == FieldDescriptor.TYPE_STRING:
                return native.J_LIST_STR, None
            raise _Unplannable(f"{fd.full_name}: a repeated {fd.type}")
        if fd.has_presence and fd.containing_oneof is None:
            raise _Unplannable(f"{fd.full_name}: proto3 optional")
        if fd.type == FieldDescriptor.TYPE_STRING:
            return native.J_STR, None
        if fd.type == FieldDescriptor.TYPE_BOOL:
            return native.J_BOOL, None
        if fd.type == FieldDescriptor.TYPE_INT32:
            return native.J_INT32, None
        if fd.type == FieldDescriptor.TYPE_BYTES:
            return native.J_BYTES, _unb64
        if fd.type == FieldDescriptor.TYPE_ENUM:
            return native.J_ENUM, {v.name: v.number for v in fd.enum_type.values}
        raise _Unplannable(f"{fd.full_name}: protobuf type {fd.type}")
