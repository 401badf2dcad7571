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

from typing import Any

import attrs

from ._base import JSONObject, JSONValue
from .rules import any_str, fail, json_value, optional_json_object, optional_str

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


@attrs.frozen(slots=True, kw_only=True)
class DataPart(Part):
    """A part holding structured data: any JSON value (1.0) – an object in 0.3."""

    data: JSONValue = attrs.field(kw_only=False, validator=json_value, eq=True, hash=False)
