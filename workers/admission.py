"""What a job must pass before anything is stored: its contract, parameters, policy, input and size.

``admit`` turns an enqueue request into the ``JobSpec`` a worker will run, or raises the
``InvalidJob`` that says why no worker could run it (``suture.workers.errors``):

- the callback (``InvalidJob`` on field ``callback``: ``suture.workers.webhooks.check_callback``);
- the contract name (``UnknownContract``), its parameters resolved over the settings
  (``InvalidParams``: e.g. ``questions`` outside the contract's bounds), the policy's name
  (``UnknownPolicy``: a policy is a name from the settings, never a path, and no file is opened) or
  the rules of a user's policy file read by the CLI on this machine (``policy_rules``, stored with the
  job), and its fit (``InvalidPolicy``: it names an invariant the contract lacks);
- the input: at most ``max_input_bytes``, then checked like every document the readers take
(``suture.workers.documents.text``):
  empty, binary, a PDF or other file format passed as text, text that does not decode
  (``UnusableInput``); bytes are decoded as a text file is (UTF-8, UTF-16 with a BOM, else cp1252);
- the size: the first step's prompt, as the engine would send it, must fit the model's context
  window (``context_tokens`` in the model table, less the reply's ``max_completion_tokens``) and
  ``max_input_tokens`` if set (``InputTooLarge``, naming both numbers).

``enqueue`` and ``suture generate --inline`` both admit through here, so every entry point refuses
the same inputs. Pure: nothing here opens a file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suture.config.settings import Settings
from suture.contracts.errors import ContractDefinitionError, ContractParamsError, UnknownContractError
from suture.contracts.examples import estimate_tokens
from suture.contracts.registry import contract_class, resolve_params
from suture.tasks import engine
from suture.tasks.policy import Policy, PolicyError, load_policy, policy_from_mapping
from suture.tasks.policy_choice import check_fit, policy_name
from suture.tasks.spec import EngineOptions, JobSpec
from suture.workers.errors import (
    InputTooLarge,
    InvalidJob,
    InvalidParams,
    InvalidPolicy,
    UnknownContract,
    UnknownPolicy,
    UnusableInput,
)


@dataclass(frozen=True)
class Admission:
    """An admitted job: the spec to store and the policy its first step was checked under."""

    spec: JobSpec
    policy: Policy


@dataclass(frozen=True)
class Request:
    """A job's contract parameters, complete, and its policy (name as stored, and built), checked;
    ``policy_rules``: a user's policy file's rules as plain JSON data (as stored), if given."""

    params: dict[str, Any]
    policy_name: str
    policy: Policy
    policy_rules: dict[str, Any] | None = None


def check_request(
    contract: str,
    params: dict[str, Any],
    policy: str | None,
    settings: Settings,
    policy_rules: dict[str, Any] | None = None,
) -> Request:
    """Check what a job asks apart from its input: contract, parameters, policy and its fit; raises
    ``InvalidJob``. ``suture batch`` checks its request once with this before reading any document.

    ``policy`` is a configured name; with ``policy_rules`` (a user's policy file as data), it names those.
    """
    resolved = _params(contract, params, settings)
    name = (policy or "file") if policy_rules is not None else policy_name(policy, contract, settings)
    rules = _rules(name, policy_rules, settings.max_policy_file_bytes)
    return Request(resolved, name, _policy(name, contract, settings, rules), rules)


def admit(
    job_id: str,
    contract: str,
    input: str | bytes,
    settings: Settings,
    *,
    params: dict[str, Any] | None = None,
    policy: str | None = None,
    policy_rules: dict[str, Any] | None = None,
    callback: str | None = None,
    batch: str | None = None,
    batch_api: str = "off",
) -> Admission:
    """The job's spec and policy if a worker can run it; raises ``InvalidJob`` (nothing stored)."""
    request = check_request(contract, params or {}, policy, settings, policy_rules)
    check_batch_api(batch_api)
    if callback is not None:
        check_callback_of_job(callback, settings)
    source = document_text(input, settings.max_input_bytes)
    spec = JobSpec(
        job_id=job_id,
        contract=contract,
        params=contract_class(contract).params_for_source(request.params, source),
        source=source,
        policy=request.policy_name,
        policy_rules=request.policy_rules,
        callback=callback,
        batch=batch,
        batch_api=batch_api,
        options=EngineOptions.from_settings(settings),
    )
    check_size(spec, request.policy, settings)
    return Admission(spec, request.policy)


def job_deadline_s(settings: Settings, spec: JobSpec) -> float:
    """How long a job may run: through the Batch API, long enough for its batches' window."""
    return settings.batch_api.job_deadline_s if spec.batch_api != "off" else settings.worker.job_deadline_s


def check_batch_api(mode: str) -> None:
    """Raise ``InvalidJob`` unless ``mode`` is a Batch API mode (``suture.tasks.batch_mode``)."""
    known = ("off", "all", "first")
    if mode not in known:
        raise InvalidJob(
            f"batch_api must be one of {', '.join(known)}", field="batch_api", value=mode, known=known
        )


def check_callback_of_job(callback: str, settings: Settings) -> None:
    """Refuse a callback no worker would call (``webhook`` settings), as ``InvalidJob`` on ``callback``."""
    from suture.workers.webhooks import CallbackRefused, check_callback

    try:
        check_callback(callback, settings.webhook)
    except CallbackRefused as exc:
        raise InvalidJob(str(exc), field="callback", value=callback) from None


def _params(contract: str, params: dict[str, Any], settings: Settings) -> dict[str, Any]:
    try:
        return resolve_params(contract, params, settings)
    except UnknownContractError as exc:
        raise UnknownContract(str(exc), field="contract", value=contract, known=exc.known) from None
    except ContractParamsError as exc:
        raise InvalidParams(str(exc), field=exc.param, value=exc.value, known=exc.known) from None
    except ContractDefinitionError as exc:  # a configured contract that cannot load: refused, one line
        raise InvalidJob(str(exc), field="contract", value=contract) from None


def _rules(name: str, rules: Any, limit: int) -> dict[str, Any] | None:
    """Rules given as data, as plain JSON data of at most ``limit`` bytes (``max_policy_file_bytes``)."""
    if rules is None:
        return None
    from suture.tasks.policy_yaml import plain_rules

    try:
        plain = plain_rules(name, rules)
        size_b = len(json.dumps(plain, ensure_ascii=False).encode())
        if size_b > limit:
            raise PolicyError(
                name, None, "policy_rules", f"{size_b:,} bytes as JSON, over max_policy_file_bytes={limit:,}"
            )
    except PolicyError as exc:
        raise InvalidPolicy(str(exc), field="policy_rules", value=None) from None
    return plain


def _policy(name: str, contract: str, settings: Settings, rules: dict[str, Any] | None) -> Policy:
    try:
        chosen = load_policy(name, settings) if rules is None else policy_from_mapping(name, rules, settings)
        check_fit(chosen, contract_class(contract))
    except PolicyError as exc:
        if exc.field == "name":
            raise UnknownPolicy(
                str(exc), field="policy", value=exc.policy, known=sorted(settings.policies)
            ) from None
        raise InvalidPolicy(str(exc), field="policy", value=name) from None
    return chosen


def document_text(input: str | bytes, max_bytes: int | None = None) -> str:
    """The input as a document's text, or ``UnusableInput`` saying why it is none (``max_bytes``:
    ``max_input_bytes``, checked before anything else)."""
    from suture.workers.documents.errors import UnreadableDocument
    from suture.workers.documents.readers import decode_text
    from suture.workers.documents.text import text_problem

    if max_bytes is not None and _over_bytes(input, max_bytes):
        detail = (
            f"the input has {len(input):,} "
            f"{'bytes' if isinstance(input, bytes | bytearray) else 'characters'}, "
            f"over max_input_bytes={max_bytes:,} bytes of UTF-8; `suture batch` cuts a long document into "
            "sections"
        )
        raise UnusableInput("too_large", detail)
    if isinstance(input, bytes | bytearray):
        try:
            input = decode_text(Path("input"), bytes(input)).text
        except UnreadableDocument as exc:
            raise UnusableInput(exc.reason, exc.detail) from None
    if not isinstance(input, str):
        raise UnusableInput("type", f"the input must be text (str) or bytes, got {type(input).__name__}")
    problem = text_problem(input)
    if problem is not None:
        raise UnusableInput(*problem)
    return input


def _over_bytes(text: str | bytes | bytearray, limit: int) -> bool:
    """Whether ``text`` is over ``limit`` bytes as UTF-8; encoded only when its length cannot tell."""
    if not isinstance(text, str) or len(text) > limit or len(text) * 4 <= limit:  # 1-4 bytes a character
        return len(text) > limit
    return len(text.encode("utf-8", errors="surrogatepass")) > limit


def check_size(spec: JobSpec, policy: Policy, settings: Settings) -> None:
    """Raise ``InputTooLarge`` if the first step's prompt outgrows its model or ``max_input_tokens``."""
    from suture.workers.model.pricing import price_of

    action = engine.next_action(engine.start(spec), policy)
    if not isinstance(action, engine.RunFull):
        return
    call = action.call
    tokens = sum(estimate_tokens(message["content"]) for message in call.messages)
    limit = settings.max_input_tokens
    if limit is not None and tokens > limit:
        raise InputTooLarge(tokens, limit, "max_input_tokens")
    price = price_of(call.model, settings.prices)
    if price is None or price.context_tokens is None:
        return
    reply = call.max_completion_tokens or settings.client.max_completion_tokens
    room = price.context_tokens - reply
    if tokens > room:
        where = (
            f"{call.model}'s context window ({price.context_tokens:,} tokens, less {reply:,} for the reply)"
        )
        raise InputTooLarge(tokens, room, where)
