"""The simulator's token estimate: about four characters a token, one estimate for every count it reports.

``prompt_tokens`` and the prompt cache's 128-token boundaries both walk :func:`counted_text`, so a
cached count can never disagree with the prompt size it is part of.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    """Tokens of a text, consistently about four characters each."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def counted_text(message: dict[str, Any]) -> str:
    """The text of one message that its prompt tokens are counted from (its content as JSON)."""
    return json.dumps(message.get("content"))


def prompt_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """Prompt tokens of a request: each message's counted text, rounded up to whole tokens."""
    return sum(tokens(counted_text(m)) for m in messages)
