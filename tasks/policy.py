"""Retry policies: the ordered chain of full and surgical steps a job may take to satisfy its contract.

A policy is defined in Python (``Policy``/``Step`` with callables for ``when``, ``target`` and
``prompt``) or declaratively in YAML (``settings.policies``), and is checked when it is built: an
invalid policy raises ``PolicyError`` naming the step, the field and the expected type, never the
value's text (``value_kind``). A job names a configured policy, or carries a user's policy file as data
(``JobSpec.policy_rules``, parsed on the producer's machine by ``suture.tasks.policy_yaml``): nothing
here opens a file. A policy chooses steps only; what a repair keeps is the contract's, a step's
``preserve`` only names invariants it relies on.

Errors of this module::

    PolicyError(ValueError)      the policy cannot be used; .policy, .step (index or None), .field, .problem
    └── PolicyMismatch           (policy_choice) the policy names what the contract does not declare
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, Literal, get_args

from suture.config.settings import ReasoningEffort, Settings
from suture.contracts.failure import Failure
from suture.tasks.policy_text import shown_name, value_kind

Mode = Literal["full", "surgical"]
# failures: the failing pointers; smallest: the smallest path the contract says can fix each failure
# (``Contract.repair_target``); parent: each failure widened to its enclosing list item.
TargetRule = Literal["failures", "smallest", "parent"]

DEFAULT_MODEL = "gpt-5-nano"
FALLBACK_POLICY = "default"  # run when neither the job, the settings nor the contract name a policy
DEFAULT_MAX_FAILURES = 4
_STEP_KEYS = frozenset(
    {"mode", "model", "reasoning_effort", "max_failures", "target", "preserve", "prompt", "name"}
)
_POLICY_KEYS = frozenset(
    {"description", "steps", "feedback", "examples", "fixers", "max_attempts", "budget_usd", "model"}
    | {"reasoning_effort", "repair_overhead"}
)


class PolicyError(ValueError):
    """A policy that cannot be used; the message names the policy, the step and the field."""

    def __init__(self, policy: str, step: int | None, field_name: str, problem: str) -> None:
        self.policy = policy
        self.step = step
        self.field = field_name
        self.problem = problem
        where = f"step {step + 1}" if step is not None else "policy"
        super().__init__(f"policy {policy!r}, {where}, field {field_name!r}: {problem}")


@dataclass(frozen=True)
class StepContext:
    """What a ``when`` or ``target`` callable may look at: the standing output and its failures."""

    failures: tuple[Failure, ...]
    output: Any
    attempts_made: int
    spent_usd: float


WhenFn = Callable[[StepContext], bool]
TargetFn = Callable[[StepContext], Sequence[str]]
PromptFn = Callable[[str], str]  # receives the default system instructions, returns the step's own


@dataclass(frozen=True)
class Step:
    """One link of the chain: a full regeneration, or a surgical regeneration of failing paths."""

    mode: Mode
    model: str = DEFAULT_MODEL
    reasoning_effort: ReasoningEffort | None = "low"
    when: WhenFn | None = None
    target: TargetRule | TargetFn = "failures"
    preserve: tuple[str, ...] = ()
    prompt: str | PromptFn | None = None
    max_failures: int = DEFAULT_MAX_FAILURES
    name: str | None = None

    def label(self, index: int) -> str:
        """A short stable name for traces: the given name, or ``<index>:<mode>:<model>``."""
        return self.name or f"{index + 1}:{self.mode}:{self.model}"

    def instructions(self, default: str) -> str:
        """The system instructions this step sends: its own prompt, or the default."""
        if self.prompt is None:
            return default
        if isinstance(self.prompt, str):
            return self.prompt
        return self.prompt(default)

    def holds(self, ctx: StepContext) -> bool:
        """Whether this step should run now (full steps always; surgical by ``when`` or the default)."""
        if self.when is not None:
            return bool(self.when(ctx))
        if self.mode == "full":
            return True
        errors = [f for f in ctx.failures if f.severity == "error"]
        return 0 < len(errors) <= self.max_failures and all(f.targetable for f in errors)


@dataclass(frozen=True)
class RepairOverhead:
    """A policy's measured cost and time per job over those of its first attempt (for estimates only)."""

    cost: float
    time: float


@dataclass(frozen=True)
class Policy:
    """An ordered, bounded chain of steps, with feedback/example/fixer switches and an optional budget."""

    name: str
    steps: tuple[Step, ...]
    feedback: bool = True
    examples: bool = True
    max_attempts: int | None = None
    budget_usd: float | None = None
    description: str = ""
    repair_overhead: RepairOverhead | None = None
    # Run the contract's deterministic fixers (no model, cost 0) on each new best output first.
    fixers: bool = True

    def __post_init__(self) -> None:
        _check_policy(self)

    @property
    def attempt_cap(self) -> int:
        """How many attempts the chain may make at most (``max_attempts`` or one per step)."""
        return self.max_attempts if self.max_attempts is not None else len(self.steps)


def _check_policy(policy: Policy) -> None:
    if not policy.steps:
        raise PolicyError(policy.name, None, "steps", "a policy needs at least one step")
    if policy.max_attempts is not None and (
        isinstance(policy.max_attempts, bool) or not isinstance(policy.max_attempts, int)
    ):
        raise PolicyError(policy.name, None, "max_attempts", "must be an integer")
    if policy.max_attempts is not None and policy.max_attempts < 1:
        raise PolicyError(
            policy.name,
            None,
            "max_attempts",
            f"must be >= 1 (1 = one try), got {value_kind(policy.max_attempts)}",
        )
    if policy.budget_usd is not None and not policy.budget_usd > 0:
        raise PolicyError(
            policy.name, None, "budget_usd", f"must be > 0, got {value_kind(policy.budget_usd)}"
        )
    if policy.steps[0].mode != "full":
        raise PolicyError(policy.name, 0, "mode", "the first step must be 'full' (nothing to repair yet)")
    for index, step in enumerate(policy.steps):
        _check_step(policy.name, index, step)


def _check_step(policy: str, index: int, step: Step) -> None:
    if step.mode not in get_args(Mode):
        raise PolicyError(policy, index, "mode", f"must be 'full' or 'surgical', got {value_kind(step.mode)}")
    if not isinstance(step.model, str) or not step.model.strip():
        raise PolicyError(policy, index, "model", "must be a non-empty model name")
    if step.reasoning_effort is not None and step.reasoning_effort not in get_args(ReasoningEffort):
        raise PolicyError(
            policy,
            index,
            "reasoning_effort",
            f"must be one of {get_args(ReasoningEffort)}, got {value_kind(step.reasoning_effort)}",
        )
    if not callable(step.target) and step.target not in get_args(TargetRule):
        allowed = ", ".join(repr(rule) for rule in get_args(TargetRule))
        raise PolicyError(policy, index, "target", f"must be one of {allowed}, got {value_kind(step.target)}")
    if isinstance(step.max_failures, bool) or not isinstance(step.max_failures, int) or step.max_failures < 1:
        raise PolicyError(
            policy, index, "max_failures", f"must be an integer >= 1, got {value_kind(step.max_failures)}"
        )
    if step.when is not None and not callable(step.when):
        raise PolicyError(policy, index, "when", "must be callable")
    if step.prompt is not None and not (isinstance(step.prompt, str) or callable(step.prompt)):
        raise PolicyError(policy, index, "prompt", "must be a string or a callable")
    for name in step.preserve:
        if not isinstance(name, str) or not name:
            raise PolicyError(
                policy, index, "preserve", f"names must be non-empty text, got {value_kind(name)}"
            )


def load_policy(name: str | None, settings: Settings) -> Policy:
    """Build a configured policy by name (None: the settings' default, else ``default``); never a path:
    a name not in ``settings.policies`` is a ``PolicyError`` on field ``name``, and no file is opened."""
    chosen = name or settings.default_policy or FALLBACK_POLICY
    if chosen in settings.policies:
        return policy_from_mapping(chosen, settings.policies[chosen], settings)
    known = ", ".join(sorted(settings.policies)) or "none"
    problem = f"no such policy (configured: {known}); a policy is a configured name"
    raise PolicyError(chosen if len(chosen) <= 80 else chosen[:80] + "…", None, "name", problem)


def _unknown(policy: str, step: int | None, data: Mapping[str, Any], allowed: frozenset[str]) -> None:
    """Refuse a key that is not a field: by its name if it looks like one, else by its position."""
    for position, key in enumerate(data, start=1):
        if key not in allowed:
            shown = shown_name(key)
            close = get_close_matches(key, sorted(allowed), n=1) if isinstance(key, str) else []
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problem = f"unknown field{hint}; allowed: {', '.join(sorted(allowed))}"
            raise PolicyError(policy, step, key if shown else f"key {position}", problem)


def policy_from_mapping(name: str, data: Any, settings: Settings) -> Policy:
    """Build a policy from its declarative form (a mapping as in config/defaults.yaml)."""
    if not isinstance(data, Mapping):
        raise PolicyError(name, None, "policy", f"must be a mapping, got {value_kind(data)}")
    _unknown(name, None, data, _POLICY_KEYS)
    steps = _steps_from(name, data, settings)
    return Policy(
        name=name,
        steps=steps,
        feedback=_bool(name, data, "feedback", True),
        examples=_bool(name, data, "examples", True),
        fixers=_bool(name, data, "fixers", True),
        max_attempts=data.get("max_attempts"),
        budget_usd=_budget(name, data.get("budget_usd", settings.budget_usd)),
        description=str(data.get("description", "")),
        repair_overhead=_overhead(name, data.get("repair_overhead")),
    )


def _steps_from(name: str, data: Mapping[str, Any], settings: Settings) -> tuple[Step, ...]:
    raw_steps = data.get("steps")
    if raw_steps is None:
        # A policy without steps: one try plus settings.max_retries full retries of one model.
        base = {"mode": "full", "model": data.get("model", DEFAULT_MODEL)}
        if "reasoning_effort" in data:
            base["reasoning_effort"] = data["reasoning_effort"]
        raw_steps = [base] * (1 + settings.max_retries)
    if not isinstance(raw_steps, list):
        raise PolicyError(name, None, "steps", "must be a list of steps")
    return tuple(_step_from(name, index, raw) for index, raw in enumerate(raw_steps))


def _step_from(policy: str, index: int, raw: Any) -> Step:
    if not isinstance(raw, Mapping):
        raise PolicyError(policy, index, "step", f"must be a mapping, got {value_kind(raw)}")
    _unknown(policy, index, raw, _STEP_KEYS)
    if "mode" not in raw:
        raise PolicyError(policy, index, "mode", "is required ('full' or 'surgical')")
    preserve = raw.get("preserve", [])
    if not isinstance(preserve, list):
        raise PolicyError(policy, index, "preserve", "must be a list of contract invariant names")
    prompt = raw.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise PolicyError(policy, index, "prompt", "must be a string")
    return Step(
        mode=raw["mode"],
        model=raw.get("model", DEFAULT_MODEL),
        reasoning_effort=raw.get("reasoning_effort", "low"),
        target=raw.get("target", "failures"),
        preserve=tuple(preserve),
        prompt=prompt,
        max_failures=raw.get("max_failures", DEFAULT_MAX_FAILURES),
        name=raw.get("name"),
    )


def _bool(policy: str, data: Mapping[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise PolicyError(policy, None, key, f"must be true or false, got {value_kind(value)}")
    return value


def _overhead(policy: str, value: Any) -> RepairOverhead | None:
    if value is None:
        return None
    factors = value if isinstance(value, Mapping) and set(value) == {"cost", "time"} else {}
    bad = [f"{k}: {value_kind(f)}" for k, f in factors.items() if isinstance(f, bool) or not _over_0(f)]
    if not factors or bad:
        got = ", ".join(bad) if factors else value_kind(value)
        problem = f"must be {{cost: <factor > 0>, time: <factor > 0>}}, got {got}"
        raise PolicyError(policy, None, "repair_overhead", problem)
    return RepairOverhead(cost=float(factors["cost"]), time=float(factors["time"]))


def _over_0(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0


def _budget(policy: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyError(policy, None, "budget_usd", f"must be a number, got {value_kind(value)}")
    return float(value)
