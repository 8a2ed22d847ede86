"""A SIMULATED OpenAI-compatible model server: grounded, biased, deterministic quiz answers over real HTTP.

It lets suture run its production client path with no model access (demo, tests, benchmarks),
and it is labelled a simulation wherever it shows. Modules: ``profiles`` (per-model bias, speed,
chaos rates), ``prompt`` / ``request`` (what a request asks), ``document`` / ``quizgen`` / ``bias``
(the answer), ``faults``, ``tokens`` (the token estimate), ``prompt_cache`` (cached prompt tokens,
as OpenAI reports them), ``completion`` (tokens, latency, response body), ``server`` (HTTP),
``serving`` (threads and the foreground loop), ``configure`` (a simulator from settings). Errors:
see ``workers.simulator.errors``.
"""

from workers.simulator.configure import server_from_settings, start_from_settings
from workers.simulator.errors import (
    FaultRatesError,
    RequestRejected,
    SimulatorError,
    UnknownProfileError,
)
from workers.simulator.profiles import PROFILES, FaultRates, ModelTraits, Profile, get_profile
from workers.simulator.prompt_cache import PromptCache
from workers.simulator.serving import ServerThread, SimulatorHandle, start_simulator

__all__ = [
    "PROFILES",
    "FaultRates",
    "FaultRatesError",
    "ModelTraits",
    "Profile",
    "PromptCache",
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
