"""A workspace's files, read: ``agent.md``, ``agent.manifest.json``, ``skills/*.md``,
``mcp.json``, ``workflow.json`` and ``.env`` (:func:`read_sources`), and the error
that names the file and field of any problem (:class:`WorkspaceError`)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import yaml  # type: ignore[import-untyped, unused-ignore]

from ..._textfiles import unreadable
from ...errors import A2AError

__all__ = [
    "AGENT_FILE",
    "DEFAULT_MCP_FILE",
    "DEFAULT_URL",
    "DEFAULT_WORKFLOW_FILE",
    "MANIFEST_FILE",
    "SkillSource",
    "WorkspaceError",
    "WorkspaceSources",
    "parse_front_matter",
    "read_dotenv",
    "read_json_file",
    "read_sources",
    "read_text_file",
]

AGENT_FILE: Final = "agent.md"
MANIFEST_FILE: Final = "agent.manifest.json"
DEFAULT_MCP_FILE: Final = "mcp.json"
DEFAULT_WORKFLOW_FILE: Final = "workflow.json"
DEFAULT_URL: Final = "http://127.0.0.1:8000"


class WorkspaceError(A2AError, ValueError):
    """A workspace is invalid; ``file`` and ``field`` say where (both in the message)."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {problem}")


# ----------------------------------------------------------------------------- reading


def parse_front_matter(text: str, file: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a Markdown file with a ``---`` YAML header."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith("---"):
        raise WorkspaceError(file, "front matter", "the file must start with a '---' YAML header")
    lines = stripped.splitlines(keepends=True)
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None or lines[0].strip() != "---":
        raise WorkspaceError(file, "front matter", "the '---' header is not closed by a '---' line")
    header = "".join(lines[1:end])
    try:
        data = yaml.safe_load(header) if header.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""
        # PyYAML's message spans lines, with excerpts of the text: its words only.
        said = [getattr(exc, "context", None), getattr(exc, "problem", None)]
        problem = ", ".join(w for w in said if w) or " ".join(str(exc).split())
        raise WorkspaceError(file, "front matter", f"invalid YAML{at}: {problem}") from None
    if not isinstance(data, dict):
        raise WorkspaceError(file, "front matter", "expected a mapping of fields")
    body = "".join(lines[end + 1 :]).strip("\n")
    return _plain(data, file), body


def _plain(value: Any, file: str, where: str = "front matter") -> Any:
    """YAML values as JSON values (dates and the like become strings)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise WorkspaceError(file, where, f"keys must be strings, got {key!r}")
            out[key] = _plain(item, file, key)
        return out
    if isinstance(value, list):
        return [_plain(v, file, where) for v in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return str(value)


_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read_dotenv(path: str | os.PathLike[str]) -> dict[str, str]:
    """The variables of a ``.env`` file (``KEY=VALUE``, ``export``, quotes, ``#`` comments);
    ``{}`` when there is no file."""
    file = Path(path)
    if not file.is_file():
        return {}
    out: dict[str, str] = {}
    for number, line in enumerate(read_text_file(file, file.name).splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _DOTENV_LINE.match(line)
        if match is None:
            raise WorkspaceError(file.name, f"line {number}", "expected KEY=VALUE")
        key, value = match.group(1), match.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0]
        out[key] = value
    return out


@attrs.frozen(slots=True, kw_only=True)
class SkillSource:
    """One skill file as read: its manifest id, label, front matter and body."""

    id: str
    file: str
    front: dict[str, Any] = attrs.field(hash=False)
    body: str


@attrs.frozen(slots=True, kw_only=True)
class WorkspaceSources:
    """The raw content of a workspace (what :func:`read_sources` reads and a bundle holds).

    ``root`` is the workspace directory (workflow ``.py`` entries are relative
    to it); ``dotenv`` the ``.env`` variables (never put in a bundle).
    """

    root: Path | None
    agent: dict[str, Any] = attrs.field(hash=False)
    prompt: str
    manifest: dict[str, Any] = attrs.field(hash=False)
    skills: tuple[SkillSource, ...]
    mcp: dict[str, Any] | None = attrs.field(default=None, hash=False)
    mcp_file: str = DEFAULT_MCP_FILE
    workflows: dict[str, Any] | None = attrs.field(default=None, hash=False)
    workflow_file: str = DEFAULT_WORKFLOW_FILE
    dotenv: dict[str, str] = attrs.field(factory=dict, hash=False, repr=False)


def read_json_file(path: Path, label: str) -> Any:
    """The JSON document in the file at ``path`` (``label`` names it in errors)."""
    try:
        return json.loads(read_text_file(path, label))
    except json.JSONDecodeError as exc:
        raise WorkspaceError(
            label, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"
        ) from None


def read_text_file(path: Path, label: str) -> str:
    """The UTF-8 text of the file at ``path``; a :class:`WorkspaceError` naming ``label``
    when it cannot be read or is not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkspaceError(label, "", unreadable(exc)) from None


def _registry_path(manifest: Mapping[str, Any], key: str, default: str) -> str:
    registries = manifest.get("registries")
    if registries is None:
        return default
    if not isinstance(registries, Mapping):
        raise WorkspaceError(MANIFEST_FILE, "registries", "expected an object")
    value = registries.get(key, default)
    if value is None:
        return ""
    if not isinstance(value, str) or not value:
        raise WorkspaceError(MANIFEST_FILE, f"registries.{key}", "expected a file name")
    return value


def _skill_entries(manifest: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(id, file, field)`` of each manifest skill, in order."""
    raw = manifest.get("skills")
    if not isinstance(raw, list) or not raw:
        raise WorkspaceError(MANIFEST_FILE, "skills", "expected a non-empty list of skill ids")
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        field = f"skills[{i}]"
        if isinstance(item, str):
            sid, file = item, f"skills/{item}.md"
        elif isinstance(item, Mapping) and isinstance(item.get("id"), str):
            sid = item["id"]
            file = item.get("file", f"skills/{sid}.md")
            if not isinstance(file, str) or not file:
                raise WorkspaceError(MANIFEST_FILE, f"{field}.file", "expected a file name")
        else:
            raise WorkspaceError(MANIFEST_FILE, field, "expected a skill id or {id, file}")
        if sid in seen:
            raise WorkspaceError(MANIFEST_FILE, field, f"the skill {sid!r} is listed twice")
        seen.add(sid)
        out.append((sid, file, field))
    return out


def read_sources(directory: str | os.PathLike[str]) -> WorkspaceSources:
    """Read the files of the workspace at ``directory`` (no validation beyond parsing)."""
    root = Path(directory).resolve()
    if not root.is_dir():
        raise WorkspaceError(str(directory), "", "not a directory")
    agent_path = root / AGENT_FILE
    if not agent_path.is_file():
        raise WorkspaceError(AGENT_FILE, "", f"missing (no {AGENT_FILE} in {root})")
    agent, prompt = parse_front_matter(read_text_file(agent_path, AGENT_FILE), AGENT_FILE)
    manifest_path = root / MANIFEST_FILE
    if not manifest_path.is_file():
        raise WorkspaceError(MANIFEST_FILE, "", f"missing (no {MANIFEST_FILE} in {root})")
    manifest = read_json_file(manifest_path, MANIFEST_FILE)
    if not isinstance(manifest, dict):
        raise WorkspaceError(MANIFEST_FILE, "", "expected a JSON object")
    skills = []
    for sid, file, field in _skill_entries(manifest):
        path = root / file
        if not path.is_file():
            raise WorkspaceError(MANIFEST_FILE, field, f"the skill file {file} does not exist")
        front, body = parse_front_matter(read_text_file(path, file), file)
        skills.append(SkillSource(id=sid, file=file, front=front, body=body))
    mcp_file = _registry_path(manifest, "mcp", DEFAULT_MCP_FILE)
    mcp = None
    if mcp_file and (root / mcp_file).is_file():
        mcp = read_json_file(root / mcp_file, mcp_file)
    workflow_file = _registry_path(manifest, "workflows", DEFAULT_WORKFLOW_FILE)
    workflows = None
    if workflow_file and (root / workflow_file).is_file():
        workflows = read_json_file(root / workflow_file, workflow_file)
    return WorkspaceSources(
        root=root,
        agent=agent,
        prompt=prompt,
        manifest=manifest,
        skills=tuple(skills),
        mcp=mcp,
        mcp_file=mcp_file or DEFAULT_MCP_FILE,
        workflows=workflows,
        workflow_file=workflow_file or DEFAULT_WORKFLOW_FILE,
        dotenv=read_dotenv(root / ".env"),
    )


# ----------------------------------------------------------------------------- composing
