"""The errors of suture's Python API, one hierarchy: what ``enqueue``, ``get_job``, ``cancel``, ``resume``
and a ``JobHandle`` raise (exported by ``suture``). Importing it loads no Redis, Celery or model SDK.

    ProducerError                                    every error of the producer API
     ├── InvalidJob(problem, field, value, known)    the job cannot run as asked; nothing was stored
     │    ├── UnknownContract                        no such contract (known: its names)
     │    ├── UnknownPolicy                          no such policy: a name, never a path (known: configured
     names)
     │    ├── InvalidPolicy                          a policy that cannot run, or names what the contract
     lacks
     │    ├── InvalidParams                          a parameter the contract cannot take (names it and its
     value)
     │    ├── UnusableInput                          empty, binary, a file format passed as text, undecodable
     │    └── InputTooLarge                          the first prompt exceeds the model's context or
     max_input_tokens
     ├── IdempotencyConflict(key, job_id)            the key already names a job another request made
     ├── NotResumable(job_id, status)                resume (or accept) asked of a job that is not
     soft-delivered
     ├── OperatorJob(job_id, action)                 a tenant's caller acting on a job enqueued without a
     │                                               tenant (the operator's): only the operator acts on it
     ├── JobTimeout(job_id, timeout_s)               the result did not arrive in time (the job keeps running)
     ├── BrokerUnavailable(reason)                   the broker refused the message (URL password never shown)
     ├── NoBrokerConfigured                          (also a ConfigError) no broker configured and no
     │                                               `suture up` running: nothing ever guesses a default Redis
     └── StoreError                                  the job store (``suture.workers.store``)
          ├── JobNotFound(job_id)                    unknown or expired job
          └── StoreUnavailable(reason)               Redis cannot be reached (URL password never shown)
               ├── EnqueueOutcomeUnknown(job_id, idempotency_key, reason)
               │                                     enqueue's write timed out and its read-back could not
               │                                     say whether the job exists: retry with the same key
               └── NotReplicated(reason)             a write no replica acknowledged in time (a failover?):
                                                     it may be thrown away; never read back as done

Every ``str()`` is one line naming the bad value (and the known ones where there is a list), so the
CLI prints it as is (exit 2) and an HTTP API can answer ``InvalidJob`` with 422 and ``JobNotFound``
with 404, using ``field``, ``value`` and ``known`` for the problem details.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from suture.config.settings import ConfigError

# The public errors, listed once: ``suture`` exports exactly these (and NoBrokerConfigured).
__all__ = [
    "BrokerUnavailable",
    "EnqueueOutcomeUnknown",
    "IdempotencyConflict",
    "InputTooLarge",
    "InvalidJob",
    "InvalidParams",
    "InvalidPolicy",
    "JobNotFound",
    "JobTimeout",
    "NotReplicated",
    "NotResumable",
    "OperatorJob",
    "ProducerError",
    "StoreError",
    "StoreUnavailable",
    "UnknownContract",
    "UnknownPolicy",
    "UnusableInput",
]


class ProducerError(Exception):
    """Base of the producer API's errors."""


class InvalidJob(ProducerError):
    """The job cannot be run as asked; nothing was stored. ``field`` names the argument at fault."""

    def __init__(
        self, problem: str, *, field: str | None = None, value: Any = None, known: Sequence[str] = ()
    ) -> None:
        super().__init__(problem)
        self.problem = problem
        self.field = field
        self.value = value
        self.known = list(known)


class UnknownContract(InvalidJob):
    """No contract is registered under the name given."""


class UnknownPolicy(InvalidJob):
    """No policy is configured under the name given (a policy is a name, never a path: no file is opened)."""


class InvalidPolicy(InvalidJob):
    """The policy cannot run (a bad field), or names an invariant its contract does not declare."""


class InvalidParams(InvalidJob):
    """A parameter the contract cannot take: unknown, of the wrong type, or out of bounds."""


class UnusableInput(InvalidJob):
    """The input is no document to work from; ``reason`` is a stable code (empty, binary, ...)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"input document refused ({reason}): {detail}", field="input")
        self.reason = reason
        self.detail = detail


class InputTooLarge(InvalidJob):
    """The first prompt would need more tokens than the model's context window or ``max_input_tokens``."""

    def __init__(self, tokens: int, limit: int, limit_name: str) -> None:
        super().__init__(
            f"input too large: the first prompt needs about {tokens:,} tokens, over the {limit:,} allowed by "
            f"{limit_name}; use `suture batch`, which cuts long documents into sections",
            field="input",
            value=tokens,
        )
        self.tokens = tokens
        self.limit = limit
        self.limit_name = limit_name


class IdempotencyConflict(ProducerError):
    """The idempotency key already names a job that another request (another body) created."""

    def __init__(self, key: str, job_id: str) -> None:
        super().__init__(
            f"idempotency key {key!r} already names job {job_id}, enqueued with a different request"
        )
        self.key = key
        self.job_id = job_id


class NotResumable(ProducerError):
    """Only a soft-delivered job can be resumed with feedback (or accepted by a reviewer)."""

    def __init__(self, job_id: str, status: str, *, action: str = "resumed") -> None:
        super().__init__(f"job {job_id} is {status}; only a soft_delivered job can be {action}")
        self.job_id = job_id
        self.status = status


class OperatorJob(ProducerError):
    """A tenant's caller (an API key, even an operator one) asked to act on a job enqueued without a tenant.

    Such a job (``suture enqueue``, ``suture batch``, the Python API without ``tenant=``) is the
    operator's: it is cancelled, resumed or accepted only without a tenant (the CLI, the local review app).
    """

    def __init__(self, job_id: str, action: str) -> None:
        super().__init__(
            f"job {job_id} was enqueued without a tenant: it is the operator's, and no API key can {action} "
            "it; the operator can: `suture cancel` while it runs, `suture resume` once soft-delivered, or, "
            "for a batch's job, "
            "`suture review OUT`"
        )
        self.job_id = job_id
        self.action = action


class JobTimeout(ProducerError):
    """The job's result was not there within ``timeout_s``; the job keeps running."""

    def __init__(self, job_id: str, timeout_s: float) -> None:
        super().__init__(f"job {job_id} has no result after {timeout_s:g} s (it keeps running)")
        self.job_id = job_id
        self.timeout_s = timeout_s


class BrokerUnavailable(ProducerError):
    """The message broker could not take a job's message; the message never contains a password."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"message broker unavailable: {reason}")
        self.reason = reason


class NoBrokerConfigured(ConfigError, ProducerError):
    """Nothing says where the broker is, and no ``suture up`` runs for this user; str() names the ways out."""

    def __init__(self) -> None:
        super().__init__(
            "no broker configured and no local stack running: start one with `suture up` "
            "(other shells find it), or set SUTURE_BROKER_URL, or broker_url in suture.yaml"
        )


class StoreError(ProducerError):
    """Base of the job store's errors."""


class JobNotFound(StoreError):
    """The job id is unknown (never enqueued, or expired from Redis)."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"no such job: {job_id}")
        self.job_id = job_id


class StoreUnavailable(StoreError):
    """Redis could not be reached or refused the command; the message never contains a password."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"job store (Redis) unavailable: {reason}")
        self.reason = reason


class NotReplicated(StoreUnavailable):
    """A write fewer replicas acknowledged than ``store.wait_replicas`` asks (``WAIT``) within
    ``store.wait_timeout_ms``: its primary may be on its way out (a failover), and the write with it.
    Reading it back from that primary proves nothing; retry the write (with an enqueue's idempotency key)."""


class EnqueueOutcomeUnknown(StoreUnavailable):
    """Enqueue's write to the store failed (a timeout: it may have been applied) and reading back its
    idempotency key did not find the job: it may exist or not. Enqueue again with ``idempotency_key``
    (the caller's, or the automatic one enqueue chose): that returns the job if it exists and creates it
    once if not, never a second one."""

    def __init__(self, job_id: str, idempotency_key: str, reason: str) -> None:
        super().__init__(
            f"{reason}; outcome unknown: job {job_id} may or may not have been created; enqueue again "
            f"with idempotency_key={idempotency_key!r} to get it (or create it) exactly once"
        )
        self.reason = reason
        self.job_id = job_id
        self.idempotency_key = idempotency_key
