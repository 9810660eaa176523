"""List parameters shared by every listing: offset, limit, order, sort, search, filter."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from appliance.domain.filters import parse_filter
from appliance.errors import Invalid


@dataclass(frozen=True)
class ListSpec:
    """What one listing allows (DESIGN.md 3)."""

    sorts: tuple[str, ...]
    default_sort: str
    default_order: str = "DESC"
    filters: tuple[str, ...] = ()
    min_limit: int = 1
    max_limit: int = 1000
    default_limit: int = 20


@dataclass(frozen=True)
class ListQuery:
    offset: int = 0
    limit: int = 20
    order: str = "DESC"
    sort: str = ""
    search: str | None = None
    filters: dict[str, list[str]] = field(default_factory=dict)

    @property
    def descending(self) -> bool:
        return self.order == "DESC"


def _integer(params: Mapping[str, object], name: str, default: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        raise Invalid(f"{name} must be an integer")
    if isinstance(raw, int):
        return raw
    text = str(raw).strip()
    if not text.lstrip("-").isdigit() or len(text) > 12:
        raise Invalid(f"{name} must be an integer, got {text[:40]!r}")
    return int(text)


def _sort(params: Mapping[str, object], spec: ListSpec) -> tuple[str, str | None]:
    raw = params.get("sort")
    if raw is None or raw == "":
        return spec.default_sort, None
    text = str(raw).strip()
    direction = None
    if text.startswith("-"):
        text, direction = text[1:], "DESC"
    elif ":" in text:
        text, _, suffix = text.partition(":")
        direction = suffix.strip().upper()
        if direction not in ("ASC", "DESC"):
            raise Invalid("sort direction must be asc or desc")
    if text not in spec.sorts:
        raise Invalid(f"unknown sort field: {text[:80]} (allowed: {', '.join(spec.sorts)})")
    return text, direction


def parse_list_query(params: Mapping[str, object], spec: ListSpec) -> ListQuery:
    """Validate list parameters against `spec`; out of range is a 400, never clamped."""
    offset = _integer(params, "offset", 0)
    if offset < 0:
        raise Invalid("offset must be 0 or more")
    limit = _integer(params, "limit", spec.default_limit)
    if not spec.min_limit <= limit <= spec.max_limit:
        raise Invalid(f"limit must be between {spec.min_limit} and {spec.max_limit}")
    sort, direction = _sort(params, spec)
    raw_order = params.get("order")
    order = direction or spec.default_order
    if raw_order not in (None, ""):
        order = str(raw_order).strip().upper()
        if order not in ("ASC", "DESC"):
            raise Invalid("order must be ASC or DESC")
    raw_search = params.get("search")
    search = str(raw_search).strip() if raw_search not in (None, "") else None
    if search is not None and len(search) > 256:
        raise Invalid("search must be at most 256 characters")
    raw_filter = params.get("filter")
    filters = parse_filter(None if raw_filter is None else str(raw_filter), spec.filters)
    return ListQuery(offset, limit, order, sort, search, filters)


def parse_switch(params: Mapping[str, object], name: str, default: bool) -> bool:
    """A boolean query switch: true|false|1|0 (DESIGN.md 3)."""
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise Invalid(f"{name} must be true, false, 1 or 0")
