"""0.3 parts: ``kind``-tagged (JSON-RPC) or ``{"file": {...}}``/``{"data": {"data": ...}}`` (HTTP+JSON)."""

from __future__ import annotations

import binascii
from typing import Any

from ... import models as m
from ...errors import quote_input
from .._gen import (
    Fail,
    Loss,
    Namespace,
    builder,
    json_any,
    lose,
    struct,
    type_name,
    unalias,
)
from .._v10 import proto_names
from ._tables import check_str

__all__ = ["install_parts"]


def install_parts(ns: Namespace, *, http: bool, strict: bool) -> None:
    TextPart, FilePart, DataPart = m.TextPart, m.FilePart, m.DataPart
    # Mutable twins (see _gen.builder): slots filled by plain stores.
    TextB, FileB, DataB = builder(TextPart), builder(FilePart), builder(DataPart)
    b64d = ns["_b64d"]
    b2a = binascii.b2a_base64  # b2a(raw, newline=False).decode("ascii") = _gen.b64encode(raw)
    file_aliases = proto_names(("fileWithBytes", "fileWithUri", "mimeType"))
    file_alias_keys = frozenset(file_aliases)

    def decode_file(f: Any, meta: Any) -> m.FilePart:
        if f.__class__ is not dict:
            raise Fail(f"expected an object, got {type_name(f)}", "file")
        if http:
            if not file_alias_keys.isdisjoint(f):
                try:
                    f = unalias(f, file_aliases)  # ProtoJSON: proto field names too
                except Fail as exc:
                    exc.path.append("file")
                    raise
            g = f.get
            raw, url = g("fileWithBytes"), g("fileWithUri")
            # ``name`` is not in the 0.3.0 proto but in the one the a2a-sdk's 0.3
            # line speaks (FilePart field 4): read it rather than lose it.
            media, name = g("mimeType"), g("name")
            k_raw, k_url = "fileWithBytes", "fileWithUri"
        else:
            raw, url, media, name = f.get("bytes"), f.get("uri"), f.get("mimeType"), f.get("name")
            k_raw, k_url = "bytes", "uri"
        if (raw is None) == (url is None):
            raise Fail(f"expected exactly one of {k_raw}, {k_url}", "file")
        check_str(media, "mimeType", "file")
        check_str(name, "name", "file")
        if raw is not None:
            try:
                raw = b64d(raw)
            except Fail as exc:
                exc.path += [k_raw, "file"]
                raise
        else:
            check_str(url, k_url, "file")
        p: Any = FileB()
        p.raw = raw
        p.url = url
        p.metadata = meta
        p.filename = (name or None) if http else name
        p.media_type = (media or None) if http else media
        p.__class__ = FilePart
        return p  # type: ignore[no-any-return]

    def text_part(text: str, meta: Any) -> m.TextPart:
        p: Any = TextB()
        p.text = text
        p.metadata = meta
        p.filename = p.media_type = None
        p.__class__ = TextPart
        return p  # type: ignore[no-any-return]

    def s_part(d: Any) -> m.Part:
        if d.__class__ is not dict:
            raise Fail(f"expected an object (Part), got {type_name(d)}")
        if len(d) == (1 if http else 2):
            # The common case, a bare text part, skips the general checks.
            text = d.get("text")
            if text.__class__ is str and (http or d.get("kind") == "text"):
                return text_part(text, None)
        k: Any
        if http:
            present = [k for k in ("text", "file", "data") if d.get(k) is not None]
            if len(present) != 1:
                raise Fail("expected exactly one of text, file, data")
            k = present[0]
        else:
            k = d.get("kind")
            if k is None and not strict:
                # Lenient: infer a missing kind from the content member.
                present = [key for key in ("text", "file", "data") if key in d]
                k = present[0] if len(present) == 1 else None
            if k not in ("text", "file", "data"):
                raise Fail(
                    f"expected kind to be one of text, file, data, got {quote_input(k)}", "kind"
                )
        # 0.3 HTTP+JSON: ``metadata`` is Part field 4 of the a2a-sdk's 0.3 proto
        # (not of 0.3.0's); its clients and servers send it.
        meta = d.get("metadata")
        if meta is not None:
            try:
                meta = struct(meta)
            except Fail as exc:
                exc.path.append("metadata")
                raise
        if strict:
            allowed = {k, "metadata", "kind"} if not http else {k, "metadata"}
            for key in d:
                if key not in allowed:
                    raise Fail("unknown field (strict mode)", key)
        if k == "text":
            text = d.get("text")
            if text.__class__ is not str:
                raise Fail(f"expected a string, got {type_name(text)}", "text")
            return text_part(text, meta)
        if k == "file":
            return decode_file(d.get("file"), meta)
        data = d.get("data")
        if http:
            if data.__class__ is not dict:
                raise Fail(f"expected an object, got {type_name(data)}", "data")
            data = data.get("data", {})
        if data.__class__ is not dict:
            raise Fail(f"expected an object, got {type_name(data)}", "data")
        try:
            data = json_any(data)
        except Fail as exc:
            exc.path.append("data")
            raise
        p: Any = DataB()
        p.data = data
        p.metadata = meta
        p.filename = p.media_type = None
        p.__class__ = DataPart
        return p  # type: ignore[no-any-return]

    def u_part(p: Any) -> dict[str, Any]:
        r: dict[str, Any]
        cls = p.__class__
        if cls is not TextPart and cls is not DataPart and cls is not FilePart:
            # A subclass: classify it like its base (the three are siblings).
            cls = next((c for c in (TextPart, DataPart, FilePart) if isinstance(p, c)), None)
        if cls is TextPart:
            r = {"kind": "text", "text": p.text} if not http else {"text": p.text}
            if p.filename:
                lose("a 0.3 text part has no filename", "filename")
            if p.media_type:
                lose("a 0.3 text part has no mediaType", "mediaType")
        elif cls is DataPart:
            data = p.data
            if data.__class__ is not dict:
                lose("0.3 data parts hold objects only", "data")
                data = {"value": data}
            r = {"kind": "data", "data": data} if not http else {"data": {"data": data}}
            if p.filename:
                lose("a 0.3 data part has no filename", "filename")
            if p.media_type:
                lose("a 0.3 data part has no mediaType", "mediaType")
        elif cls is FilePart:
            f: dict[str, Any] = {}
            if http:
                if p.raw is not None:
                    f["fileWithBytes"] = b2a(p.raw, newline=False).decode("ascii")
                else:
                    f["fileWithUri"] = p.url
                if p.media_type:
                    f["mimeType"] = p.media_type
                if p.filename:
                    lose("the 0.3 proto's FilePart has no name", "filename")
                r = {"file": f}
            else:
                if p.raw is not None:
                    f["bytes"] = b2a(p.raw, newline=False).decode("ascii")
                else:
                    f["uri"] = p.url
                if p.media_type is not None:
                    f["mimeType"] = p.media_type
                if p.filename is not None:
                    f["name"] = p.filename
                r = {"kind": "file", "file": f}
        else:
            raise Loss(f"unknown Part subclass {type(p).__name__}")
        if p.metadata is not None:
            if http:
                lose("the 0.3 proto's Part has no metadata", "metadata")
            else:
                r["metadata"] = p.metadata
        return r

    ns["_s_Part"], ns["_u_Part"] = s_part, u_part
