"""Bundles: a composed workspace in one JSON file, loadable by ``agent run BUNDLE.json``.

A bundle holds the composed configuration (card, prompts, tools, model
settings - for reading) and the workspace's sources (``agent.md``, the
manifest, the skill files, ``mcp.json``, ``workflow.json`` and the workflow
``.py`` files the registry names), from which :func:`load_bundle` composes
the same workspace again. Secrets are never included: ``.env`` stays out;
the environment (or a ``.env`` beside the bundle) provides them at run time.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Final

from ._workflows import parse_workflow_registry
from ._workspace import compose_workspace
from ._workspace_files import (
    SkillSource,
    WorkspaceError,
    WorkspaceSources,
    read_dotenv,
    read_json_file,
)
from ._workspace_model import ComposedWorkspace

__all__ = ["BUNDLE_FORMAT", "bundle_dict", "load_bundle", "write_bundle"]

#: The ``format`` member of a bundle.
BUNDLE_FORMAT: Final = "a2a-models/agent-bundle@1"


def _workflow_files(sources: WorkspaceSources) -> dict[str, str]:
    """The ``.py`` files the workflow registry names, by workspace-relative path."""
    if sources.workflows is None or sources.root is None:
        return {}
    files: dict[str, str] = {}
    for entry in parse_workflow_registry(sources.workflows, origin=sources.workflow_file).values():
        module = entry.entry.rpartition(":")[0]
        if module.endswith(".py") or "/" in module:
            path = (sources.root / module).resolve()
            if sources.root not in path.parents:
                raise WorkspaceError(
                    sources.workflow_file,
                    f"workflows.{entry.id}.entry",
                    "a bundled workflow file must be inside the workspace",
                )
            files[module] = path.read_text(encoding="utf-8")
    return files


def _hook_files(composed: ComposedWorkspace) -> dict[str, str]:
    """The ``.py`` files of the workspace that hooks and the context provider name."""
    root = composed.sources.root
    if root is None:
        return {}
    entries = [e for h in composed.hooks for _, e in h.entries()]
    if composed.context_provider is not None:
        entries.append(composed.context_provider)
    files: dict[str, str] = {}
    for entry in entries:
        module = entry.rpartition(":")[0]
        if module.endswith(".py") or "/" in module:
            path = (root / module).resolve()
            if root.resolve() not in path.parents:
                raise WorkspaceError(
                    "agent.md", "hooks", "a bundled hook file must be inside the workspace"
                )
            if path.is_file():
                files[module] = path.read_text(encoding="utf-8")
    return files


def bundle_dict(composed: ComposedWorkspace) -> dict[str, Any]:
    """The bundle of ``composed`` as a JSON object."""
    sources = composed.sources
    return {
        "format": BUNDLE_FORMAT,
        "composed": composed.to_dict(),
        "sources": {
            "agent": sources.agent,
            "prompt": sources.prompt,
            "manifest": sources.manifest,
            "skills": [
                {"id": s.id, "file": s.file, "frontMatter": s.front, "body": s.body}
                for s in sources.skills
            ],
            "mcp": sources.mcp,
            "mcpFile": sources.mcp_file,
            "workflows": sources.workflows,
            "workflowFile": sources.workflow_file,
            "files": {**_workflow_files(sources), **_hook_files(composed)},
        },
    }


def write_bundle(composed: ComposedWorkspace, path: str | os.PathLike[str]) -> Path:
    """Write the bundle of ``composed`` to ``path`` (JSON, UTF-8); returns the path."""
    target = Path(path)
    text = json.dumps(bundle_dict(composed), indent=2, ensure_ascii=False, sort_keys=False)
    target.write_text(text + "\n", encoding="utf-8")
    return target


def _materialise(files: dict[str, str]) -> Path | None:
    """Write the bundled workflow files to a private directory (one per content)."""
    if not files:
        return None
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
    root = Path(tempfile.gettempdir()) / f"a2a-models-bundle-{digest}"
    for relative, text in files.items():
        target = (root / relative).resolve()
        if root.resolve() not in target.parents:
            raise WorkspaceError("bundle", f"sources.files.{relative}", "must stay inside")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return root


def load_bundle(
    path: str | os.PathLike[str],
    *,
    env: dict[str, str] | None = None,
    url: str | None = None,
) -> ComposedWorkspace:
    """Compose the workspace held by the bundle at ``path`` (see :func:`compose_workspace`).

    A ``.env`` file beside the bundle provides secrets (the environment wins).
    """
    file = Path(path)
    label = file.name
    data = read_json_file(file, label)
    if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
        raise WorkspaceError(label, "format", f"not an agent bundle (expected {BUNDLE_FORMAT!r})")
    raw = data.get("sources")
    if not isinstance(raw, dict):
        raise WorkspaceError(label, "sources", "missing")
    try:
        skills = tuple(
            SkillSource(id=s["id"], file=s["file"], front=s["frontMatter"], body=s["body"])
            for s in raw["skills"]
        )
        sources = WorkspaceSources(
            root=_materialise(dict(raw.get("files") or {})),
            agent=raw["agent"],
            prompt=raw["prompt"],
            manifest=raw["manifest"],
            skills=skills,
            mcp=raw.get("mcp"),
            mcp_file=raw.get("mcpFile") or "mcp.json",
            workflows=raw.get("workflows"),
            workflow_file=raw.get("workflowFile") or "workflow.json",
            dotenv=read_dotenv(file.parent / ".env"),
        )
    except (KeyError, TypeError) as exc:
        raise WorkspaceError(label, "sources", f"malformed: {exc!r}") from None
    return compose_workspace(sources, env=env, url=url)
