"""What each dialect can express, read from the codec's own field tables.

The tables of ``_v10`` and the ``_v03`` package are the one statement of which
model attribute each dialect writes; :func:`expresses` answers from them, so
the hypothesis strategies (and anyone else) ask instead of restating it.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

__all__ = ["expresses", "unexpressible"]


@functools.cache
def unexpressible(dialect: str) -> dict[tuple[type[Any], str], str]:
    """(class, attribute) -> why, for every table-driven attribute ``dialect`` cannot write."""
    from . import _v03, _v10

    if dialect in ("1.0", "python"):
        specs = _v10.build_specs(python=dialect == "python")
    elif dialect in ("0.3", "0.3-http"):
        specs = _v03.specs(dialect == "0.3-http")
    else:
        raise ValueError(f"unknown dialect {dialect!r}")
    out: dict[tuple[type[Any], str], str] = {}
    for spec in specs:
        written = {f.attr for f in spec.fields if f.unsupported is None}
        written |= {attr for attr, _ in spec.placeholders}
        why = {f.attr: f.unsupported for f in spec.fields if f.unsupported is not None}
        for a in attrs.fields(spec.cls):
            if a.name not in written:
                out[spec.cls, a.name] = why.get(a.name) or f"A2A {dialect} has no such member"
    return out


def expresses(tp: type[Any], attr: str, dialect: str) -> bool:
    """Whether ``dialect`` writes attribute ``attr`` of the model class ``tp``.

    ``False`` means encoding a non-default value reports an
    :class:`~a2a_models.errors.EncodeError` (or is dropped with ``lossy=True``).
    Answers for the table-driven classes; the oneofs (parts, security
    schemes, flows) are described in :mod:`a2a_models.testing.strategies`.
    """
    if attr not in attrs.fields_dict(tp):
        raise AttributeError(f"{tp.__name__} has no attribute {attr!r}")
    return (tp, attr) not in unexpressible(str(getattr(dialect, "value", dialect)))
