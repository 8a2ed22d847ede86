"""The local stack's errors, in one place::

StackError(component, problem, log_tail)   a part would not start (the stack is already stopped),
                                           or another local stack already runs for this user
NoBrokerConfigured                         (drawn in suture.workers.errors, the API's one hierarchy)
                                           nothing configured and no local stack running
"""

from __future__ import annotations

from suture.workers.errors import NoBrokerConfigured

__all__ = ["NoBrokerConfigured", "StackError"]


class StackError(Exception):
    """A component of the local stack failed to start; carries the component and its log's tail."""

    def __init__(self, component: str, problem: str, log_tail: str = "") -> None:
        super().__init__(component, problem, log_tail)
        self.component = component
        self.problem = problem
        self.log_tail = log_tail

    def __str__(self) -> str:
        tail = f"\n--- last lines of its log ---\n{self.log_tail}" if self.log_tail else ""
        return f"{self.component} did not start: {self.problem}{tail}"
