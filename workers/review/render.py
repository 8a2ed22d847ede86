"""The review pages as HTML, from Jinja2 templates with every value escaped (documents and model output
are untrusted input). Used by ``suture serve`` (with actions) and by a batch's static pages (without).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from suture.workers.review.view import ReviewView

TEMPLATES = Path(__file__).with_name("templates")


@dataclass(frozen=True)
class ActionForms:
    """Where a job page's three actions post to, and the form token that proves the page was ours."""

    accept: str
    resume: str
    cancel: str
    token: str


@dataclass(frozen=True)
class IndexItem:
    """One line of a list of quizzes."""

    job_id: str
    label: str
    href: str
    status: str
    failures: int
    repaired: int
    when: str | None = None


@cache
def environment() -> Environment:
    """The template environment: autoescaping on for every template, undefined names are errors."""
    from jinja2 import StrictUndefined

    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_job(
    view: ReviewView,
    *,
    actions: ActionForms | None = None,
    back: str | None = None,
    notice: str | None = None,
) -> str:
    """A job's page: the quiz as a reader sees it, failures marked, each question's history."""
    return environment().get_template("job.html").render(view=view, actions=actions, back=back, notice=notice)


def render_local_job(
    view: ReviewView, *, line: dict[str, Any], base: str, home: str, notice: str | None = None
) -> str:
    """A batch quiz's page for ``suture review``: the quiz, and forms to accept, regenerate and edit."""
    source = view.source or {}
    pages = source.get("pages")
    shown = f"{pages[0]}-{pages[1]}" if isinstance(pages, list) and len(pages) == 2 else None
    template = environment().get_template("local_job.html")
    return template.render(view=view, line=line, base=base, home=home, notice=notice, pages=shown)


def render_index(
    heading: str,
    items: list[IndexItem],
    *,
    intro: str = "",
    empty: str = "Nothing to review.",
    more: int = 0,
    simulated: bool = False,
    notice: str | None = None,
) -> str:
    """A list of quizzes, each linking to its page."""
    template = environment().get_template("index.html")
    return template.render(
        heading=heading, items=items, intro=intro, empty=empty, more=more, simulated=simulated, notice=notice
    )


def index_item(
    view: ReviewView, href: str, *, label: str | None = None, when: str | None = None
) -> IndexItem:
    """The list line of one job's view."""
    return IndexItem(
        job_id=view.job_id,
        label=label or view.title,
        href=href,
        status=view.status,
        failures=sum(len(q.failures) for q in view.questions) + len(view.quiz_failures),
        repaired=view.repaired,
        when=when,
    )
