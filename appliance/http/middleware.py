"""Per-request plumbing: request id, database connection, access log."""

from __future__ import annotations

import logging
import os
import time

import falcon

from appliance.models.db import database
from appliance.services.container import Services

access_log = logging.getLogger("appliance.access")


class RequestContext:
    """Gives each request an id, the services, and this thread's kept-open connection."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.started = time.perf_counter()
        req.context.request_id = os.urandom(12).hex()
        req.context.services = self.services
        req.context.principal = None
        database.connect(reuse_if_open=True)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, req_succeeded: bool
    ) -> None:
        request_id = getattr(req.context, "request_id", "-")
        resp.set_header("X-Request-Id", request_id)
        if database.in_transaction():  # never leak an open transaction to the next request
            database.rollback()
        started = getattr(req.context, "started", time.perf_counter())
        duration_ms = (time.perf_counter() - started) * 1000
        # Path only: query strings may carry signed-URL signatures or tokens.
        access_log.info(
            "%s %s %s %.1fms %s", req.method, req.path, resp.status_code, duration_ms, request_id
        )
