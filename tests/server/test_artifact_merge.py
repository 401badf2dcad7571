"""Streamed artifacts are stored compactly: adjacent text parts join at the last chunk."""

from __future__ import annotations

from a2a_models import Artifact, DataPart, Message, Task, TaskArtifactUpdateEvent, TextPart
from a2a_models.server._lifecycle import apply_event, merge_text_parts


def _chunk(task: Task, parts: list[object], *, append: bool, last: bool) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        artifact=Artifact(artifact_id="a1", parts=parts),
        append=append,
        last_chunk=last,
    )


def test_a_streamed_answer_is_one_part_once_its_last_chunk_arrives() -> None:
    task = Task.submitted(Message.user("hi"), task_id="t1", context_id="c1")
    answer = "The knowledge graph has 3 nodes and 2 edges, all linked."
    pieces = [answer[i : i + 7] for i in range(0, len(answer), 7)]
    for i, piece in enumerate(pieces[:-1]):
        task = apply_event(task, _chunk(task, [TextPart(piece)], append=i > 0, last=False))
    assert len(task.artifacts[0].parts) == len(pieces) - 1  # still streaming: kept as sent
    task = apply_event(task, _chunk(task, [TextPart(pieces[-1])], append=True, last=True))
    assert task.artifacts[0].parts == (TextPart(answer),)


def test_only_alike_adjacent_text_parts_merge() -> None:
    parts = (
        TextPart("a"),
        TextPart("b"),
        DataPart({"x": 1}),
        TextPart("c"),
        TextPart("d", media_type="text/markdown"),
        TextPart("e", media_type="text/markdown"),
        TextPart("f", metadata={"k": 1}),
        TextPart("g"),
    )
    assert merge_text_parts(parts) == (
        TextPart("ab"),
        DataPart({"x": 1}),
        TextPart("c"),
        TextPart("de", media_type="text/markdown"),
        TextPart("f", metadata={"k": 1}),
        TextPart("g"),
    )
    single = (TextPart("x"), DataPart(1))
    assert merge_text_parts(single) is single


def test_an_artifact_sent_whole_keeps_its_parts() -> None:
    task = Task.submitted(Message.user("hi"), task_id="t1", context_id="c1")
    event = _chunk(task, [TextPart("a"), TextPart("b")], append=False, last=True)
    assert apply_event(task, event).artifacts[0].parts == (TextPart("a"), TextPart("b"))
