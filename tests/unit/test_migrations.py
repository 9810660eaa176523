"""Migrations apply once on an empty database; a second start is a no-op."""

from __future__ import annotations

from appliance import migrations
from appliance.app import build_appliance
from appliance.models import Organization
from appliance.models.db import database, open_database
from tests.conftest import make_settings


def test_empty_database_migrates_and_second_start_is_a_no_op(tmp_path) -> None:
    db = open_database(tmp_path / "a.db")
    db.connect()
    try:
        first = migrations.migrate(db)
        assert first == [n for n, _ in migrations.available()]
        tables_before = sorted(db.get_tables())
        assert "api_key" in tables_before and "event" in tables_before
        assert migrations.migrate(db) == []
        assert sorted(db.get_tables()) == tables_before
    finally:
        db.close()


def test_restart_keeps_data_and_does_not_bootstrap_twice(tmp_path) -> None:
    settings = make_settings(tmp_path / "data")
    first = build_appliance(settings)
    assert first.bootstrap is not None
    database.close()
    second = build_appliance(settings)
    try:
        assert second.bootstrap is None
        assert Organization.select().count() == 1
        (wal_mode,) = database.execute_sql("PRAGMA journal_mode").fetchone()
        assert wal_mode == "wal"
        (fk,) = database.execute_sql("PRAGMA foreign_keys").fetchone()
        assert fk == 1
    finally:
        database.close()
