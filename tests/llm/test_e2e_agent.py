"""End to end: ``agent init`` -> ``agent run`` (a subprocess) -> A2A clients -> restart.

The served agent's model is the official ``openai`` SDK pointed at the
scripted model server of this test process (``OPENAI_BASE_URL``). Our HTTP
client and the official a2a-sdk client each stream a task (status and
artifact events in order); after a restart of the server, the tasks are read
back from the SQLite store.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from a2a_models import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_models._cli._agent import main as agent_main
from a2a_models.adapters.llm import ARTIFACT_TOOL, START_TASK_TOOL

from .scripted_server import ScriptedModelServer, ScriptedToolCall, Turn

BRIEF = "# Solar power\n\n## Background\nSunlight becomes electricity.\n"


class AgentProcess:
    """``a2a-models agent run`` in a subprocess; ``url`` once it serves."""

    def __init__(self, workspace: Path, store: str, env: dict[str, str], *options: str) -> None:
        self.workspace = workspace
        self.store = store
        self.env = env
        self.options = options
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def __aenter__(self) -> AgentProcess:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "a2a_models",
            "agent",
            "run",
            str(self.workspace),
            "--port",
            "0",
            "--store",
            self.store,
            "--log-level",
            "warning",
            *self.options,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
        )
        assert self.proc.stdout is not None
        async with asyncio.timeout(20):
            while True:
                line = (await self.proc.stdout.readline()).decode()
                if not line:
                    err = await self.proc.stderr.read() if self.proc.stderr else b""
                    raise AssertionError(f"agent run exited: {err.decode()[-2000:]}")
                match = re.search(r"serving .* at (http://\S+)", line)
                if match:
                    self.url = match.group(1)
                    return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(10):
                    await self.proc.wait()
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


def agent_env(server: ScriptedModelServer) -> dict[str, str]:
    """The environment of an ``agent run`` whose model is ``server`` (OpenAI API)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "A2A_MODELS_"))
    }
    env.update(OPENAI_BASE_URL=server.openai_base_url, OPENAI_API_KEY="sk-e2e")
    return env


def _script(server: ScriptedModelServer, topic: str) -> None:
    server.script(
        Turn(tool_calls=[ScriptedToolCall(START_TASK_TOOL, {"skill": "brief"})]),
        Turn(tool_calls=[ScriptedToolCall("dispatch_workflow_outline", {"topic": topic})]),
        Turn(
            text=["Here is the brief."],
            tool_calls=[
                ScriptedToolCall(ARTIFACT_TOOL, {"name": "brief", "content": BRIEF}, chunk_size=9)
            ],
        ),
    )


def _check_order(kinds: list[str]) -> None:
    assert kinds[0] == "task:submitted"
    assert kinds[1] == "working"
    first_artifact = kinds.index("artifact")
    assert set(kinds[1:first_artifact]) == {"working"}
    last_artifact = len(kinds) - 1 - kinds[::-1].index("artifact")
    assert set(kinds[first_artifact : last_artifact + 1]) == {"artifact"}
    assert kinds[-1] == "completed"


async def test_init_run_stream_restart(
    scripted_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # a2a-sdk import order quirk (see tests/interop/sdk_vectors.py)
    import a2a.server.routes  # noqa: F401  # isort: skip
    from a2a.client import ClientConfig, create_client
    from a2a.types import a2a_pb2 as pb

    from a2a_models.adapters.http import connect

    workspace = tmp_path / "agent"
    assert agent_main(["init", str(workspace)]) == 0
    env = agent_env(scripted_server)
    store = f"sqlite:///{tmp_path / 'tasks.db'}"

    async with AgentProcess(workspace, store, env) as agent:
        # this package's HTTP client
        _script(scripted_server, "solar")
        client = await connect(agent.url, timeout=15)
        async with client:
            events: list[Any] = []
            async for event in client.send_streaming_message(
                Message.user("Write a brief about solar power")
            ):
                events.append(event)
        kinds = []
        for e in events:
            if isinstance(e, Task):
                kinds.append(f"task:{e.status.state.name.lower()}")
            elif isinstance(e, TaskStatusUpdateEvent):
                kinds.append(e.status.state.name.lower())
            elif isinstance(e, TaskArtifactUpdateEvent):
                kinds.append("artifact")
        _check_order(kinds)
        statuses = [
            e.status.message.text
            for e in events
            if isinstance(e, TaskStatusUpdateEvent) and e.status.message
        ]
        assert "Outlining solar" in statuses  # the workflow's own status update
        artifacts = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert len(artifacts) > 3 and artifacts[-1].last_chunk
        assert "".join(p.text for a in artifacts for p in a.artifact.parts) == BRIEF
        ours_id = events[0].id
        # the workflow ran with the skill's override (sections: 3)
        assert '"sections": ["Background", "Key points", "Outlook"]' in json.dumps(
            scripted_server.bodies()[2]
        ).replace('\\"', '"')

        # the official a2a-sdk client
        _script(scripted_server, "wind")
        sdk = await create_client(
            agent.url, ClientConfig(streaming=True, supported_protocol_bindings=["JSONRPC"])
        )
        request = pb.SendMessageRequest(
            message=pb.Message(
                message_id=str(uuid.uuid4()),
                role=pb.ROLE_USER,
                parts=[pb.Part(text="Brief me on wind power")],
            )
        )
        sdk_kinds: list[str] = []
        sdk_text = ""
        sdk_id = ""
        async with asyncio.timeout(20):
            async for item in _iterate(sdk.send_message(request)):
                which = item.WhichOneof("payload")
                if which == "task":
                    sdk_id = item.task.id
                    sdk_kinds.append(
                        "task:"
                        + pb.TaskState.Name(item.task.status.state)
                        .removeprefix("TASK_STATE_")
                        .lower()
                    )
                elif which == "status_update":
                    sdk_kinds.append(
                        pb.TaskState.Name(item.status_update.status.state)
                        .removeprefix("TASK_STATE_")
                        .lower()
                    )
                elif which == "artifact_update":
                    sdk_kinds.append("artifact")
                    sdk_text += "".join(p.text for p in item.artifact_update.artifact.parts)
        _check_order(sdk_kinds)
        assert sdk_text == BRIEF
        assert sdk_id and sdk_id != ours_id

    # restart: the tasks are still there
    async with AgentProcess(workspace, store, env) as agent:
        client = await connect(agent.url, timeout=15)
        async with client:
            for task_id in (ours_id, sdk_id):
                task = await client.get_task(task_id)
                assert task.status.state is TaskState.COMPLETED
                assert "".join(p.text for p in task.artifacts[0].parts) == BRIEF
                assert task.artifacts[0].name == "brief"
                texts = [m.text for m in task.history]
                assert any("Outlining" in t for t in texts)


async def _iterate(stream: Any) -> AsyncIterator[Any]:
    async for item in stream:
        yield item


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
