"""GET /environment/settings/secrets: paginated, sorted, searched and filtered in SQL."""

from __future__ import annotations

import logging
from contextlib import contextmanager

import pytest

from tests.api.envhelpers import create_env, seal
from tests.conftest import assert_error

LIST = "/api/v1/environment/settings/secrets"


@contextmanager
def counting_statements():
    """Count the SQL statements Peewee runs (its DEBUG log has one record per statement)."""
    counted: list[logging.LogRecord] = []

    class Counter(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            counted.append(record)

    logger = logging.getLogger("peewee")
    handler, level = Counter(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield counted
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def populated(world):
    dev = world.member(world.admin, "dev@x.example", "Admin")
    value = seal(world, world.admin, "x")
    for name, caller, keys in (
        ("Alpha", world.admin, ["A_ONE", "A_TWO", "SHARED"]),
        ("Beta", dev, ["B_ONE", "SHARED", "B_TWO", "B_THREE"]),
    ):
        env = create_env(world, caller, name)
        batch = [{"key": k, "value": value} for k in keys]
        result = world.post(
            f"/api/v1/environment/{env['slug']}/settings/secrets", caller, json=batch
        )
        assert result.status_code == 200, result.text
    gone = create_env(world, world.admin, "Gone")
    world.post(
        "/api/v1/environment/gone/settings/secrets",
        world.admin,
        json=[{"key": "G", "value": value}],
    )
    world.delete(f"/api/v1/environment/{gone['id']}", world.admin)
    other = world.new_org("Other")
    world.post(
        "/api/v1/environment/default/settings/secrets",
        other,
        json=[{"key": "THEIRS", "value": seal(world, other, "y")}],
    )
    return dev


def test_items_have_every_field_and_no_value(world, populated) -> None:
    result = world.get(LIST, world.admin, params={"limit": 100})
    assert result.status_code == 200, result.text
    body = result.json
    assert body["total"] == 7
    names = sorted(i["name"] for i in body["list"])
    assert names == sorted(["A_ONE", "A_TWO", "SHARED", "B_ONE", "SHARED", "B_TWO", "B_THREE"])
    item = body["list"][0]
    assert set(item) == {"name", "environment", "created_at", "updated_at", "created_by"}
    assert set(item["environment"]) == {
        "id",
        "slug",
        "name",
        "color",
        "is_default",
        "is_active",
        "created",
        "cloud_account",
    }
    assert set(item["created_by"]) == {"id", "name", "nickname", "picture"}
    assert item["updated_at"] is None
    assert "value" not in result.text
    assert [e["slug"] for e in body["filters"]["environments"]] == ["alpha", "beta"]
    assert sorted(u["id"] for u in body["filters"]["users"]) == sorted(
        [world.admin.user_id, populated.user_id]
    )


def test_paginates_sorts_searches_and_filters(world, populated) -> None:
    page = world.get(LIST, world.admin, params={"sort": "name", "order": "asc", "limit": 3})
    assert [i["name"] for i in page.json["list"]] == ["A_ONE", "A_TWO", "B_ONE"]
    page2 = world.get(
        LIST, world.admin, params={"sort": "name", "order": "asc", "limit": 3, "offset": 3}
    )
    assert [i["name"] for i in page2.json["list"]] == ["B_THREE", "B_TWO", "SHARED"]
    found = world.get(LIST, world.admin, params={"search": "shared"}).json
    assert found["total"] == 2
    beta = world.get(LIST, world.admin, params={"filter": "[environment=beta]"}).json
    assert beta["total"] == 4 and {i["environment"]["slug"] for i in beta["list"]} == {"beta"}
    by_user = world.get(
        LIST, world.admin, params={"filter": f"[created_by={populated.user_id}]"}
    ).json
    assert by_user["total"] == 4


@pytest.mark.parametrize(
    "params, message",
    [
        ({"sort": "value"}, "sort"),
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
        ({"order": "up"}, "order"),
        ({"filter": "[value=x]"}, "filter"),
        ({"filter": "[created_by=bob]"}, "user id"),
    ],
)
def test_bad_list_parameters_are_400(world, params, message) -> None:
    assert_error(world.get(LIST, world.admin, params=params), 400, message)


def test_statement_count_does_not_grow_with_the_page_size(world, populated) -> None:
    counts = []
    world.get(LIST, world.admin)  # the credential lookup is then remembered for both
    for limit in (1, 7):
        with counting_statements() as statements:
            result = world.get(LIST, world.admin, params={"limit": limit})
        assert len(result.json["list"]) == limit
        counts.append(len(statements))
    assert counts[0] == counts[1] and counts[0] >= 4, counts
