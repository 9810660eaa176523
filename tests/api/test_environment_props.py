"""4.3 Environment properties: batches are all-or-nothing."""

from __future__ import annotations

import pytest

from appliance.models import EnvironmentProperty
from tests.api.envhelpers import create_env
from tests.conftest import assert_error

PROPS = "/api/v1/environment/{}/props"


def _names(world, slug: str) -> list[tuple[str, str, bool]]:
    props = world.get(PROPS.format(slug), world.admin).json["props"]
    return [(p["name"], p["content"], p["is_enforced"]) for p in props]


@pytest.fixture
def env(world):
    created = create_env(world, world.admin, "Props")
    result = world.post(
        PROPS.format("props"),
        world.admin,
        json=[
            {"name": "region", "content": "eu-west-1", "is_enforced": True},
            {"name": "size", "content": "small"},
        ],
    )
    assert result.status_code == 200, result.text
    return created


def test_create_returns_the_envelope_with_every_field(world, env) -> None:
    body = world.get(PROPS.format(env["id"]), world.admin).json
    assert body["environment"] == {"guid": env["id"], "slug": "props", "cloudAccount": None}
    assert [set(p) for p in body["props"]] == [{"id", "name", "content", "is_enforced"}] * 2
    assert _names(world, "props") == [("region", "eu-west-1", True), ("size", "small", False)]


@pytest.mark.parametrize(
    "batch",
    [
        [{"name": "ok", "content": "1"}, {"name": "region", "content": "x"}],
        [{"name": "dup", "content": "1"}, {"name": "dup", "content": "2"}],
    ],
)
def test_create_conflict_is_409_and_adds_nothing(world, env, batch) -> None:
    assert_error(world.post(PROPS.format("props"), world.admin, json=batch), 409, "already exists")
    assert len(_names(world, "props")) == 2


@pytest.mark.parametrize(
    "batch",
    [
        [],
        {"name": "a"},
        [{"name": "ok", "content": "1"}, {"name": "bad name", "content": "1"}],
        [{"name": "ok", "content": "1"}, {"name": "b", "content": 5}],
        [{"name": "ok", "content": "1"}, {"name": "b", "content": "1", "is_enforced": "no"}],
        [{"name": "ok", "content": "1"}, "text"],
        [{"name": "ok", "content": "1", "extra": True}],
    ],
)
def test_create_bad_item_is_400_and_adds_nothing(world, env, batch) -> None:
    assert_error(world.post(PROPS.format("props"), world.admin, json=batch), 400)
    assert len(_names(world, "props")) == 2


def test_update_by_id_may_swap_names(world, env) -> None:
    props = {p["name"]: p for p in world.get(PROPS.format("props"), world.admin).json["props"]}
    batch = [
        {"id": props["region"]["id"], "name": "size", "content": "large", "is_enforced": False},
        {"id": props["size"]["id"], "name": "region", "content": "us-east-1"},
    ]
    result = world.put(PROPS.format("props"), world.admin, json=batch)
    assert result.status_code == 200, result.text
    assert _names(world, "props") == [("region", "us-east-1", False), ("size", "large", False)]


def test_update_unknown_id_is_404_and_changes_nothing(world, env) -> None:
    first = world.get(PROPS.format("props"), world.admin).json["props"][0]
    batch = [{"id": first["id"], "content": "changed"}, {"id": "no-such-id", "content": "x"}]
    assert_error(world.put(PROPS.format("props"), world.admin, json=batch), 404, "no-such-id")
    assert _names(world, "props")[0] == ("region", "eu-west-1", True)


def test_update_name_clash_is_409_and_changes_nothing(world, env) -> None:
    first = world.get(PROPS.format("props"), world.admin).json["props"][0]
    batch = [{"id": first["id"], "name": "size", "content": "changed"}]
    assert_error(world.put(PROPS.format("props"), world.admin, json=batch), 409, "size")
    assert _names(world, "props")[0] == ("region", "eu-west-1", True)


@pytest.mark.parametrize("batch", [[{"content": "x"}], [{"id": 5}], "x", []])
def test_update_bad_item_is_400(world, env, batch) -> None:
    assert_error(world.put(PROPS.format("props"), world.admin, json=batch), 400)


def test_delete_by_id_or_name(world, env) -> None:
    first = world.get(PROPS.format("props"), world.admin).json["props"][0]
    result = world.delete(PROPS.format("props"), world.admin, json=[first["id"], "size"])
    assert result.status_code == 200, result.text
    assert result.json["props"] == []
    assert EnvironmentProperty.select().count() == 0


def test_delete_unknown_is_404_and_deletes_nothing(world, env) -> None:
    result = world.delete(PROPS.format("props"), world.admin, json=["size", "missing"])
    assert_error(result, 404, "missing")
    assert len(_names(world, "props")) == 2


@pytest.mark.parametrize("batch", [[], [5], {"names": ["size"]}])
def test_delete_bad_input_is_400(world, env, batch) -> None:
    assert_error(world.delete(PROPS.format("props"), world.admin, json=batch), 400)
    assert len(_names(world, "props")) == 2
