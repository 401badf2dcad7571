"""Workflows: async-generator plugins an LLM dispatches as tools.

A workflow has an ``id``, ``name``, ``description``, ``version`` and an input
schema, and runs as an async generator that yields what happens as the work
goes: short status texts (:class:`WorkflowStatus`, or a plain ``str``),
artifacts or artifact chunks (:class:`WorkflowArtifact`) and, optionally, a
final :class:`WorkflowResult` for the model::

    @workflow(id="outline", description="Outline a document", version="1.0.0")
    async def outline(input: JSONObject, context: ToolContext) -> AsyncIterator[WorkflowEvent]:
        yield "Reading the sources"
        yield WorkflowArtifact("# Outline\\n", name="outline")
        yield WorkflowArtifact("1. Intro\\n", append=True, last_chunk=True)
        yield WorkflowResult("The outline has one section.")

Workflows are loaded only from an explicit registry - ``workflow.json``, an
allowlist of ``module:object`` entries (:func:`load_workflow_registry`) -
never by scanning a folder. Each is exposed to the model as the tool
``dispatch_workflow_<id>`` (:func:`workflow_tool`); per-skill ``overrides``
are merged into the call's parameters (they win over the model's, and the
members they fix are removed from the schema the model sees).

When the LLM agent calls a workflow tool, the workflow's events stream to
the A2A client as they come (status updates, artifact updates); called
elsewhere (a skill handler, a hook, MCP), the tool collects them into one
:class:`~a2a_models.tools.ToolResult`.
"""

from __future__ import annotations

import contextvars
import copy
import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, TypeAlias

import attrs

from ..._textfiles import unreadable
from ...errors import A2AError
from ...models import JSONObject, JSONValue, Part, TextPart
from ...tools import (
    EMPTY_OBJECT_SCHEMA,
    ArgumentValidator,
    Tool,
    ToolContext,
    ToolInputError,
    ToolResult,
    check_object_schema,
)
from ._entries import EntryError, import_object

__all__ = [
    "WORKFLOW_TOOL_PREFIX",
    "Workflow",
    "WorkflowArtifact",
    "WorkflowError",
    "WorkflowEvent",
    "WorkflowResult",
    "WorkflowStatus",
    "load_workflow_registry",
    "override_problems",
    "parse_workflow_registry",
    "workflow",
    "workflow_tool",
    "workflow_tool_name",
]

#: Workflow tools are named ``dispatch_workflow_<id>``.
WORKFLOW_TOOL_PREFIX: Final = "dispatch_workflow_"
#: ``Tool.metadata`` key marking a workflow tool (its value: the workflow id).
WORKFLOW_METADATA_KEY: Final = "a2a-models/workflow"

_WORKFLOW_ID = re.compile(r"^[a-z][a-z0-9_]*$")


class WorkflowError(A2AError, ValueError):
    """A workflow or the workflow registry is invalid; the message names the file and field."""


@attrs.frozen(slots=True)
class WorkflowStatus:
    """A short status text ("Fetching the data"), sent as a ``working`` status update."""

    text: str


def _parts(value: Any) -> tuple[Part, ...]:
    if isinstance(value, str):
        return (TextPart(value),)
    if isinstance(value, Part):
        return (value,)
    return tuple(TextPart(v) if isinstance(v, str) else v for v in value)


@attrs.frozen(slots=True)
class WorkflowArtifact:
    """An artifact, or a chunk of one (``append=True`` continues the workflow's last
    artifact, or the one named by ``artifact_id``; ``last_chunk`` closes it)."""

    parts: tuple[Part, ...] = attrs.field(converter=_parts)
    name: str | None = attrs.field(default=None, kw_only=True)
    description: str | None = attrs.field(default=None, kw_only=True)
    append: bool = attrs.field(default=False, kw_only=True)
    last_chunk: bool = attrs.field(default=False, kw_only=True)
    artifact_id: str | None = attrs.field(default=None, kw_only=True)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


@attrs.frozen(slots=True)
class WorkflowResult:
    """What the model is told when the workflow ends (text or any JSON value)."""

    value: JSONValue


WorkflowEvent: TypeAlias = WorkflowStatus | WorkflowArtifact | WorkflowResult | str
#: ``run(input, context)`` - an async generator of :data:`WorkflowEvent` values.
WorkflowFunction: TypeAlias = Callable[[JSONObject, ToolContext], AsyncIterator[WorkflowEvent]]


def _check_schema(inst: Workflow, attribute: attrs.Attribute[Any], value: Any) -> None:
    problem = check_object_schema(value)
    if problem is not None:
        raise WorkflowError(f"workflow {inst.id!r}: input_schema {problem}")


def _check_id(inst: Workflow, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or not _WORKFLOW_ID.match(value):
        raise WorkflowError(
            f"workflow id {value!r}: use a lowercase letter, then lowercase letters, "
            "digits or '_' (it becomes the tool name dispatch_workflow_<id>)"
        )
    if len(WORKFLOW_TOOL_PREFIX + value) > 64:
        raise WorkflowError(f"workflow id {value!r} is too long for a tool name")


@attrs.frozen(slots=True, kw_only=True, eq=False)
class Workflow:
    """A workflow plugin: metadata plus ``run(input, context)``, an async generator."""

    id: str = attrs.field(validator=_check_id)
    name: str
    description: str
    version: str
    input_schema: JSONObject = attrs.field(
        factory=lambda: dict(EMPTY_OBJECT_SCHEMA), validator=_check_schema
    )
    run: WorkflowFunction
    source: str = "workflow"

    @property
    def tool_name(self) -> str:
        return workflow_tool_name(self.id)


def workflow_tool_name(workflow_id: str) -> str:
    """``dispatch_workflow_<id>``."""
    return WORKFLOW_TOOL_PREFIX + workflow_id


def workflow(
    fn: WorkflowFunction | None = None,
    *,
    id: str | None = None,
    name: str | None = None,
    description: str | None = None,
    version: str = "0.1.0",
    input_schema: JSONObject | None = None,
) -> Any:
    """Make a :class:`Workflow` of an async generator function ``fn(input, context)``.

    Usable as ``@workflow`` or ``@workflow(id=..., ...)``; ``id`` defaults to
    the function's name, ``description`` to its docstring's first paragraph.
    """

    def make(f: WorkflowFunction) -> Workflow:
        if not inspect.isasyncgenfunction(f):
            raise WorkflowError(
                f"workflow {getattr(f, '__qualname__', f)!r} must be an async generator "
                "function (async def ... yield)"
            )
        doc = (inspect.getdoc(f) or "").split("\n\n", 1)[0].replace("\n", " ").strip()
        wid = id or str(getattr(f, "__name__", "workflow"))
        return Workflow(
            id=wid,
            name=name or wid.replace("_", " ").capitalize(),
            description=description if description is not None else (doc or wid),
            version=version,
            input_schema=dict(EMPTY_OBJECT_SCHEMA) if input_schema is None else input_schema,
            run=f,
            source=f"function {getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', '?')}",
        )

    return make if fn is None else make(fn)


# ------------------------------------------------------------------------------ the tool

#: Set by the LLM agent while it runs a tool: receives each workflow event as it comes.
WorkflowSink: TypeAlias = Callable[[Workflow, WorkflowEvent], Awaitable[None]]
WORKFLOW_SINK: contextvars.ContextVar[WorkflowSink | None] = contextvars.ContextVar(
    "a2a_models_workflow_sink", default=None
)


def _tool_schema(schema: JSONObject, overrides: Mapping[str, Any]) -> JSONObject:
    if not overrides:
        return copy.deepcopy(schema)
    out = copy.deepcopy(schema)
    properties = out.get("properties")
    if isinstance(properties, dict):
        for key in overrides:
            properties.pop(key, None)
    required = out.get("required")
    if isinstance(required, list):
        out["required"] = [r for r in required if r not in overrides]
        if not out["required"]:
            del out["required"]
    return out


def override_problems(workflow: Workflow, overrides: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What is wrong with a skill's ``overrides`` of ``workflow``'s parameters, as
    ``(path, problem)`` (empty: nothing); each value is checked against its parameter's
    schema.

    Checked when the workspace loads: the model never sees an overridden
    parameter, so a bad value would otherwise fail every call of the tool, with
    nothing the model could do about it.
    """
    schema = workflow.input_schema
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    # Definitions the parameter schemas may refer to ("$ref": "#/$defs/...").
    shared = {k: v for k, v in schema.items() if k in ("$schema", "$defs", "definitions")}
    out: list[tuple[str, str]] = []
    for name, value in overrides.items():
        parameter = properties.get(name)
        if parameter is None:
            if schema.get("additionalProperties") is False:
                out.append((name, f"the workflow {workflow.id!r} has no such parameter"))
            continue
        if not isinstance(parameter, dict):
            continue  # true / false schemas: nothing to say about one value
        for problem in ArgumentValidator({**shared, **parameter}).problems(value):
            # "$.path: message" (the path inside this value)
            where, _, message = problem.partition(": ")
            out.append((name + where.removeprefix("$"), message))
    return out


def _summary(workflow: Workflow, statuses: list[str], artifacts: list[str], result: Any) -> str:
    if result is not None:
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    lines = [f"Workflow {workflow.id!r} finished."]
    if artifacts:
        lines.append("Artifacts delivered to the user: " + ", ".join(artifacts) + ".")
    if statuses:
        lines.append("Last status: " + statuses[-1])
    return " ".join(lines)


def workflow_tool(
    workflow: Workflow, overrides: Mapping[str, Any] | None = None, *, source: str | None = None
) -> Tool:
    """The tool ``dispatch_workflow_<id>`` running ``workflow``.

    ``overrides`` (a skill's settings for this workflow) are merged into the
    arguments - they win - and removed from the schema the model sees; the
    merged input is validated against the workflow's own schema. The tool
    returns a :class:`~a2a_models.tools.ToolResult` summarising the run (the
    workflow's :class:`WorkflowResult`, else its artifacts and last status);
    the LLM agent additionally streams the events to the client as they come.
    """
    fixed: dict[str, Any] = json.loads(json.dumps(dict(overrides or {})))
    validator = ArgumentValidator(workflow.input_schema)

    async def run(arguments: JSONObject, context: ToolContext) -> ToolResult:
        merged: JSONObject = {**arguments, **fixed}
        problems = validator.problems(merged)
        if problems:
            raise ToolInputError(workflow.tool_name, problems, kind="workflow")
        sink = WORKFLOW_SINK.get()
        statuses: list[str] = []
        artifacts: list[str] = []
        collected: list[Part] = []
        result: Any = None
        events = workflow.run(merged, context)
        try:
            async for event in events:
                if isinstance(event, str):
                    event = WorkflowStatus(event)
                if isinstance(event, WorkflowStatus):
                    statuses.append(event.text)
                elif isinstance(event, WorkflowArtifact):
                    if not event.append:
                        artifacts.append(repr(event.name or "artifact"))
                    collected.extend(event.parts)
                elif isinstance(event, WorkflowResult):
                    result = event.value
                    continue
                else:
                    raise TypeError(
                        f"workflow {workflow.id!r} yielded {type(event).__name__}: yield a "
                        "str, WorkflowStatus, WorkflowArtifact or WorkflowResult"
                    )
                if sink is not None:
                    await sink(workflow, event)
        finally:
            await events.aclose()  # type: ignore[attr-defined]
        text = _summary(workflow, statuses, artifacts, result)
        if sink is None:
            # Nobody streamed the artifacts: hand them back with the summary.
            return ToolResult(parts=(TextPart(text), *collected))
        return ToolResult(parts=(TextPart(text),))

    metadata: JSONObject = {
        WORKFLOW_METADATA_KEY: workflow.id,
        "version": workflow.version,
        "overrides": fixed,
    }
    return Tool(
        name=workflow.tool_name,
        description=f"{workflow.name}: {workflow.description}",
        input_schema=_tool_schema(workflow.input_schema, fixed),
        fn=run,
        metadata=metadata,
        source=source or f"workflow {workflow.id!r} ({workflow.source})",
    )


# -------------------------------------------------------------------------- the registry


@attrs.frozen(slots=True, kw_only=True)
class WorkflowEntry:
    """One allowlisted workflow of ``workflow.json``."""

    id: str
    entry: str
    enabled: bool = True


def parse_workflow_registry(
    data: Any, *, origin: str = "workflow.json"
) -> dict[str, WorkflowEntry]:
    """The entries of a parsed ``workflow.json`` (``{"workflows": {id: "module:object" |
    {"entry": "module:object", "enabled": true}}}``), by id, in file order."""
    if not isinstance(data, Mapping):
        raise WorkflowError(f"{origin}: expected a JSON object with 'workflows'")
    raw = data.get("workflows")
    if not isinstance(raw, Mapping):
        raise WorkflowError(f"{origin}: workflows: expected an object of id -> entry")
    out: dict[str, WorkflowEntry] = {}
    for wid, spec in raw.items():
        where = f"{origin}: workflows.{wid}"
        if not isinstance(wid, str) or not _WORKFLOW_ID.match(wid):
            raise WorkflowError(
                f"{where}: invalid workflow id (lowercase letters, digits and '_', "
                "starting with a letter)"
            )
        if isinstance(spec, str):
            spec = {"entry": spec}
        if not isinstance(spec, Mapping):
            raise WorkflowError(f"{where}: expected 'module:object' or an object with 'entry'")
        unknown = sorted(set(spec) - {"entry", "enabled", "description"})
        if unknown:
            raise WorkflowError(f"{where}: unknown field(s): {', '.join(unknown)}")
        entry = spec.get("entry")
        if not isinstance(entry, str) or ":" not in entry:
            raise WorkflowError(f"{where}.entry: expected 'module:object', got {entry!r}")
        enabled = spec.get("enabled", True)
        if not isinstance(enabled, bool):
            raise WorkflowError(f"{where}.enabled: expected true or false")
        out[wid] = WorkflowEntry(id=wid, entry=entry, enabled=enabled)
    return out


def load_workflow(
    entry: WorkflowEntry, *, base_dir: Path | None = None, origin: str = "workflow.json"
) -> Workflow:
    """Import the workflow of one registry entry (``module:object``; the module may be a
    ``.py`` file relative to ``base_dir``). The object is a :class:`Workflow`, or an
    async generator function (made one with :func:`workflow`, ``id`` from the entry)."""
    where = f"{origin}: workflows.{entry.id}.entry"
    try:
        obj: Any = import_object(entry.entry, base_dir=base_dir)
    except EntryError as exc:
        raise WorkflowError(f"{where}: {exc}") from exc.__cause__
    if inspect.isasyncgenfunction(obj):
        obj = workflow(obj, id=entry.id)
    if not isinstance(obj, Workflow):
        raise WorkflowError(
            f"{where}: {entry.entry!r} is {type(obj).__name__}, not a Workflow "
            "(use the @workflow decorator) or an async generator function"
        )
    if obj.id != entry.id:
        raise WorkflowError(
            f"{where}: the registry id {entry.id!r} differs from the workflow's id {obj.id!r}"
        )
    return obj


def load_workflow_registry(
    source: str | Path | Mapping[str, Any],
    *,
    base_dir: str | Path | None = None,
    only: Iterable[str] | None = None,
    origin: str | None = None,
) -> dict[str, Workflow]:
    """The enabled workflows of ``workflow.json`` (a path or a parsed document), by id.

    Only allowlisted entries are imported - ``only`` narrows that further
    (e.g. to the workflows some skill selects; an id that is not in the
    registry is a :class:`WorkflowError`).
    """
    if isinstance(source, Mapping):
        data: Any = source
        label = origin or "workflow.json"
    else:
        path = Path(source)
        label = origin or str(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise WorkflowError(f"{label}: {unreadable(exc)}") from exc
        except json.JSONDecodeError as exc:
            raise WorkflowError(f"{label}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
        if base_dir is None:
            base_dir = path.parent
    entries = parse_workflow_registry(data, origin=label)
    wanted = [w for w, e in entries.items() if e.enabled] if only is None else list(only)
    out: dict[str, Workflow] = {}
    for wid in wanted:
        entry = entries.get(wid)
        if entry is None:
            raise WorkflowError(f"{label}: workflows: no workflow {wid!r} in the registry")
        if not entry.enabled:
            raise WorkflowError(f"{label}: workflows.{wid}.enabled: the workflow is disabled")
        out[wid] = load_workflow(
            entry, base_dir=Path(base_dir) if base_dir is not None else None, origin=label
        )
    return out
