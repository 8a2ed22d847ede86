"""The repair benchmark's corpus: the sample documents cut into sections of several sizes.

Cutting the same documents at 1,500 to 6,000 characters gives sections of mixed length (short ones
fall under the provider's 1,024-token prompt-caching minimum, long ones do not), read by the very
code ``suture batch`` uses, so PDFs count too. Sections are deduplicated by text and ordered by size;
remainders under ``MIN_CHARS`` are left out.
"""

from __future__ import annotations

from pathlib import Path

from suture.config.settings import BatchSettings, Settings
from suture.workers.documents import Section, iter_documents

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SECTION_SIZES = (1500, 1800, 2000, 2400, 2800, 3200, 3600, 4000, 4500, 6000)
# Shorter remainders are left out: 15 distinct questions cannot be asked of a dozen sentences (the quiz's
# duplicate_question rule rightly refuses repeats, and the simulator runs out of facts to ask about
# below ~1,500 characters), so they would measure the corpus, not the repair.
MIN_CHARS = 1500


def corpus(settings: Settings, sizes: tuple[int, ...] = SECTION_SIZES) -> list[str]:
    """The section texts of ``examples/`` cut at each of ``sizes`` (max characters), deduplicated."""
    found: dict[str, None] = {}
    for size in sizes:
        limits = BatchSettings.model_validate(
            {**settings.batch.model_dump(), "section_max_chars": size, "section_min_chars": size * 9 // 10}
        )
        for item in iter_documents([EXAMPLES], limits):
            if isinstance(item, Section) and len(item.text) >= MIN_CHARS:
                found.setdefault(item.text, None)
    return sorted(found, key=len)
