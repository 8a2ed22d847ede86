"""Running an aiohttp application: in a background thread (tests, ``suture generate``) or in the foreground
(CLI)."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import Callable, Mapping

from aiohttp import web

from suture.config.listen_settings import http_url
from suture.config.settings import QuizRules
from suture.workers.simulator.batches import BatchOptions
from suture.workers.simulator.connections import IDLE_TIMEOUT_S
from suture.workers.simulator.files import FileLimits
from suture.workers.simulator.limits import RateLimit
from suture.workers.simulator.profiles import Profile, get_profile
from suture.workers.simulator.prompt_cache import PromptCache
from suture.workers.simulator.server import DEFAULT_MAX_IN_FLIGHT, SimulatorServer

BACKLOG = 4096  # thousands of slow requests may be in flight at once
STOP_TIMEOUT_S = 10.0
SHUTDOWN_TIMEOUT_S = 0.5  # in-flight slow requests are cut off at stop, not awaited
LINGER_S = 2.0  # aiohttp's default is 10 s of draining a body nobody will read


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free one. Raises OSError if the address is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(BACKLOG)
    return sock


def base_url(sock: socket.socket, suffix: str = "/v1") -> str:
    """The URL a client uses to reach a bound socket."""
    host, port = sock.getsockname()[:2]
    return http_url(host, port, suffix)


class ServerThread:
    """An aiohttp application served from its own event loop in a daemon thread."""

    def __init__(
        self,
        app_factory: Callable[[], web.Application],
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
    ) -> None:
        self._sock = bind(host, port)
        self.base_url = base_url(self._sock)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runner = _runner(app_factory(), idle_timeout_s)
        self._thread = threading.Thread(target=self._serve, name=f"aiohttp {self.base_url}", daemon=True)
        self._startup_error: BaseException | None = None
        self._thread.start()
        if not self._ready.wait(STOP_TIMEOUT_S) or self._startup_error is not None:
            self._sock.close()
            raise RuntimeError(f"server at {self.base_url} did not start: {self._startup_error}")

    def __repr__(self) -> str:
        return f"ServerThread({self.base_url})"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._runner.setup())
            site = web.SockSite(self._runner, self._sock, backlog=BACKLOG)
            self._loop.run_until_complete(site.start())
        except BaseException as exc:  # handed to the starting thread, which raises it
            self._startup_error = exc
            self._ready.set()
            self._loop.close()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.run_until_complete(_cancel_leftovers())
        self._loop.run_until_complete(self._loop.shutdown_default_executor())  # batch validation threads
        self._loop.close()

    def stop(self) -> None:
        """Stop serving, close the socket and join the thread (idempotent)."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(STOP_TIMEOUT_S)
        self._sock.close()


def _runner(app: web.Application, idle_timeout_s: float) -> web.AppRunner:
    """The app's runner; a connection idle (or not sending a whole request head) this long is closed,
    and one whose body was refused unread is drained for at most ``LINGER_S`` (then closed)."""
    return web.AppRunner(
        app,
        access_log=None,
        shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        keepalive_timeout=idle_timeout_s,
        lingering_time=LINGER_S,
    )


async def _cancel_leftovers() -> None:
    """Cancel and await what the shutdown left running (slow replies), so none is destroyed pending."""
    leftovers = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in leftovers:
        task.cancel()
    await asyncio.gather(*leftovers, return_exceptions=True)


class SimulatorHandle(ServerThread):
    """A running in-process simulator; ``.base_url`` ends in ``/v1``, ``.stop()`` shuts it down."""

    def __init__(self, server: SimulatorServer, host: str, port: int) -> None:
        self.server = server
        super().__init__(server.application, host, port, idle_timeout_s=server.idle_timeout_s)

    def __repr__(self) -> str:
        return f"SimulatorHandle({self.base_url}, {self.server!r})"


def start_simulator(
    profile: str | Profile = "realistic",
    latency_scale: float = 1.0,
    seed: int = 0,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    api_key: str | None = None,
    rules: QuizRules | None = None,
    prompt_cache: PromptCache | None = None,
    limits: Mapping[str, RateLimit] | None = None,
    batch_options: BatchOptions | None = None,
    file_limits: FileLimits | None = None,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
) -> SimulatorHandle:
    """Start a simulated model server in a background thread of this process.

    ``prompt_cache`` defaults to a fresh ``PromptCache()`` with the packaged limits, ``limits``
    to none, ``batch_options`` and ``file_limits`` to their defaults; see
    ``configure.start_from_settings`` for a simulator built from settings.
    """
    chosen = profile if isinstance(profile, Profile) else get_profile(profile, rules)
    if latency_scale < 0:
        raise ValueError(f"latency_scale must be >= 0, got {latency_scale}")
    server = SimulatorServer(
        chosen,
        latency_scale,
        seed,
        api_key,
        prompt_cache,
        limits=limits,
        batch_options=batch_options,
        file_limits=file_limits,
        max_in_flight=max_in_flight,
    )
    return SimulatorHandle(server, host, port)


def serve_forever(server: SimulatorServer, sock: socket.socket, on_ready: Callable[[], None]) -> None:
    """Serve in the foreground until SIGINT or SIGTERM, then shut down cleanly."""

    async def main() -> None:
        runner = _runner(server.application(), server.idle_timeout_s)
        await runner.setup()
        await web.SockSite(runner, sock, backlog=BACKLOG).start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        on_ready()
        await stop.wait()
        await runner.cleanup()

    asyncio.run(main())
