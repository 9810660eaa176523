"""Apply a ListQuery to a Peewee query: count, sort, search, filter, page, all in SQL."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from peewee import Field, ModelSelect, fn

from appliance.domain.listing import ListQuery


def as_bool(value: str) -> bool:
    return value.lower() in ("true", "1")


@dataclass(frozen=True)
class Columns:
    """How a listing's names map to columns."""

    sorts: Mapping[str, Any]
    tiebreak: Field
    search: Any = None
    filters: Mapping[str, tuple[Any, Callable[[str], Any]]] = field(default_factory=dict)


def apply_filters(query: ModelSelect, lq: ListQuery, columns: Columns) -> ModelSelect:
    """Search and filter clauses only (for totals and facets)."""
    if lq.search and columns.search is not None:
        query = query.where(fn.LOWER(columns.search).contains(lq.search.lower()))
    for key, values in lq.filters.items():
        column, convert = columns.filters[key]
        query = query.where(column.in_([convert(v) for v in values]))
    return query


def paginate(query: ModelSelect, lq: ListQuery, columns: Columns) -> tuple[int, list[Any]]:
    """(total matching, the page of rows) with a stable order."""
    query = apply_filters(query, lq, columns)
    total = query.count()
    column = columns.sorts[lq.sort]
    ordering = column.desc() if lq.descending else column.asc()
    tiebreak = columns.tiebreak.desc() if lq.descending else columns.tiebreak.asc()
    rows = list(query.order_by(ordering, tiebreak).offset(lq.offset).limit(lq.limit))
    return total, rows
