"""Which retry policy a job runs, and whether that policy fits the job's contract.

A job runs the policy it names, else the settings' ``default_policy``, else its contract's own
(``Contract.default_policy``), else ``default``. A policy fits a contract when every invariant its
steps name (``Step.preserve``) is one the contract keeps under every kind of target the step
produces (``policy_fit``): a policy naming what the contract does not keep there is refused, at
settings load for the configured policies (``check_configured_policies``) and at enqueue (and in
``suture eval``) for the job's own (``check_fit``), with one line naming the policy, the step, the
contract and the name.
Pure: a policy is a configured name or data stored with the job; nothing here opens a file.
"""

from __future__ import annotations

from suture.config.settings import Settings
from suture.contracts.contract import Contract
from suture.contracts.errors import ContractDefinitionError
from suture.contracts.registry import REGISTRY, contract_class
from suture.tasks.policy import FALLBACK_POLICY, Policy, PolicyError, load_policy
from suture.tasks.policy_fit import first_unkept


class PolicyMismatch(PolicyError):
    """A policy names what its contract does not keep where the step cuts; one line names the policy,
    the step, the contract and the name (``policy_fit.Unkept.problem``)."""

    def __init__(self, policy: str, contract: str, unknown: str, step: int, problem: str) -> None:
        self.contract = contract
        self.unknown = unknown
        super().__init__(policy, step, "preserve", problem)


def policy_name(explicit: str | None, contract: str, settings: Settings) -> str:
    """The policy a job of ``contract`` runs: the one it names, the settings', the contract's, ``default``."""
    if explicit:
        return explicit
    return settings.default_policy or contract_class(contract).default_policy or FALLBACK_POLICY


def check_fit(policy: Policy, contract: type[Contract]) -> None:
    """Raise ``PolicyMismatch`` unless ``contract`` keeps every invariant a step of ``policy`` names
    under every kind of target that step produces (``policy_fit``)."""
    unkept = first_unkept(policy.steps, contract)
    if unkept is not None:
        problem = unkept.problem(contract.name, sorted(contract.invariant_names()))
        raise PolicyMismatch(policy.name, contract.name, unkept.name, unkept.step, problem)


def check_configured_policies(settings: Settings) -> Settings:
    """Build every configured policy and check it against the registered contracts it is written for
    (``written_for``); returns ``settings``.

    Called where settings are loaded for use (the CLI, a worker starting, the producer), so a policy
    that cannot run is refused before any job depends on it. Raises ``PolicyError``.
    """
    usable = []
    for contract in REGISTRY.names():
        try:
            usable.append(contract_class(contract))
        except ContractDefinitionError:  # a broken contract fails where it is used, naming itself
            continue
    for name in sorted(settings.policies):
        policy = load_policy(name, settings)
        for cls in written_for(policy, usable):
            check_fit(policy, cls)
    return settings


def written_for(policy: Policy, contracts: list[type[Contract]]) -> list[type[Contract]]:
    """The contracts a policy is checked against at settings load: those declaring some invariant its
    steps name (a policy naming the quiz's invariants is the quiz's; enqueue refuses it for another
    contract with ``check_fit``), or every one when it names none, or none of them declares any."""
    names = {name for step in policy.steps for name in step.preserve}
    declaring = [cls for cls in contracts if names & cls.invariant_names()]
    return declaring or contracts
