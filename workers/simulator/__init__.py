"""A SIMULATED OpenAI-compatible model server: grounded, biased, deterministic quiz answers over real HTTP.

It lets suture run its production client path with no model access (demo, tests, benchmarks),
and it is labelled a simulation wherever it shows. Modules: ``profiles`` (per-model bias, speed,
chaos rates), ``prompt`` / ``request`` (what a request asks), ``document`` / ``quizgen`` / ``bias``
(the answer), ``faults``, ``tokens`` (the token estimate), ``prompt_cache`` (cached prompt tokens,
as OpenAI reports them), ``completion`` (tokens, latency, response body), ``responder`` (one
request answered, online or in a batch), ``limits`` (per-model RPM/TPM metered like OpenAI's),
``stats`` (what was done, ``GET /v1/_stats``), ``files`` / ``batch_input`` / ``batches`` /
``batch_runner`` / ``batch_registry`` / ``batch_api`` (OpenAI's Files and Batch APIs),
``replies`` (HTTP bodies), ``server`` (HTTP), ``serving`` (threads and the foreground loop),
``configure`` (a simulator from settings). Errors: see ``suture.workers.simulator.errors``.
"""

from suture.workers.simulator.batches import BatchOptions
from suture.workers.simulator.configure import server_from_settings, start_from_settings
from suture.workers.simulator.errors import (
    FaultRatesError,
    LimitsError,
    RequestRejected,
    SimulatorError,
    UnknownProfileError,
)
from suture.workers.simulator.files import FileLimits
from suture.workers.simulator.limits import RateLimit
from suture.workers.simulator.profiles import PROFILES, FaultRates, ModelTraits, Profile, get_profile
from suture.workers.simulator.prompt_cache import PromptCache
from suture.workers.simulator.serving import ServerThread, SimulatorHandle, start_simulator

__all__ = [
    "PROFILES",
    "BatchOptions",
    "FaultRates",
    "FaultRatesError",
    "FileLimits",
    "LimitsError",
    "ModelTraits",
    "Profile",
    "PromptCache",
    "RateLimit",
    "RequestRejected",
    "ServerThread",
    "SimulatorError",
    "SimulatorHandle",
    "UnknownProfileError",
    "get_profile",
    "server_from_settings",
    "start_from_settings",
    "start_simulator",
]
