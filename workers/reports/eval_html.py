"""The policy comparison as a terminal table (rich), eval.json, and a self-contained eval.html.

eval.html has inline CSS and inline SVG charts only (no scripts, fonts or external assets);
every string that came from documents, file names or policy names is HTML-escaped. A simulated
evaluation is labelled as such in all three outputs.
"""

from __future__ import annotations

from html import escape
from typing import Any

from rich.console import Console
from rich.table import Table

SIMULATION_NOTICE = (
    "SIMULATION: these figures come from the suture simulator, not a real model; "
    "they show how the policies behave against its modelled biases."
)
# Stacked-bar segments of how jobs ended, in order, with their colours.
ENDINGS = (
    ("first_try_rate", "valid on first try", "#2e7d32"),
    ("repaired_rate", "valid after repair", "#81c784"),
    ("soft_delivered_rate", "soft-delivered", "#f9a825"),
    ("failed_rate", "failed", "#c62828"),
    ("refused_rate", "refused", "#6a1b9a"),
)
_CSS = """
body{font:15px/1.45 system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd}
.sim{background:#fff3cd;border:2px solid #e0a800;padding:.6em 1em;font-weight:600}
table{border-collapse:collapse}td,th{padding:.2em .7em;border-bottom:1px solid #eee;text-align:left}
svg text{font:12px system-ui,sans-serif}
.key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}
"""


def usd(value: float | None) -> str:
    """A cost for people: ``unknown`` rather than a misleading 0."""
    return "unknown" if value is None else f"${value:.6f}"


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal."""
    return "-" if value is None else f"{100 * value:.1f}%"


def overhead(figures: dict[str, Any] | None) -> str:
    """The repair overhead for people: overall (median / p90 / max per quiz), ``-`` without a valid quiz."""
    if not figures or figures.get("overall") is None:
        return "-"
    return f"{figures['overall']:.2f}x ({figures['median']:.2f}/{figures['p90']:.2f}/{figures['max']:.2f})"


def print_table(report: dict[str, Any], console: Console) -> None:
    """The comparison, the per-step fixes and the suggestion, for the terminal."""
    if report.get("simulated"):
        console.print(f"[bold yellow]{SIMULATION_NOTICE}[/]")
    console.print(_summary_table(report))
    console.print(_steps_table(report))
    suggestion = report.get("suggestion")
    if suggestion:
        console.print(_suggestion_text(suggestion))


def _summary_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"Policy comparison ({report['settings'].get('jobs_per_policy')} jobs per policy)")
    columns = (
        "policy",
        "valid",
        "1st try",
        "repaired",
        "soft",
        "failed",
        "cost/valid",
        "overhead",
        "p50",
        "p95",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "policy" else "right")
    table.add_column("tokens/job", justify="right")
    for name, p in report["policies"].items():
        table.add_row(
            name,
            pct(p["valid_rate"]),
            pct(p["first_try_rate"]),
            pct(p["repaired_rate"]),
            pct(p["soft_delivered_rate"]),
            pct(p["failed_rate"] + p["refused_rate"]),
            usd(p["cost_per_valid_usd"]),
            overhead(p.get("repair_overhead")),
            f"{p['latency_p50_ms'] / 1000:.1f} s",
            f"{p['latency_p95_ms'] / 1000:.1f} s",
            str(p["tokens"]["per_job"]),
        )
    return table


def _steps_table(report: dict[str, Any]) -> Table:
    table = Table(title="Steps: what ran, what it cost, which failure codes it fixed")
    for column in ("policy", "step", "runs", "calls", "cost/run", "valid after", "fixed (code x count)"):
        table.add_column(column)
    for name, p in report["policies"].items():
        for label, s in p["steps"].items():
            fixed = ", ".join(f"{code} x{n}" for code, n in s["fixed"].items()) or "-"
            table.add_row(
                name,
                label,
                str(s["runs"]),
                str(s["calls"]),
                usd(s["mean_cost_usd"]),
                str(s["delivered_valid"]),
                fixed,
            )
    return table


def _suggestion_text(suggestion: dict[str, Any]) -> str:
    points = 100 * suggestion["margin"]
    lines = [f"[bold]Suggestion[/] (valid rate within {points:g} points of the best):"]
    lines.append(f"  {suggestion['reason']}")
    lines.append(f"  eligible: {', '.join(suggestion['eligible']) or '-'}")
    return "\n".join(lines)


def render_html(report: dict[str, Any]) -> str:
    """The whole eval.html page for one eval.json report."""
    policies = report["policies"]
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<title>suture eval: policy comparison</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    if report.get("simulated"):
        parts.append(f"<p class=sim>{escape(SIMULATION_NOTICE)}</p>")
    parts.append("<h1>suture eval: policy comparison</h1>")
    parts.append(f"<p>{escape(_settings_line(report['settings']))}</p>")
    parts += ["<h2>How jobs ended</h2>", _legend(), _stacked(policies)]
    parts += [
        "<h2>Cost per valid quiz (USD)</h2>",
        _bars([(n, p["cost_per_valid_usd"]) for n, p in policies.items()], usd),
    ]
    latency = [(f"{n} p50", p["latency_p50_ms"]) for n, p in policies.items()]
    latency += [(f"{n} p95", p["latency_p95_ms"]) for n, p in policies.items()]
    parts += [
        "<h2>Repair overhead</h2><p>The cost of the valid quizzes ÷ the cost of their first attempts "
        "(1.00x: right first time), with the median, p90 and max per quiz; the wall-time ratio is the "
        "median of a valid job's model time ÷ its first attempt's.</p>",
        _overhead_table(policies),
    ]
    parts += ["<h2>Latency per job (model time)</h2>", _bars(latency, lambda v: f"{(v or 0) / 1000:.1f} s")]
    parts += ["<h2>Steps and the failure codes they fixed</h2>", _steps_html(policies)]
    if report.get("suggestion"):
        s = report["suggestion"]
        parts += ["<h2>Suggestion</h2>", f"<p>{escape(str(s['reason']))}</p>"]
        within = f"{100 * s['margin']:g} points"
        parts.append(f"<p>Eligible (within {within}): {escape(', '.join(s['eligible']))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _overhead_table(policies: dict[str, Any]) -> str:
    head = (
        "<tr><th>policy</th><th>valid quizzes</th><th>overhead (median/p90/max)</th><th>wall-time "
        "ratio</th></tr>"
    )
    rows = []
    for name, p in policies.items():
        o = p.get("repair_overhead") or {}
        wall = o.get("wall_time_ratio_median")
        cells = (name, o.get("quizzes", 0), overhead(o), "-" if wall is None else f"{wall:.2f}x")
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _settings_line(settings: dict[str, Any]) -> str:
    keys = ("dataset", "documents", "runs", "jobs_per_policy", "latency_scale", "model_endpoint")
    return "; ".join(f"{k.replace('_', ' ')}: {settings.get(k)}" for k in keys if k in settings)


def _legend() -> str:
    items = "".join(
        f"<span style='background:{colour}'></span>{escape(label)}" for _, label, colour in ENDINGS
    )
    return f"<p class=key>{items}</p>"


def _stacked(policies: dict[str, Any]) -> str:
    h, label_w, bar_w = 28, 200, 600
    rows = []
    for i, (name, p) in enumerate(policies.items()):
        y, x = i * h, float(label_w)
        rows.append(f"<text x=0 y={y + 18}>{escape(name)}</text>")
        for key, label, colour in ENDINGS:
            w = bar_w * float(p.get(key) or 0.0)
            if w > 0:
                tip = f"{label}: {pct(p.get(key))}"
                rows.append(
                    f"<rect x={x:.1f} y={y + 5} width={w:.1f} height={h - 10} fill='{colour}'>"
                    f"<title>{escape(tip)}</title></rect>"
                )
                x += w
    return f"<svg width={label_w + bar_w + 10} height={h * len(policies)} role=img>{''.join(rows)}</svg>"


def _bars(rows: list[tuple[str, float | None]], fmt: Any) -> str:
    top = max((v for _, v in rows if v is not None), default=0.0) or 1.0
    h, label_w, bar_w = 24, 200, 500
    out = []
    for i, (label, value) in enumerate(rows):
        y, w = i * h, bar_w * (value or 0.0) / top
        out.append(
            f"<text x=0 y={y + 16}>{escape(label)}</text>"
            f"<rect x={label_w} y={y + 4} width={w:.1f} height={h - 8} fill='#4a7bd0'/>"
            f"<text x={label_w + w + 6:.1f} y={y + 16}>{escape(fmt(value))}</text>"
        )
    return f"<svg width={label_w + bar_w + 120} height={h * len(rows)} role=img>{''.join(out)}</svg>"


def _steps_html(policies: dict[str, Any]) -> str:
    head = "<tr><th>policy</th><th>step</th><th>runs</th><th>calls</th><th>cost/run</th><th>fixed</th></tr>"
    rows = []
    for name, p in policies.items():
        for label, s in p["steps"].items():
            fixed = ", ".join(f"{code} x{n}" for code, n in s["fixed"].items()) or "-"
            cells = (name, label, s["runs"], s["calls"], usd(s["mean_cost_usd"]), fixed)
            rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"
