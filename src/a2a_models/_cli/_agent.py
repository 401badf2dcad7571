"""``a2a-models agent``: scaffold, check, print, bundle and serve an LLM agent workspace.

* ``agent init DIR`` - a working example workspace;
* ``agent doctor DIR`` - validate everything (files, card, models and keys,
  workflows, MCP servers), print the effective configuration and the
  skill -> tools graph; exit 1 on a problem;
* ``agent print-config DIR`` - the composed prompt, card and tool lists;
* ``agent bundle DIR [-o FILE]`` - one JSON file holding the composed configuration;
* ``agent run DIR|BUNDLE.json`` - serve it over A2A HTTP (and MCP with ``--mcp``).

Needs the ``llm`` extra (and ``http`` to run, ``mcp`` for MCP servers).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._argtypes import port_number, positive_number

if TYPE_CHECKING:
    from ..adapters.llm import ComposedWorkspace

__all__ = ["build_agent_parser", "main"]

PROG = "a2a-models agent"


def build_agent_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="LLM agent workspaces: agent.md, agent.manifest.json, skills/*.md, "
        "mcp.json, workflow.json, .env",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    init = commands.add_parser("init", help="scaffold a working example workspace in DIR")
    init.add_argument("dir", metavar="DIR")
    init.add_argument("--force", action="store_true", help="overwrite existing files")

    doctor = commands.add_parser(
        "doctor", help="validate a workspace; print its configuration and skill -> tools graph"
    )
    doctor.add_argument("dir", metavar="DIR")
    doctor.add_argument(
        "--no-connect", action="store_true", help="do not start the MCP servers to list their tools"
    )
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")

    config = commands.add_parser(
        "print-config", help="print the composed prompt, card and tool lists"
    )
    config.add_argument("dir", metavar="DIR")
    config.add_argument("--json", action="store_true", help="print everything as one JSON object")

    bundle = commands.add_parser("bundle", help="write the composed configuration as one JSON file")
    bundle.add_argument("dir", metavar="DIR")
    bundle.add_argument(
        "-o", "--output", metavar="FILE", help="where to write it (default: DIR/agent.bundle.json)"
    )

    run = commands.add_parser("run", help="serve a workspace (or a bundle) over A2A HTTP")
    run.add_argument("dir", metavar="DIR|BUNDLE.json")
    run.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    run.add_argument(
        "--port", type=port_number, default=8000, help="port to listen on (0: any free port)"
    )
    run.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="task store: sqlite:///path.db (default: a tasks.db in the workspace), memory:, "
        "postgresql://...",
    )
    run.add_argument(
        "--lease-ttl",
        type=positive_number,
        default=15.0,
        metavar="SECONDS",
        help="SQL stores: a running task's lease lasts this long unless renewed; the tasks "
        "of a process that died are failed within about that (default: 15)",
    )
    run.add_argument("--public-url", metavar="URL", help="base URL advertised in the agent card")
    from ._security import add_push_delivery_options

    add_push_delivery_options(run)  # when the card declares capabilities.pushNotifications
    run.add_argument("--mcp", action="store_true", help="also serve the skills over MCP at /mcp")
    run.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a Host the MCP endpoint answers (repeatable; default: loopback names when "
        "bound to loopback, any name otherwise)",
    )
    run.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser Origin the MCP endpoint accepts (repeatable; default: the "
        "endpoint's own origin)",
    )
    run.add_argument(
        "--provider", type=_provider_name, help="model provider override (openai, anthropic)"
    )
    run.add_argument("--model", type=_model_name, help="model name override")
    run.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
    return parser


def _provider_name(value: str) -> str:
    """``--provider``: a provider the model layer knows (checked here, where the
    mistake is made, rather than reported later as an 'override')."""
    from ..adapters.llm import PROVIDERS  # only when the option is given

    if value not in PROVIDERS:
        raise argparse.ArgumentTypeError(f"expected {' or '.join(PROVIDERS)}, got {value!r}")
    return value


def _model_name(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("expected a model name, got an empty one")
    return value


def main(argv: Sequence[str], *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``a2a-models agent ...``; the exit status (0 ok, 1 invalid, 2 usage)."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    args = build_agent_parser().parse_args(list(argv))
    try:
        from ..adapters.llm import WorkspaceError
    except ImportError as exc:  # pragma: no cover - the llm extra is missing
        print(f"{PROG}: {exc}. Install: pip install 'a2a-models[llm]'", file=stderr)
        return 2
    try:
        if args.command == "init":
            return _init(Path(args.dir), force=args.force, out=stdout)
        if args.command == "doctor":
            return asyncio.run(_doctor(args, stdout))
        if args.command == "print-config":
            return _print_config(args, stdout)
        if args.command == "bundle":
            return _bundle(args, stdout)
        return asyncio.run(_run(args, stdout, stderr))
    except WorkspaceError as exc:
        print(f"{PROG} {args.command}: {exc}", file=stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # e.g. an MCP server that cannot start: one line, see _errors.py
        from ._errors import report_error

        report_error(f"{PROG} {args.command}", exc, file=stderr)
        return 1


# ------------------------------------------------------------------------------- init

_AGENT_MD = """\
---
name: Research assistant
description: Answers questions and writes short briefs on a topic.
version: 0.1.0
url: http://127.0.0.1:8000
provider:
  organization: Example Org
  url: https://example.org
defaultInputModes: [text/plain]
defaultOutputModes: [text/plain, text/markdown]
capabilities:
  streaming: true
model:
  provider: openai
  model: gpt-4o-mini
  temperature: 0.2
guardrails:
  max_steps: 8
  timeout: 300
settings:
  statusInterval: 2
  artifactMediaType: text/markdown
---
You are a careful research assistant. Be accurate and concise, say when you are
unsure, and never invent sources.
"""

_MANIFEST = {
    "skills": ["brief"],
    "registries": {"mcp": "mcp.json", "workflows": "workflow.json"},
    "policies": {"capabilities": "union", "tools": "union", "guardrails": "tightest"},
}

_SKILL_MD = """\
---
name: Write a brief
description: Writes a short brief on a topic, as Markdown.
tags: [writing, research]
examples:
  - Write a brief about solar power
  - Brief me on the history of the A2A protocol
outputModes: [text/markdown]
workflows:
  - id: outline
    version: 1.0.0
    overrides:
      sections: 3
guardrails:
  max_steps: 6
---
Start by drafting an outline with the outline workflow, then write the brief
(at most 300 words, one heading per section) and deliver it as an artifact.
"""

_WORKFLOW_PY = '''\
"""An example workflow plugin, allowlisted in workflow.json."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from a2a_models.adapters.llm import WorkflowResult, workflow


@workflow(
    id="outline",
    name="Outline",
    description="Drafts the outline of a brief on a topic",
    version="1.0.0",
    input_schema={
        "type": "object",
        "properties": {
            "topic": {"type": "string", "description": "what the brief is about"},
            "sections": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["topic", "sections"],
    },
)
async def outline(input: dict[str, Any], context: Any) -> AsyncIterator[Any]:
    topic = input["topic"]
    yield f"Outlining {topic}"
    sections = ["Background", "Key points", "Outlook", "Open questions", "Sources"]
    count = min(int(input["sections"]), len(sections))
    yield WorkflowResult({"topic": topic, "sections": sections[:count]})
'''

_ENV = """\
# Secrets for this agent (never committed, never bundled). The process
# environment wins over this file.
# OPENAI_API_KEY=sk-...
# OPENAI_BASE_URL=http://localhost:11434/v1   # e.g. Ollama
"""


def _init(directory: Path, *, force: bool, out: TextIO) -> int:
    files = {
        "agent.md": _AGENT_MD,
        "agent.manifest.json": json.dumps(_MANIFEST, indent=2) + "\n",
        "skills/brief.md": _SKILL_MD,
        "mcp.json": json.dumps({"mcpServers": {}}, indent=2) + "\n",
        "workflow.json": json.dumps(
            {"workflows": {"outline": {"entry": "workflows/outline.py:outline"}}}, indent=2
        )
        + "\n",
        "workflows/outline.py": _WORKFLOW_PY,
        ".env": _ENV,
        ".gitignore": ".env\n*.db\n*.db-*\nagent.bundle.json\n",
    }
    existing = [name for name in files if (directory / name).exists()]
    if existing and not force:
        raise ValueError(
            f"{directory} already has {', '.join(existing)} (use --force to overwrite)"
        )
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"Created an agent workspace in {directory}:", file=out)
    for name in files:
        print(f"  {name}", file=out)
    print(
        f"\nNext: set OPENAI_API_KEY (or edit agent.md: model), then\n"
        f"  a2a-models agent doctor {directory}\n  a2a-models agent run {directory}",
        file=out,
    )
    return 0


# ------------------------------------------------------------------------------- loading


def _load(target: str, *, url: str | None = None) -> ComposedWorkspace:
    from ..adapters.llm import WorkspaceError, load_bundle, load_workspace

    path = Path(target)
    if path.is_file():
        if path.suffix != ".json":  # agent.md, say: read as a bundle, it is "invalid JSON"
            raise WorkspaceError(
                target, "", "expected a workspace directory or an agent bundle (a .json file)"
            )
        return load_bundle(path, url=url)
    return load_workspace(path, url=url)


def _tools_line(tool: Any) -> str:
    meta = tool.metadata or {}
    if "a2a-models/workflow" in meta:
        overrides = meta.get("overrides") or {}
        extra = f", overrides {json.dumps(overrides)}" if overrides else ""
        return f"{tool.name}  [workflow {meta['a2a-models/workflow']} {meta.get('version')}{extra}]"
    return f"{tool.name}  [{tool.source}]"


# ------------------------------------------------------------------------------- doctor


async def _doctor(args: argparse.Namespace, out: TextIO) -> int:
    import attrs

    from ..adapters.llm import AgentRuntime, ModelConfigError

    composed = _load(args.dir)
    problems: list[str] = []
    warnings: list[str] = []
    if composed.mcp_missing_env:
        problems.append(
            f"{composed.sources.mcp_file}: missing environment variable(s): "
            + ", ".join(composed.mcp_missing_env)
        )
    problems.extend(composed.entry_problems())
    # The doctor imports the context provider but does not run it.
    target = attrs.evolve(composed, context_provider=None, hooks=())
    connected = not (args.no_connect or composed.mcp_missing_env)
    if not connected:
        if composed.mcp_servers:
            warnings.append("MCP servers not started: their tools are shown as patterns")
        target = attrs.evolve(target, mcp_servers={})
    runtime = AgentRuntime(target)
    graph: dict[str, list[str]] = {}
    try:
        await runtime.start()
    except ModelConfigError as exc:
        problems.append(f"model: {exc}")
    except Exception as exc:
        problems.append(str(exc))
    else:
        for skill in composed.skills:
            graph[skill.id] = [_tools_line(t) for t in runtime.agent.tools_for(skill.id)]
            if not connected:
                graph[skill.id].extend(
                    f"{p}  [MCP, not connected]" for p in skill.tool_patterns if "__" in p
                )
    finally:
        await runtime.stop()
    if not graph:
        graph = {k: [f"{p}  [not resolved]" for p in v] for k, v in composed.tool_graph().items()}
    report = composed.to_dict()
    report["toolGraph"] = graph
    report["problems"] = problems
    report["warnings"] = warnings
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False), file=out)
    else:
        card = composed.card
        print(f"Workspace {composed.root}", file=out)
        print(f"Agent: {card.name} {card.version} - {card.description}", file=out)
        model = composed.model_config.describe()
        print(
            f"Model: {model['provider']} {model['model']} (api key {model['api_key']}, "
            f"base_url {model['base_url'] or 'default'})",
            file=out,
        )
        policies = composed.policies
        print(
            f"Policies: capabilities={policies.capabilities} tools={policies.tools} "
            f"guardrails={policies.guardrails}",
            file=out,
        )
        caps = report["card"].get("capabilities", {})
        print(f"Capabilities: {json.dumps(caps)}", file=out)
        print(f"MCP servers: {', '.join(sorted(composed.mcp_servers)) or 'none'}", file=out)
        print(
            "Workflows: "
            + (", ".join(f"{w} ({e.entry})" for w, e in composed.workflows.items()) or "none"),
            file=out,
        )
        print("Skills -> tools:", file=out)
        for skill in composed.skills:
            sm = skill.model_config.describe()
            guard = skill.guardrails.to_dict()
            print(
                f"  {skill.id} ({skill.file}) model {sm['provider']}/{sm['model']}"
                + (f" guardrails {json.dumps(guard)}" if guard else ""),
                file=out,
            )
            for line in graph.get(skill.id, []):
                print(f"    - {line}", file=out)
        for warning in warnings:
            print(f"warning: {warning}", file=out)
        for problem in problems:
            print(f"problem: {problem}", file=out)
        print("OK" if not problems else f"{len(problems)} problem(s)", file=out)
    return 1 if problems else 0


# ------------------------------------------------------------------------------- print-config


def _print_config(args: argparse.Namespace, out: TextIO) -> int:
    composed = _load(args.dir)
    data = composed.to_dict()
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False), file=out)
        return 0
    print("# Composed prompt\n", file=out)
    print(composed.prompt, file=out)
    print("\n# Agent card\n", file=out)
    print(json.dumps(data["card"], indent=2, ensure_ascii=False), file=out)
    print("\n# Tools per skill\n", file=out)
    for skill_id, tools in composed.tool_graph().items():
        print(f"{skill_id}: {', '.join(tools) or '(none)'}", file=out)
    return 0


# ------------------------------------------------------------------------------- bundle


def _bundle(args: argparse.Namespace, out: TextIO) -> int:
    from ..adapters.llm import load_workspace, write_bundle

    composed = load_workspace(args.dir)
    target = Path(args.output) if args.output else Path(args.dir) / "agent.bundle.json"
    write_bundle(composed, target)
    print(f"Wrote {target}", file=out)
    return 0


# ------------------------------------------------------------------------------- run


def _default_store(target: str) -> str:
    path = Path(target).resolve()
    db = path.with_suffix(".tasks.db") if path.is_file() else path / "tasks.db"
    return f"sqlite:///{db}"


async def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .._closing import aclose_if_closable
    from ..adapters.http import HTTPServer, create_app
    from ..adapters.llm import AgentRuntime
    from ..stores import store_from_url
    from ._run import (
        _free_port,
        cannot_listen,
        close_engine,
        engine_server,
        push_sender_for,
        take_over_orphans,
    )
    from ._security import SecurityOptions
    from ._serve import handling_stop_signals
    from ._store import open_at_start

    try:
        port = args.port or _free_port(args.host)
    except OSError as exc:  # e.g. an address this machine does not have
        print(f"{PROG} run: {cannot_listen(args.host, exc)}", file=err)
        return 1
    url = (args.public_url or f"http://{args.host}:{port}").rstrip("/")
    composed = _load(args.dir, url=url)
    runtime = AgentRuntime(
        composed, url=url, override={"provider": args.provider, "model": args.model}
    )
    await runtime.start()
    store_url = args.store or _default_store(args.dir)
    store = store_from_url(store_url)
    problem = await open_at_start(store, store_url)
    if problem is not None:
        await aclose_if_closable(store)
        await runtime.stop()
        print(f"{PROG} run: {problem}", file=err)
        return 1
    # As serve does: on an SQL store running turns hold leases, so the tasks a killed
    # process left working are failed (saying why) once their lease lapses.
    # A card that declares push notifications gets them delivered, as with serve.
    push_sender = push_sender_for(
        runtime.card,
        SecurityOptions(push_allowlist=tuple(args.push_allow), push_rate=args.push_rate),
    )
    server = engine_server(
        runtime.agent,
        runtime.card,
        store,
        store_url,
        push_sender=push_sender,
        lease_ttl=args.lease_ttl,
    )
    app = create_app(server)
    if args.mcp:
        from ..adapters.http import MCPGuard

        # agent run configures no authentication: the guard checks Host and Origin.
        guard = MCPGuard(allowed_hosts=args.allowed_host, allowed_origins=args.allowed_origin)
        runtime.mcp_server().mount(app, "/mcp", guard=guard)
    http = HTTPServer(app, host=args.host, port=port, log_level=args.log_level)
    stop = asyncio.Event()
    try:
        with handling_stop_signals(stop.set):
            try:
                await http.start()
            except OSError as exc:  # the port is taken, the address not ours
                print(f"{PROG} run: {cannot_listen(f'{args.host}:{port}', exc)}", file=err)
                return 1
            extra = f" (MCP at {url}/mcp)" if args.mcp else ""
            print(
                f"a2a-models agent: serving {runtime.card.name} at {url}{extra}",
                file=out,
                flush=True,
            )
            await take_over_orphans(server)
            await stop.wait()
    finally:
        await http.stop(before_drain=server.aclose)  # blocking calls get their failed task
        await close_engine(server)
        await runtime.stop()
    print("a2a-models agent: stopped", file=out, flush=True)
    return 0
