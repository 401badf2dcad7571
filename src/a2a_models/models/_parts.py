"""Parts: the content units of messages and artifacts.

A2A 1.0 has one ``Part`` message whose ``content`` oneof is ``text``, ``raw``,
``url`` or ``data``. Python models it as a small class family sharing
``metadata``, ``filename`` and ``media_type``, so ``isinstance`` and pattern
matching tell the variant and each variant always has exactly one content:

* :class:`TextPart` – ``text``
* :class:`FilePart` – ``raw`` bytes *or* a ``url`` (0.3's ``file.bytes`` / ``file.uri``)
* :class:`DataPart` – any JSON value in ``data``

Build them with the :class:`Part` factory: ``Part.text("hi")``,
``Part.file(url=...)``, ``Part.file(raw=b"...")``, ``Part.data({...})``.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from ._base import (
    JSONObject,
    JSONValue,
    any_str,
    fail,
    optional_json_object,
    optional_str,
)

__all__ = ["DataPart", "FilePart", "Part", "TextPart"]


@attrs.frozen(slots=True, kw_only=True)
class Part:
    """Common base of :class:`TextPart`, :class:`FilePart` and :class:`DataPart`.

    Not instantiated directly: use the factory class methods.
    """

    metadata: JSONObject | None = attrs.field(
        default=None, validator=optional_json_object, eq=True, hash=False
    )
    filename: str | None = attrs.field(default=None, validator=optional_str)
    media_type: str | None = attrs.field(default=None, validator=optional_str)

    def __attrs_pre_init__(self) -> None:
        if type(self) is Part:
            raise TypeError(
                "Part is abstract: use Part.text(), Part.file() or Part.data() "
                "(or TextPart/FilePart/DataPart)"
            )

    @staticmethod
    def text(
        text: str,
        *,
        media_type: str | None = None,
        filename: str | None = None,
        metadata: JSONObject | None = None,
    ) -> TextPart:
        """A text part."""
        return TextPart(text, media_type=media_type, filename=filename, metadata=metadata)

    @staticmethod
    def file(
        *,
        url: str | None = None,
        raw: bytes | None = None,
        media_type: str | None = None,
        filename: str | None = None,
        metadata: JSONObject | None = None,
    ) -> FilePart:
        """A file part, by reference (``url``) or inline (``raw`` bytes) – exactly one."""
        return FilePart(
            url=url, raw=raw, media_type=media_type, filename=filename, metadata=metadata
        )

    @staticmethod
    def data(
        data: JSONValue,
        *,
        media_type: str | None = None,
        filename: str | None = None,
        metadata: JSONObject | None = None,
    ) -> DataPart:
        """A structured-data part holding any JSON value."""
        return DataPart(data, media_type=media_type, filename=filename, metadata=metadata)


@attrs.frozen(slots=True, kw_only=True)
class TextPart(Part):
    """A part whose content is text."""

    # Shadows the ``Part.text`` factory on purpose: on a TextPart, ``.text`` is its text.
    text: str = attrs.field(kw_only=False, validator=any_str)  # type: ignore[assignment]


def _check_raw(inst: FilePart, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and type(value) is not bytes:
        fail(inst, attribute, f"expected bytes or None, got {type(value).__name__}")


def _check_url(inst: FilePart, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and type(value) is not str:
        fail(inst, attribute, f"expected a string or None, got {type(value).__name__}")
    if (value is None) == (inst.raw is None):
        fail(inst, attribute, "expected exactly one of raw (bytes) or url (string)")


@attrs.frozen(slots=True, kw_only=True)
class FilePart(Part):
    """A file, inline as ``raw`` bytes or by reference as a ``url`` (exactly one)."""

    raw: bytes | None = attrs.field(default=None, validator=_check_raw)
    url: str | None = attrs.field(default=None, validator=_check_url)


def _check_json(inst: DataPart, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not _is_json(value, 0):
        fail(inst, attribute, "expected a JSON value (dict, list, str, int, float, bool, None)")


_JSON_SCALARS = (str, int, float, bool, type(None))


def _is_json(value: Any, depth: int) -> bool:
    # Top levels are checked, deep ones trusted: a full walk would cost as
    # much as parsing the JSON again, and the codec only produces JSON.
    if depth > 2:
        return True
    if type(value) is float:
        return math.isfinite(value)  # NaN and infinities are not JSON
    if isinstance(value, _JSON_SCALARS):
        return True
    if type(value) is dict:
        return all(type(k) is str and _is_json(v, depth + 1) for k, v in value.items())
    if type(value) is list:
        return all(_is_json(v, depth + 1) for v in value)
    return False


@attrs.frozen(slots=True, kw_only=True)
class DataPart(Part):
    """A part holding structured data: any JSON value (1.0) – an object in 0.3."""

    data: JSONValue = attrs.field(kw_only=False, validator=_check_json, eq=True, hash=False)
