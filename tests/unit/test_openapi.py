"""The OpenAPI document and the route table agree."""

from __future__ import annotations

from appliance.http.openapi import openapi_path
from appliance.routes import ROUTES, operations


def test_document_matches_route_table(world) -> None:
    document = world.get("/api/v1/openapi.json").json
    assert document["openapi"].startswith("3.1")
    in_document = {
        (method.upper(), path) for path, item in document["paths"].items() for method in item
    }
    in_routes = {
        (method, openapi_path(path))
        for path, factory in ROUTES
        for method in operations(getattr(factory, "func", factory))
    }
    assert in_document == in_routes


def test_operations_name_their_permission(world) -> None:
    document = world.get("/api/v1/openapi.json").json
    operation = document["paths"]["/api/v1/auth/key"]["post"]
    assert operation["x-permission"] == "create:organization_api_key"
    assert document["paths"]["/healthz"]["get"]["security"] == []
