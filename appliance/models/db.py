"""The database handle, its pragmas, and the write-transaction discipline."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playhouse.apsw_ext import APSWDatabase, Model, TextField


class _CommitCounter:
    """Counts commits made by this process, so in-memory caches can tell they are stale."""

    def __init__(self) -> None:
        self.value = 0

    def hook(self) -> bool:
        self.value += 1
        return False  # False lets the commit proceed


commits = _CommitCounter()


class ApplianceDatabase(APSWDatabase):
    """APSW with a commit hook on every connection."""

    def _add_conn_hooks(self, conn: Any) -> None:
        super()._add_conn_hooks(conn)
        conn.setcommithook(commits.hook)


# Deferred: create_app() points it at the data directory (DESIGN.md 2).
database = ApplianceDatabase(None)

_PRAGMAS = (
    ("journal_mode", "wal"),
    ("synchronous", "full"),
    ("foreign_keys", 1),
    ("busy_timeout", 10000),
)

# SQLite's busy waiting is unfair to writers; one process-wide lock keeps
# write latency flat under contention (DESIGN.md 1).
_write_lock = threading.RLock()


def open_database(path: Path) -> APSWDatabase:
    """Point the shared handle at `path` with the house pragmas."""
    if not database.is_closed():
        database.close()
    database.init(str(path), pragmas=_PRAGMAS, timeout=10)
    return database


@contextmanager
def write_transaction() -> Iterator[None]:
    """A read-then-write transaction: BEGIN IMMEDIATE under the process write lock."""
    with _write_lock:
        if database.in_transaction():
            with database.atomic():
                yield
        else:
            with database.atomic("IMMEDIATE"):
                yield


def to_iso(value: datetime | None) -> str | None:
    """ISO 8601 UTC with milliseconds and `Z` (DESIGN.md 3)."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds")[:23] + "Z"


class TimestampField(TextField):
    """UTC timestamps stored as sortable ISO text with microseconds."""

    def db_value(self, value: datetime | None) -> str | None:
        if value is None:
            return None
        if isinstance(value, str):
            return value
        return value.astimezone(UTC).isoformat(timespec="microseconds")[:26] + "Z"

    def python_value(self, value: str | None) -> datetime | None:
        if value is None:
            return None
        return datetime.fromisoformat(value)


class JSONField(TextField):
    """Any JSON value, stored as compact text."""

    def db_value(self, value: Any) -> str | None:
        return None if value is None else json.dumps(value, separators=(",", ":"))

    def python_value(self, value: str | None) -> Any:
        return None if value is None else json.loads(value)


class PreparedLookup:
    """A SELECT whose SQL is built once; each call only binds parameters.

    For hot paths (DESIGN.md 1): Peewee's query builder costs ~10x the statement.
    """

    def __init__(self, model: type[Model], *columns: Any, remember_seconds: float = 0.0) -> None:
        self.model = model
        self.remember_seconds = remember_seconds
        self._remembered: dict[tuple, tuple[int, float, Any]] = {}
        self.fields = list(model._meta.sorted_fields)
        query = model.select(*self.fields).where(*[column == "?" for column in columns])
        self.sql = query.sql()[0]
        self._converters = [(f.name, f.python_value) for f in self.fields]

    def first(self, *params: Any) -> Any:
        """The first matching row as a model instance, or None.

        With `remember_seconds`, a found row is reused until this process commits anything
        or the time passes (other processes' changes show within that time).
        """
        if self.remember_seconds <= 0:
            return self._fetch(params)
        now = time.monotonic()
        kept = self._remembered.get(params)
        if kept is not None and kept[0] == commits.value and kept[1] > now:
            return kept[2]
        generation = commits.value
        found = self._fetch(params)
        if found is not None:
            if len(self._remembered) > 10_000:
                self._remembered.clear()
            self._remembered[params] = (generation, now + self.remember_seconds, found)
        return found

    def _fetch(self, params: tuple) -> Any:
        row = database.execute_sql(self.sql, params).fetchone()
        if row is None:
            return None
        values = {
            name: (convert(value) if value is not None else value)
            for (name, convert), value in zip(self._converters, row, strict=True)
        }
        return self.model(**values)


class BaseModel(Model):
    class Meta:
        database = database
        legacy_table_names = False
