"""Behaviour profiles of the simulated model: per-model bias, speed, and chaos fault rates.

The defaults reproduce production data (seed 000): gpt-5-nano leaves ~5.5 of 15 questions with a
conspicuously long correct answer, gpt-5-mini ~2.7/15, gpt-5 ~0.5/15. Rates are per question.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from suture.config.settings import QuizRules
from suture.workers.simulator.errors import FaultRatesError, UnknownProfileError

# Reasoning tokens generated per visible output token, by reasoning effort (None = API default, medium).
REASONING_FACTOR: dict[str | None, float] = {
    "minimal": 0.0,
    "low": 0.5,
    "medium": 1.5,
    "high": 4.0,
    None: 1.5,
}


@dataclass(frozen=True)
class ModelTraits:
    """How one simulated model writes: its structural bias and its speed."""

    imbalance_rate: float  # share of questions whose correct option is conspicuously longer
    position_skew_rate: float  # share of questions whose answer moves to the favourite position
    favourite_position: int
    time_to_first_token_ms: float
    per_output_token_ms: float
    duplicate_rate: float = 0.0  # share of questions that repeat an earlier question of the same quiz
    # Give-away habits (``stems``): share of single-answer questions with one (answer in the stem, a
    # distractor containing the answer, a heading number in the quote), and share of quizzes whose
    # stems all open alike. Assumed figures, in the ratio of the models' other biases; no production data.
    giveaway_rate: float = 0.0
    same_opening_rate: float = 0.0
    # Input plus output tokens one request may hold (OpenAI's GPT-5 models: 400,000); larger is a 400.
    context_tokens: int = 400_000
    # Rates measured on a real model by `suture calibrate` (``simulator.profile_file``), each replacing the
    # derived one at every effort when set: a slice's fix rate, a re-ask's fix and keep rates.
    slice_fix_rate: float | None = None
    reask_fix_rate: float | None = None
    reask_keep_rate: float | None = None


@dataclass(frozen=True)
class FaultRates:
    """Per-request shares of chaos faults (they sum to at most 1; the rest are normal replies)."""

    malformed_json: float = 0.0
    truncated: float = 0.0
    refusal: float = 0.0
    empty: float = 0.0
    rate_limited: float = 0.0
    server_error: float = 0.0
    slow: float = 0.0
    dropped_connection: float = 0.0

    def total(self) -> float:
        """The share of requests that get any fault."""
        return sum(self.__dict__.values())


@dataclass(frozen=True)
class UnitFaultRates:
    """Per-unit shares of structural faults in non-quiz outputs, for gpt-5-nano (``contractgen``)."""

    missing_field: float = 0.01
    duplicate: float = 0.02
    overlong: float = 0.03
    unquoted: float = 0.03


FAULT_NAMES = tuple(f.name for f in fields(FaultRates))
# Float sums of shares that are meant to add up to exactly 1 may land a hair above it.
_TOTAL_TOLERANCE = 1e-9


# Duplicate rates: issue 24 found 24 repeated stems in 630 questions of a real batch, most of them in two
# sections too short for 15 questions (the simulator repeats itself there on its own); ~1% elsewhere.
MODEL_TRAITS: dict[str, ModelTraits] = {
    "gpt-5-nano": ModelTraits(
        5.5 / 15, 0.10, 1, 800.0, 8.0, duplicate_rate=0.01, giveaway_rate=0.06, same_opening_rate=0.2
    ),
    "gpt-5-mini": ModelTraits(
        2.7 / 15, 0.07, 1, 1000.0, 12.0, duplicate_rate=0.005, giveaway_rate=0.04, same_opening_rate=0.1
    ),
    "gpt-5": ModelTraits(
        0.5 / 15, 0.03, 0, 2000.0, 20.0, duplicate_rate=0.002, giveaway_rate=0.01, same_opening_rate=0.03
    ),
}

CHAOS_FAULTS = FaultRates(
    malformed_json=0.06,
    truncated=0.04,
    refusal=0.03,
    empty=0.03,
    rate_limited=0.06,
    server_error=0.04,
    slow=0.03,
    dropped_connection=0.03,
)


@dataclass(frozen=True)
class ReaskSkill:
    """How a simulated model acts on feedback about a whole output it wrote (``reask``).

    ``fix_rate`` None: derived per model and effort (``reask_skill.reask_fix_rate``); a number: every
    model and effort fixes a named item this often (what ``bench_peers`` sweeps).
    """

    fix_rate: float | None = None
    keep_rate: float = 0.95  # an item the feedback does not name is copied this often, else drawn afresh


@dataclass(frozen=True)
class Profile:
    """Everything that decides the simulator's answers apart from the request and the seed."""

    name: str
    models: dict[str, ModelTraits]
    faults: FaultRates = field(default_factory=FaultRates)
    # How often a slice balances its item depends on the model and effort (``repair_skill``); a slice
    # moves the answer it was told to keep this often (an options slice: off its index, a whole
    # question: index and text together)...
    surgical_drift_rate: float = 0.03
    # ...and a whole-question slice comes back with its options in a new order this often, the answer
    # moving with them, as a model rewriting a whole item does (an assumption: no production figure).
    question_reorder_rate: float = 0.25
    rules: QuizRules = field(default_factory=QuizRules)
    # Structural faults of outputs of other contracts, written from their schema (``contractgen``).
    unit_faults: UnitFaultRates = field(default_factory=UnitFaultRates)
    reask: ReaskSkill = field(default_factory=ReaskSkill)  # whole-output feedback (``reask``)
    retry_after_s: float = 1.0  # Retry-After of a simulated 429, scaled by the latency scale
    slow_extra_s: float = 5.0  # extra delay of a "slow" fault, scaled by the latency scale

    def traits(self, model: str) -> ModelTraits:
        """The traits of a served model (callers check membership first)."""
        return self.models[model]

    def with_faults(self, **rates: float) -> Profile:
        """This profile with some fault rates replaced (e.g. ``rate_limited=1.0``).

        Raises ``FaultRatesError`` for an unknown fault, a share outside 0..1, or shares over 1 in all.
        """
        unknown = sorted(set(rates) - set(FAULT_NAMES))
        if unknown:
            raise FaultRatesError(f"unknown fault {unknown[0]!r} (known: {', '.join(FAULT_NAMES)})")
        for name, rate in rates.items():
            if not 0 <= rate <= 1:
                raise FaultRatesError(f"fault share {name}={rate} is outside 0..1")
        faults = replace(self.faults, **rates)
        if faults.total() > 1 + _TOTAL_TOLERANCE:
            raise FaultRatesError(f"fault shares add up to {faults.total():.2f}, more than 1")
        return replace(self, faults=faults)


def _unbiased(traits: dict[str, ModelTraits]) -> dict[str, ModelTraits]:
    return {
        name: replace(
            t,
            imbalance_rate=0.0,
            position_skew_rate=0.0,
            duplicate_rate=0.0,
            giveaway_rate=0.0,
            same_opening_rate=0.0,
        )
        for name, t in traits.items()
    }


PROFILES: dict[str, Profile] = {
    "realistic": Profile("realistic", MODEL_TRAITS),
    "perfect": Profile(
        "perfect", _unbiased(MODEL_TRAITS), surgical_drift_rate=0.0, question_reorder_rate=0.0
    ),
    "chaos": Profile("chaos", MODEL_TRAITS, faults=CHAOS_FAULTS),
}


def get_profile(name: str, rules: QuizRules | None = None) -> Profile:
    """The named profile, optionally judged against non-default quiz thresholds."""
    if name not in PROFILES:
        raise UnknownProfileError(name, tuple(PROFILES))
    profile = PROFILES[name]
    return replace(profile, rules=rules) if rules is not None else profile
