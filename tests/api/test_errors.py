"""Every error has the body of DESIGN.md 3: unknown routes, methods, bad JSON, crashes."""

from __future__ import annotations

import json
import logging

from tests.conftest import assert_error


def test_unknown_route_is_404_even_without_credentials(world) -> None:
    body = assert_error(world.get("/api/v1/no-such-thing"), 404, "route not found")
    assert body["error"] == "NOT_FOUND"


def test_wrong_method_is_405(world) -> None:
    assert_error(world.delete("/api/v1/organization/roles", world.admin), 405, "not allowed")


def test_missing_credentials_is_401(world) -> None:
    body = assert_error(world.get("/api/v1/organization"), 401, "authenticate")
    assert body["error"] == "UNAUTHORIZED"


def test_malformed_json_is_400(world) -> None:
    result = world.post(
        "/api/v1/auth/key",
        world.admin,
        body="{not json",
        headers={"Content-Type": "application/json"},
    )
    assert_error(result, 400, "malformed JSON")


def test_deeply_nested_json_is_400_not_500(world) -> None:
    for depth in (65, 100_000):
        result = world.post("/api/v1/auth/key", world.admin, body="[" * depth + "]" * depth)
        assert_error(result, 400, "nested deeper than 64")


def test_json_body_over_limit_is_413_before_parsing(world) -> None:
    body = json.dumps({"name": "x" * (1024 * 1024)})
    assert_error(world.post("/api/v1/auth/key", world.admin, body=body), 413, "over the limit")
    keys = world.get("/api/v1/auth/keys", world.admin).json
    assert keys["total"] == 1


def test_wrong_media_type_is_415(world) -> None:
    result = world.post(
        "/api/v1/auth/key",
        world.admin,
        body="name=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_error(result, 415, "application/json")


def test_unexpected_exception_is_500_with_request_id_and_no_traceback(world, caplog) -> None:
    class Boom:
        def on_get(self, req, resp) -> None:
            raise ValueError("secret internals")

    world.appliance.app.add_route("/boom", Boom())
    with caplog.at_level(logging.ERROR, logger="appliance.http"):
        result = world.get("/boom")
    body = assert_error(result, 500, "internal error")
    assert body["error"] == "INTERNAL"
    assert "secret internals" not in result.text and "Traceback" not in result.text
    assert body["request_id"] == result.headers["X-Request-Id"]
    assert body["request_id"] in caplog.text


def test_list_parameters_out_of_range_are_400(world) -> None:
    for query in (
        "limit=0",
        "limit=1001",
        "offset=-1",
        "order=sideways",
        "sort=password",
        "limit=abc",
        "filter=[nope=1]",
        "filter=broken",
    ):
        result = world.get(f"/api/v1/auth/keys?{query}", world.admin)
        assert_error(result, 400)
