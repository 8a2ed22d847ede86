"""A person's feedback on a soft-delivered job: reopen its state for one more round of the chain.

This is seed 003's human-in-the-loop reset. The resumed state keeps everything the job learned
(attempts, best output, prompts already sent) and changes only what a new round needs:

- the feedback is appended to ``spec.feedback``, so every later prompt (full and slice) carries it
  in a ``<human_feedback>`` section (redacted like the rest of the prompt);
- ``round`` goes up by one: the step chain restarts at its first step, and the attempt cap and cost
  budget count only this round's attempts (a fresh budget);
- the best output stays the starting point (surgical steps repair it; soft delivery still returns
  the best of all rounds); attempt numbers continue, so no ``n`` repeats;
- the prompts already sent stay recorded: a prompt with new feedback is new, and an identical one
  is still never sent twice;
- with ``targets``, only the named parts are regenerated (``suture.tasks.targeted``).

Pure, like the engine. A wrong call raises ``suture.tasks.job.EngineError``.
"""

from __future__ import annotations

from collections.abc import Sequence

from suture.tasks.job import EngineError, JobState
from suture.tasks.targeted import check_targets

MAX_FEEDBACK_CHARS = 4000  # one person's note, not a second document


def resume(state: JobState, feedback: str, targets: Sequence[str] = ()) -> JobState:
    """The state of a soft-delivered job reopened for a new round carrying ``feedback``.

    With ``targets`` (JSON pointers such as ``/questions/13``) the round is targeted
    (``suture.tasks.targeted``): only those parts are regenerated, and a delivered job may be
    reopened too.
    """
    job_id = state.spec.job_id
    allowed = ("soft_delivered", "delivered") if targets else ("soft_delivered",)
    if state.status not in allowed:
        what = " or delivered" if targets else ""
        raise EngineError(
            job_id, f"only a soft_delivered{what} job can be resumed, this one is {state.status}"
        )
    named = check_targets(state, targets) if targets else []
    text = feedback.strip()
    if not text:
        raise EngineError(job_id, "the feedback is empty")
    if len(text) > MAX_FEEDBACK_CHARS:
        raise EngineError(
            job_id, f"the feedback has {len(text)} characters; at most {MAX_FEEDBACK_CHARS} are allowed"
        )
    spec = state.spec.model_copy(update={"feedback": [*state.spec.feedback, text]})
    return state.model_copy(
        update={
            "spec": spec,
            "status": None,
            "reason": "",
            "cause": None,
            "next_step": 0,
            "round": state.round + 1,
            "targets": named,
        }
    )
