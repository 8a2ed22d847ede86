"""report.html: the batch summary as one self-contained page (inline CSS and SVG, no external assets).

Everything shown comes from report.json (``BatchReport.summary()``); every string from documents or
model output is HTML-escaped, because it is untrusted input.
"""

from __future__ import annotations

from html import escape
from typing import Any

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd}
.sim{background:#fff3cd;border:2px solid #e0a800;padding:.6em 1em;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:.6em}.card{border:1px solid #ddd;border-radius:6px;padding:.5em .9em}
.card b{display:block;font-size:1.4em}table{border-collapse:collapse}td,th{padding:.2em .7em;
border-bottom:1px solid #eee;text-align:left;vertical-align:top}svg text{font:12px system-ui,sans-serif}
"""
_BAR = "#4a7bd0"


def render(summary: dict[str, Any]) -> str:
    """The whole page for one report.json summary."""
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<title>suture batch report</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    if summary.get("simulated"):
        parts.append(f"<p class=sim>{escape(str(summary.get('notice')))}</p>")
    parts += ["<h1>suture batch report</h1>", _cards(summary)]
    parts += [_funnel(summary), _overhead(summary), _provider(summary), _distributions(summary)]
    parts += [_codes(summary), _tiers(summary)]
    parts += [
        _review(summary),
        _touched(summary),
        _quizzes(summary),
        _problems(summary),
        _issues(summary),
        _not_started(summary),
        _short(summary),
        _repeats(summary),
    ]
    parts.append("</body></html>")
    return "\n".join(parts)


def _cards(s: dict[str, Any]) -> str:
    per = s["per_quiz"]
    items = [(k.replace("_", " "), s[k]) for k in ("total", "delivered", "soft_delivered", "failed")]
    items += [("refused", s["refused"]), ("skipped", s["skipped"]), ("cost", _usd(s["cost_usd"]))]
    if "run_cost_usd" in s:  # a batch with a ledger: what this run spent, and what it kept from earlier ones
        items += [("this run's cost", _usd(s["run_cost_usd"])), ("kept from earlier runs", s.get("kept", 0))]
    if s.get("batch_estimated_usd"):  # calls in flight at a Ctrl-C: billed, never answered, so estimated
        items += [("of the cost, estimated (calls in flight at Ctrl-C)", _usd(s["batch_estimated_usd"]))]
    items += [("mean cost / quiz", _usd(per["cost_usd"]["mean"]))]
    items += [("p50 / p95 latency", f"{_ms(per['latency_ms']['p50'])} / {_ms(per['latency_ms']['p95'])}")]
    rates = ", ".join(f"{escape(k.replace('_', ' '))} {_pct(v)}" for k, v in s["rates"].items())
    cards = "".join(f"<div class=card>{escape(k)}<b>{escape(str(v))}</b></div>" for k, v in items)
    return f"<div class=cards>{cards}</div><p>Rates: {rates}</p>"


def _funnel(s: dict[str, Any]) -> str:
    rows = [(f"attempt {f['attempt']}", float(f["jobs"])) for f in s["funnel"]]
    rows += [("delivered", float(s["delivered"])), ("soft-delivered", float(s["soft_delivered"]))]
    return "<h2>Funnel of attempts</h2><p>Jobs that reached each attempt, and how they ended.</p>" + _hbars(
        rows
    )


def _overhead(s: dict[str, Any]) -> str:
    o = s.get("repair_overhead") or {}
    if not o.get("quizzes"):
        return ""
    items = [("overall", o["overall"]), ("median", o["median"]), ("p90", o["p90"]), ("max", o["max"])]
    items += [("wall-time ratio, median", o["wall_time_ratio_median"])]
    cards = "".join(
        f"<div class=card>{escape(k)}<b>{'-' if v is None else f'{v:.2f}x'}</b></div>" for k, v in items
    )
    return (
        "<h2>Repair overhead</h2><p>What the valid quizzes cost relative to their first attempts "
        f"(1.00x: right first time; {o['quizzes']} quizzes): the overall ratio of costs, and per quiz.</p>"
        f"<div class=cards>{cards}</div>"
    )


def _provider(s: dict[str, Any]) -> str:
    per_model = s.get("provider_tokens") or {}
    if not per_model:
        return ""
    head = (
        "<tr><th>model<th>served tokens<th>metered tokens<th>served ÷ metered<th>cut replies sent again"
        "<th>calls deferred for the budget<th>their wait s<th>429s</tr>"
    )
    rows = "".join(
        f"<tr><td>{escape(model)}<td>{p['served_tokens']:,}<td>{p['metered_tokens']:,}"
        f"<td>{_ratio(p['served_per_metered'])}"
        f"<td>{p['cap_retries']}<td>{p.get('deferred_for_budget', '-')}"
        f"<td>{p.get('deferred_for_budget_s', '-')}"
        f"<td>{p.get('rate_limited', '-')}</tr>"
        for model, p in per_model.items()
    )
    return (
        "<h2>Tokens served and metered</h2><p>Served: prompt + completion tokens of the replies. Metered: "
        "what the provider counts against its tokens-per-minute limit (OpenAI: the prompt + each request's "
        "max_completion_tokens). Deferrals and 429s are the cluster's, over this run.</p>"
        f"<table>{head}{rows}</table>"
    )


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _distributions(s: dict[str, Any]) -> str:
    out = ["<h2>Cost and latency per delivered quiz</h2>"]
    for key, title, fmt in (("cost_usd", "cost (USD)", _usd), ("latency_ms", "latency", _ms)):
        bins = s["distributions"][key]
        out.append(f"<h3>{title}</h3>" + (_columns(bins, fmt) if bins else "<p>no data</p>"))
    return "".join(out)


def _codes(s: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{escape(code)}</td><td>{v['occurrences']}</td><td>{v['remaining']}</td>"
        f"<td>{escape(', '.join(f'{k}: {n}' for k, n in v['fixed_by'].items()) or '-')}</td></tr>"
        for code, v in s["failure_codes"].items()
    )
    head = "<tr><th>code</th><th>occurrences</th><th>left at delivery</th><th>fixed by</th></tr>"
    return f"<h2>Failure codes</h2><table>{head}{rows}</table>" if rows else ""


def _tiers(s: dict[str, Any]) -> str:
    rows = "".join(
        "<tr><td>tier "
        f"{escape(t)}</td><td>{v['used']}</td><td>{v['passed']}</td><td>{_pct(v['success_rate'])}</td></tr>"
        for t, v in s["example_tiers"].items()
    )
    head = "<tr><th>example</th><th>used</th><th>passed</th><th>success rate</th></tr>"
    return f"<h2>Example tiers</h2><table>{head}{rows}</table>" if rows else ""


def _review(s: dict[str, Any]) -> str:
    items = "".join(
        f"<li>{_source(e['source'])}: {escape(', '.join(e['codes']))} "
        f"(<a href='{escape(e['trace'])}'>trace</a>)</li>"
        for e in s["review"]
    )
    more = _more(s, "review")
    return f"<h2>Soft-delivered quizzes to review ({s['soft_delivered']})</h2><ul>{items}</ul>{more}"


def _touched(s: dict[str, Any]) -> str:
    """The quizzes a person edited or accepted: kept by every rerun, checked against the contract."""
    items = "".join(
        f"<li>{_source(t['source'])}: {escape(t['how'])} by a person; now {escape(str(t['status']))}"
        f"{': ' + escape(', '.join(t['codes'])) if t['codes'] else ''}</li>"
        for t in s.get("touched") or []
    )
    return f"<h2>Kept as a person left them</h2><ul id=touched>{items}</ul>" if items else ""


def _quizzes(s: dict[str, Any]) -> str:
    """Every quiz, readable on its own page (the review rendering, static): soft-delivered first."""
    rows = "".join(
        f"<tr data-job='{escape(str(q['job_id']))}'><td><a "
        f"href='{escape(q['href'])}'>{escape(q['title'])}</a></td>"
        f"<td>{_source(q['source'])}</td><td>{escape(q['status'])}</td><td>{q['failures']}</td>"
        f"<td>{q['repaired']}</td></tr>"
        for q in s.get("quizzes", [])
    )
    head = (
        "<tr><th>quiz</th><th>source</th><th>status</th><th>failures left</th><th>questions "
        "repaired</th></tr>"
    )
    return f"<h2>Quizzes</h2><table id=quizzes>{head}{rows}</table>{_more(s, 'quizzes')}" if rows else ""


def _problems(s: dict[str, Any]) -> str:
    items = "".join(
        f"<li>{_source(e['source'])}: <b>{escape(e['status'])}</b>: {escape(str(e.get('reason')))} "
        f"(<a href='{escape(e['trace'])}'>trace</a>)</li>"
        for e in s["problems"]
    )
    return f"<h2>Failed and refused sections</h2><ul>{items}</ul>{_more(s, 'problems')}" if items else ""


def _issues(s: dict[str, Any]) -> str:
    items = "".join(
        f"<li>{escape(i['file'])}: <b>{'skipped' if i['skipped'] else 'note'}</b> "
        f"({escape(i['reason'])}): {escape(i['detail'])}</li>"
        for i in s["input_issues"]
    )
    return f"<h2>Input files skipped or noted</h2><ul>{items}</ul>{_more(s, 'issues')}" if items else ""


def _not_started(s: dict[str, Any]) -> str:
    left = s.get("not_started") or {"count": 0, "sections": []}
    if not left["count"]:
        return ""
    budget = s.get("budget") or {}
    items = "".join(
        f"<li>{_source(source)} {escape(str(source.get('title') or ''))}</li>" for source in left["sections"]
    )
    head = (
        f"<h2>Not started: the budget of {_usd(budget.get('limit_usd'))} was reached "
        f"({left['count']} sections)</h2><p>Spent {_usd(budget.get('spent_usd'))}. Run the batch again "
        "with a larger --budget-usd to quiz them (finished sections are reused).</p>"
    )
    return f"{head}<ul>{items}</ul>{_more(s, 'not_started')}"


def _short(s: dict[str, Any]) -> str:
    short = s.get("short_sections") or {"count": 0, "sections": []}
    items = "".join(
        f"<li>{_source(e)} {escape(str(e.get('title') or ''))}: {escape(str(e.get('reason')))}</li>"
        for e in short["sections"]
    )
    head = f"<h2>Sections too short for a quiz ({short['count']})</h2>"
    return f"{head}<ul>{items}</ul>{_more(s, 'short_sections')}" if short["count"] else ""


def _repeats(s: dict[str, Any]) -> str:
    found = s.get("repeats_across_sections") or {"count": 0, "questions": []}
    items = "".join(
        f"<li>{_source(e['source'])} question {e['question']} ({escape(e['stem'])}) repeats "
        f"{_source(e['repeats'])} question {e['repeats']['question']} ({escape(e['repeats']['stem'])}); "
        f"{e['similarity']:.0%} of their words shared</li>"
        for e in found["questions"]
    )
    head = (
        f"<h2>Questions repeated across sections ({found['count']})</h2><p>Later sections' prompts list "
        "earlier questions not to repeat; these repeat one all the same.</p>"
    )
    return f"{head}<ul>{items}</ul>{_more(s, 'repeats_across_sections')}" if found["count"] else ""


def _more(s: dict[str, Any], name: str) -> str:
    n = s["unlisted"].get(name, 0)
    return f"<p>... and {n} more (see report.json and quizzes.jsonl)</p>" if n else ""


def _source(source: dict[str, Any]) -> str:
    pages = source.get("pages")
    where = f" pp. {pages[0]}-{pages[1]}" if pages else ""
    return escape(f"{source.get('file')} §{source.get('section')}{where}")


def _hbars(rows: list[tuple[str, float]]) -> str:
    top = max((v for _, v in rows), default=0.0) or 1.0
    h, label_w, bar_w = 24, 130, 520
    bars = []
    for i, (label, value) in enumerate(rows):
        y, w = i * h, bar_w * value / top
        bars.append(
            f"<text x=0 y={y + 16}>{escape(label)}</text>"
            f"<rect x={label_w} y={y + 4} width={w:.1f} height={h - 8} fill='{_BAR}'/>"
            f"<text x={label_w + w + 6:.1f} y={y + 16}>{value:g}</text>"
        )
    return f"<svg width={label_w + bar_w + 60} height={h * len(rows)} role=img>{''.join(bars)}</svg>"


def _columns(bins: list[dict[str, float]], fmt: Any) -> str:
    top = max(b["count"] for b in bins) or 1
    col_w, chart_h = 40, 120
    cols = []
    for i, b in enumerate(bins):
        hgt = chart_h * b["count"] / top
        cols.append(
            f"<rect x={i * col_w + 2} y={chart_h - hgt:.1f} width={col_w - 4} height={hgt:.1f} fill='{_BAR}'>"
            f"<title>{escape(fmt(b['lo']))} - {escape(fmt(b['hi']))}: {b['count']}</title></rect>"
        )
    axis = f"<text x=0 y={chart_h + 16}>{escape(fmt(bins[0]['lo']))}</text>"
    axis += (
        f"<text x={len(bins) * col_w} y={chart_h + 16} text-anchor=end>{escape(fmt(bins[-1]['hi']))}</text>"
    )
    return f"<svg width={len(bins) * col_w} height={chart_h + 22} role=img>{''.join(cols)}{axis}</svg>"


def _usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def _ms(v: float | None) -> str:
    return "-" if v is None else (f"{v / 1000:.1f} s" if v >= 1000 else f"{v:.0f} ms")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"
