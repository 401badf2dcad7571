"""MCP servers' tools inside agents: a real SDK server subprocess, consumed through mcp.json."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from _mcp_skills import AGENT_NAME, SKILLS
from _mcp_tool_server import build as build_tool_server

from a2a_models import Message, Task, TaskState
from a2a_models.adapters.http import HTTPServer
from a2a_models.adapters.mcp import (
    MCPConnection,
    MCPServerError,
    MCPSkillServer,
    MCPToolHub,
    RestartPolicy,
)
from a2a_models.tools import (
    NAMESPACED_TOOL_NAME,
    SkillContext,
    Tool,
    ToolContext,
    ToolExecutionError,
    ToolInputError,
    ToolNameError,
    ToolResult,
    define_skill,
    function_tool,
    success_task,
    with_hooks,
)

SERVER = Path(__file__).with_name("_mcp_tool_server.py")
TIMEOUT = 20.0
PLAIN_TOOLS = [
    "tools__get_weather",
    "tools__add_numbers",
    "tools__pid",
    "tools__env",
    "tools__header",
    "tools__crash",
    "tools__sleep",
    "tools__block",
    "tools__enable_extra",
]


def stdio(variant: str = "plain", env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), variant], "env": env or {}}


def write_config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@contextlib.asynccontextmanager
async def running(
    tmp_path: Path, servers: dict[str, Any] | None = None, **options: Any
) -> AsyncIterator[MCPToolHub]:
    """A started hub for ``servers`` (default: the plain tool server as ``Tools``)."""
    path = write_config(tmp_path, servers if servers is not None else {"Tools": stdio()})
    options.setdefault("call_timeout", TIMEOUT)
    async with asyncio.timeout(TIMEOUT), MCPToolHub.from_config(path, **options) as hub:
        yield hub


def children() -> set[int]:
    """Live (non-zombie) child processes of this process."""
    me = os.getpid()
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == me and state != "Z":
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def eventually(check: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


# Every test of the module runs in one event loop: the read-only tests share
# one hub (whose connections live in tasks of their own, so the fixture may
# start and stop it from different tasks).
pytestmark = pytest.mark.asyncio(loop_scope="module")
PROVIDER_SAW: dict[str, Any] = {}


async def _provider(connections: Any) -> dict[str, Any]:
    (connection,) = connections.values()
    assert connection.connected
    pid = await connection.client.call_tool("pid", {})
    PROVIDER_SAW["servers"] = sorted(connections)
    return {"server_pid": pid.structured_content["result"], "tenant": "acme"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[MCPToolHub]:
    path = write_config(tmp_path_factory.mktemp("shared"), {"Tools": stdio()})
    shared = MCPToolHub.from_config(path, call_timeout=TIMEOUT, context_provider=_provider)
    async with asyncio.timeout(TIMEOUT):
        await shared.start()
    yield shared
    async with asyncio.timeout(TIMEOUT):
        await shared.stop()


def spy(connection: MCPConnection, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Record the calls that reach the server (patches the connection for one test)."""
    calls: list[tuple[str, Any]] = []
    original = connection.call_tool

    async def call_tool(name: str, arguments: Any = None) -> Any:
        calls.append((name, arguments))
        return await original(name, arguments)

    monkeypatch.setattr(connection, "call_tool", call_tool)
    return calls


# ----------------------------------------------------------------------------- discovery


async def test_discovery_and_namespacing(hub: MCPToolHub) -> None:
    tools = {t.name: t for t in hub.tools}
    assert list(tools) == PLAIN_TOOLS
    assert all(NAMESPACED_TOOL_NAME.fullmatch(name) for name in tools)
    weather = tools["tools__get_weather"]
    assert weather.description == "The weather in a city."
    assert weather.input_schema["required"] == ["city"]
    assert weather.input_schema["properties"]["city"]["type"] == "string"
    assert weather.source == "MCP server 'Tools', tool 'getWeather'"
    assert weather.metadata == {"mcp_server": "Tools", "mcp_tool": "getWeather"}
    connection = hub.connections["Tools"]
    assert connection.prefix == "tools" and connection.connected
    assert [t.name for t in connection.mcp_tools][:2] == ["getWeather", "add-numbers"]

    result = await hub.call("tools__get_weather", {"city": "Oslo"})
    assert isinstance(result, ToolResult) and result.text == "sunny in Oslo"
    summed = await hub.call("tools__add_numbers", {"a": 2, "b": 3})
    assert isinstance(summed, ToolResult) and summed.data == {"sum": 5}


async def test_arguments_are_validated_before_the_call(
    hub: MCPToolHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = spy(hub.connections["Tools"], monkeypatch)
    with pytest.raises(ToolInputError) as info:
        await hub.call("tools__add_numbers", {"a": "one"})
    assert set(info.value.problems) == {
        "$: 'b' is a required property",
        "$.a: 'one' is not of type 'integer'",
    }
    assert "tools__add_numbers" in str(info.value)
    assert calls == []
    await hub.call("tools__add_numbers", {"a": 1, "b": 1})
    assert calls == [("add-numbers", {"a": 1, "b": 1})]


# ----------------------------------------------------------------------------- hooks, adapters


async def test_hooks_on_a_remote_tool_rewrite_and_short_circuit(
    hub: MCPToolHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = spy(hub.connections["Tools"], monkeypatch)
    weather = next(t for t in hub.tools if t.name == "tools__get_weather")
    order: list[str] = []

    def shout(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        order.append("shout")
        return {"city": args["city"].upper()}

    async def block_atlantis(args: dict[str, Any], ctx: ToolContext) -> Message | None:
        order.append("block")
        if args["city"] == "ATLANTIS":
            return Message.agent("no weather under the sea")
        return None

    def stamp(args: dict[str, Any], result: Any, ctx: ToolContext) -> ToolResult:
        order.append("stamp")
        return ToolResult.of(f"{result.text} (checked)")

    hooked = with_hooks(weather, before=[shout, block_atlantis], after=stamp)
    assert hooked.name == weather.name and hooked.input_schema == weather.input_schema
    result = await hooked.call({"city": "oslo"})
    assert isinstance(result, ToolResult) and result.text == "sunny in OSLO (checked)"
    assert order == ["shout", "block", "stamp"]
    assert calls == [("getWeather", {"city": "OSLO"})]

    order.clear()
    short = await hooked.call({"city": "atlantis"})
    assert isinstance(short, Message) and short.text == "no weather under the sea"
    assert order == ["shout", "block"]
    assert len(calls) == 1  # the server was not called
    with pytest.raises(ToolInputError):
        await hooked.call({"town": "Oslo"})
    assert order == ["shout", "block"]  # invalid input never reaches the hooks


async def test_wildcard_and_exact_adapters_replace_tools_under_their_names(
    hub: MCPToolHub,
) -> None:
    log: list[str] = []

    def audit(tool: Tool) -> Tool:
        def before(args: dict[str, Any], ctx: ToolContext) -> None:
            log.append(f"audit {tool.name}")

        return with_hooks(tool, before=before)

    def cached(tool: Tool) -> Tool:
        def before(args: dict[str, Any], ctx: ToolContext) -> Task:
            log.append(f"cache {tool.name}")
            return success_task("cached forecast")

        return with_hooks(tool, before=before).evolve(name="renamed")

    local = function_tool(lambda word: word[::-1], name="reverse", description="Reverses.")
    toolbox = hub.toolbox([local], adapters={"*": audit, "tools__get_weather": cached})
    assert toolbox.names == ("reverse", *PLAIN_TOOLS)  # replaced, not added; name kept
    originals = {id(t) for t in hub.tools}
    assert not any(id(t) in originals for t in toolbox.tools)

    answer = await toolbox.call("tools__get_weather", {"city": "Oslo"})
    assert isinstance(answer, Task) and answer.state is TaskState.COMPLETED
    # Adapters apply in order, so the exact one wraps the wildcard one and its
    # short-circuit answers before the audit hook would run.
    assert log == ["cache tools__get_weather"]
    log.clear()
    result = await toolbox.call("tools__add_numbers", {"a": 1, "b": 2})
    assert isinstance(result, ToolResult) and result.data == {"sum": 3}
    assert await toolbox.call("reverse", {"word": "abc"}) == ToolResult.of("cba")
    assert log == ["audit tools__add_numbers", "audit reverse"]


async def test_allowed_tools_per_skill_and_the_context_provider(hub: MCPToolHub) -> None:
    seen: dict[str, Any] = {}

    @function_tool
    def whoami(ctx: ToolContext) -> str:
        """Reports the context it got."""
        seen["tool_context"] = ctx
        return f"{ctx.skill_id}:{ctx.custom['tenant']}"

    async def handler(args: dict[str, Any], ctx: SkillContext) -> Task:
        weather = await ctx.call_tool("tools__get_weather", {"city": args["city"]})
        me = await ctx.call_tool("whoami", {})
        with pytest.raises(KeyError, match="no tool named 'tools__pid'"):
            await ctx.call_tool("tools__pid", {})
        return success_task(weather.text, me.text)  # type: ignore[union-attr]

    skill = define_skill(
        "forecast",
        description="Forecast for a city.",
        tags=["weather"],
        examples=["weather in Oslo"],
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        handler=handler,
        tools=[whoami],
        allowed_tools=["tools__get_weather", "tools__add_*"],
    )
    assert PROVIDER_SAW["servers"] == ["Tools"]
    assert hub.context["tenant"] == "acme" and hub.context["server_pid"] > 0
    toolbox = hub.toolbox()
    assert [t.name for t in toolbox.for_skill(skill)] == [
        "whoami",
        "tools__get_weather",
        "tools__add_numbers",
    ]
    server = MCPSkillServer([skill], name="forecaster", toolbox=toolbox)
    result = await server.call("forecast", {"city": "Bergen"})
    assert not result.is_error, result
    ctx = seen["tool_context"]
    assert ctx.skill_id == "forecast" and ctx.skill_input == {"city": "Bergen"}
    assert ctx.custom is hub.context


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tool_list_change_is_picked_up(tmp_path: Path, mode: str) -> None:
    changed: list[str] = []
    async with running(tmp_path, mode=mode, on_tools_changed=changed.append) as hub:
        connection = hub.connections["Tools"]
        assert (connection.protocol_version == "2026-07-28") is (mode == "auto")
        version = connection.tools_version
        toolbox = hub.toolbox()
        assert "tools__extra_tool" not in toolbox
        await hub.call("tools__enable_extra", {})
        await eventually(lambda: connection.tools_version > version)
        assert "tools__extra_tool" in toolbox  # providers are read live
        assert changed and changed[-1] == "Tools"
        shout = await toolbox.call("tools__extra_tool", {"word": "hey"})
        assert isinstance(shout, ToolResult) and shout.text == "HEY"


# ----------------------------------------------------------------------------- failures


async def test_server_crashing_mid_call_is_a_clean_error(tmp_path: Path) -> None:
    before = children()
    async with running(tmp_path, restart=None) as hub:
        started = time.monotonic()
        with pytest.raises(ToolExecutionError) as info:
            await hub.call("tools__crash", {})
        assert time.monotonic() - started < 5
        assert "MCP server 'Tools', tool 'crash'" in str(info.value)
        assert not hub.connections["Tools"].connected
        with pytest.raises(ToolExecutionError):
            await hub.call("tools__get_weather", {"city": "Oslo"})
    assert children() <= before


FAST_RESTART = RestartPolicy(initial_delay=0.05, max_delay=0.2, health_interval=0.2)


async def test_a_crashed_server_is_restarted_and_its_tools_come_back(tmp_path: Path) -> None:
    seen: list[int] = []
    before = children()
    async with running(tmp_path, restart=FAST_RESTART) as hub:
        connection = hub.connections["Tools"]
        connection.on_tools_changed = lambda _name: seen.append(len(connection.tools))
        first_pid = (await hub.call("tools__pid", {})).data  # type: ignore[union-attr]
        with pytest.raises(ToolExecutionError):
            await hub.call("tools__crash", {})
        await eventually(lambda: connection.restarts == 1 and connection.connected, 10)
        # withdrawn while down (no tools offered), restored after
        assert seen[:2] == [0, len(PLAIN_TOOLS)]
        assert [t.name for t in hub.tools] == PLAIN_TOOLS
        second_pid = (await hub.call("tools__pid", {})).data  # type: ignore[union-attr]
        assert second_pid != first_pid and not alive(first_pid["result"])

        # an idle server killed from outside is noticed by the health ping
        os.kill(second_pid["result"], signal.SIGKILL)
        await eventually(lambda: connection.restarts == 2 and connection.connected, 10)
        third = (await hub.call("tools__pid", {})).data  # type: ignore[union-attr]
        assert third["result"] not in (first_pid["result"], second_pid["result"])
    assert children() <= before


async def test_a_long_call_on_a_server_answering_one_request_at_a_time_is_not_cut_short(
    tmp_path: Path,
) -> None:
    # The server answers no probe while the call runs: that is no sign that it
    # died, so the call must complete and the server must not be restarted.
    policy = RestartPolicy(initial_delay=0.05, health_interval=0.1, probe_timeout=0.3)
    async with running(tmp_path, restart=policy) as hub:
        connection = hub.connections["Tools"]
        result = await hub.call("tools__block", {"seconds": 2.0})
        assert isinstance(result, ToolResult) and result.text == "unblocked"
        assert connection.connected and connection.restarts == 0
        # an idle server that stops answering is still found dead by the probe
        pid = (await hub.call("tools__pid", {})).data["result"]  # type: ignore[union-attr]
        os.kill(pid, signal.SIGSTOP)
        await eventually(lambda: not connection.connected, 10)
        os.kill(pid, signal.SIGCONT)  # so that it sees its stdin closed and exits at once
        await eventually(lambda: connection.restarts == 1 and connection.connected, 10)


async def test_restarts_are_bounded_and_tools_stay_withdrawn(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    servers = {"Tools": stdio("once", env={"ONCE_MARKER": str(marker)})}
    policy = RestartPolicy(max_restarts=3, initial_delay=0.05, factor=2, health_interval=None)
    assert [policy.delay(n) for n in range(3)] == [0.05, 0.1, 0.2]
    async with running(tmp_path, servers, restart=policy) as hub:
        connection = hub.connections["Tools"]
        assert marker.exists() and len(hub.tools) == len(PLAIN_TOOLS)
        with pytest.raises(ToolExecutionError):
            await hub.call("tools__crash", {})
        await eventually(lambda: connection.gave_up, 15)
        assert connection.restarts == 0 and not connection.connected
        assert hub.tools == ()
        with pytest.raises(KeyError):
            await hub.call("tools__get_weather", {"city": "Oslo"})


async def test_stop_leaves_no_child_processes(tmp_path: Path) -> None:
    before = children()
    servers = {"a": stdio(), "b": stdio()}
    async with running(tmp_path, servers) as hub:
        pids = []
        for name in ("a__pid", "b__pid"):
            result = await hub.call(name, {})
            assert isinstance(result, ToolResult)
            pids.append(int(result.text))
        assert all(alive(pid) for pid in pids)
        assert set(pids) <= children() - before
        await hub.stop()
        assert not hub.started and hub.tools == () and hub.context is None
        assert not any(alive(pid) for pid in pids)
        await hub.stop()  # idempotent
    assert children() <= before


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        ({"command": "/nonexistent/mcp-server"}, "No such file"),
        (
            stdio("exit"),
            "could not start: it exited (or closed its output) before answering the MCP "
            f"handshake (command: {sys.executable} {SERVER} exit; its stderr ended with: "
            "starting the weather server | fatal: WEATHER_API_KEY is not set)",
        ),
    ],
)
async def test_start_fails_fast_naming_the_server(
    tmp_path: Path, broken: dict[str, Any], expected: str
) -> None:
    before = children()
    hub = MCPToolHub.from_config(
        write_config(tmp_path, {"good": stdio(), "broken": broken}), connect_timeout=TIMEOUT
    )
    started = time.monotonic()
    with pytest.raises(MCPServerError) as info:
        await hub.start()
    assert time.monotonic() - started < 10
    assert info.value.server == "broken"
    assert str(info.value).startswith("MCP server 'broken': ")
    assert expected in str(info.value)
    assert not hub.started and not hub.connections["good"].connected
    await eventually(lambda: children() <= before)


async def test_a_start_up_failure_still_shows_the_servers_stderr(tmp_path: Path) -> None:
    # The stderr read for the error message is passed on as it comes (errlog).
    errlog = io.StringIO()
    hub = MCPToolHub.from_config(write_config(tmp_path, {"w": stdio("exit")}), errlog=errlog)
    with pytest.raises(MCPServerError, match="fatal: WEATHER_API_KEY is not set"):
        await hub.start()
    assert errlog.getvalue() == "starting the weather server\nfatal: WEATHER_API_KEY is not set\n"


async def test_a_start_up_failure_names_the_command_without_a_variables_value(
    tmp_path: Path,
) -> None:
    # Arguments are written with ${VAR} references for secrets; the message shows the
    # reference as written, never the value the server was started with.
    secret = "s3cr3t-token-value"
    broken = {"command": sys.executable, "args": [str(SERVER), "exit", "--key=${API_KEY}"]}
    hub = MCPToolHub.from_config(
        write_config(tmp_path, {"broken": broken}),
        env={**os.environ, "API_KEY": secret},
        connect_timeout=TIMEOUT,
    )
    assert hub.connections["broken"].config.args[-1] == f"--key={secret}"  # what it runs with
    with pytest.raises(MCPServerError) as info:
        await hub.start()
    assert f"(command: {sys.executable} {SERVER} exit '--key=${{API_KEY}}';" in str(info.value)
    assert secret not in str(info.value)


async def test_a_server_writing_bytes_that_are_not_utf8_does_not_stall_the_connection(
    tmp_path: Path,
) -> None:
    # The SDK reads stdout strictly by default: the first such byte ended its reader
    # unnoticed, and this call and every later one waited for an unreadable answer.
    async with running(tmp_path, {"raw": RAW}, call_timeout=5.0) as hub:
        for _ in range(2):
            result = await hub.call("raw__latin1", {})
            assert isinstance(result, ToolResult)
            assert result.text == "caf\ufffd"
        assert hub.connections["raw"].connected


RAW = {"command": sys.executable, "args": [str(SERVER.with_name("_mcp_raw_server.py"))]}


@pytest.mark.parametrize(
    ("tool", "quoted"),
    [
        # the start of an answer cut short: not JSON
        ("garbage", """'{"jsonrpc": "2.0", "result": {"content": [{"type": "text", "text'"""),
        # JSON, but no JSON-RPC message
        ("not_jsonrpc", """'{"answer": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"""),
    ],
)
async def test_a_server_answering_with_a_line_that_is_not_json_rpc_is_restarted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, tool: str, quoted: str
) -> None:
    # The SDK logged a traceback and could not tie the line to a request: with no
    # call_timeout (as under `agent run`) the call waited for ever.
    back = asyncio.Event()
    async with running(tmp_path, {"raw": RAW}, call_timeout=None, restart=FAST_RESTART) as hub:
        connection = hub.connections["raw"]
        connection.on_tools_changed = lambda _name: connection.tools and back.set()
        with pytest.raises(ToolExecutionError) as info:
            await hub.call(f"raw__{tool}", {})
        # the line (thousands of characters) is quoted by its start
        assert re.fullmatch(
            re.escape(
                f"MCP server 'raw', tool '{tool}': the server broke the protocol: it sent a "
                f"line that is not a JSON-RPC message: {quoted}... ("
            )
            + r"\d{4} characters\) \(the connection is restarted\)",
            str(info.value),
        )
        await back.wait()  # its tools are listed again by a new server process
        result = await hub.call("raw__echo", {})
        assert isinstance(result, ToolResult) and result.text == "echo"
        assert connection.restarts == 1
    sdk = [r for r in caplog.records if r.name.startswith("mcp.")]
    assert sdk == []  # no traceback
    ours = [r for r in caplog.records if "broke the protocol" in r.getMessage()]
    assert len(ours) == 1 and ours[0].levelname == "WARNING" and ours[0].exc_info is None


async def test_stray_text_on_a_servers_stdout_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A print() in a tool writes text between the messages: no answer is lost in
    # it, so the call still gets its own and the server is not restarted for it.
    async with running(tmp_path, {"raw": RAW}, call_timeout=None, restart=FAST_RESTART) as hub:
        result = await hub.call("raw__chatty", {})
        assert isinstance(result, ToolResult) and result.text == "sunny"
        assert hub.connections["raw"].connected and hub.connections["raw"].restarts == 0
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warned == [
        "MCP server 'raw' sent text that is no MCP message (ignored): "
        "'calling the weather service...'"
    ]
    assert not [r for r in caplog.records if r.exc_info]


async def test_unresponsive_server_times_out(tmp_path: Path) -> None:
    hub = MCPToolHub.from_config(
        write_config(
            tmp_path,
            {"mute": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}},
        ),
        connect_timeout=1.0,
    )
    before = children()
    with pytest.raises(
        MCPServerError,
        match=r"'mute': did not start within 1 seconds \(command: .*; it wrote nothing to stderr\)",
    ):
        await hub.start()
    await eventually(lambda: children() <= before)


@pytest.mark.parametrize(
    ("variant", "fragments"),
    [
        (
            "collide",
            ["'getWeather'", "'get_weather'", "'tools__get_weather'", "MCP server 'Tools'"],
        ),
        ("badname", ["MCP server 'Tools', tool '3d.render'", "no valid snake_case form"]),
    ],
)
async def test_invalid_or_colliding_tool_names_name_both_sources(
    tmp_path: Path, variant: str, fragments: list[str]
) -> None:
    hub = MCPToolHub.from_config(write_config(tmp_path, {"Tools": stdio(variant)}))
    with pytest.raises(ToolNameError) as info:
        await hub.start()
    for fragment in fragments:
        assert fragment in str(info.value)


async def test_tool_schemas_with_ecma_regexes_are_taken_as_json_schema_defines_them(
    tmp_path: Path,
) -> None:
    # A JavaScript server's named group and \p{...} escapes are valid JSON Schema:
    # the server starts, a named group is checked here, a pattern Python cannot
    # express goes to the server unchecked (which validates its own input).
    server = {"command": sys.executable, "args": [str(SERVER.with_name("_mcp_js_server.py"))]}
    async with running(tmp_path, {"js": server}) as hub:
        assert [t.name for t in hub.tools] == ["js__log_day"]
        result = await hub.call("js__log_day", {"day": "2024-05", "mood": "x", "Note": "ok"})
        assert isinstance(result, ToolResult)
        assert json.loads(result.text) == {"day": "2024-05", "mood": "x", "Note": "ok"}
        with pytest.raises(ToolInputError) as info:
            await hub.call("js__log_day", {"day": "May 2024"})
        assert "$.day: 'May 2024' does not match" in str(info.value)


async def test_server_names_that_collide_as_prefixes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolNameError, match="'my-server' and 'my_server' both become"):
        MCPToolHub.from_config(write_config(tmp_path, {"my-server": stdio(), "my_server": stdio()}))
    with pytest.raises(ToolNameError, match="'9lives'"):
        MCPToolHub.from_config(write_config(tmp_path, {"9lives": stdio()}))


# ----------------------------------------------------------------------------- environment, HTTP


async def test_stdio_servers_get_their_own_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARENT_ONLY", "leaked")
    path = write_config(
        tmp_path, {"Tools": stdio(env={"TOKEN": "$env:MY_TOKEN", "PLAIN": "value"})}
    )
    async with (
        asyncio.timeout(TIMEOUT),
        MCPToolHub.from_config(path, env={"MY_TOKEN": "s3cret"}) as hub,
    ):
        for name, expected in [("TOKEN", "s3cret"), ("PLAIN", "value"), ("PARENT_ONLY", "<unset>")]:
            result = await hub.call("tools__env", {"name": name})
            assert isinstance(result, ToolResult) and result.text == expected


async def test_streamable_http_servers_with_headers(tmp_path: Path) -> None:
    sdk_server = build_tool_server()
    ours = MCPSkillServer(SKILLS, name=AGENT_NAME)
    async with (
        asyncio.timeout(TIMEOUT),
        HTTPServer(sdk_server.streamable_http_app()) as sdk_http,
        HTTPServer(ours.streamable_http_app()) as our_http,
    ):
        servers = {
            "remote": {
                "transport": {
                    "type": "http",
                    "url": f"{sdk_http.url}/mcp",
                    "headers": {"X-Api-Key": "$env:API_KEY"},
                }
            },
            "agent": {"type": "http", "url": f"{our_http.url}/mcp"},
        }
        async with MCPToolHub.from_config(
            write_config(tmp_path, servers), env={"API_KEY": "k-42"}, call_timeout=TIMEOUT
        ) as hub:
            header = await hub.call("remote__header", {"name": "x-api-key"})
            assert isinstance(header, ToolResult) and header.text == "k-42"
            # An a2a-models agent's skill, called as a remote tool, gives back its Task.
            task = await hub.call("agent__add", {"a": 20, "b": 22})
            assert isinstance(task, Task) and task.state is TaskState.COMPLETED
            message = await hub.call("agent__echo", {"text": "hi"})
            assert isinstance(message, Message) and message.text == "echo: hi"
            failed = await hub.call("agent__explode", {"text": "now"})
            assert isinstance(failed, ToolResult) and failed.is_error
            assert failed.text == "[RuntimeError]: kaboom"
            await hub.call("remote__enable_extra", {})
            connection = hub.connections["remote"]
            await eventually(lambda: "remote__extra_tool" in [t.name for t in connection.tools])


async def test_legacy_sse_servers_with_substituted_headers(tmp_path: Path) -> None:
    # The official SDK's HTTP+SSE server (the transport older mcp.json files name "sse").
    sdk_server = build_tool_server()
    async with asyncio.timeout(TIMEOUT), HTTPServer(sdk_server.sse_app()) as http:
        servers = {
            "old": {
                "type": "sse",
                "url": f"{http.url}/sse",
                "headers": {"Authorization": "Bearer ${TOK}", "X-Region": "$env:REGION-1"},
            }
        }
        async with MCPToolHub.from_config(
            write_config(tmp_path, servers),
            env={"TOK": "t-7", "REGION": "eu"},
            call_timeout=TIMEOUT,
        ) as hub:
            assert hub.connections["old"].config.transport == "sse"  # type: ignore[union-attr]
            weather = await hub.call("old__get_weather", {"city": "Oslo"})
            assert isinstance(weather, ToolResult) and weather.text == "sunny in Oslo"
            auth = await hub.call("old__header", {"name": "authorization"})
            region = await hub.call("old__header", {"name": "x-region"})
            assert isinstance(auth, ToolResult) and auth.text == "Bearer t-7"
            assert isinstance(region, ToolResult) and region.text == "eu-1"


async def _raw_http_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A Streamable HTTP MCP server in plain ASGI: ``garbage`` is answered with JSON
    cut short, ``echo`` properly."""
    if scope["type"] == "lifespan":
        while (event := await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["method"] != "POST":  # no server-initiated stream
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    message = json.loads(body)
    request_id, method = message.get("id"), message.get("method")
    status, answer = 202, b""
    if request_id is not None:
        status = 200
        result: dict[str, Any] = {"content": [{"type": "text", "text": "echo"}]}
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
        elif method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("garbage", "echo")]
            result = {"tools": tools}
        answer = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
        if method == "tools/call" and message["params"]["name"] == "garbage":
            answer = answer[:30]
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


async def test_an_unreadable_streamable_http_answer_fails_its_call_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The SDK ties it to its request (no hang), but logged a traceback and the
    # call failed with pydantic's multi-line report.
    async with HTTPServer(_raw_http_app) as http:
        servers = {"raw": {"type": "http", "url": f"{http.url}/mcp"}}
        async with running(tmp_path, servers, call_timeout=None, mode="legacy") as hub:
            with pytest.raises(ToolExecutionError) as info:
                await hub.call("raw__garbage", {})
            assert str(info.value).startswith(
                "MCP server 'raw', tool 'garbage': the server broke the protocol: its answer "
                "is not a JSON-RPC message (Failed to parse JSON response: "
            )
            assert "\n" not in str(info.value)
            result = await hub.call("raw__echo", {})
            assert isinstance(result, ToolResult) and result.text == "echo"
            assert hub.connections["raw"].restarts == 0
    assert not [r for r in caplog.records if r.exc_info]
    assert len([r for r in caplog.records if "broke the protocol" in r.getMessage()]) == 1
