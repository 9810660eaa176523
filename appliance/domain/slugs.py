"""Slugs: lowercase ASCII, runs of other characters to `-` (DESIGN.md 6)."""

from __future__ import annotations

import re
import unicodedata

_OTHER = re.compile(r"[^a-z0-9]+")


def slugify(name: str) -> str:
    """`My Prod (EU)` -> `my-prod-eu`; an empty result becomes `x`."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = _OTHER.sub("-", ascii_name.lower()).strip("-")
    return slug[:64].strip("-") or "x"


def unique_slug(base: str, taken: set[str], reserved: frozenset[str] = frozenset()) -> str:
    """`base`, or `base-2`, `base-3`... whichever is free."""
    if base not in taken and base not in reserved:
        return base
    n = 2
    while f"{base}-{n}" in taken or f"{base}-{n}" in reserved:
        n += 1
    return f"{base}-{n}"
