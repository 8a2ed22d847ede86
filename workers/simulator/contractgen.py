"""Outputs of any contract, written from its JSON Schema and the document, with structural faults.

For a contract other than the quiz the simulator knows only what a request carries: the response
schema, the document and, for a slice, the slice's pointer, its invariants and the failures. It writes
a plausible output: texts from the document's sentences (a field named ``*quote*`` or described as
verbatim gets a verbatim run of a sentence's words), list lengths from a description's "N to M", a
first word from a description's "start with one of: A, B, C", at most a description's "at most N
words". Then, at random units (each object or text item of a list), it injects structural faults at
the profile's ``unit_faults`` shares, scaled by the model's bias (gpt-5-nano 1x; ``repair_skill``):
a missing field, a text copied from a sibling (duplicate), an over-long text, a paraphrased quote.
A slice reply is written fresh for the slice's schema, keeps the invariants the prompt lists, and
comes back faulty at the model's slice miss rate. Everything here is a SIMULATION, not a model.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from suture.workers.simulator.document import Document, analyse
from suture.workers.simulator.profiles import ModelTraits, Profile
from suture.workers.simulator.prompt import Prompt
from suture.workers.simulator.repair_skill import NANO_BIAS, slice_fix_rate

MAX_ITEMS = 8
DEFAULT_ITEMS = 3
MAX_DEPTH = 12
_RANGE = re.compile(r"(\d+)\s*(?:to|-|–)\s*(\d+)")
_AT_LEAST = re.compile(r"at least (\d+)", re.IGNORECASE)
_STARTS = re.compile(r"(?:start|begin)s? with (?:a verb from|one of)[:\s]+([A-Za-z][A-Za-z ,]*)", re.I)
_MAX_WORDS = re.compile(r"at most (\d+) words", re.IGNORECASE)
_INVARIANT = re.compile(r"^- (/\S*) must stay exactly (.+)$", re.MULTILINE)
_FALLBACK_WORDS = ["the", "simulated", "model", "writes", "about", "the", "document", "here"]


class _Writer:
    """Writes values for schemas, drawing from the document's sentences without repeating itself."""

    def __init__(self, document: Document, rng: random.Random) -> None:
        self.rng = rng
        self.sentences = [s.text for s in document.sentences] or [" ".join(_FALLBACK_WORDS)]
        self.streams: dict[str, tuple[list[int], list[int]]] = {}  # key -> (order, [used])

    def sentence(self, key: str = "") -> str:
        """The next sentence for texts of ``key``: each key runs through every sentence before repeating."""
        if key not in self.streams:
            self.streams[key] = (self.rng.sample(range(len(self.sentences)), len(self.sentences)), [0])
        order, used = self.streams[key]
        index = order[used[0] % len(order)]
        used[0] += 1
        return self.sentences[index]

    def value(self, schema: dict[str, Any], key: str = "", depth: int = 0) -> Any:
        if "anyOf" in schema:
            options = [o for o in schema["anyOf"] if o.get("type") != "null"] or schema["anyOf"]
            return self.value(options[0], key, depth)
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        if "const" in schema:
            return schema["const"]
        kind = schema.get("type")
        if depth > MAX_DEPTH:
            return None
        if kind == "object":
            return {k: self.value(sub, k, depth + 1) for k, sub in schema.get("properties", {}).items()}
        if kind == "array":
            return [self.value(schema.get("items", {}), key, depth + 1) for _ in range(self.count(schema))]
        if kind == "string":
            return self.text(key, str(schema.get("description", "")))
        return {
            "integer": self.rng.randint(1, 5),
            "number": round(self.rng.random(), 2),
            "boolean": True,
        }.get(str(kind))

    def count(self, schema: dict[str, Any]) -> int:
        description = str(schema.get("description", ""))
        span = _RANGE.search(description)
        if span:
            low, high = sorted((int(span.group(1)), int(span.group(2))))
            return min(self.rng.randint(low, high), MAX_ITEMS)
        least = _AT_LEAST.search(description)
        if least:
            return min(self.rng.randint(int(least.group(1)), int(least.group(1)) + 2), MAX_ITEMS)
        return DEFAULT_ITEMS

    def text(self, key: str, description: str) -> str:
        words = self.sentence(key).rstrip(".!?").split()
        if is_quote(key, description):
            start = self.rng.randrange(max(1, len(words) - 11))
            return " ".join(words[start : start + 12])
        limit = _MAX_WORDS.search(description)
        most = int(limit.group(1)) if limit else 12
        starts = _STARTS.search(description)
        lead = (
            [self.rng.choice([w.strip() for w in starts.group(1).split(",") if w.strip()])] if starts else []
        )
        body = [w.strip(",;:") for w in words if len(w) > 3][: max(1, min(most, 8) - len(lead))]
        if key.lower() in ("title", "name", "heading"):
            return " ".join(w.capitalize() for w in body[:5])
        return " ".join([*lead, *(w.lower() if lead else w for w in body)])


def is_quote(key: str, description: str) -> bool:
    """True for a text a contract wants quoted from the source (by its name or its description)."""
    return "quote" in key.lower() or "verbatim" in description.lower()


def write_output(
    schema: dict[str, Any], prompt: Prompt, traits: ModelTraits, profile: Profile, rng: random.Random
) -> Any:
    """A whole output for ``schema`` from the prompt's document, with unit faults at the model's rates."""
    writer = _Writer(analyse(prompt.document), rng)
    value = writer.value(schema)
    scale = traits.imbalance_rate / NANO_BIAS
    return inject(value, schema, profile, scale, rng, writer)


def write_generic_slice(
    schema: dict[str, Any],
    prompt: Prompt,
    traits: ModelTraits,
    profile: Profile,
    rng: random.Random,
    effort: str | None,
) -> dict[str, Any]:
    """``{"value": ...}`` for a slice request: a fresh value keeping the listed invariants, faulty at the
    model's slice miss rate (one fault, at the slice's own level)."""
    value_schema = schema.get("properties", {}).get("value", {})
    writer = _Writer(analyse(prompt.document), rng)
    value = writer.value(value_schema)
    if rng.random() >= slice_fix_rate(traits, effort):
        value = _miss(value, value_schema, rng, writer)
    return {"value": keep_invariants(value, prompt)}


def _miss(value: Any, schema: dict[str, Any], rng: random.Random, writer: _Writer) -> Any:
    """A slice the model got wrong again: a quote paraphrased, else a text over-long, else a key dropped."""
    if isinstance(value, str):
        return " ".join([value, *(writer.sentence() for _ in range(3))])
    if not isinstance(value, dict) or not value:
        return value
    texts = [k for k, v in value.items() if isinstance(v, str)]
    described = schema.get("properties", {})
    quotes = [k for k in texts if is_quote(k, str(described.get(k, {}).get("description", "")))]
    if quotes:
        key = rng.choice(quotes)
        return {**value, key: "As the document explains, " + " ".join(reversed(value[key].split()))}
    if texts:
        key = rng.choice(texts)
        return {**value, key: " ".join([value[key], *(writer.sentence() for _ in range(3))])}
    missing = dict(value)
    missing.pop(rng.choice(list(missing)))
    return missing


def keep_invariants(value: Any, prompt: Prompt) -> Any:
    """``value`` with each ``<invariants>`` line's pointer (under the slice) set to its stated value."""
    base = prompt.slice_pointer or ""
    for pointer, raw in _INVARIANT.findall(prompt.text):
        if not pointer.startswith(base + "/") or not isinstance(value, dict):
            continue
        try:
            kept = json.loads(raw)
        except ValueError:
            continue
        tokens = pointer[len(base) + 1 :].split("/")
        node: Any = value
        for token in tokens[:-1]:
            node = node.get(token) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[tokens[-1]] = kept
    return value


def inject(
    value: Any, schema: dict[str, Any], profile: Profile, scale: float, rng: random.Random, writer: _Writer
) -> Any:
    """``value`` with faults drawn for every item of every list (each fault at its share x ``scale``)."""
    rates = profile.unit_faults
    for items, item_schema in _lists(value, schema):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                items[index] = _spoil_object(item, items, item_schema, rates, scale, rng, writer)
            elif isinstance(item, str):
                items[index] = _spoil_text(item, items, rates, scale, rng)
    return value


def _lists(value: Any, schema: dict[str, Any]) -> list[tuple[list[Any], dict[str, Any]]]:
    found: list[tuple[list[Any], dict[str, Any]]] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            found += _lists(sub, schema.get("properties", {}).get(key, {}))
    elif isinstance(value, list):
        found.append((value, schema.get("items", {})))
        for item in value:
            found += _lists(item, schema.get("items", {}))
    return found


def _spoil_object(
    item: dict[str, Any],
    siblings: list[Any],
    schema: dict[str, Any],
    rates: Any,
    scale: float,
    rng: random.Random,
    writer: _Writer,
) -> dict[str, Any]:
    texts = [k for k, v in item.items() if isinstance(v, str)]
    quotes = [
        k for k in texts if is_quote(k, str(schema.get("properties", {}).get(k, {}).get("description", "")))
    ]
    plain = [k for k in texts if k not in quotes]
    item = dict(item)
    if plain and rng.random() < rates.duplicate * scale:
        others = [
            s for s in siblings if isinstance(s, dict) and s is not item and isinstance(s.get(plain[0]), str)
        ]
        if others:
            item[plain[0]] = rng.choice(others)[plain[0]]
    if plain and rng.random() < rates.overlong * scale:
        key = rng.choice(plain)
        item[key] = " ".join([item[key], *(writer.sentence() for _ in range(3))])
    if quotes and rng.random() < rates.unquoted * scale:
        key = rng.choice(quotes)
        item[key] = "As the document explains, " + " ".join(reversed(item[key].split()))
    if item and rng.random() < rates.missing_field * scale:
        item.pop(rng.choice(list(item)))
    return item


def _spoil_text(text: str, siblings: list[Any], rates: Any, scale: float, rng: random.Random) -> str:
    if rng.random() < rates.duplicate * scale:
        others = [s for s in siblings if isinstance(s, str) and s is not text]
        if others:
            return str(rng.choice(others))
    if rng.random() < rates.overlong * scale:
        return " ".join([text, text, text, "and much more besides, at length"])
    return text
