"""Random agent behaviour and client requests against the engine, checking invariants.

The agent is scripted by the state machine: each rule feeds one event (legal
or not) to a running turn, or makes a request. After every step:

* nothing changes a task once it is terminal (same snapshot, same version);
* a task's history only grows (the old history is a prefix of the new);
* the store version is the number of writes: each write adds exactly one;
* the event log's sequence numbers are 1..n with no gap, n = ``last_seq``,
  it starts with the Task, and its last state change is the task's state.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)

from a2a_models import (
    Artifact,
    CancelTaskRequest,
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from a2a_models.models import state_of
from a2a_models.server import (
    Agent,
    AgentEvent,
    InMemoryTaskStore,
    RequestContext,
    RequestHandler,
    StoredTask,
)

from ._support import make_card, send, settle

RAISE = "raise"
END = "end"
# Mostly states that keep the task going, so turns last several steps.
STATES = st.sampled_from(
    [TaskState.WORKING] * 4
    + [TaskState.INPUT_REQUIRED] * 3
    + [TaskState.AUTH_REQUIRED]
    + [s for s in TaskState if s is not TaskState.WORKING]
)
KINDS = st.sampled_from(
    ["status"] * 4 + ["artifact"] * 4 + ["message", "snapshot", "snapshot", RAISE, END]
)
TASKS: Bundle[str] = Bundle("tasks")


def event_rule() -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The rule decorator of one scripted agent event."""
    return rule(
        task_id=TASKS,
        kind=KINDS,
        state=STATES,
        artifact_id=st.sampled_from(["a", "b"]),
        append=st.sampled_from([False, False, True]),
        last_chunk=st.booleans(),
        with_message=st.booleans(),
    )


class CountingStore(InMemoryTaskStore):
    """Counts the writes to each task and checks each one adds exactly one version."""

    def __init__(self) -> None:
        super().__init__(max_tasks=None, terminal_ttl=None)
        self.writes: dict[str, int] = {}

    async def create(
        self,
        task: Task,
        owner: str | None,
        tenant: str | None = None,
        *,
        event: StreamResponse | None = None,
    ) -> StoredTask:
        stored = await super().create(task, owner, tenant, event=event)
        assert stored.version == 1
        self.writes[task.id] = 1
        return stored

    async def update(
        self,
        task: Task,
        expected_version: int,
        *,
        event: StreamResponse | None = None,
        history_offset: int = 0,
    ) -> int:
        version = await super().update(
            task, expected_version, event=event, history_offset=history_offset
        )
        assert version == expected_version + 1
        self.writes[task.id] += 1
        return version

    async def append_event(self, task_id: str, event: StreamResponse) -> int:
        seq = await super().append_event(task_id, event)
        self.writes[task_id] += 1
        return seq


class ScriptedAgent(Agent):
    """Yields whatever the test puts in the turn's inbox."""

    def __init__(self) -> None:
        self.inboxes: dict[str, asyncio.Queue[AgentEvent | str]] = {}

    async def execute(self, context: RequestContext) -> AsyncIterator[AgentEvent]:
        inbox: asyncio.Queue[AgentEvent | str] = asyncio.Queue()
        self.inboxes[context.task_id] = inbox
        try:
            yield context.working()
            while True:
                item = await inbox.get()
                if item == END:
                    return
                if item == RAISE:
                    raise RuntimeError("scripted failure")
                assert not isinstance(item, str)
                yield item
        finally:
            if self.inboxes.get(context.task_id) is inbox:
                del self.inboxes[context.task_id]


class EngineMachine(RuleBasedStateMachine):
    tasks = TASKS

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.store = CountingStore()
        self.agent = ScriptedAgent()
        self.handler = RequestHandler(self.agent, make_card(), store=self.store)
        # A second replica sharing the store, running no agent turns.
        self.replica = RequestHandler(ScriptedAgent(), make_card(), store=self.store)
        self.seen: dict[str, Task] = {}
        self.finished: dict[str, tuple[Task, int]] = {}

    def run(self, coro: object) -> object:
        async def step() -> object:
            result = await coro  # type: ignore[misc]
            await settle(30)
            return result

        return self.loop.run_until_complete(step())

    def teardown(self) -> None:
        self.loop.run_until_complete(self.handler.aclose())
        self.loop.close()

    def state(self, task_id: str) -> TaskState:
        stored = self.loop.run_until_complete(self.store.get(task_id, None))
        assert stored is not None
        return stored.task.status.state

    # -- rules ---------------------------------------------------------------------------

    @initialize(target=tasks)
    def first(self) -> str:
        return self.start()

    @rule(target=tasks)
    def another(self) -> str:
        return self.start()

    def start(self) -> str:
        task = self.run(self.handler.on_send_message(send("go", return_immediately=True)))
        assert isinstance(task, Task)
        return task.id

    # Two identical rules: agent events are picked twice as often as requests.
    @event_rule()
    def agent_event(self, **kwargs: object) -> None:
        self.feed(**kwargs)  # type: ignore[arg-type]

    @event_rule()
    def another_agent_event(self, **kwargs: object) -> None:
        self.feed(**kwargs)  # type: ignore[arg-type]

    def feed(
        self,
        task_id: str,
        kind: str,
        state: TaskState,
        artifact_id: str,
        append: bool,
        last_chunk: bool,
        with_message: bool,
    ) -> None:
        inbox = self.agent.inboxes.get(task_id)
        if inbox is None:
            return  # no turn running
        stored = self.loop.run_until_complete(self.store.get(task_id, None))
        assert stored is not None
        context_id = stored.task.context_id or ""
        item: AgentEvent | str
        if kind == "status":
            message = Message.agent(f"{state.name}") if with_message else None
            item = TaskStatusUpdateEvent(
                task_id=task_id, context_id=context_id, status=TaskStatus.now(state, message)
            )
        elif kind == "artifact":
            item = TaskArtifactUpdateEvent(
                task_id=task_id,
                context_id=context_id,
                artifact=Artifact(parts=f"chunk of {artifact_id}", artifact_id=artifact_id),
                append=append,
                last_chunk=last_chunk,
            )
        elif kind == "message":
            item = Message.agent("note")
        elif kind == "snapshot":
            item = Task(id=task_id, context_id=context_id, status=TaskStatus.now(state))
        else:
            item = kind
        inbox.put_nowait(item)
        self.run(asyncio.sleep(0))
        after = self.state(task_id)
        event(f"agent {kind}: {stored.task.status.state.name} -> {after.name}")

    @rule(task_id=tasks, elsewhere=st.booleans())
    def cancel(self, task_id: str, elsewhere: bool) -> None:
        before = self.state(task_id)
        handler = self.replica if elsewhere else self.handler
        try:
            task = self.run(handler.on_cancel_task(CancelTaskRequest(id=task_id)))
        except TaskNotCancelableError:
            assert before.is_terminal
            event("cancel: not cancelable")
        else:
            assert not before.is_terminal
            event(f"cancel {'elsewhere' if elsewhere else 'here'}: {before.name}")
            assert isinstance(task, Task) and task.status.state is TaskState.CANCELED

    @rule(task_id=tasks)
    def follow_up(self, task_id: str) -> None:
        before = self.state(task_id)
        request = send("more", task_id=task_id, return_immediately=True)
        try:
            task = self.run(self.handler.on_send_message(request))
        except UnsupportedOperationError:
            assert not before.is_interrupted
            event("follow-up: refused")
        else:
            assert before.is_interrupted
            event("follow-up: accepted")
            assert isinstance(task, Task) and task.history[-1].text in ("more", "WORKING")

    @rule(data=st.data())
    def answer(self, data: st.DataObject) -> None:
        waiting = sorted(t for t in self.store.writes if self.state(t).is_interrupted)
        if waiting:
            self.follow_up(data.draw(st.sampled_from(waiting), label="interrupted task"))

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def tasks_evolve_lawfully(self) -> None:
        self.loop.run_until_complete(self._check())

    async def _check(self) -> None:
        for task_id, writes in self.store.writes.items():
            stored = await self.store.get(task_id, None)
            assert stored is not None
            task = stored.task
            assert stored.version == writes
            previous = self.seen.get(task_id)
            if previous is not None:
                assert task.history[: len(previous.history)] == previous.history
            if task_id in self.finished:
                assert (task, stored.version) == self.finished[task_id]
            elif task.status.state.is_terminal:
                self.finished[task_id] = (task, stored.version)
            self.seen[task_id] = task
            log = await self.store.events_after(task_id, 0)
            assert [seq for seq, _ in log] == list(range(1, len(log) + 1))
            assert len(log) == stored.last_seq
            assert isinstance(log[0][1], Task)
            states = [s for s in (state_of(e) for _, e in log) if s is not None]
            assert states[-1] is task.status.state


EngineMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=30, deadline=None)
test_engine_state_machine = EngineMachine.TestCase
