"""The simulator's settings sections: chaos faults per request, structural faults per unit, limits,
batches, files."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    """A settings section; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class SimulatorFaults(_Section):
    """Chaos fault shares of the simulated model, each replacing its profile's share when set.

    The names are the simulator's fault kinds (suture.workers.simulator.profiles.FaultRates); None keeps
    the profile's share. The simulator rejects shares that add up to more than 1.
    """

    malformed_json: float | None = Field(None, ge=0, le=1)
    truncated: float | None = Field(None, ge=0, le=1)
    refusal: float | None = Field(None, ge=0, le=1)
    empty: float | None = Field(None, ge=0, le=1)
    rate_limited: float | None = Field(None, ge=0, le=1)
    server_error: float | None = Field(None, ge=0, le=1)
    slow: float | None = Field(None, ge=0, le=1)
    dropped_connection: float | None = Field(None, ge=0, le=1)

    def overrides(self) -> dict[str, float]:
        """The shares that are set, by fault name."""
        return self.model_dump(exclude_none=True)


class ModelRateLimit(_Section):
    """One model's provider limits: requests and tokens per minute (None: not limited)."""

    rpm: int | None = Field(None, ge=1)
    tpm: int | None = Field(None, ge=1)


class SimulatorBatchApi(_Section):
    """How the simulator's Batch API behaves (suture.workers.simulator.batches)."""

    # Wall-clock seconds from in_progress to the end of a batch (the latency scale does not apply).
    delay_s: float = Field(5.0, ge=0)
    # Share of batches that expire (half their lines done), drawn per input file from the seed.
    expire_rate: float = Field(0.0, ge=0, le=1)
    # Share of batch lines answered with a 500 in the batch's error file.
    line_error_rate: float = Field(0.0, ge=0, le=1)
    max_batches: int = Field(10_000, ge=1)


class SimulatorFiles(_Section):
    """Caps on the files the simulator keeps in memory (batch inputs, outputs and errors)."""

    max_file_mb: float = Field(200.0, gt=0)
    max_total_mb: float = Field(1024.0, gt=0)
    max_files: int = Field(10_000, ge=1)


class SimulatorUnitFaults(_Section):
    """Per-unit shares of structural faults in the simulator's non-quiz outputs (gpt-5-nano's; other
    models' scale with their bias): each object or text item of a list draws each fault at its share."""

    missing_field: float = Field(0.01, ge=0, le=1)  # one key of an object item dropped
    duplicate: float = Field(0.02, ge=0, le=1)  # a text copied from a sibling item
    overlong: float = Field(0.03, ge=0, le=1)  # a text grown to dozens of words
    unquoted: float = Field(0.03, ge=0, le=1)  # a quote (a field named *quote*) paraphrased


class SimulatorReask(_Section):
    """How the simulated model acts on feedback about a whole output (suture.workers.simulator.reask).

    Assumptions, not measurements (the derivation: suture.workers.simulator.reask_skill); ``suture
    calibrate`` measures them on a real model, ``bench/bench_peers.py`` sweeps ``fix_rate``.
    """

    # Share of the items the feedback names that come back fixed; None: derived per model and effort
    # (gpt-5-nano@low 0.90: half the edge of a surgical slice prompt).
    fix_rate: float | None = Field(None, ge=0, le=1)
    # Share of the items the feedback does not name that come back unchanged (the rest: drawn afresh).
    keep_rate: float = Field(0.95, ge=0, le=1)
