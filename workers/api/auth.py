"""Who may call: bearer keys from ``api.keys`` (or basic auth with a key as password, for the review
pages in a browser), compared in constant time and never logged; a key is known to logs and rate
limits only by its id (a short hash). Each key is a tenant; a key marked ``operator: true`` also reads
the operator's jobs (enqueued without a tenant), and no key acts on those
(``suture.config.service_settings.ApiKey``).
Review forms carry a token derived from the caller's key, so a page on another site cannot make a logged-in
browser post an action.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass, field

from fastapi import Request

from suture.config.service_settings import ApiKey
from suture.workers.api.problems import ProblemError


@dataclass(frozen=True)
class Caller:
    """An authenticated caller: its key's id (for logs and limits), the key (for form tokens), and whether
    the key may read the operator's jobs."""

    key_id: str
    key: bytes = field(repr=False)  # never in a log line or a traceback's locals
    operator: bool = False

    @property
    def tenant(self) -> str:
        """The tenant this caller's jobs belong to (``suture.workers.idempotency``): its key's id."""
        return f"api-key:{self.key_id}"

    def form_token(self, purpose: str) -> str:
        """A token for one form (``purpose`` e.g. ``review:<job id>``), checkable without server state."""
        return hmac.new(self.key, purpose.encode(), hashlib.sha256).hexdigest()[:32]

    def check_form_token(self, purpose: str, token: str) -> bool:
        return hmac.compare_digest(self.form_token(purpose).encode(), (token or "").encode())


class ApiKeys:
    """The configured keys; ``identify`` finds the caller a presented key belongs to."""

    def __init__(self, keys: list[ApiKey]) -> None:
        self._keys = [
            (k.key.get_secret_value().encode(), k.operator) for k in keys if k.key.get_secret_value()
        ]

    def identify(self, presented: str) -> Caller | None:
        """The caller whose key this is, or None; every key is compared, in constant time."""
        candidate = presented.encode()
        found = None
        for key, operator in self._keys:
            if hmac.compare_digest(key, candidate):
                found = (key, operator)
        if found is None:
            return None
        return Caller(key_id=hashlib.sha256(found[0]).hexdigest()[:12], key=found[0], operator=found[1])

    def bearer(self, request: Request) -> Caller:
        """The caller of an API request (``Authorization: Bearer <key>``); 401 otherwise."""
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        caller = self.identify(value.strip()) if scheme.lower() == "bearer" else None
        if caller is None:
            raise ProblemError(
                401,
                "unauthorized",
                "send Authorization: Bearer <key> with a key from api.keys",
                headers={"WWW-Authenticate": 'Bearer realm="suture"'},
            )
        return caller

    def viewer(self, request: Request) -> Caller:
        """The caller of a review page: a bearer key, or basic auth whose password is a key; 401 asks for
        it."""
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        caller = None
        if scheme.lower() == "bearer":
            caller = self.identify(value.strip())
        elif scheme.lower() == "basic":
            caller = self.identify(_basic_password(value.strip()))
        if caller is None:
            raise ProblemError(
                401,
                "unauthorized",
                "log in with an API key as the password (any user name)",
                headers={"WWW-Authenticate": 'Basic realm="suture review", charset="UTF-8"'},
            )
        return caller


def _basic_password(value: str) -> str:
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return ""
    return decoded.partition(":")[2]
