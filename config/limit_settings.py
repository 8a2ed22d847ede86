"""Bounds on reading untrusted documents: the limits of the process that reads one PDF or Office file.

A section of ``suture.config.settings.BatchSettings`` (``batch.reader``); each key is documented in
config/defaults.yaml and in docs/security.md.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReaderLimits(BaseModel):
    """What reading one PDF or Office file may cost: its reader runs in a child process capped by these."""

    model_config = ConfigDict(extra="forbid")

    # Address space of the reading process (RLIMIT_AS); a page that needs more refuses the file.
    max_memory_mb: int = Field(400, ge=128)
    # CPU seconds for opening the file, its outline, and each page; more refuses the file (a bomb).
    page_cpu_s: float = Field(2.0, gt=0)
    # CPU seconds for the whole file (RLIMIT_CPU), and wall-clock seconds before it is stopped.
    cpu_s: float = Field(60.0, gt=0)
    timeout_s: float = Field(120.0, gt=0)
    # An Office file (.docx, .pptx, .odt) is a zip: one whose parts unzip to more than this in all, or
    # holding a part over 1 MB that unzips to more than max_zip_ratio times its stored size, is refused
    # before it is parsed (a zip bomb: 1.5 MB of .docx inflating to 400 MB of XML).
    max_unzipped_mb: float = Field(200.0, gt=0)
    max_zip_ratio: float = Field(100.0, gt=1)
