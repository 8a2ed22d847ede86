"""Sentry events a person can act on: one per job that did not end cleanly, grouped by what to fix.

A soft-delivered job sends one *warning* ("Quiz delivered after contract retry exhaustion:
imbalanced_options"), grouped by contract and its dominant failure code (every code is a tag); a
failed job sends one *error* grouped by its cause ("Quiz job failed: auth"); a refusal sends a
warning. Each event carries the remaining failures as ``{pointer, code, message}`` (the first 20 and
the count), the reason, policy, contract and parameters, where the job came from (file, section,
batch: names only) and how to see and fix it (the review URL with ``api.public_url``, else the
``suture result`` / ``suture resume`` commands). Failure messages are scrubbed of the job's own
document and output text. A job given up for an internal error sends nothing here: the error itself
was reported once, with its traceback (``suture.workers.runtime.incidents``).

Nothing here raises into the caller, and nothing is sent when Sentry is off.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sentry_sdk

from suture.workers.flow.delivery import review_url
from suture.workers.runtime.sentry import scrub_text

MAX_FAILURES_SHOWN = 20
MAX_MESSAGE_CHARS = 300
MAX_TAG_CHARS = 200  # Sentry truncates tag values at 200 characters
MAX_CODE_TAGS = 10
SEVERITY_RANK = {"error": 0, "warning": 1}

SOFT_TITLES = {
    "budget": "{title} delivered at its cost budget",
    "deadline": "{title} delivered at its deadline",
    "worker_lost": "{title} delivered after its workers were lost",
}


@dataclass(frozen=True)
class JobFacts:
    """What an alert says about a job besides its result: names and settings, never its text.

    ``sensitive`` holds the job's document (and anything else never to be sent): it is only used to
    scrub messages, and never sent itself.
    """

    job_id: str
    contract: str
    title: str
    params: dict[str, Any] = field(default_factory=dict)
    policy: str | None = None
    batch: str | None = None
    origin: dict[str, Any] = field(default_factory=dict)
    public_url: str | None = None
    sensitive: Sequence[str] = field(default_factory=tuple, repr=False)
    tenant: str | None = None


def report_final(result: dict[str, Any], facts: JobFacts) -> str | None:
    """Send the event a finished job deserves (none for a clean delivery); returns the event id if sent."""
    status, cause = result.get("status"), result.get("cause")
    if status not in ("soft_delivered", "failed", "refused") or cause == "internal":
        return None
    codes = failure_codes(result)
    dominant = dominant_code(result.get("failures") or [])
    summary = attempt_summary(result)
    if status == "soft_delivered":
        template = SOFT_TITLES.get(str(cause), "{title} delivered after contract retry exhaustion")
        message, level = f"{template.format(title=facts.title)}: {dominant}", "warning"
        fingerprint = ["suture", "soft_delivered", facts.contract, dominant]
    elif status == "failed":
        message, level = f"{facts.title} job failed: {cause or 'unknown'}", "error"
        fingerprint = ["suture", "failed", facts.contract, str(cause or "unknown")]
    else:
        message, level = f"{facts.title} refused by the model", "warning"
        fingerprint = ["suture", "refused", facts.contract]
    return sentry_sdk.capture_message(
        message,
        level=level,  # type: ignore[arg-type]
        tags=_tags(result, facts, codes, dominant, summary),
        contexts=_contexts(result, facts, summary),
        fingerprint=fingerprint,
    )


def failure_codes(result: dict[str, Any]) -> list[str]:
    """The distinct failure codes of the delivered output, sorted."""
    return sorted({str(f.get("code")) for f in result.get("failures") or [] if isinstance(f, dict)})


def dominant_code(failures: list[dict[str, Any]]) -> str:
    """The code to group by: the most frequent, then the most severe, then the first by name ("none")."""
    counts = Counter(str(f.get("code")) for f in failures if isinstance(f, dict))
    if not counts:
        return "none"
    severity = {str(f.get("code")): SEVERITY_RANK.get(str(f.get("severity", "error")), 0) for f in failures}
    return min(counts, key=lambda code: (-counts[code], severity.get(code, 0), code))


def attempt_summary(result: dict[str, Any]) -> dict[str, Any]:
    """Counts, models, cost and latency of the job's attempts; no prompt, document or output text."""
    attempts = [a for a in result.get("attempts") or [] if isinstance(a, dict)]
    usage = result.get("usage") or {}
    return {
        "job_id": result.get("job_id"),
        "status": result.get("status"),
        "attempts": len(attempts),
        "late_attempts": sum(1 for a in attempts if a.get("late")),
        "full_attempts": sum(1 for a in attempts if a.get("mode") == "full"),
        "surgical_attempts": sum(1 for a in attempts if a.get("mode") == "surgical"),
        "steps_used": len({a.get("step") for a in attempts}),
        "models": list(dict.fromkeys(str(a.get("model")) for a in attempts)),
        "final_failures": len(result.get("failures") or []),
        "rolled_back": sum(len(a.get("rolled_back") or []) for a in attempts),
        "transport_retries": sum(int(a.get("transport_retries") or 0) for a in attempts),
        "input_tokens": usage.get("input_tokens"),
        "output_tokens": usage.get("output_tokens"),
        "cost_usd": result.get("cost_usd"),
        "latency_ms": result.get("latency_ms"),
        "simulated": bool(result.get("simulated")),
    }


def remaining_failures(result: dict[str, Any], sensitive: Sequence[str]) -> dict[str, Any]:
    """The first failures as ``{pointer, code, message}`` (messages scrubbed of the job's text) and the
    count."""
    failures = [f for f in result.get("failures") or [] if isinstance(f, dict)]
    shown = [
        {
            "pointer": str(f.get("pointer")),
            "code": str(f.get("code")),
            "message": scrub_text(str(f.get("message") or ""), sensitive)[:MAX_MESSAGE_CHARS],
        }
        for f in failures[:MAX_FAILURES_SHOWN]
    ]
    return {"count": len(failures), "shown": shown}


# What to fix for a failed job, by cause: resume applies to soft-delivered jobs only, never to these.
FAILED_HINTS = {
    "auth": "the provider refused the API key: check OPENAI_API_KEY (openai_api_key) on the workers, then "
    "enqueue again",
    "bad_request": "the provider refused the request: check the model names in the policy and the client "
    "settings",
    "deadline": "the job ran past worker.job_deadline_s: add model workers for the backlog, or raise the "
    "setting",
    "budget": "the next step would exceed the policy's budget_usd: raise it, or start with a cheaper model",
    "provider_unavailable": "the provider answered 429/5xx: set its limits (limits:), wait, then enqueue "
    "again",
    "invalid_output": "the model never produced parseable output: raise client.max_completion_tokens, or "
    "change model",
    "worker_lost": "workers died on the job: check their memory and worker.time_limit_s, then enqueue again",
}


def review(facts: JobFacts, result: dict[str, Any] | None = None) -> dict[str, str]:
    """How a person sees and fixes the job: the review page, or the CLI commands; for a failed job, a
    hint by its cause (a failed job cannot be resumed: it is enqueued again once the cause is fixed)."""
    result = result or {}
    if result.get("status") == "failed":
        cause = str(result.get("cause") or "")
        hint = FAILED_HINTS.get(cause, "see the reason in contexts.job, fix it, then enqueue the job again")
        return {"see": f"suture result {facts.job_id}", "fix": hint}
    if result.get("status") == "refused":
        return {"see": f"suture result {facts.job_id}", "fix": "the model refused the document: check it"}
    url = review_url(facts.public_url, facts.job_id)
    if url:
        return {"url": url}
    return {
        "see": f"suture result {facts.job_id}",
        "fix": f'suture resume {facts.job_id} --feedback "what to change"',
    }


def _tags(
    result: dict[str, Any], facts: JobFacts, codes: list[str], dominant: str, summary: dict[str, Any]
) -> dict[str, str]:
    models = summary["models"]
    tags = {
        "contract": facts.contract,
        "status": str(result.get("status")),
        "cause": str(result.get("cause") or "none"),
        "dominant_code": dominant,
        "failure_codes": ",".join(codes)[:MAX_TAG_CHARS] or "none",
        "final_model": models[-1] if models else "none",
        "steps_used": str(summary["steps_used"]),
        "attempts": str(summary["attempts"]),
        "simulated": str(summary["simulated"]).lower(),
        "job_id": facts.job_id,
        "policy": facts.policy or "default",
        "tenant": (facts.tenant or "none")[:MAX_TAG_CHARS],
    }
    if facts.batch:
        tags["batch"] = facts.batch[:MAX_TAG_CHARS]
    counts = Counter(str(f.get("code")) for f in result.get("failures") or [] if isinstance(f, dict))
    for code in codes[:MAX_CODE_TAGS]:
        tags[f"code.{code}"[:32]] = str(counts[code])
    return tags


def _contexts(result: dict[str, Any], facts: JobFacts, summary: dict[str, Any]) -> dict[str, Any]:
    job = {
        "job_id": facts.job_id,
        "contract": facts.contract,
        "params": facts.params,  # structured, whole (content keys are filtered by before_send)
        "policy": facts.policy or "default",
        "reason": scrub_text(str(result.get("reason") or ""), facts.sensitive)[: MAX_MESSAGE_CHARS * 2],
        "cause": result.get("cause"),
        "round": result.get("round", 0),
    }
    contexts: dict[str, Any] = {
        "job": job,
        "remaining_failures": remaining_failures(result, facts.sensitive),
        "review": review(facts, result),
        "attempt_summary": summary,
    }
    origin = {k: v for k, v in facts.origin.items() if v is not None}
    if facts.batch:
        origin["batch"] = facts.batch
    if origin:
        contexts["origin"] = origin
    return contexts
