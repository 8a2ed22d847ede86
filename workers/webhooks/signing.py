"""Standard Webhooks headers for a callback: ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``.

The signature is the specification's v1 HMAC-SHA256 made by the ``standardwebhooks`` library with
``webhook.secret`` (``whsec_...``), so any receiver that verifies with a Standard Webhooks library
accepts it and rejects a tampered body. Without a secret the id and timestamp still go out, unsigned.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from pydantic import SecretStr
from standardwebhooks import Webhook

CONTENT_TYPE = "application/json"


def message_id(job_id: str, tag: str) -> str:
    """The ``webhook-id``: the job id for its first result; a resumed round or a review adds its tag."""
    return job_id if tag == "0" else f"{job_id}_{tag}"


def signed_headers(
    secret: SecretStr | None, msg_id: str, body: str, *, now_s: float | None = None
) -> dict[str, str]:
    """The headers of one delivery of ``body`` (signed when ``secret`` is set)."""
    sent_at = datetime.fromtimestamp(int(time.time() if now_s is None else now_s), tz=UTC)
    headers = {
        "content-type": CONTENT_TYPE,
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        # The same id as before Standard Webhooks, for receivers that de-duplicate by Idempotency-Key.
        "idempotency-key": msg_id,
    }
    if secret is not None and secret.get_secret_value():
        headers["webhook-signature"] = Webhook(secret.get_secret_value()).sign(msg_id, sent_at, body)
    return headers


def check_secret(secret: SecretStr | None) -> str | None:
    """Why the secret cannot sign (a one-line problem), or None if it can (or none is set)."""
    if secret is None or not secret.get_secret_value():
        return None
    try:
        Webhook(secret.get_secret_value())
    except Exception as exc:  # the library raises several types for a bad secret
        return f"webhook.secret is not a whsec_<base64> secret ({type(exc).__name__})"
    return None
