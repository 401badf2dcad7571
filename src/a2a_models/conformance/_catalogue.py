"""The requirement catalogue: every normative sentence of the A2A specification.

:func:`extract` turns the specification's Markdown into :class:`SpecRequirement`
entries (id, section, level, sentence, bindings); ``scripts/gen_requirements.py``
writes them to ``_catalogue_data.py``, which ships with the package (the spec
text itself does not). ``_coverage.py`` links each entry to the checks that test
it or says why no black-box check can.
"""

from __future__ import annotations

import pprint
import re
from collections.abc import Iterator
from typing import Any

import attrs

__all__ = [
    "KEYWORDS",
    "SpecRequirement",
    "extract",
    "heading",
    "headings_of",
    "titled",
    "level_group",
    "render_module",
    "requirement",
    "requirements",
    "rows_of",
]

#: RFC 2119 keywords, strongest first within each group (the first match names the level).
KEYWORDS = (
    "MUST NOT",
    "SHALL NOT",
    "SHOULD NOT",
    "MUST",
    "REQUIRED",
    "SHALL",
    "SHOULD",
    "RECOMMENDED",
    "MAY",
)
_KEYWORD = re.compile(r"(?<![A-Za-z_`])(" + "|".join(KEYWORDS) + r")(?![A-Za-z_`])")
_GROUP = {
    "MUST NOT": "MUST",
    "SHALL NOT": "MUST",
    "MUST": "MUST",
    "REQUIRED": "MUST",
    "SHALL": "MUST",
    "SHOULD NOT": "SHOULD",
    "SHOULD": "SHOULD",
    "RECOMMENDED": "SHOULD",
    "MAY": "MAY",
}
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*`\"(\[])")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")

# Sections whose text defines the keywords or is non-normative about this catalogue.
_SKIP_SECTIONS = {"1.0": {"2.1"}, "0.3": set()}

# Sections specific to one binding (prefix match, longest wins).
_BINDING_SECTIONS = {
    "1.0": {"9": "JSONRPC", "10": "GRPC", "11": "HTTP+JSON", "8": "CARD", "5.8": "CUSTOM"},
    "0.3": {
        "3.2.1": "JSONRPC",
        "3.3.1": "JSONRPC",
        "3.5.1": "JSONRPC",
        "6.11": "JSONRPC",
        "6.12": "JSONRPC",
        "3.2.2": "GRPC",
        "3.3.2": "GRPC",
        "3.5.2": "GRPC",
        "3.2.3": "HTTP+JSON",
        "3.3.3": "HTTP+JSON",
        "3.5.3": "HTTP+JSON",
        "5": "CARD",
    },
}
_BINDING_WORDS = (
    ("JSON-RPC", "JSONRPC"),
    ("gRPC", "GRPC"),
    ("HTTP+JSON", "HTTP+JSON"),
    ("REST", "HTTP+JSON"),
)


@attrs.frozen(slots=True)
class SpecRequirement:
    """One normative sentence of the specification."""

    id: str
    version: str
    section: str
    title: str
    keyword: str
    sentence: str
    bindings: tuple[str, ...]

    @property
    def level(self) -> str:
        """``MUST``, ``SHOULD`` or ``MAY`` (``MUST NOT``/``REQUIRED``/``SHALL`` count as MUST)."""
        return _GROUP[self.keyword]


_LOADED: list[SpecRequirement] = []


def requirements() -> tuple[SpecRequirement, ...]:
    """The shipped catalogue (1.0 then 0.3, in document order)."""
    if not _LOADED:
        from ._catalogue_data import ROWS

        _LOADED.extend(SpecRequirement(*row) for row in ROWS)
    return tuple(_LOADED)


def requirement(req_id: str) -> SpecRequirement:
    """The catalogue entry ``req_id`` (``v0.3-3.2.3-6``); KeyError if there is none."""
    for req in requirements():
        if req.id == req_id:
            return req
    raise KeyError(req_id)


def heading(version: str, section: str) -> str:
    """The title of ``section`` (``7.4``) in ``version``'s spec (``1.0``/``0.3``); "" if none."""
    from ._catalogue_data import HEADINGS

    return HEADINGS.get(version, {}).get(section.lstrip("§"), "")


def titled(version: str, section: str) -> str:
    """``§7.4, §8.2`` → ``§7.4 tasks/cancel, §8.2 A2A-Specific Errors``: each section number
    of ``version``'s spec with its heading (numbers after ``JSON-RPC 2.0``/``RFC`` are
    another document's and stay as they are)."""
    cut = re.search(r"\(?(JSON-RPC 2\.0|RFC \d+)", section)
    head, tail = (section[: cut.start()], section[cut.start() :]) if cut else (section, "")

    def one(match: re.Match[str]) -> str:
        title = heading(version, match.group(1))
        return f"{match.group(0)} {title}" if title else match.group(0)

    return re.sub(r"§(\d+(?:\.\d+)*)(?![\d.])", one, head) + tail


def headings_of(text: str) -> dict[str, str]:
    """Every numbered heading of a specification's Markdown: section number → title."""
    out: dict[str, str] = {}
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        found = None if fence else _HEADING.match(line.rstrip())
        numbered = _NUMBERED.match(found.group(2).strip()) if found else None
        if numbered:
            out.setdefault(numbered.group(1), _clean(numbered.group(2)).replace("`", ""))
    return out


def level_group(keyword: str) -> str:
    return _GROUP[keyword]


def _clean(text: str) -> str:
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # links → their text
    text = text.replace("**", "").replace("***", "")
    text = re.sub(r"(?<![A-Za-z0-9])_([^_]+)_(?![A-Za-z0-9])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _blocks(text: str) -> Iterator[tuple[str, str, str, bool]]:
    """(section, section title, block text, is a list item) for every paragraph, list
    item and table row."""
    section, title = "0", ""
    fence = False
    current: list[str] = []
    item = False

    def flush() -> Iterator[tuple[str, str, str, bool]]:
        if current:
            yield section, title, " ".join(current), item
            current.clear()

    for raw in text.splitlines():
        line = raw.rstrip()
        if line.lstrip().startswith("```"):
            yield from flush()
            fence = not fence
            continue
        if fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            yield from flush()
            numbered = _NUMBERED.match(heading.group(2).strip())
            if numbered:
                section, title = numbered.group(1), _clean(numbered.group(2))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("{{") or stripped.startswith("<"):
            yield from flush()
            continue
        if stripped.startswith("|"):
            yield from flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(set(c) <= set("-: ") for c in cells):
                continue
            yield section, title, " | ".join(cells), False
            continue
        if _LIST.match(line) or stripped.startswith(">"):
            yield from flush()
            item = bool(_LIST.match(line))
            stripped = _LIST.sub("", stripped.lstrip("> "))
        elif not current:
            item = False
        current.append(stripped)
    yield from flush()


def _bindings(version: str, section: str, sentence: str) -> tuple[str, ...]:
    table = _BINDING_SECTIONS[version]
    best = ""
    for prefix in table:
        if (section == prefix or section.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    if best:
        return (table[best],)
    named = []
    for word, binding in _BINDING_WORDS:
        if word in sentence and binding not in named:
            named.append(binding)
    return tuple(named) or ("ALL",)


def extract(text: str, spec_version: str) -> list[SpecRequirement]:
    """Every sentence of ``text`` that carries an RFC 2119 keyword, in document order.

    ``spec_version`` is the spec's release (``1.0.1``/``0.3.0``); ids use its
    ``major.minor``: ``v1.0-3.1.4-2`` is the second normative sentence of §3.1.4.
    """
    version = ".".join(spec_version.split(".")[:2])
    out: list[SpecRequirement] = []
    ordinal: dict[str, int] = {}
    open_list: SpecRequirement | None = None  # "... MUST:" waiting for its list items
    for section, title, block, is_item in _blocks(text):
        if section in _SKIP_SECTIONS[version]:
            continue
        if open_list is not None and not (is_item and section == open_list.section):
            open_list = None
        for sentence in _SENTENCE_END.split(_clean(block)):
            found = _KEYWORD.findall(sentence)
            if not found:
                if open_list is not None:
                    sep = " " if open_list.sentence.endswith(":") else "; "
                    open_list = attrs.evolve(
                        open_list, sentence=open_list.sentence + sep + sentence
                    )
                    out[-1] = open_list
                continue
            keyword = min(
                found, key=lambda k: (("MUST", "SHOULD", "MAY").index(_GROUP[k]), KEYWORDS.index(k))
            )
            ordinal[section] = ordinal.get(section, 0) + 1
            out.append(
                SpecRequirement(
                    id=f"v{version}-{section}-{ordinal[section]}",
                    version=version,
                    section=section,
                    title=title,
                    keyword=keyword,
                    sentence=sentence,
                    bindings=_bindings(version, section, sentence),
                )
            )
            open_list = out[-1] if sentence.endswith(":") and not is_item else None
    return out


def rows_of(catalogues: dict[str, list[SpecRequirement]]) -> tuple[tuple[Any, ...], ...]:
    """The rows ``_catalogue_data.ROWS`` holds for the given extractions."""
    return tuple(
        (r.id, r.version, r.section, r.title, r.keyword, r.sentence, r.bindings)
        for reqs in catalogues.values()
        for r in reqs
    )


def render_module(
    catalogues: dict[str, list[SpecRequirement]],
    headings: dict[str, dict[str, str]] | None = None,
) -> str:
    """The source of ``_catalogue_data.py`` for the given extractions (and the section
    titles of each version, ``headings_of`` its text, keyed ``1.0``/``0.3``)."""
    body = pprint.pformat(rows_of(catalogues), width=100, sort_dicts=False)
    titles = pprint.pformat(headings or {}, width=100, sort_dicts=False)
    return (
        '"""Generated by scripts/gen_requirements.py from the A2A specification '
        f'({", ".join(catalogues)}): do not edit."""\n\n'
        "ROWS: tuple[tuple[str, str, str, str, str, str, tuple[str, ...]], ...] = "
        + body
        + "\n\n#: Section number -> heading title, per version (1.0, 0.3).\n"
        + "HEADINGS: dict[str, dict[str, str]] = "
        + titles
        + "\n"
    )
