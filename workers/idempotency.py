"""Idempotency keys: the one place a producer's key is scoped and its request fingerprinted.

A key is stored with the sha256 of the request that made its job, so the same key with another
request is a conflict (``producer.IdempotencyConflict``, HTTP 409), never another caller's job.
Tenant scoping (a key per tenant) belongs here too: ``scoped_key`` is what the store is given.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# What makes the job; not where it came from (``batch``, ``meta``): a batch rerun from another
# folder is the same request.
REQUEST_FIELDS = ("contract", "params", "source", "policy", "callback")  # of the stored JobSpec
# Parameters that guide the prompt without making another request: a quiz's ``avoid_questions`` (what
# earlier sections of a batch asked, which depends on the order they finished in).
ADVISORY_PARAMS = ("avoid_questions",)


def request_sha256(spec: dict[str, Any]) -> str:
    """The fingerprint of a job's request: its contract, complete parameters, document, policy and callback."""
    request = {k: spec.get(k) for k in REQUEST_FIELDS}
    if isinstance(request["params"], dict):
        request["params"] = {k: v for k, v in request["params"].items() if k not in ADVISORY_PARAMS}
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def scoped_key(key: str | None, spec: dict[str, Any]) -> tuple[str | None, str]:
    """The key as the store keeps it, and the fingerprint of the request it comes with."""
    return key, request_sha256(spec)
