"""OpenAI's Files and Batch APIs over the openai SDK: upload a round's lines, create, find, poll, download.

One round is one batch: its JSONL uploaded with purpose ``batch``, the batch created with the round
id in ``metadata`` (``suture_round``), so ``find`` recognises a batch created by a round task that
died before it recorded the id, and the round never submits twice. Errors::

    BatchApiError(operation, detail, status)   a Files/Batch call failed (HTTP status, None: transport);
                                               the round task tries again at its next poll. Redacted.

The SDK's own retries are off, as in the model client: a failed call is retried by the next poll.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import httpx2

from suture.config.settings import Settings
from suture.workers.model.client import NO_KEY_PLACEHOLDER, SIMULATION_HEADER

# The openai SDK is imported where a request is made (as in client.py), not with this module: a worker
# that never submits a batch does not pay its second of import CPU.
if TYPE_CHECKING:
    import openai

ROUND_KEY = "suture_round"
ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
# "lost": suture's own status for a batch the endpoint no longer knows (404).
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled", "lost"})
_LIST_PAGE = 100
_FILE_ID = re.compile(r"[A-Za-z0-9_-]{1,200}")


class BatchApiError(Exception):
    """A Files or Batch API call failed; ``operation`` names it, ``detail`` says why (redacted)."""

    def __init__(self, operation: str, detail: str, status: int | None = None) -> None:
        super().__init__(f"batch API {operation} failed: {detail}")
        self.operation = operation
        self.detail = detail
        self.status = status


@dataclass(frozen=True)
class BatchView:
    """What suture reads of a batch object."""

    id: str
    status: str
    output_file_id: str | None
    error_file_id: str | None
    counts: dict[str, int]

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL


class BatchClient:
    """The Files and Batch calls of one process, over one SDK client."""

    def __init__(self, settings: Settings, *, extra_metadata: dict[str, str] | None = None) -> None:
        self._settings = settings
        self._secrets = settings.secrets()
        self._extra = dict(extra_metadata or {})
        self._sdk: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self.simulated = False  # set once the endpoint answered as a simulation

    def __repr__(self) -> str:
        return f"BatchClient(base_url={self._settings.openai_base_url or 'https://api.openai.com/v1'!r})"

    def find(self, round_id: str, since_s: float) -> str | None:
        """The id of a batch already created for ``round_id`` (listed newest first, back to ``since_s``)."""

        def look() -> str | None:
            for batch in self._client().batches.list(limit=_LIST_PAGE):
                if (batch.metadata or {}).get(ROUND_KEY) == round_id:
                    return str(batch.id)
                if batch.created_at < since_s - 60:  # older than the round: it was never created
                    return None
            return None

        return self._guard("list", look)

    def submit(self, round_id: str, lines: list[str], metadata: dict[str, str] | None = None) -> str:
        """Upload ``lines`` (JSONL request lines) and create their batch; the batch id."""
        content = ("\n".join(lines) + "\n").encode()
        sdk = self._client()
        uploaded = self._guard(
            "upload", lambda: sdk.files.create(file=(f"suture-{round_id}.jsonl", content), purpose="batch")
        )
        tags = {**self._extra, **(metadata or {}), ROUND_KEY: round_id}
        created = self._guard(
            "create",
            lambda: sdk.batches.create(
                input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h", metadata=tags
            ),
        )
        return str(created.id)

    def retrieve(self, batch_id: str) -> BatchView:
        """The batch's status and its files."""
        batch = self._guard("retrieve", lambda: self._client().batches.retrieve(batch_id))
        counts = batch.request_counts
        return BatchView(
            id=str(batch.id),
            status=str(batch.status),
            output_file_id=batch.output_file_id,
            error_file_id=batch.error_file_id,
            counts={"total": counts.total, "completed": counts.completed, "failed": counts.failed}
            if counts
            else {},
        )

    def content(self, file_id: str) -> bytes:
        """A file's bytes (a batch's output or error file); an id that is not one (it goes in a URL) is
        refused."""
        if not _FILE_ID.fullmatch(file_id):
            raise BatchApiError("download", f"not a file id: {file_id[:40]!r}")
        sdk = self._client()
        raw = self._guard("download", lambda: sdk.get(f"/files/{file_id}/content", cast_to=httpx2.Response))
        if raw.headers.get(SIMULATION_HEADER, "").lower() == "true":
            self.simulated = True
        return bytes(raw.content)

    def cancel(self, batch_id: str) -> str:
        """Ask to cancel a batch; its status after the request."""
        return str(self._guard("cancel", lambda: self._client().batches.cancel(batch_id)).status)

    def _guard(self, operation: str, call: Any) -> Any:
        import openai

        try:
            return call()
        except openai.APIStatusError as exc:
            detail = self._redact(f"HTTP {exc.status_code}: {exc.message}")
            raise BatchApiError(operation, detail, exc.status_code) from None
        except openai.APIError as exc:
            raise BatchApiError(operation, self._redact(f"{type(exc).__name__}: {exc}")) from None

    def _client(self) -> openai.OpenAI:
        import openai

        with self._lock:
            if self._sdk is None:
                settings = self._settings
                key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
                if key is None and settings.openai_base_url is None:
                    raise BatchApiError(
                        "connect", "no API key configured: set OPENAI_API_KEY or OPENAI_BASE_URL"
                    )
                self._sdk = openai.OpenAI(
                    api_key=key or NO_KEY_PLACEHOLDER,
                    base_url=settings.openai_base_url,
                    timeout=settings.client.timeout_s,
                    max_retries=0,
                )
            return self._sdk

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text[:500]
