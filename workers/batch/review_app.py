"""The local review app of ``suture review OUT``: a batch's quizzes in a browser, from its output folder.

Served on 127.0.0.1 only, every page under a secret path prefix made for the run (``/<token>/``):
another local user or a web page cannot guess it, so it also stands as the forms' anti-forgery
token. Pages are the review pages' (``suture.workers.review``: every value escaped, the same
content security policy): the list of every quiz in document order, and each quiz as a reader sees
it, its failures at their questions. Actions, each written to ``quizzes.jsonl`` and the ledger:
accept the quiz (``review_edits.accept_quiz``), edit a question (``review_edits.edit_question``,
validated at once), regenerate the checked questions with a comment (``regenerate``: a targeted
round on the configured model or the simulator, the other questions byte-identical).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Form, HTTPException
from fastapi.responses import HTMLResponse, RedirectResponse

from suture.config.settings import Settings
from suture.tasks.runner import Caller
from suture.workers.batch.kept import QUIZZES, read_quiz_lines
from suture.workers.batch.regenerate import RegenerateError, Regeneration
from suture.workers.batch.review_edits import QuestionEdit, accept_quiz, edit_question
from suture.workers.documents.section_titles import clean_title
from suture.workers.output_folder import OutputFolderError, check_job_id
from suture.workers.review.render import IndexItem, render_index, render_local_job
from suture.workers.review.view import build_view

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
NOTICES = {
    "accepted": "Accepted: a rerun of the batch keeps this quiz as it is.",
    "edited": "Saved: the question was checked against the contract (see its status and failures).",
    "regenerated": "Regenerated the checked questions; the others are unchanged.",
}
Text = Annotated[str, Form(max_length=16000)]


def create_review_app(out_dir: Path, settings: Settings, caller: Callable[[], Caller]) -> tuple[FastAPI, str]:
    """The app and its secret path prefix; ``caller`` gives the model caller for regenerations."""
    review = _Review(out_dir, settings, caller)
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.get("/{given}/", response_class=HTMLResponse)(review.index)
    app.get("/{given}/quiz/{job_id}", response_class=HTMLResponse)(review.quiz)
    app.post("/{given}/quiz/{job_id}/accept")(review.accept)
    app.post("/{given}/quiz/{job_id}/edit/{index}")(review.edit)
    app.post("/{given}/quiz/{job_id}/regenerate")(review.regenerate)
    return app, review.token


class _Review:
    """The pages and actions of one output folder."""

    def __init__(self, out_dir: Path, settings: Settings, caller: Callable[[], Caller]) -> None:
        self.out_dir, self.settings, self.caller = out_dir, settings, caller
        self.token = secrets.token_urlsafe(18)
        self.home = f"/{self.token}/"

    def _checked(self, given: str, job_id: str | None = None) -> str:
        if not secrets.compare_digest(given, self.token):
            raise HTTPException(404)
        if job_id is None:
            return ""
        try:
            return check_job_id(job_id)
        except OutputFolderError:
            raise HTTPException(404) from None

    def _back(self, job_id: str, notice: str) -> RedirectResponse:
        return RedirectResponse(f"{self.home}quiz/{job_id}?notice={notice}", status_code=303)

    def index(self, given: str) -> HTMLResponse:
        """Every quiz of the batch, in document order."""
        self._checked(given)
        items = [
            _item(line, self.home, self._repaired(line))
            for line in read_quiz_lines(self.out_dir / QUIZZES).values()
        ]
        intro = (
            f"{self.out_dir}: every quiz of the batch, in document order. Open one to accept, edit or "
            "regenerate it."
        )
        html = render_index(
            "Review the batch", items, intro=intro, empty="No quiz yet.", simulated=_simulated(self.out_dir)
        )
        return _page(html)

    def _repaired(self, line: dict[str, Any]) -> int:
        """The questions repaired in the quiz's trace, counted as its page counts them (0 without one)."""
        job_id = str(line.get("job_id"))
        try:
            state = Regeneration.load(self.out_dir, job_id, self.settings).state
        except RegenerateError:
            return 0
        result = {"job_id": job_id, "status": line.get("status"), "output": line.get("quiz")}
        attempts = [a.public() for a in state.attempts]
        return build_view(result, None, attempts=attempts, source=line.get("source")).repaired

    def quiz(self, given: str, job_id: str, notice: str | None = None) -> HTMLResponse:
        """One quiz as a reader sees it, its failures at their questions, with the three actions."""
        job_id = self._checked(given, job_id)
        line = read_quiz_lines(self.out_dir / QUIZZES).get(job_id)
        if line is None:
            raise HTTPException(404)
        result = {"job_id": job_id, "status": line.get("status"), "output": line.get("quiz"), "reason": ""}
        result["failures"] = line.get("failures") or []
        notice_text = NOTICES.get(notice or "")
        try:
            state = Regeneration.load(self.out_dir, job_id, self.settings).state
        except RegenerateError as exc:  # shown without its document: the actions will say the same
            view = build_view(result, None, attempts=[], source=line.get("source"))
            notice_text = f"{exc}"
        else:
            result |= {"simulated": state.spec.simulated, "round": state.round, "cost_usd": state.spent_usd}
            attempts = [a.public() for a in state.attempts]
            view = build_view(result, state.spec.source, attempts=attempts, source=line.get("source"))
        base = f"{self.home}quiz/{job_id}"
        return _page(render_local_job(view, line=line, base=base, home=self.home, notice=notice_text))

    def accept(self, given: str, job_id: str) -> Any:
        """Accept the quiz as it stands."""
        job_id = self._checked(given, job_id)
        try:
            accept_quiz(self.out_dir, job_id, self.settings)
        except RegenerateError as exc:
            return _refused(exc)
        return self._back(job_id, "accepted")

    def edit(
        self,
        given: str,
        job_id: str,
        index: int,
        question: Text,
        options: Text,
        correct: Annotated[int, Form()],
        explanation: Annotated[str, Form(max_length=16000)] = "",
    ) -> Any:
        """Save a person's version of question ``index`` (checked against the contract)."""
        job_id = self._checked(given, job_id)
        change = QuestionEdit(question, options.splitlines(), correct - 1, explanation)
        try:
            edit_question(self.out_dir, job_id, index, change, self.settings)
        except RegenerateError as exc:
            return _refused(exc)
        return self._back(job_id, "edited")

    def regenerate(
        self,
        given: str,
        job_id: str,
        comment: Annotated[str, Form(min_length=1, max_length=4000)],
        target: Annotated[list[str] | None, Form()] = None,
    ) -> Any:
        """Regenerate the checked questions with the comment (a targeted round)."""
        job_id = self._checked(given, job_id)
        if not target:
            return _refused(RegenerateError("check at least one question to regenerate"))
        try:
            regeneration = Regeneration.load(self.out_dir, job_id, self.settings)
            regeneration.save(regeneration.run(comment, target, self.caller(), self.settings))
        except RegenerateError as exc:
            return _refused(exc)
        return self._back(job_id, "regenerated")


def _page(html: str) -> HTMLResponse:
    return HTMLResponse(html, headers=HEADERS)


def _refused(exc: RegenerateError) -> HTMLResponse:
    return HTMLResponse(f"<p id='error'>{_escape(str(exc))}</p>", status_code=422, headers=HEADERS)


def _item(line: dict[str, Any], home: str, repaired: int) -> IndexItem:
    source = line.get("source") or {}
    title = clean_title(str((line.get("quiz") or {}).get("title") or "")) or "(untitled quiz)"
    label = f"{source.get('file')} §{source.get('section')}: {title}"
    touched = ", ".join(k for k in ("accepted", "edited") if line.get(k))
    return IndexItem(
        job_id=str(line.get("job_id")),
        label=label,
        href=f"{home}quiz/{line.get('job_id')}",
        status=str(line.get("status")),
        failures=len(line.get("failures") or []),
        repaired=repaired,
        when=touched,
    )


def _simulated(out_dir: Path) -> bool:
    """Whether the batch's report says its quizzes came from the simulator."""
    import json

    try:
        return bool(json.loads((out_dir / "report.json").read_text(encoding="utf-8")).get("simulated"))
    except (OSError, ValueError, AttributeError):
        return False


def _escape(text: str) -> str:
    from html import escape

    return escape(text, quote=True)
