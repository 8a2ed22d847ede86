"""The one typed settings object, and the loader that reads it from CLI, ENV, YAML and defaults.

Precedence (highest first): values passed by the CLI (``overrides``), environment variables
(``SUTURE_*``, nested with ``__``, plus the conventional ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``SENTRY_DSN``, ``REDIS_URL``-free), a user YAML file (``--config``, ``$SUTURE_CONFIG`` or
``./suture.yaml``; what a file found in the working directory may not do: ``sources``), and the
packaged ``config/defaults.yaml``. The environment is read only here, at the edge; everything else
receives a ``Settings`` instance.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from suture.config.batch_api_settings import BatchApiSettings
from suture.config.dispatch_settings import DispatchSettings
from suture.config.estimates import EstimateSettings
from suture.config.limit_settings import ReaderLimits
from suture.config.listen_settings import ListenSettings
from suture.config.models import ModelPrice as ModelPrice
from suture.config.models import ReasoningEffort as ReasoningEffort
from suture.config.network_settings import NetworkSettings
from suture.config.provider_limits import moved_rate_limits
from suture.config.quiz_settings import AutoQuestions
from suture.config.quiz_settings import QuizRules as QuizRules  # re-exported
from suture.config.redaction import url_secrets
from suture.config.redis_settings import SentinelSettings, StoreSettings
from suture.config.service_settings import ApiSettings, SentrySettings, WebhookSettings
from suture.config.simulator_sections import (
    ModelRateLimit,
    SimulatorBatchApi,
    SimulatorFaults,
    SimulatorFiles,
    SimulatorReask,
    SimulatorUnitFaults,
)
from suture.config.sources import announce, endpoint_problem, find_config_file
from suture.config.sources import user_config_file as user_config_file  # re-exported (config show)

DEFAULTS_FILE = Path(__file__).with_name("defaults.yaml")


class _Section(BaseModel):
    """A settings section; unknown keys are errors, so a misspelled threshold is never silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ReasoningAllowance(_Section):
    """Reasoning tokens allowed on top of a reply's expected visible tokens: ``ratio`` x them, at least
    ``min_tokens``."""

    ratio: float = Field(0.0, ge=0)
    min_tokens: int = Field(0, ge=0)


# client.reasoning_allowance's default, by effort (no effort given: medium, the API's default).
REASONING_ALLOWANCE: dict[ReasoningEffort, ReasoningAllowance] = {
    "minimal": ReasoningAllowance(ratio=0.0, min_tokens=0),
    "low": ReasoningAllowance(ratio=1.0, min_tokens=256),
    "medium": ReasoningAllowance(ratio=3.0, min_tokens=1024),
    "high": ReasoningAllowance(ratio=8.0, min_tokens=4096),
}


class ClientSettings(_Section):
    """Model client timeouts and the transport-retry layer (separate from contract retries)."""

    timeout_s: float = Field(120.0, gt=0)
    # The whole call, transport retries and backoff included: a worker's soft time limit must exceed it
    # (Celery's threads pool enforces no time limit, so this is what bounds a task there).
    call_budget_s: float = Field(240.0, gt=0)
    transport_max_retries: int = Field(4, ge=0, le=10)
    backoff_base_s: float = Field(0.5, ge=0)
    backoff_max_s: float = Field(20.0, ge=0)
    # The ceiling of every call's reply. Each call asks for what its contract expects instead
    # (``Contract.reply_tokens``) x reply_margin + a reasoning allowance by model and effort, since the
    # provider counts what a call asks for against its TPM, not what the reply uses.
    max_completion_tokens: int = Field(16000, ge=1)
    reply_margin: float = Field(1.5, ge=1.0)
    # Reasoning tokens allowed on top of the expected visible reply, by effort (no effort: medium);
    # reasoning_allowance_by_model overrides efforts per model, e.g. {gpt-5-mini: {low: {ratio: 2}}}.
    reasoning_allowance: dict[ReasoningEffort, ReasoningAllowance] = Field(
        default_factory=lambda: dict(REASONING_ALLOWANCE)
    )
    reasoning_allowance_by_model: dict[str, dict[ReasoningEffort, ReasoningAllowance]] = Field(
        default_factory=dict
    )
    # What the provider's TPM counts of a call: "reserved" (OpenAI: prompt + max_completion_tokens
    # when the request arrives, nothing given back) or "served" (prompt + the completion it used).
    metering: Literal["reserved", "served"] = "reserved"
    # Send each job's id as OpenAI's prompt_cache_key (its calls share one prompt cache); off for an
    # OpenAI-compatible server that rejects fields it does not know.
    send_prompt_cache_key: bool = True


class WorkerSettings(_Section):
    """Celery worker limits; ordered client call budget < soft limit < hard limit < visibility timeout."""

    _moved = model_validator(mode="before")(moved_rate_limits)

    soft_time_limit_s: float = Field(300.0, gt=0)
    time_limit_s: float = Field(360.0, gt=0)
    visibility_timeout_s: float = Field(3600.0, gt=0)
    max_redeliveries: int = Field(3, ge=0)
    job_deadline_s: float = Field(1800.0, gt=0)
    # A running job with no task opened for this long has its next step re-sent (must exceed time_limit_s).
    stall_s: float = Field(600.0, gt=0)
    # A running job with no task running and none sent for this long (a lost message) has its next step
    # re-sent: the short backstop, beside stall_s for a job whose task may still run.
    idle_stall_s: float = Field(30.0, gt=0)
    watchdog_interval_s: float = Field(30.0, gt=0)
    model_concurrency: int = Field(100, ge=1)
    # Bulk tasks of one worker process doing their own work (outside model calls) at once: few enough
    # that interactive tasks beside them keep their CPU share (workers/runtime/cpu_turns.py).
    bulk_cpu_turns: int = Field(4, ge=1, le=10_000)
    # The same while an interactive task runs in the process (and a second after): it keeps its speed.
    bulk_cpu_turns_beside_interactive: int = Field(1, ge=1, le=10_000)
    # A job-store command unanswered this long is an outage (retried), not a worker thread hung for good.
    redis_timeout_s: float = Field(30.0, gt=0)
    # Job-store connections one process may hold (a worker raises it to its concurrency): a caller
    # finding them all busy waits this long for one, then it is an outage, never "too many connections".
    redis_pool_size: int = Field(64, ge=1)
    redis_pool_timeout_s: float = Field(5.0, gt=0)
    store_ttl_s: float = Field(7 * 24 * 3600.0, gt=0)  # a job (spec, state, result) and its key stay in Redis
    # Fully valid outputs kept per batch for example tier 2 of later retries (0: tier 2 off in the cluster).
    accepted_per_batch: int = Field(20, ge=0)
    metrics_port: int | None = Field(None, ge=0, le=65535)  # Prometheus /metrics (`--metrics-port`)


class SimulatorSettings(_Section):
    """Defaults for the in-process simulated model (a simulation, never a real model)."""

    profile: str = "realistic"
    latency_scale: float = Field(1.0, ge=0)
    seed: int = 0
    faults: SimulatorFaults = Field(default_factory=SimulatorFaults)
    unit_faults: SimulatorUnitFaults = Field(default_factory=SimulatorUnitFaults)
    # OpenAI-style prompt caching: a prefix left unused this long is forgotten (OpenAI: 5-10 minutes).
    prompt_cache_idle_s: float = Field(300.0, gt=0)
    # 128-token prefix boundaries remembered, least recently used dropped first; 0 turns caching off.
    prompt_cache_max_entries: int = Field(100_000, ge=0)
    # Per-model provider limits the simulator meters like OpenAI (429 + x-ratelimit-* headers).
    limits: dict[str, ModelRateLimit] = Field(default_factory=dict)
    # Chat Completions requests answered at once; more get 503 (bounds the server's memory).
    max_in_flight: int = Field(10_000, ge=1)
    # A connection idle (or not sending a whole request head) this long is closed; a body must arrive within.
    idle_timeout_s: float = Field(15.0, gt=0)
    read_timeout_s: float = Field(30.0, gt=0)
    batch_api: SimulatorBatchApi = Field(default_factory=SimulatorBatchApi)
    files: SimulatorFiles = Field(default_factory=SimulatorFiles)
    reask: SimulatorReask = Field(default_factory=SimulatorReask)  # whole-output feedback
    # A model's rates measured by `suture calibrate` (YAML/JSON), over the profile's
    # (workers/simulator/calibrated.py).
    profile_file: str | None = None


class BatchSettings(_Section):
    """How `suture batch` cuts documents into sections and how many jobs it keeps in flight."""

    section_max_chars: int = Field(6000, ge=200)
    # Sections follow headings; one with less text than this is joined to a neighbour under the same
    # parent heading (while both fit in section_max_chars).
    section_min_chars: int = Field(1500, ge=0)
    # One slide, one section; a slide with less text than this (900: what `--questions auto` needs for
    # its 3 questions) is joined to the next slide, or the one before.
    slide_min_chars: int = Field(900, ge=0)
    max_sections_per_document: int = Field(60, ge=1)
    max_file_mb: float = Field(50.0, gt=0)
    # Less text than this is not worth a quiz; the file is skipped with a reason.
    min_document_chars: int = Field(100, ge=1)
    jobs_in_flight: int = Field(16, ge=1)
    poll_interval_s: float = Field(0.2, gt=0)
    job_timeout_s: float = Field(1800.0, gt=0)
    reader: ReaderLimits = Field(default_factory=ReaderLimits)  # PDF, Office: read in a confined process
    auto_questions: AutoQuestions = Field(default_factory=AutoQuestions)  # `--questions auto`


class Settings(BaseSettings):
    """Everything suture can be configured with; see config/defaults.yaml for documented defaults."""

    model_config = SettingsConfigDict(
        env_prefix="SUTURE_",
        env_nested_delimiter="__",
        extra="forbid",
        populate_by_name=True,
    )

    # The user YAML named for these settings (None: none named): processes a command starts read it too.
    _config_file: Path | None = PrivateAttr(None)

    broker_url: str | None = None
    result_backend: str | None = None
    redis_url: str | None = None
    sentinel: SentinelSettings = Field(default_factory=SentinelSettings)  # for sentinel:// URLs
    store: StoreSettings = Field(default_factory=StoreSettings)

    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("SUTURE_OPENAI_API_KEY", "OPENAI_API_KEY", "openai_api_key")
    )
    openai_base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("SUTURE_OPENAI_BASE_URL", "OPENAI_BASE_URL", "openai_base_url"),
    )
    sentry_dsn: SecretStr | None = Field(
        None, validation_alias=AliasChoices("SUTURE_SENTRY_DSN", "SENTRY_DSN", "sentry_dsn")
    )
    sentry: SentrySettings = Field(default_factory=SentrySettings)

    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    quiz: QuizRules = Field(default_factory=QuizRules)
    # Contracts beyond the built-in ones: name -> "module:Class" or a contract file (.yaml/.yml/.json);
    # resolved at the edge (suture.workers.contract_sources), as are the `suture.contracts` entry points.
    contracts: dict[str, str] = Field(default_factory=dict)
    policies: dict[str, Any] = Field(default_factory=dict)
    default_policy: str | None = None  # None: each contract's own (suture.tasks.policy_choice)
    max_input_tokens: int | None = Field(None, ge=1)
    max_retries: int = Field(2, ge=0, le=5)
    budget_usd: float | None = Field(None, gt=0)

    client: ClientSettings = Field(default_factory=ClientSettings)
    # Per-model provider limits suture keeps to, shared by every worker (suture.workers.model.budget).
    limits: dict[str, ModelRateLimit] = Field(default_factory=dict)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    simulator: SimulatorSettings = Field(default_factory=SimulatorSettings)
    batch: BatchSettings = Field(default_factory=BatchSettings)
    batch_api: BatchApiSettings = Field(default_factory=BatchApiSettings)
    estimate: EstimateSettings = Field(default_factory=EstimateSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    webhook: WebhookSettings = Field(default_factory=WebhookSettings)
    dispatch: DispatchSettings = Field(default_factory=DispatchSettings)
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    listen: ListenSettings = Field(default_factory=ListenSettings)

    store_prompts: bool = True
    # A job's input text (Python, CLI, HTTP) and a file `suture validate` reads: larger is refused unread.
    max_input_bytes: int = Field(2 * 1024 * 1024, ge=1024)
    # A policy file the CLI reads for `--policy FILE` (on the producer's machine): larger is refused unread.
    max_policy_file_bytes: int = Field(64 * 1024, ge=1024)
    first_prompt_example_tokens: int = Field(1000, ge=0)
    retry_example_tokens: int = Field(2000, ge=0)

    @property
    def config_file(self) -> Path | None:
        """The user YAML these settings were read from when one was named (--config, $SUTURE_CONFIG), else
        None."""
        return self._config_file

    def secrets(self) -> list[str]:
        """Every configured secret value, for redaction (API key, DSN, passwords inside URLs)."""
        held = [
            self.openai_api_key,
            self.sentry_dsn,
            self.webhook.secret,
            self.sentinel.password,
            *(k.key for k in self.api.keys),
        ]
        values = [s.get_secret_value() for s in held if s]
        values += [
            v for url in (self.broker_url, self.result_backend, self.redis_url) for v in url_secrets(url)
        ]
        return [v for v in values if v]


def load_settings(
    config_file: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> Settings:
    """Build the effective settings: CLI overrides > ENV > user YAML > packaged defaults."""
    found = find_config_file(config_file, os.environ)
    if found is not None and not found.path.is_file():
        raise ConfigError(f"config file not found: {found.path}")
    settings_cls = _settings_class(found.path if found else None)
    try:
        settings = settings_cls(**dict(overrides or {}))
    except Exception as exc:  # pydantic ValidationError or YAML error: one clear line
        raise ConfigError(f"invalid configuration: {_one_line(exc)}") from exc
    problem = endpoint_problem(found, overrides or {}, os.environ, settings.openai_api_key is not None)
    if problem is not None:
        raise ConfigError(problem)
    announce(found)
    # Named (--config, $SUTURE_CONFIG) only: a file found in the working directory is found there again by the
    # processes a command starts, and keeps its own checks (``endpoint_problem``) as a found file.
    settings._config_file = found.path.resolve() if found and found.origin != "cwd" else None
    return settings


def _settings_class(user_yaml: Path | None) -> type[Settings]:
    class _Loaded(Settings):
        model_config = SettingsConfigDict(**{**Settings.model_config, "title": "settings"})

        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
            if user_yaml is not None:
                sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=user_yaml))
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=DEFAULTS_FILE))
            return tuple(sources)

    _Loaded.__name__ = "Settings"
    return _Loaded


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:500]


class ConfigError(Exception):
    """The configuration cannot be used (bad YAML, bad value, missing file); str() is one line."""
