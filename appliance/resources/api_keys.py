"""4.1 API keys."""

from __future__ import annotations

import falcon

from appliance.http.auth import principal, require
from appliance.http.params import list_query, read_object
from appliance.services import api_keys, records
from appliance.services.container import Services


class ApiKeyCreate:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("create:organization_api_key")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Create an API key; the key is in this response only."""
        body = read_object(req, required=False)
        who = principal(req)
        key = api_keys.create_key(
            self.services.ctx,
            who.organization_id,
            who.user_pk,
            body.get("name"),
            body.get("expires_in_days"),
        )
        resp.media = {"api_key": key}


class ApiKeyList:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:organization_api_key")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List the organization's API keys."""
        lq = list_query(req, api_keys.KEY_LIST)
        total, rows = api_keys.list_keys(principal(req).organization_id, lq)
        resp.media = {"total": total, "list": [records.api_key(k, u) for k, u in rows]}


class ApiKeyState:
    """Activate or deactivate a key by name; one class, two routes."""

    def __init__(self, services: Services, active: bool) -> None:
        self.services = services
        self.active = active

    @require("update:organization_api_key")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Activate or deactivate an API key by name."""
        body = read_object(req)
        row = api_keys.set_active(
            self.services.ctx, principal(req).organization_id, body.get("name"), self.active
        )
        resp.media = {"name": row.name, "is_active": not row.is_disabled}
