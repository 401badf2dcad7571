"""The pure event-application rules (no engine, no I/O)."""

from __future__ import annotations

import pytest

from a2a_models import (
    TRANSITIONS,
    Artifact,
    InvalidAgentResponseError,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_models.server import (
    apply_event,
    closes_stream,
    track_chunks,
    trim_history,
    without_artifacts,
)


def _task(state: TaskState = TaskState.WORKING) -> Task:
    base = Task.submitted(Message.user("hi"), task_id="t1", context_id="c1")
    return (
        base
        if state is TaskState.SUBMITTED
        else Task(id="t1", context_id="c1", status=TaskStatus.now(state), history=base.history)
    )


def _status(
    state: TaskState, text: str | None = None, task_id: str = "t1"
) -> TaskStatusUpdateEvent:
    message = Message.agent(text, task_id=task_id, context_id="c1") if text else None
    return TaskStatusUpdateEvent(
        task_id=task_id, context_id="c1", status=TaskStatus.now(state, message)
    )


def _chunk(
    text: str, *, append: bool = False, last: bool = False, aid: str = "a1"
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(parts=text, artifact_id=aid),
        append=append,
        last_chunk=last,
    )


@pytest.mark.parametrize("old", [s for s in TaskState if s is not TaskState.UNSPECIFIED])
@pytest.mark.parametrize("new", list(TaskState))
def test_status_follows_the_transition_table(old: TaskState, new: TaskState) -> None:
    task = _task(old)
    if old.is_terminal:
        with pytest.raises(InvalidAgentResponseError, match="already"):
            apply_event(task, _status(new))
    elif new in TRANSITIONS[old]:
        assert apply_event(task, _status(new)).status.state is new
    else:
        with pytest.raises(InvalidAgentResponseError) as err:
            apply_event(task, _status(new))
        assert f"{old.name} -> {new.name}" in err.value.message


def test_status_message_joins_the_history() -> None:
    task = apply_event(_task(), _status(TaskState.INPUT_REQUIRED, "which city?"))
    assert task.status.state is TaskState.INPUT_REQUIRED
    assert [m.text for m in task.history] == ["hi", "which city?"]
    # The same message again (same id) is not duplicated.
    again = apply_event(
        task, TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=task.status)
    )
    assert len(again.history) == 2


def test_nothing_is_accepted_after_a_terminal_state() -> None:
    done = apply_event(_task(), _status(TaskState.COMPLETED))
    for event in (_status(TaskState.WORKING), _chunk("x"), Message.agent("late"), done):
        with pytest.raises(InvalidAgentResponseError, match="COMPLETED"):
            apply_event(done, event)


def test_events_of_another_task_or_context_are_rejected() -> None:
    with pytest.raises(InvalidAgentResponseError, match="for task 'other'"):
        apply_event(_task(), _status(TaskState.WORKING, task_id="other"))
    wrong_context = TaskStatusUpdateEvent(
        task_id="t1", context_id="c2", status=TaskStatus.now(TaskState.WORKING)
    )
    with pytest.raises(InvalidAgentResponseError, match="contextId"):
        apply_event(_task(), wrong_context)


def test_artifact_chunks_assemble() -> None:
    task = _task()
    task = apply_event(task, _chunk("a"))
    task = apply_event(task, _chunk("b", append=True))
    assert [p.text for p in task.artifacts[0].parts if isinstance(p, TextPart)] == ["a", "b"]
    task = apply_event(task, _chunk("c", append=True, last=True))
    assert len(task.artifacts) == 1
    # the last chunk joins the streamed text parts (stored compactly)
    assert [p.text for p in task.artifacts[0].parts if isinstance(p, TextPart)] == ["abc"]


def test_artifact_without_append_replaces_by_id() -> None:
    task = apply_event(apply_event(_task(), _chunk("a")), _chunk("z", aid="a2"))
    task = apply_event(task, _chunk("new"))
    assert [a.artifact_id for a in task.artifacts] == ["a1", "a2"]
    assert task.artifacts[0].parts == (Part.text("new"),)


def test_append_to_a_missing_artifact_is_rejected() -> None:
    with pytest.raises(InvalidAgentResponseError, match="does not have"):
        apply_event(_task(), _chunk("b", append=True))


def test_append_updates_name_and_merges_metadata() -> None:
    first = TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(parts="a", artifact_id="a1", name="n", metadata={"x": 1}),
    )
    more = TaskArtifactUpdateEvent(
        task_id="t1",
        context_id="c1",
        artifact=Artifact(parts="b", artifact_id="a1", description="d", metadata={"y": 2}),
        append=True,
    )
    artifact = apply_event(apply_event(_task(), first), more).artifacts[0]
    assert (artifact.name, artifact.description, artifact.metadata) == ("n", "d", {"x": 1, "y": 2})


def test_last_chunk_is_tracked() -> None:
    closed = track_chunks(frozenset(), _chunk("a"))
    closed = track_chunks(closed, _chunk("b", append=True, last=True))
    assert closed == {"a1"}
    with pytest.raises(InvalidAgentResponseError, match="after its last chunk"):
        track_chunks(closed, _chunk("c", append=True))
    # Sending it whole again starts it over.
    assert track_chunks(closed, _chunk("again")) == frozenset()
    assert track_chunks(closed, _status(TaskState.WORKING)) is closed


def test_messages_join_the_history_with_the_task_ids() -> None:
    task = apply_event(_task(), Message.agent("note"))
    assert task.history[-1].text == "note"
    assert (task.history[-1].task_id, task.history[-1].context_id) == ("t1", "c1")


def test_snapshot_replaces_state_but_never_shrinks_history() -> None:
    task = apply_event(_task(), _status(TaskState.WORKING, "step 1"))
    snapshot = Task(
        id="t1",
        context_id="c1",
        status=TaskStatus.now(TaskState.COMPLETED),
        artifacts=[Artifact(parts="out", artifact_id="r")],
        history=[Message.agent("summary")],
    )
    after = apply_event(task, snapshot)
    assert after.status.state is TaskState.COMPLETED
    assert [a.artifact_id for a in after.artifacts] == ["r"]
    assert [m.text for m in after.history] == ["hi", "step 1", "summary"]
    with pytest.raises(InvalidAgentResponseError, match="cannot replace"):
        apply_event(task, Task(id="t2", status=TaskStatus.now(TaskState.WORKING)))


def test_snapshot_transition_is_checked() -> None:
    with pytest.raises(InvalidAgentResponseError, match="WORKING -> SUBMITTED"):
        apply_event(_task(), Task(id="t1", status=TaskStatus.now(TaskState.SUBMITTED)))


def test_trim_history() -> None:
    task = apply_event(apply_event(_task(), Message.agent("2")), Message.agent("3"))
    assert trim_history(task, None) is task
    assert trim_history(task, 0).history == ()
    assert [m.text for m in trim_history(task, 2).history] == ["2", "3"]
    assert trim_history(task, 10) is task


def test_without_artifacts() -> None:
    task = apply_event(_task(), _chunk("a"))
    assert without_artifacts(task).artifacts == ()
    plain = _task()
    assert without_artifacts(plain) is plain


@pytest.mark.parametrize(
    ("state", "on_interrupted", "closes"),
    [
        (TaskState.WORKING, True, False),
        (TaskState.COMPLETED, False, True),
        (TaskState.INPUT_REQUIRED, False, False),
        (TaskState.INPUT_REQUIRED, True, True),
        (TaskState.AUTH_REQUIRED, True, True),
    ],
)
def test_closes_stream(state: TaskState, on_interrupted: bool, closes: bool) -> None:
    assert closes_stream(_status(state), on_interrupted=on_interrupted) is closes
    assert closes_stream(_task(state), on_interrupted=on_interrupted) is closes
    assert closes_stream(_chunk("a"), on_interrupted=True) is False
