"""Forward-only numbered schema migrations, applied at start-up.

Each module `NNNN_name.py` defines `apply(db)`. Modules hold frozen copies of
the models as they were, so later model changes never rewrite history.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from datetime import UTC, datetime

from peewee import Database, Model

_MODULE = re.compile(r"^(\d{4})_\w+$")
_HISTORY = "schema_migrations"


def frozen_base(db: Database) -> type[Model]:
    """The base class of a migration's frozen models, bound to `db`."""

    class Frozen(Model):
        class Meta:
            database = db
            legacy_table_names = False

    return Frozen


def available() -> list[tuple[int, str]]:
    """(number, module name) of every migration in the package, in order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        match = _MODULE.match(info.name)
        if match:
            found.append((int(match.group(1)), info.name))
    numbers = [n for n, _ in found]
    if len(numbers) != len(set(numbers)):
        raise RuntimeError("two migrations share a number")
    return sorted(found)


def applied(db: Database) -> set[int]:
    """Numbers of the migrations recorded in the database."""
    if not db.table_exists(_HISTORY):
        return set()
    return {row[0] for row in db.execute_sql(f"SELECT version FROM {_HISTORY}")}


def migrate(db: Database) -> list[int]:
    """Apply every pending migration, each in its own transaction; return their numbers."""
    db.execute_sql(
        f"CREATE TABLE IF NOT EXISTS {_HISTORY} "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = applied(db)
    ran = []
    for number, name in available():
        if number in done:
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        with db.atomic("IMMEDIATE"):
            if number in applied(db):  # another process got there first
                continue
            module.apply(db)
            db.execute_sql(
                f"INSERT INTO {_HISTORY} (version, name, applied_at) VALUES (?, ?, ?)",
                (number, name, datetime.now(UTC).isoformat()),
            )
        ran.append(number)
    return ran
