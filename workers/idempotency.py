"""Tenants and idempotency keys: the one place a producer's key is scoped and its request fingerprinted.

A key belongs to one tenant and one request. ``scoped_key`` is what the store is given: the key
under its tenant (the Python API's ``tenant``, the CLI's ``--tenant``, the HTTP API's caller key id),
so the same key from two tenants makes two jobs; and the sha256 of the request that made its job, so
the same key with another request is a conflict (``IdempotencyConflict``, HTTP 409), never another
caller's job. A job is stored with its tenant; ``check_owner`` makes a job of another tenant look like
no job at all (``JobNotFound``: HTTP 404, not 403, so a caller cannot even learn that it exists).
A job enqueued without a tenant (the CLI, ``suture batch``, the Python API without ``tenant``) is
the operator's: a tenant's reads see it only when the caller is the operator's too (an API key marked
``operator: true``), and ``check_actor`` lets no tenant's caller act on it (``OperatorJob``).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from suture.workers.errors import (
    EnqueueOutcomeUnknown,
    InvalidJob,
    JobNotFound,
    NotReplicated,
    OperatorJob,
    StoreUnavailable,
)

if TYPE_CHECKING:
    from suture.workers.store.reads import JobReads

# What makes the job; not where it came from (``batch``, ``meta``): a batch rerun from another
# folder is the same request.
REQUEST_FIELDS = ("contract", "params", "source", "policy", "callback")
# Part of the request only when set, so a key stored before they existed keeps its fingerprint.
OPTIONAL_FIELDS = ("policy_rules",)  # of the stored JobSpec
# Parameters that guide the prompt without making another request: a quiz's ``avoid_questions`` (what
# earlier sections of a batch asked, which depends on the order they finished in).
ADVISORY_PARAMS = ("avoid_questions",)
MAX_KEY_CHARS = 255
MAX_TENANT_CHARS = 128
# Separates a tenant's scope from the key: a control character, which no checked key holds, so no
# key given without a tenant can ever name a tenant's.
_SCOPE = "\x1f"


def request_sha256(spec: dict[str, Any]) -> str:
    """The fingerprint of a job's request: its contract, complete parameters, document, policy (rules
    too) and callback."""
    request = {k: spec.get(k) for k in REQUEST_FIELDS}
    request |= {k: spec[k] for k in OPTIONAL_FIELDS if spec.get(k) is not None}
    if isinstance(request["params"], dict):
        request["params"] = {k: v for k, v in request["params"].items() if k not in ADVISORY_PARAMS}
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def scoped_key(key: str | None, spec: dict[str, Any], tenant: str | None = None) -> tuple[str | None, str]:
    """The key as the store keeps it (under ``tenant``), and the fingerprint of the request it comes with."""
    if key is None:
        return None, request_sha256(spec)
    if tenant is None:
        return key, request_sha256(spec)
    scope = hashlib.sha256(tenant.encode()).hexdigest()[:32]
    return f"{_SCOPE}{scope}{_SCOPE}{key}", request_sha256(spec)


def automatic_key() -> str:
    """A fresh idempotency key for an enqueue whose caller gave none (the error of an unknown outcome
    carries it, so retrying with it returns the job the first call may have made)."""
    return f"auto-{uuid.uuid4().hex}"


def created_or_read_back(
    create: Callable[[], tuple[str, bool, str]],
    store: JobReads,
    job_id: str,
    key: str,
    stored_key: str | None,
) -> tuple[str, bool, str]:
    """``create()``'s answer; if its write failed, the job that reading back ``stored_key`` finds.

    A timed-out write may have been applied and only its reply lost: the producer is told the truth,
    never a bare "unavailable" for a job that runs. Found: that job, as if created (the caller learns
    its id). Not found, or the read-back fails too: ``EnqueueOutcomeUnknown`` with ``job_id`` and the
    caller's ``key``; the write may still land, so only a retry under the same key is safe, and is.
    """
    try:
        return create()
    except StoreUnavailable as exc:
        failure = exc
    try:
        # A write no replica acknowledged is on a primary that may be on its way out (a failover): finding
        # it there proves nothing (measured: an accepted job lost when it was read back as created).
        replicated = not isinstance(failure, NotReplicated)
        found = store.job_for_key(stored_key) if stored_key and replicated else None
    except StoreUnavailable:
        found = None
    if found is None:
        raise EnqueueOutcomeUnknown(job_id, key, failure.reason) from None
    return found[0], found[0] == job_id, found[1]


def check_key(key: str | None) -> str | None:
    """``key`` if it can be an idempotency key (1 to 255 characters, no control character); else
    ``InvalidJob``."""
    return _checked(key, "idempotency_key", MAX_KEY_CHARS)


def check_tenant(tenant: str | None) -> str | None:
    """``tenant`` if it can name a tenant (1 to 128 characters, no control character); else ``InvalidJob``."""
    return _checked(tenant, "tenant", MAX_TENANT_CHARS)


def check_owner(job_id: str, owner: str | None, tenant: str | None, *, operator: bool = False) -> None:
    """Raise ``JobNotFound`` if ``tenant`` may not see a job stored with ``owner``.

    No ``tenant`` (a trusted caller: the CLI, the Python API without one) sees every job; a tenant
    sees its own jobs, and those enqueued without a tenant (the operator's) only with ``operator``.
    """
    if tenant is None or owner == tenant or (owner is None and operator):
        return
    raise JobNotFound(job_id)


def check_actor(
    job_id: str, owner: str | None, tenant: str | None, action: str, *, operator: bool = False
) -> None:
    """``check_owner``, then refuse ``action`` (cancel, resume, accept) by a tenant's caller on the
    operator's job with ``OperatorJob``: even an operator key only reads those."""
    check_owner(job_id, owner, tenant, operator=operator)
    if tenant is not None and owner is None:
        raise OperatorJob(job_id, action)


def _checked(value: str | None, field: str, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= limit:
        raise InvalidJob(f"{field} must be text of 1 to {limit} characters", field=field)
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise InvalidJob(f"{field} must not hold control characters (CR, LF, tab...)", field=field)
    return value
