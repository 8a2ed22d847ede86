"""The one check of a callback, for every entry point: a safe http(s) URL or an allowed task name.

``check_callback(callback, settings)`` runs at enqueue (the producer turns a refusal into
``InvalidJob`` on the field ``callback``): the URL's form (http(s) only, https unless
``webhook.require_https`` is false, no CR, LF, spaces or credentials, at most
``webhook.max_url_chars``), then its host resolved and every address it resolves to judged by
``suture.workers.webhooks.addresses``. ``resolve_target`` runs the same address rules again at
delivery and returns the address to connect to, so a host that re-resolves elsewhere (DNS rebinding)
is caught and the connection goes to the address that was checked.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from suture.config.settings import WebhookSettings
from suture.workers.webhooks.addresses import AllowList, IPAddress, internal_reason

SCHEMES = ("http", "https")
_SHOWN_CHARS = 120


class CallbackError(Exception):
    """Base of the callback errors."""


class CallbackRefused(CallbackError):
    """A callback suture will not call; ``reason`` says why in a few words."""

    def __init__(self, callback: str, reason: str) -> None:
        shown = callback if len(callback) <= _SHOWN_CHARS else callback[:_SHOWN_CHARS] + "..."
        super().__init__(f"callback {shown!r} refused: {reason}")
        self.callback = callback
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """A callback URL that passed the form checks: scheme, host and port to reach."""

    url: str
    scheme: str
    host: str
    port: int


# The webhook settings that decide whether a callback is called at all (the others shape its delivery).
RULE_FIELDS = ("require_https", "allowed_hosts", "allowed_tasks", "max_url_chars")


def target_rules(settings: WebhookSettings) -> dict[str, Any]:
    """The settings that decide which callbacks are called, as the workers announce them."""
    return {name: getattr(settings, name) for name in RULE_FIELDS}


def check_callback_for_workers(callback: str, own: WebhookSettings, workers: dict[str, Any] | None) -> None:
    """Raise CallbackRefused if the workers, judging by the rules they announced, would refuse ``callback``.

    ``own`` are the producer's settings (already checked against); a refusal names the settings that
    differ, so a ``suture serve`` configured apart from its workers says why at enqueue, not at delivery.
    """
    if not workers:
        return
    known = {name: workers[name] for name in RULE_FIELDS if name in workers}
    theirs = own.model_copy(update=known)
    try:
        check_callback(callback, theirs)
    except CallbackRefused as exc:
        differ = [f"{name}={known[name]!r}" for name in known if known[name] != getattr(own, name)]
        where = (
            f" (the workers' webhook settings differ from this process's: {', '.join(differ)})"
            if differ
            else ""
        )
        raise CallbackRefused(callback, f"the workers would refuse it: {exc.reason}{where}") from None


def is_url(callback: str) -> bool:
    """True if the callback is meant as a URL (it names a scheme), not as a task name."""
    return "://" in callback or callback.lower().startswith(SCHEMES)


def check_callback(callback: str, settings: WebhookSettings) -> None:
    """Raise CallbackRefused unless ``callback`` is an allowed task name or a URL safe to POST to."""
    if not is_url(callback):
        if callback in settings.allowed_tasks:
            return
        raise CallbackRefused(callback, "not an http(s) URL, nor a task named in webhook.allowed_tasks")
    if not settings.enabled:
        raise CallbackRefused(callback, "URL callbacks are off here (webhook.enabled: false)")
    target = parse_target(callback, settings)
    reserved = reserved_name(target.host)
    if reserved and target.host.lower().rstrip(".") not in AllowList.parse(settings.allowed_hosts).names:
        raise CallbackRefused(
            callback,
            f"host {target.host!r} is a reserved name ({reserved} address), refused whatever it resolves "
            "to; "
            "list the name itself in webhook.allowed_hosts to allow it",
        )
    resolve_target(target, settings, addresses=_getaddrinfo(target))


# Names that never mean a public host (RFC 6761 localhost, RFC 6762 .local, RFC 8375
# .home.arpa, RFC 7686 .onion, ICANN's .internal, and the loopback names of /etc/hosts files): refused
# at enqueue by name, so an allowed loopback address does not let ``localhost`` through to a worker
# that may resolve it otherwise (``::1``), and the producer learns at once.
RESERVED_NAMES = {
    "localhost": "loopback",
    "localhost.localdomain": "loopback",
    "ip6-localhost": "loopback",
    "ip6-loopback": "loopback",
    "localdomain": "local network",
}
RESERVED_SUFFIXES = {
    ".localhost": "loopback",
    ".localdomain": "local network",
    ".local": "local network",
    ".home.arpa": "local network",
    ".internal": "private network",
    ".onion": "Tor",
}


def reserved_name(host: str) -> str | None:
    """What a reserved host name stands for (``"loopback"``...), or None for an ordinary name."""
    name = host.lower().rstrip(".")
    if name in RESERVED_NAMES:
        return RESERVED_NAMES[name]
    for suffix, kind in RESERVED_SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return None


def parse_target(url: str, settings: WebhookSettings) -> Target:
    """The URL's scheme, host and port after the form checks; raises CallbackRefused."""
    if len(url) > settings.max_url_chars:
        raise CallbackRefused(url, f"longer than webhook.max_url_chars={settings.max_url_chars}")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise CallbackRefused(url, "contains a space, CR, LF or another control character")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise CallbackRefused(url, f"not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise CallbackRefused(url, f"scheme {scheme!r} is not allowed (http or https only)")
    if scheme == "http" and settings.require_https:
        raise CallbackRefused(url, "http:// is refused; use https:// (or set webhook.require_https: false)")
    if "@" in parts.netloc:
        raise CallbackRefused(url, "credentials in the URL are refused (receivers verify the signature)")
    host = parts.hostname
    if not host:
        raise CallbackRefused(url, "no host")
    try:
        host.encode("idna")
    except UnicodeError:
        raise CallbackRefused(url, "the host name is not a valid domain name") from None
    return Target(url, scheme, host, port or (443 if scheme == "https" else 80))


def resolve_target(target: Target, settings: WebhookSettings, *, addresses: list[IPAddress]) -> IPAddress:
    """The address to connect to: the first of ``addresses``, once every one of them is allowed."""
    if not addresses:
        raise CallbackRefused(target.url, f"host {target.host!r} does not resolve")
    allowed = AllowList.parse(settings.allowed_hosts)
    for ip in addresses:
        reason = internal_reason(ip)
        if reason and not allowed.allows(target.host, ip):
            raise CallbackRefused(
                target.url,
                f"host {target.host!r} resolves to {ip} ({reason} address); "
                "list it in webhook.allowed_hosts to allow it",
            )
    return addresses[0]


def literal_address(host: str) -> IPAddress | None:
    """The host as an IP address when it is written as one, else None."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _getaddrinfo(target: Target) -> list[IPAddress]:
    literal = literal_address(target.host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise CallbackRefused(target.url, f"host {target.host!r} does not resolve ({exc})") from None
    return addresses_of(infos)


def addresses_of(infos: list[Any]) -> list[IPAddress]:
    """The distinct addresses of a getaddrinfo reply, in its order (scope ids dropped)."""
    seen: dict[IPAddress, None] = {}
    for info in infos:
        raw = str(info[4][0]).split("%", 1)[0]
        seen.setdefault(ipaddress.ip_address(raw), None)
    return list(seen)
