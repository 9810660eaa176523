"""Webhook endpoint URL safety (DESIGN.md 8): pure checks plus an injected resolver."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from appliance.errors import Invalid

Resolver = Callable[[str], list[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL = 2048

# Cloud metadata services outside the link-local ranges.
_METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("fd00:ec2::254", "100.100.100.200", "169.254.169.254")
)

_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")


def parse_endpoint(url: object) -> tuple[str, str]:
    """Check the URL's shape; returns (scheme, host) with the host lowercased."""
    if not isinstance(url, str) or not url.strip() or len(url) > MAX_URL:
        raise Invalid(f"endpoint_url must be a URL of at most {MAX_URL} characters")
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise Invalid("endpoint_url is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise Invalid("endpoint_url must use http or https")
    if not parts.hostname:
        raise Invalid("endpoint_url has no host")
    if parts.username is not None or parts.password is not None:
        raise Invalid("endpoint_url must not carry credentials; receivers verify the signature")
    return parts.scheme.lower(), parts.hostname.lower()


def _as_ip(text: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def forbidden_reason(address: IPAddress) -> str | None:
    """Why deliveries to `address` are refused, or None when they are allowed."""
    if address.is_unspecified or address in _THIS_NETWORK:
        return "an unspecified address"
    if address.is_link_local:
        return "a link-local address"
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_multicast:
        return "a multicast address"
    return None


def _allowed_by(host: str, addresses: Sequence[IPAddress], entry: str) -> bool:
    """Does one allow-list entry (host, `*.domain`, IP or CIDR) admit this target?"""
    entry = entry.strip().lower()
    if entry.startswith("*."):
        return host.endswith(entry[1:])
    try:
        network = ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return host == entry
    return bool(addresses) and all(a in network for a in addresses)


def resolve_endpoint(
    url: object, resolve: Resolver, allow_list: Sequence[str] = ()
) -> list[IPAddress]:
    """Refuse unsafe endpoints (Invalid); returns the checked addresses to connect to."""
    _, host = parse_endpoint(url)
    literal = _as_ip(host.strip("[]"))
    if literal is not None:
        addresses = [literal]
    else:
        try:
            resolved = resolve(host)
        except (OSError, UnicodeError) as exc:
            raise Invalid(f"endpoint host does not resolve: {host} ({exc})") from None
        addresses = [a for a in (_as_ip(r) for r in resolved) if a is not None]
        if not addresses:
            raise Invalid(f"endpoint host does not resolve: {host}")
    for address in addresses:
        reason = forbidden_reason(address)
        if reason is not None:
            raise Invalid(f"endpoint host {host} resolves to {reason} ({address})")
    if allow_list and not any(_allowed_by(host, addresses, e) for e in allow_list):
        raise Invalid(f"endpoint host {host} is not in the webhook allow-list")
    return addresses


def check_endpoint(url: object, resolve: Resolver, allow_list: Sequence[str] = ()) -> str:
    """Refuse unsafe endpoints (Invalid): scheme, resolved addresses, allow-list."""
    resolve_endpoint(url, resolve, allow_list)
    return str(url).strip()


def pinned_url(url: str, address: IPAddress) -> tuple[str, str]:
    """(the URL with its host replaced by `address`, the Host header naming the original)."""
    parts = urlsplit(url)
    host = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{host}:{parts.port}" if parts.port else host
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return parts._replace(netloc=netloc).geturl(), host_header
