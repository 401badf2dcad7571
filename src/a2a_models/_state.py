"""The task lifecycle: states, their predicates and the transition table.

Everything that decides whether a task may move from one state to another
lives in this module, so the engine, the stores and the tests share one table.
"""

from __future__ import annotations

import enum
from types import MappingProxyType
from typing import Final

__all__ = ["TRANSITIONS", "TaskState", "can_transition"]


class TaskState(enum.Enum):
    """The state of a task (spec §4.1.3).

    Values are the 1.0 wire names. ``UNSPECIFIED`` is the proto default and
    also what 0.3's ``"unknown"`` decodes to.
    """

    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    @property
    def is_terminal(self) -> bool:
        """True for completed, failed, canceled and rejected: nothing follows."""
        return self in _TERMINAL

    @property
    def is_interrupted(self) -> bool:
        """True for input-required and auth-required: the task waits for the client."""
        return self in _INTERRUPTED

    @property
    def is_active(self) -> bool:
        """True while the agent is (or will be) working: submitted or working."""
        return self is TaskState.SUBMITTED or self is TaskState.WORKING

    @property
    def is_cancelable(self) -> bool:
        """True when a cancel request may still move the task to canceled."""
        return TaskState.CANCELED in TRANSITIONS[self]

    def can_transition_to(self, new: TaskState) -> bool:
        """Whether the transition table allows ``self -> new``."""
        return new in TRANSITIONS[self]

    @property
    def proto_number(self) -> int:
        """The enum number of the proto (used by ProtoJSON parsers that send ints)."""
        return _NUMBERS[self]

    @classmethod
    def from_proto_number(cls, number: int) -> TaskState:
        """The state for a proto enum number; raises ``KeyError`` when unknown."""
        return _BY_NUMBER[number]


_TERMINAL: Final = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
_INTERRUPTED: Final = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
_NUMBERS: Final = MappingProxyType({state: i for i, state in enumerate(TaskState)})
_BY_NUMBER: Final = MappingProxyType({i: state for state, i in _NUMBERS.items()})

_S = TaskState
# A state may repeat itself while non-terminal: a fresh status message
# ("still working: 40%") is a legal update. Terminal states are absorbing.
TRANSITIONS: Final[MappingProxyType[TaskState, frozenset[TaskState]]] = MappingProxyType(
    {
        _S.UNSPECIFIED: frozenset(set(_S) - {_S.UNSPECIFIED}),
        _S.SUBMITTED: frozenset(
            {
                _S.SUBMITTED,
                _S.WORKING,
                _S.INPUT_REQUIRED,
                _S.AUTH_REQUIRED,
                _S.COMPLETED,
                _S.FAILED,
                _S.CANCELED,
                _S.REJECTED,
            }
        ),
        _S.WORKING: frozenset(
            {
                _S.WORKING,
                _S.INPUT_REQUIRED,
                _S.AUTH_REQUIRED,
                _S.COMPLETED,
                _S.FAILED,
                _S.CANCELED,
                _S.REJECTED,
            }
        ),
        # The client answered (or will answer): work resumes, or the agent
        # finishes straight away, or the task is abandoned.
        _S.INPUT_REQUIRED: frozenset(
            {
                _S.INPUT_REQUIRED,
                _S.AUTH_REQUIRED,
                _S.SUBMITTED,
                _S.WORKING,
                _S.COMPLETED,
                _S.FAILED,
                _S.CANCELED,
                _S.REJECTED,
            }
        ),
        _S.AUTH_REQUIRED: frozenset(
            {
                _S.AUTH_REQUIRED,
                _S.INPUT_REQUIRED,
                _S.SUBMITTED,
                _S.WORKING,
                _S.COMPLETED,
                _S.FAILED,
                _S.CANCELED,
                _S.REJECTED,
            }
        ),
        _S.COMPLETED: frozenset(),
        _S.FAILED: frozenset(),
        _S.CANCELED: frozenset(),
        _S.REJECTED: frozenset(),
    }
)


def can_transition(old: TaskState, new: TaskState) -> bool:
    """Whether a task in ``old`` may move to ``new``."""
    return new in TRANSITIONS[old]
