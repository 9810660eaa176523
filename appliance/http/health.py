"""Liveness and readiness probes; no credentials."""

from __future__ import annotations

import falcon

from appliance.http.auth import public
from appliance.models.db import database
from appliance.services.container import Services


class Healthz:
    def __init__(self, services: Services) -> None:
        self.services = services

    @public
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The process is up."""
        resp.media = {"status": "ok"}


class Readyz:
    def __init__(self, services: Services) -> None:
        self.services = services

    @public
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The database answers and the blob store is writable."""
        checks = {"database": False, "blobs": self.services.ctx.blobs.usable()}
        try:
            database.execute_sql("SELECT 1").fetchall()
            checks["database"] = True
        except Exception:  # noqa: BLE001 - readiness reports, it does not raise
            checks["database"] = False
        ready = all(checks.values())
        resp.status = 200 if ready else 503
        resp.media = {"status": "ready" if ready else "unavailable", "checks": checks}
