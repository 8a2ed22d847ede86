"""Writes the figures of a reliability run into docs/reliability.md, one ``## `` section per scenario.

Only the soak variants call this (``make soak``), so a CI run never edits the tree; each call replaces
its own section and keeps the others, and states the machine and settings next to the figures.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import time
from pathlib import Path
from typing import Any

REPORT = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
PREAMBLE = """# Reliability figures

Written by `make soak` (`pytest -m soak tests/reliability`); each section is replaced by the scenario's
latest soak run. Every job runs on real Celery worker processes, a real Redis and the real `openai`
SDK over HTTP to the suture simulator (a simulation, not a real model). The CI variants of the same
tests run with smaller counts and assert the same properties, but do not write here.
"""
PLACEHOLDER = "_No soak run recorded yet: run `make soak`._"


def machine() -> str:
    """One line naming the machine the figures were measured on."""
    redis_version = _redis_version()
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {redis_version}"
    )


def _redis_version() -> str:
    try:
        out = subprocess.run(["redis-server", "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "redis-server version unknown"
    match = re.search(r"v=(\S+)", out.stdout)
    return f"redis-server {match.group(1)}" if match else "redis-server version unknown"


def write_section(title: str, settings: dict[str, Any], figures: dict[str, Any]) -> None:
    """Replace (or add) the ``## title`` section of docs/reliability.md with these figures."""
    lines = [f"## {title}", "", f"Run {time.strftime('%Y-%m-%d %H:%M %Z')} on {machine()}.", ""]
    lines += ["Settings: " + ", ".join(f"`{k}={v}`" for k, v in settings.items()), ""]
    lines += ["| figure | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in figures.items()]
    section = "\n".join(lines) + "\n"
    text = REPORT.read_text() if REPORT.exists() else PREAMBLE
    sections = _split(text)
    sections[title] = section
    body = "\n".join(sections[t] for t in sections if t != "")
    preamble = sections.get("", PREAMBLE).replace(PLACEHOLDER, "").rstrip()
    REPORT.write_text(preamble + "\n\n" + body)


def _split(text: str) -> dict[str, str]:
    """The report's preamble (key "") and its ``## `` sections by title, in order."""
    parts = re.split(r"(?m)^(?=## )", text)
    sections = {"": parts[0]}
    for part in parts[1:]:
        title = part.splitlines()[0][3:].strip()
        sections[title] = part.rstrip() + "\n"
    return sections
