"""OpenAPI 3.1 document of every implemented operation, built from the route table."""

from __future__ import annotations

import re
from typing import Any

import falcon

from appliance import __version__
from appliance.http.auth import public
from appliance.services.container import Services

_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
_METHODS = ("get", "post", "put", "patch", "delete")


def openapi_path(path: str) -> str:
    """Falcon's `{name:converter}` to OpenAPI's `{name}`."""
    return _PARAM.sub(lambda m: "{" + m.group(1) + "}", path)


def _operation(method: str, path: str, responder: Any) -> dict[str, Any]:
    doc = (responder.__doc__ or "").strip().splitlines()
    kind, permission = getattr(responder, "auth", ("bearer", None))
    operation: dict[str, Any] = {
        "operationId": f"{method}_{re.sub(r'[^a-zA-Z0-9]+', '_', openapi_path(path)).strip('_')}",
        "summary": doc[0] if doc else f"{method.upper()} {path}",
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _PARAM.findall(path)
        ],
        "responses": {
            "200": {"description": "Success"},
            "default": {
                "description": "Error",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        },
    }
    if kind == "bearer":
        operation["security"] = [{"bearer": []}]
        operation["x-permission"] = permission
    elif kind == "basic":
        operation["security"] = [{"runtime": []}]
    else:
        operation["security"] = []
    return operation


def build_document(routes: list[tuple[str, Any]]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for path, resource in routes:
        item = paths.setdefault(openapi_path(path), {})
        for method in _METHODS:
            responder = getattr(resource, f"on_{method}", None)
            if responder is not None:
                item[method] = _operation(method, path, responder)
    return {
        "openapi": "3.1.0",
        "info": {"title": "appliance", "version": __version__},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "runtime": {"type": "http", "scheme": "basic"},
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["statusCode", "error", "message"],
                    "properties": {
                        "statusCode": {"type": "integer"},
                        "error": {"type": "string"},
                        "message": {"type": "string"},
                        "details": {"type": "array", "items": {"type": "object"}},
                    },
                }
            },
        },
    }


class OpenApiDocument:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.routes: list[tuple[str, Any]] = []
        self._document: dict[str, Any] | None = None

    @public
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """This document."""
        if self._document is None:
            self._document = build_document(self.routes)
        resp.media = self._document
