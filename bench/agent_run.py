"""``a2a-models agent run`` as users run it: the agent's CPU per turn as a conversation grows,
and its resources after thousands of tasks.

Run: ``.venv/bin/python bench/agent_run.py`` (loopback only, a few minutes).

One ``agent run`` subprocess (SQLite store in a temporary directory, the real
MCP tool server of ``tests/mcp/_mcp_tool_server.py`` over stdio), its model the
scripted model server of ``tests/llm/scripted_server.py`` (OpenAI chat
completions, in this process). Figures are the agent process's own CPU time
(``/proc``), which other processes on a shared machine hardly disturb.

* ``--mode turns``: one task in an input-required loop (the model asks the
  user a question each turn, so the whole conversation is resent each turn):
  CPU per turn over turns 100-150 and over the last 50 of ``--turns`` (1,000).
  The request body grows with the conversation, so some growth is expected;
  target: the last 50 turns <= 4x the CPU of turns 100-150 (each model call
  walked its body through the OpenAI SDK's type transform before: 9.8x).
* ``--mode tasks``: ``--tasks`` (2,000) tasks, 8 at a time, each a model call
  that calls an MCP tool, then an artifact. Open file descriptors and child
  processes of the agent after the first 200 and after all; target: the same
  (RSS is printed: the stores' caches are bounded, see ``HistoryCache``).

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, bench/ comes first on sys.path: a sibling (http.py) would shadow the stdlib.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import argparse
import asyncio
import json
import os
import re
import signal
import tempfile
import time
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from a2a_models import Message, Task, TaskState  # noqa: E402
from a2a_models import models as m  # noqa: E402
from a2a_models.adapters.http import connect  # noqa: E402
from a2a_models.adapters.llm import ARTIFACT_TOOL, ASK_USER_TOOL  # noqa: E402
from tests.llm.scripted_server import ScriptedModelServer, ScriptedToolCall, Turn  # noqa: E402

AGENT_MD = """---
name: Bench agent
description: Answers.
version: 0.1.0
capabilities:
  streaming: true
model:
  provider: openai
  model: gpt-4o-mini
  max_retries: 0
guardrails:
  max_steps: 1000
settings:
  routing: false
---
You answer.
"""
SKILL_MD = """---
name: Answer
description: Answers with the tools.
tags: [bench]
examples: [answer]
mcp: [tools]
---
Answer.
"""
META = {"skillId": "answer"}


def workspace(root: Path) -> Path:
    ws = root / "agent"
    (ws / "skills").mkdir(parents=True)
    (ws / "agent.md").write_text(AGENT_MD)
    (ws / "skills" / "answer.md").write_text(SKILL_MD)
    (ws / "agent.manifest.json").write_text(
        json.dumps({"skills": ["answer"], "registries": {"mcp": "mcp.json"}})
    )
    server = str(ROOT / "tests" / "mcp" / "_mcp_tool_server.py")
    (ws / "mcp.json").write_text(
        json.dumps({"mcpServers": {"tools": {"command": sys.executable, "args": [server]}}})
    )
    return ws


class Agent:
    """``agent run`` in a subprocess; its CPU time, descriptors and children from /proc."""

    def __init__(self, proc: asyncio.subprocess.Process, url: str) -> None:
        self.proc, self.url = proc, url

    def cpu(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
        return kb / 1024

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def children(self) -> int:
        count = 0
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    count += int(f.read().rsplit(")", 1)[1].split()[1]) == self.proc.pid
            except (OSError, ValueError, IndexError):
                continue
        return count


async def start_agent(root: Path, server: ScriptedModelServer) -> Agent:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "A2A_MODELS_"))}
    env.update(
        OPENAI_BASE_URL=server.openai_base_url,
        OPENAI_API_KEY="sk-bench",
        PYTHONPATH=str(ROOT / "src"),
    )
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "a2a_models", "agent", "run", str(workspace(root))),
        *("--port", "0", "--store", f"sqlite:///{root / 'tasks.db'}", "--log-level", "error"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdout is not None
    async with asyncio.timeout(60):
        while line := (await proc.stdout.readline()).decode():
            if found := re.search(r"serving .* at (http://\S+)", line):
                return Agent(proc, found[1])
    raise RuntimeError("agent run exited before serving")


async def turns(agent: Agent, server: ScriptedModelServer, args: argparse.Namespace) -> bool:
    windows = {100: 150, args.turns - 50: args.turns}
    cpu: dict[int, float] = {}
    task_id = context_id = None
    async with await connect(agent.url, timeout=60) as client:
        for i in range(1, args.turns + 1):
            if i - 1 in windows or i - 1 in windows.values():
                cpu[i - 1] = agent.cpu()
            question = ScriptedToolCall(ASK_USER_TOOL, {"question": f"And then, {i}?"})
            server.script(Turn(tool_calls=[question]))
            message = Message.user(
                f"answer {i}", task_id=task_id, context_id=context_id, metadata=META
            )
            # As bench/http.py --mode turns: the answer without the whole history (the
            # agent reads it all, the response need not carry it).
            request = m.SendMessageRequest(
                message=message, configuration=m.SendMessageConfiguration(history_length=10)
            )
            task = await client.send_message(request)
            assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
            task_id, context_id = task.id, task.context_id
            server.requests.clear()
        cpu[args.turns] = agent.cpu()
    (first, first_end), (last, last_end) = windows.items()
    early = (cpu[first_end] - cpu[first]) / 50
    late = (cpu[last_end] - cpu[last]) / 50
    print(f"agent CPU per turn: turns {first}-{first_end} {early * 1e3:.1f} ms, ", end="")
    print(f"turns {last}-{last_end} {late * 1e3:.1f} ms: {late / early:.2f}x (target <= 4x)")
    return late <= 4 * early


async def tasks(agent: Agent, server: ScriptedModelServer, args: argparse.Namespace) -> bool:
    limit = asyncio.Semaphore(8)

    async def one(client: Any, i: int) -> None:
        async with limit:
            task = await client.send_message(Message.user(f"task {i}", metadata=META))
            assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED

    seen = []
    async with await connect(agent.url, timeout=60) as client:
        for start, end in ((0, 200), (200, args.tasks)):
            for i in range(start, end):
                call = ScriptedToolCall("tools__get_weather", {"city": f"city {i}"})
                done = ScriptedToolCall(ARTIFACT_TOOL, {"content": f"answer {i}"})
                server.script(Turn(tool_calls=[call]), Turn(tool_calls=[done]))
            before = agent.cpu()
            await asyncio.gather(*(one(client, i) for i in range(start, end)))
            server.requests.clear()
            await asyncio.sleep(2)  # idle
            seen.append((agent.fds(), agent.children()))
            print(
                f"after {end:,} tasks: CPU {(agent.cpu() - before) / (end - start) * 1e3:.1f} ms "
                f"a task, RSS {agent.rss_mb():.1f} MB, {seen[-1][0]} descriptors, "
                f"{seen[-1][1]} child process(es)"
            )
    print(f"descriptors and children flat: {seen[0] == seen[1]} (target)")
    return seen[0] == seen[1]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["turns", "tasks", "all"], default="all")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=2000)
    args = parser.parse_args()
    met = True
    for mode in ("turns", "tasks") if args.mode == "all" else (args.mode,):
        with tempfile.TemporaryDirectory() as tmp:
            async with ScriptedModelServer() as server:
                agent = await start_agent(Path(tmp), server)
                try:
                    met = await globals()[mode](agent, server, args) and met
                finally:
                    agent.proc.send_signal(signal.SIGTERM)
                    await agent.proc.wait()
    return 0 if met else 1


if __name__ == "__main__":
    started = time.perf_counter()
    status = asyncio.run(main())
    print(f"({time.perf_counter() - started:.0f} s)")
    sys.exit(status)
