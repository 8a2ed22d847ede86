"""Review: a quiz as a reader sees it, each failure left marked at its question, each question's repairs.

The rendering is shared by the review pages of ``suture serve`` (a job read from the store, with
accept / resume / cancel) and the static pages of a batch's ``report.html`` (no server). Modules:
``view`` (a result, its attempts and its document turned into what a page shows, pure), ``render``
(the Jinja2 templates, every value escaped), ``jobs`` (a job from the store as a view, the list of
jobs waiting for review) and ``actions`` (accept as is). Errors are the store's and the producer's.
"""
