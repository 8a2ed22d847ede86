"""Replies sized to what they ask for: through the real openai SDK to the simulator, and suture's budget in
Redis.

The simulator (a simulation) cuts a reply off at the request's ``max_completion_tokens``
(``finish_reason`` length) and meters each admitted request as OpenAI does: its prompt plus its
``max_completion_tokens``. suture asks for its contract's estimate, sends a cut reply again once with
the cap doubled, and keeps its budget equal to the simulator's meter.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest
import redis

from suture.config.settings import ClientSettings, Settings
from suture.config.simulator_sections import ModelRateLimit
from suture.contracts.quiz import QuizContract
from suture.tasks.calls import ModelCall
from suture.workers.model.budget import Budget
from suture.workers.model.budgeted_caller import BudgetedCaller
from suture.workers.model.client import ModelClient
from suture.workers.simulator.limits import RateLimit

MODEL = "gpt-5-nano"
TPM = 12_000
DOC = (
    "Photosynthesis turns light into chemical energy in the chloroplasts of green plant cells. "
    "Chlorophyll absorbs red and blue light and reflects green light. "
    "Oxygen is released as a by-product of splitting water."
)
QUIZ = QuizContract(questions=2)


def _call(expected: int | None) -> ModelCall:
    """A 2-question quiz call at minimal effort (no reasoning: its cap is the estimate x 1.5 exactly)."""
    return ModelCall(
        model=MODEL,
        messages=[
            {
                "role": "user",
                "content": "Write exactly 2 questions, each with exactly 4 "
                f"options.\n<document>\n{DOC}\n</document>",
            }
        ],
        schema_name="quiz",
        json_schema=QUIZ.response_schema(),
        reasoning_effort="minimal",
        expected_reply_tokens=expected,
    )


def _settings(base_url: str, **limits: Any) -> Settings:
    return Settings(
        openai_base_url=base_url,
        openai_api_key="sk-test-not-a-real-key",
        limits=limits,
        client=ClientSettings(timeout_s=10, call_budget_s=20, transport_max_retries=0),
    )


_CLIENTS: list[ModelClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def _client(settings: Settings) -> ModelClient:
    _CLIENTS.append(ModelClient(settings))
    return _CLIENTS[-1]


def _nano(base_url: str) -> dict[str, Any]:
    return dict(httpx2.get(f"{base_url}/_stats", timeout=10).json()["models"][MODEL])


def test_a_reply_cut_off_by_its_cap_is_sent_again_once_with_the_cap_doubled(
    simulator: Callable[..., str],
) -> None:
    # Given a call whose estimate (100 tokens: a cap of 150) is short of its ~260-token reply
    url = simulator("perfect")
    client = _client(_settings(url))
    # When it is made
    reply = client.call(_call(100))
    # Then the cut reply was sent again once with a cap of 300, and that whole reply is returned
    assert (
        reply.finish_reason == "stop"
        and reply.text is not None
        and QUIZ.validate(reply.text).output is not None
    )
    assert (reply.cap_retries, reply.max_completion_tokens, reply.asked_completion_tokens) == (1, 300, 450)
    # And both requests' tokens count: the cut one served its whole cap
    nano = _nano(url)
    assert nano["requests"] == 2
    assert reply.usage.output_tokens == nano["completion_tokens"] > 150
    assert reply.usage.input_tokens == nano["prompt_tokens"]


def test_a_reply_cut_off_twice_comes_back_cut_after_one_retry(simulator: Callable[..., str]) -> None:
    # Given a call whose doubled cap (60) is still short of its reply
    url = simulator("perfect")
    client = _client(_settings(url))
    # When it is made
    reply = client.call(_call(20))
    # Then it was retried once only, and the contract sees a truncated reply
    assert (reply.finish_reason, reply.cap_retries, _nano(url)["requests"]) == ("length", 1, 2)
    assert [f.code for f in QUIZ.validate(reply.text or "", finish_reason=reply.finish_reason).failures] == [
        "finish_length"
    ]


def test_the_budget_reserves_the_estimate_and_settles_to_the_simulators_meter(
    simulator: Callable[..., str], redis_url: str
) -> None:
    # Given a provider metering nano at 12,000 tokens a minute (simulated), and suture told the same
    url = simulator("perfect", limits={MODEL: RateLimit(tpm=TPM)})
    limits = {MODEL: ModelRateLimit(tpm=TPM)}
    settings = _settings(url, **limits)
    store = redis.Redis.from_url(redis_url)
    prefix = f"b{uuid.uuid4().hex}"
    budget = Budget(store, limits, prefix=prefix)
    caller = BudgetedCaller(settings, budget, _client(settings))
    # When a call sized from the quiz's estimate, and one cut off and sent again, are made
    sized = caller(_call(QUIZ.reply_tokens()))
    cut = caller(_call(100))
    # Then the first asked for its estimate x 1.5, not the 16,000 ceiling
    assert sized.max_completion_tokens == (QUIZ.reply_tokens() * 3 + 1) // 2 < 1_000
    assert (sized.cap_retries, cut.cap_retries) == (0, 1)
    # And suture counted exactly what the simulator metered and served
    nano, counted = _nano(url), budget.stats()[MODEL]
    assert counted["metered_tokens"] == nano["metered_tokens"]
    assert counted["served_tokens"] == nano["tokens"]
    assert counted["calls"] == 3
    # And the budget's tokens left are the simulator's: read between two reads of the simulator's (both
    # refill at 200 a second, so a loaded machine's gap between reads shows as refill, not as a mismatch)
    before = _provider_tokens(url)
    left = _budget_tokens(store, f"{prefix}:{MODEL}")
    after = _provider_tokens(url)
    assert TPM - nano["metered_tokens"] < before <= after < TPM
    assert before - 2 <= left <= after + 2, (before, left, after)


def _provider_tokens(url: str) -> int:
    return int(httpx2.get(f"{url}/_stats", timeout=10).json()["limits"][MODEL]["remaining_tokens"])


def _budget_tokens(store: redis.Redis, key: str) -> float:
    """The budget's token level now: its stored level plus the refill since it was written (on Redis'
    clock)."""
    tokens, at = store.hmget(key, "tok", "at")
    seconds, micros = store.time()
    now_ms = seconds * 1000 + micros / 1000
    return min(TPM, float(tokens) + (now_ms - float(at)) * TPM / 60_000)
