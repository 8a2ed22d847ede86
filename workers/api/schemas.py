"""The API's request and response bodies (pydantic models, so the OpenAPI schema describes them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from suture.config.quiz_settings import Difficulty, QuestionKind
from suture.contracts.quiz_params import MAX_QUESTIONS
from suture.contracts.registry import contract_names
from suture.tasks.dispatch_order import PriorityClass
from suture.tasks.vocabulary import JobStatus

JOB_ID_PATTERN = r"^[0-9a-f]{32}$"
MAX_FEEDBACK_CHARS = 4000


class JobRequest(BaseModel):
    """A job to enqueue: the document's text and what to make of it."""

    model_config = ConfigDict(extra="forbid")

    contract: str = Field(
        "quiz",
        description="The contract to generate under",
        json_schema_extra={"enum": list[JsonValue](contract_names())},
    )
    input: str = Field(description="The source document's text (not blank)", min_length=1, pattern=r"\S")
    questions: int | None = Field(None, ge=1, le=MAX_QUESTIONS, description="How many questions to write")
    policy: str | None = Field(None, description="A retry policy name from the settings", max_length=200)
    callback: str | None = Field(
        None,
        description="An https URL the result is POSTed to, signed per Standard Webhooks",
        max_length=2048,
    )
    priority: PriorityClass = Field(
        "interactive", description="The job's class: interactive jobs reach the workers before bulk ones"
    )
    # The quiz's teaching knobs (none given: the settings' quiz.*); stored with the job.
    question_kinds: list[QuestionKind] | None = Field(
        None, min_length=1, max_length=3, description="Question kinds, each question one of them"
    )
    language: str | None = Field(
        None,
        max_length=8,
        description="auto (the document's language, detected) or en, fr, de, es, it, pt, nl",
    )
    difficulty: Difficulty | None = Field(None, description="Prompt guidance")
    audience: str | None = Field(None, max_length=200, description="Who the quiz is for (prompt guidance)")

    def knobs(self) -> dict[str, Any]:
        """The teaching knobs given, as quiz parameters."""
        names = ("question_kinds", "language", "difficulty", "audience")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


class JobUpload(BaseModel):
    """A job whose document is an uploaded file (multipart/form-data)."""

    model_config = ConfigDict(extra="forbid")

    file: bytes = Field(description="The document: .md, .markdown, .txt or .pdf")
    contract: str = Field("quiz", json_schema_extra={"enum": list[JsonValue](contract_names())})
    questions: int | None = Field(None, ge=1, le=MAX_QUESTIONS)
    policy: str | None = Field(None, max_length=200)
    callback: str | None = Field(None, max_length=2048)
    priority: PriorityClass = Field("interactive", description="The job's class")


class JobAccepted(BaseModel):
    """A job accepted for processing; poll ``Location`` for its status and result."""

    job_id: str
    status: JobStatus


class CallbackDelivery(BaseModel):
    """How the job's latest callback went: pending (retries to come), delivered, or failed (given up)."""

    state: Literal["pending", "delivered", "failed"]
    attempts: int = Field(description="Deliveries tried so far")
    last_status: int | None = Field(description="The receiver's HTTP status at the latest attempt, if any")
    last_error: str | None = Field(description="Why the latest attempt failed without a status, if so")


class JobView(BaseModel):
    """A job's status, and its result once it has finished (the result schema of `suture result`)."""

    job_id: str
    status: JobStatus
    result: dict[str, Any] | None = Field(
        None, description="The result (status, output, failures, attempts, usage, cost_usd, ...)"
    )
    callback: CallbackDelivery | None = Field(
        None, description="The delivery of the job's callback (none given, or none owed yet: null)"
    )


class TraceView(BaseModel):
    """Every attempt of a job so far, across resumes, oldest first (as `suture trace`)."""

    job_id: str
    attempts: list[dict[str, Any]]


class ResumeRequest(BaseModel):
    """A person's feedback for another round of a soft-delivered job (as ``suture resume``)."""

    model_config = ConfigDict(extra="forbid")

    feedback: str = Field(min_length=1, max_length=MAX_FEEDBACK_CHARS)
    targets: list[str] = Field(
        default_factory=list,
        max_length=MAX_QUESTIONS,
        description="JSON Pointers of the parts to regenerate (as `suture resume --target`); none: the whole "
        "output",
    )
    callback: str | None = Field(
        None,
        max_length=2048,
        description="A new callback URL for this round and the next (checked as at enqueue)",
    )


class CancelRequest(BaseModel):
    """Why a job is cancelled (kept in its result's reason)."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(None, max_length=500)


class Cancelled(BaseModel):
    """A job that this request cancelled."""

    job_id: str
    status: Literal["cancelled"] = "cancelled"


class Stats(BaseModel):
    """What waits and what runs (as `suture stats`)."""

    jobs: dict[str, Any]
    queues: dict[str, int] | None
    broker_error: str | None = None


class Health(BaseModel):
    """Whether the job store and the broker answer."""

    status: Literal["ok", "unavailable"]
    store: Literal["ok", "unavailable"]
    broker: Literal["ok", "unavailable"]
