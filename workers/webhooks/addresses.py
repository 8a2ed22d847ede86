"""Which IP addresses a callback must not reach: loopback, private, link-local, metadata and the like.

Pure functions over ``ipaddress`` objects. An IPv6 address that carries an IPv4 one (IPv4-mapped
``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4, Teredo) is judged by the IPv4 address it reaches.
``webhook.allowed_hosts`` entries are host names, addresses or networks (CIDR).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance metadata services: they hand out credentials to whoever asks from inside.
METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254", "fd00:ec2::23")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address delivers to (mapped, NAT64, 6to4, Teredo), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def internal_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is inside someone's network (``"loopback"``, ``"private"``...), or None if public."""
    inner = embedded_ipv4(ip)
    if inner is not None:
        reason = internal_reason(inner)
        return f"IPv4-mapped {reason}" if reason else None
    for reason, hit in (
        ("metadata", ip in METADATA),
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved or not ip.is_global),
    ):
        if hit:
            return reason
    return None


@dataclass(frozen=True)
class AllowList:
    """``webhook.allowed_hosts``: names matched exactly (case-insensitive), addresses by network."""

    names: frozenset[str]
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        names: set[str] = set()
        networks = []
        for entry in entries:
            text = entry.strip().strip("[]")
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                names.add(text.lower().rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def allows(self, host: str, ip: IPAddress) -> bool:
        """True if the callback host is listed by name, or the address lies in a listed network."""
        if host.lower().rstrip(".") in self.names:
            return True
        return any(ip.version == net.version and ip in net for net in self.networks)
