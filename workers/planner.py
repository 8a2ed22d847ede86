"""What comes next for a stored job: its engine state, its policy and batch examples, the next action.

Both halves of the flow ask it: ``workers.flow`` to run a job's steps and ``workers.delivery`` to
finish it. A job enqueued with a ``batch`` gets example tier 2 on its retries: the fully valid
outputs of earlier jobs of the batch (``workers.accepted``), read only when a retry is planned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from config.settings import Settings
from contracts.examples import AcceptedOutput
from tasks import engine
from tasks.job import EngineOptions, Finish, JobSpec, JobState, RunFull, RunSurgical
from tasks.policy import Policy, load_policy
from workers.accepted import AcceptedOutputs
from workers.store import JobRecord, JobStore

Action = RunFull | RunSurgical | Finish


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
        """Surgical attempt ``n`` as stored (else as the engine would plan it now), or None if it is not next."""
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
        spec = record.spec
        return JobSpec(
            job_id=record.job_id,
            contract=spec["contract"],
            params=dict(spec.get("params") or {}),
            source=spec["input"],
            simulated=self.simulated(),
            options=EngineOptions.from_settings(self.settings),
        )

    def _accepted(self, state: JobState, record: JobRecord, policy: Policy) -> list[AcceptedOutput]:
        # Only retries attach examples from the batch: a first attempt costs no extra Redis read.
        batch = record.spec.get("batch")
        if not batch or not policy.examples or not state.attempts or state.status is not None:
            return []
        return self.accepted_outputs.recent(str(batch))

    def _policy(self, record: JobRecord) -> Policy:
        name = record.spec.get("policy") or self.settings.default_policy
        if name not in self.settings.policies:  # a policy file: read each time, it may change
            return load_policy(name, self.settings)
        # A configured policy is fixed for this process's settings: build it once, not per step.
        policy = self._policies.get(name)
        if policy is None:
            policy = self._policies[name] = load_policy(name, self.settings)
        return policy
