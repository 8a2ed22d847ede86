"""What comes next for a stored job: its engine state, its policy and batch examples, the next action.

Both halves of the flow ask it: ``suture.workers.flow.job_flow`` to run a job's steps and
``suture.workers.flow.delivery`` to
finish it. A job enqueued with a ``batch`` gets example tier 2 on its retries: the fully valid
outputs of earlier jobs of the batch (``suture.workers.flow.accepted``), read only when a retry is planned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from suture.config.settings import Settings
from suture.contracts.examples import AcceptedOutput
from suture.tasks import engine
from suture.tasks.job import Finish, JobState, RunFix, RunFull, RunSurgical
from suture.tasks.policy import Policy, load_policy, policy_from_mapping
from suture.tasks.policy_choice import policy_name
from suture.tasks.spec import EngineOptions, JobSpec
from suture.workers.flow.accepted import AcceptedOutputs
from suture.workers.store.job_store import JobRecord, JobStore

Action = RunFull | RunSurgical | RunFix | Finish


@dataclass
class Planner:
    """Reads a stored job as the engine sees it, and asks the engine what comes next."""

    settings: Settings
    store: JobStore
    # Asked each time: the model client learns it talks to a simulator from its first reply.
    simulated: Callable[[], bool] = lambda: False
    _policies: dict[str, Policy] = field(default_factory=dict, init=False, repr=False)

    def state(self, record: JobRecord) -> JobState:
        """The job's engine state as stored, or its start state if no attempt applied yet."""
        if record.state is not None:
            return JobState.model_validate(record.state)
        return engine.start(self._engine_spec(record))

    def next(self, state: JobState, record: JobRecord) -> Action:
        """What the engine asks after ``state``, under the job's policy (secrets redacted from prompts)."""
        policy = self._policy(record)
        accepted = self._accepted(state, record, policy)
        return engine.next_action(state, policy, accepted=accepted, secrets=self.settings.secrets())

    def surgical_action(self, record: JobRecord, n: int) -> RunSurgical | None:
        """Surgical attempt ``n`` as stored (else as the engine would plan it now), or None if it is not
        next."""
        stored = record.action(n)
        if stored is not None:
            return RunSurgical.model_validate(stored)
        action = self.next(self.state(record), record)
        return action if isinstance(action, RunSurgical) and action.n == n else None

    @cached_property
    def accepted_outputs(self) -> AcceptedOutputs:
        """The batches' accepted outputs, in the job store's Redis."""
        limit = self.settings.worker.accepted_per_batch
        ttl_s = self.settings.worker.store_ttl_s
        return AcceptedOutputs(self.store.redis, limit=limit, ttl_s=ttl_s, prefix=self.store.prefix)

    def _engine_spec(self, record: JobRecord) -> JobSpec:
        """The stored spec (its contract params as enqueued) with this worker's model facts and options."""
        options = EngineOptions.from_settings(self.settings)
        return record.job_spec.model_copy(update={"simulated": self.simulated(), "options": options})

    def _accepted(self, state: JobState, record: JobRecord, policy: Policy) -> list[AcceptedOutput]:
        # Only retries attach examples from the batch: a first attempt costs no extra Redis read.
        batch = record.job_spec.batch
        if not batch or not policy.examples or not state.attempts or state.status is not None:
            return []
        return self.accepted_outputs.recent(str(batch))

    def _policy(self, record: JobRecord) -> Policy:
        spec = record.job_spec
        if spec.policy_rules is not None:  # a user's policy file, stored as data with the job
            return policy_from_mapping(spec.policy or "file", spec.policy_rules, self.settings)
        # A configured policy (never a path: load_policy opens no file) is fixed for this process's
        # settings: build it once, not per step.
        name = policy_name(spec.policy, spec.contract, self.settings)
        policy = self._policies.get(name)
        if policy is None:
            policy = self._policies[name] = load_policy(name, self.settings)
        return policy


def describe(action: Action) -> str:
    """An action in a few words, for logs and alerts (``attempt 3, 2 slice(s)``)."""
    if isinstance(action, RunFull):
        return f"attempt {action.n}, full"
    if isinstance(action, RunSurgical):
        return f"attempt {action.n}, {len(action.calls)} slice(s)"
    if isinstance(action, RunFix):
        return f"attempt {action.n}, fix ({', '.join(action.codes)}; no model call)"
    return f"delivery ({action.status})"
