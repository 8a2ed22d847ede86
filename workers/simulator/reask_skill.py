"""How often a simulated model fixes an item named by feedback on a whole output it wrote (a re-ask).

A *re-ask* hands the model its earlier output and feedback naming what is wrong (Instructor's and
pydantic-ai's retries, suture's ``full`` attempts with feedback), and asks for the whole output again.
The rate is derived like the slice fix rate (``repair_skill``), with one more assumption:

1. A named item stays unfixed with probability ``b x s(e) x A``: ``b`` the model's per-question bias,
   ``s(e)`` the share of it that survives a repair prompt at reasoning effort ``e`` (``repair_skill``).
2. ``A`` (``REASK_ATTENTION``, 2) says a re-ask is a weaker repair prompt than a slice: the model
   rewrites the whole output, every other item included, with several problems named at once in
   a validator's words, where a slice prompt shows one item, its source excerpt and its lengths.
   Nothing measured sets ``A``; 2 halves the slice prompt's edge, as a middle guess between a
   re-ask as good as a slice (A = 1) and one that barely helps (large A).

Resulting fix rates (1 - b x s x A), rounded: gpt-5-nano 0.85/0.90/0.94/0.97 at minimal/low/medium/high
effort, gpt-5-mini 0.93/0.95/0.97/0.99, gpt-5 0.99 and over. Items the feedback does not name are
copied at ``ReaskSkill.keep_rate`` (0.95: "keep everything else unchanged" is mostly obeyed; an
assumption too). Because these rest on no measurement, ``bench_peers`` sweeps the fix rate over
0..0.95 and ``suture calibrate`` is the way to measure it on a real model.
"""

from __future__ import annotations

from suture.workers.simulator.profiles import ModelTraits, ReaskSkill
from suture.workers.simulator.repair_skill import bias_survival

REASK_ATTENTION = 2.0  # step 2: a re-ask lets twice the slice prompt's share of the bias survive


def reask_fix_rate(traits: ModelTraits, effort: str | None, skill: ReaskSkill) -> float:
    """The chance a re-ask fixes an item its feedback names, for this model and reasoning effort.

    ``simulator.reask.fix_rate`` wins (what the peer bench sweeps), then a calibrated model's measured
    rate (``simulator.profile_file``), then the derivation above.
    """
    if skill.fix_rate is not None:
        return skill.fix_rate
    if traits.reask_fix_rate is not None:
        return traits.reask_fix_rate
    return max(0.0, 1.0 - traits.imbalance_rate * bias_survival(effort) * REASK_ATTENTION)


def reask_keep_rate(traits: ModelTraits, skill: ReaskSkill) -> float:
    """The chance a re-ask copies an item its feedback does not name (a calibrated model's rate, else
    the setting's)."""
    return traits.reask_keep_rate if traits.reask_keep_rate is not None else skill.keep_rate
