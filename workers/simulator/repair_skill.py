"""How often a simulated model fixes the slice it is asked to repair, by model and reasoning effort.

The rate is derived from each model's per-question bias, calibrated on production data (seed 000),
with one free constant. The derivation, step by step:

1. Seed 000: a full gpt-5-nano@low quiz leaves ~5.5 of 15 questions with a conspicuously long
   correct option, gpt-5-mini@low ~2.7 of 15 (gpt-5 is given 0.5 of 15). A full prompt already asks
   for options of similar length, so this per-question bias ``b`` (``ModelTraits.imbalance_rate``:
   0.367, 0.180, 0.033) is how often the model's habit wins over that instruction.
2. A slice prompt asks about one item only, and names its failure and the lengths. The habit then
   wins only a share ``s`` of the times it would have: a slice stays unfixed with probability
   ``b x s``, so a model with half the bias misses half as often.
3. Reasoning tokens are where a model checks its draft against the instructions: the share the
   habit survives falls in proportion to ``1 + r``, where ``r`` is the reasoning tokens a model
   spends per visible token at that effort (``REASONING_FACTOR``: minimal 0, low 0.5, medium 1.5,
   high 4): ``s(e) = s_low x (1 + r_low) / (1 + r_e)``.
4. The one constant, ``s_low``, is set so gpt-5-nano@low fixes 95 % of its slices: the rate the
   simulator gave every model before this derivation, chosen against seed 000's one surgical data
   point (nano@low fixed 3 of 3 failing questions). ``s_low = 0.05 / (5.5 / 15) = 0.136``.

Resulting fix rates (1 - b x s), rounded:

=============  =======  =====  ======  =====
model          minimal  low    medium  high
=============  =======  =====  ======  =====
gpt-5-nano     0.925    0.950  0.970   0.985
gpt-5-mini     0.963    0.975  0.985   0.993
gpt-5          0.993    0.995  0.997   0.999
=============  =======  =====  ======  =====

Steps 2 and 3 are modelling assumptions, not measurements: a policy choice that rests on the gap
between models or efforts rests on them (docs/benchmarks.md says so where it does).
"""

from __future__ import annotations

from suture.workers.simulator.profiles import REASONING_FACTOR, ModelTraits

NANO_LOW_FIX_RATE = 0.95  # the calibration point (step 4)
NANO_BIAS = 5.5 / 15  # seed 000: gpt-5-nano@low's imbalanced questions per question
SURVIVAL_LOW = (1 - NANO_LOW_FIX_RATE) / NANO_BIAS  # s_low of step 4


def bias_survival(effort: str | None) -> float:
    """The share of a model's per-question bias that survives a slice prompt at ``effort`` (step 3)."""
    factor = REASONING_FACTOR.get(effort, REASONING_FACTOR[None])
    return SURVIVAL_LOW * (1 + REASONING_FACTOR["low"]) / (1 + factor)


def slice_fix_rate(traits: ModelTraits, effort: str | None) -> float:
    """The chance a slice request balances the item it names, for this model and reasoning effort
    (a calibrated model's measured rate when its profile file gives one)."""
    if traits.slice_fix_rate is not None:
        return traits.slice_fix_rate
    return max(0.0, 1.0 - traits.imbalance_rate * bias_survival(effort))
