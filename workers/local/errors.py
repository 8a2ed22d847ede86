"""The local stack's errors, in one place::

StackError(component, problem, log_tail)   a part would not start (the stack is already stopped),
                                           or another local stack already runs for this user
NoBrokerConfigured                         (a suture.config ConfigError, and a ProducerError of the
                                           API's one hierarchy) nothing configured and no local stack
                                           running, so a producer has nowhere to go
"""

from __future__ import annotations

from suture.config.settings import ConfigError
from suture.workers.errors import ProducerError


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


class NoBrokerConfigured(ConfigError, ProducerError):
    """Nothing says where the broker is, and no ``suture up`` runs for this user; str() names the ways out."""

    def __init__(self) -> None:
        super().__init__(
            "no broker configured and no local stack running: start one with `suture up` "
            "(other shells find it), or set SUTURE_BROKER_URL, or broker_url in suture.yaml"
        )
