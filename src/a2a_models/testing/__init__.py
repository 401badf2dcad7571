"""Test helpers for users of a2a-models.

* :mod:`a2a_models.testing.strategies` - Hypothesis strategies generating
  valid models of every A2A type, per wire dialect, plus JSON values::

      from hypothesis import given
      from a2a_models.testing import strategies as a2a_st

      @given(a2a_st.tasks())
      def test_task_round_trip(task): ...

* :func:`assert_identical` - model equality that also tells ``18`` from
  ``18.0`` and ``True`` inside JSON payloads, and checks the key order of
  ``metadata``/``data`` objects (``==`` does neither).

The strategies need ``hypothesis`` (install the ``test`` extra); importing
this package without it raises an :class:`ImportError` saying so.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

try:
    import hypothesis  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "a2a_models.testing needs hypothesis: pip install 'a2a-models[test]'"
    ) from exc

from . import strategies

__all__ = ["assert_identical", "first_difference", "strategies"]


def first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    """Where ``a`` and ``b`` differ, as ``"<path>: <what>"``; ``None`` if identical.

    Stricter than ``==``: types must match exactly (``1``, ``1.0`` and
    ``True`` differ, as do a ``tuple`` and a ``list``), dict keys must come in
    the same order, and ``-0.0`` differs from ``0.0``. Models are compared
    attribute by attribute.
    """
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r:.60} != {type(b).__name__} {b!r:.60}"
    if attrs.has(type(a)):
        for field in attrs.fields(type(a)):
            diff = first_difference(
                getattr(a, field.name), getattr(b, field.name), f"{path}.{field.name}"
            )
            if diff is not None:
                return diff
        return None
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)!r:.80} != {list(b)!r:.80}"
        for key in a:
            diff = first_difference(a[key], b[key], f"{path}[{key!r}]")
            if diff is not None:
                return diff
        return None
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = first_difference(x, y, f"{path}[{i}]")
            if diff is not None:
                return diff
        return None
    if isinstance(a, float):
        same = (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
        )
        return None if same else f"{path}: {a!r} != {b!r}"
    if a != b:
        return f"{path}: {a!r:.80} != {b!r:.80}"
    return None


def assert_identical(a: Any, b: Any) -> None:
    """Assert that ``a`` and ``b`` are identical in the sense of :func:`first_difference`."""
    diff = first_difference(a, b)
    if diff is not None:
        raise AssertionError(f"values differ at {diff}")
