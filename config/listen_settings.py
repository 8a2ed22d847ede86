"""Where the listeners suture starts bind: this machine only unless a setting opens one to the network.

A section of ``suture.config.settings.Settings`` (``listen``); ``suture serve`` keeps its own
``api.host``. Each key is documented in config/defaults.yaml; docs/security.md says how to put
authentication in front of a listener opened to the network.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

LOOPBACK = "127.0.0.1"


class ListenSettings(BaseModel):
    """The address each listener binds (``0.0.0.0`` or ``::``: every interface)."""

    model_config = ConfigDict(extra="forbid")

    # A worker's Prometheus /metrics (worker.metrics_port, `suture up`): no authentication of its own.
    metrics_host: str = LOOPBACK
    # Flower under `suture up --flower` (behind its basic-auth login).
    flower_host: str = LOOPBACK
    # The simulated model (`suture simulator`, `suture up`, `generate` and `eval` on the simulator).
    simulator_host: str = LOOPBACK
    # `suture review`: its pages and forms check Host and Origin against this address too.
    review_host: str = LOOPBACK


def http_url(host: str, port: int, path: str = "") -> str:
    """``http://host:port/path`` for the address a listener bound (an IPv6 address in brackets).

    Every listener prints its line with this, from the address its socket really has.
    """
    return f"http://[{host}]:{port}{path}" if ":" in host else f"http://{host}:{port}{path}"


def reachable(host: str) -> str:
    """An address this machine reaches a listener bound to ``host`` at (loopback for every interface)."""
    return {"0.0.0.0": LOOPBACK, "::": "::1", "": LOOPBACK}.get(host, host)
