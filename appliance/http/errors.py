"""The one place errors become HTTP: status table, error body, handlers (DESIGN.md 3)."""

from __future__ import annotations

import logging
from typing import Any

import falcon

from appliance import errors

log = logging.getLogger("appliance.http")

STATUS: dict[type[errors.AppError], tuple[int, str]] = {
    errors.Invalid: (400, "BAD_REQUEST"),
    errors.Unauthenticated: (401, "UNAUTHORIZED"),
    errors.Forbidden: (403, "FORBIDDEN"),
    errors.NotFound: (404, "NOT_FOUND"),
    errors.Conflict: (409, "CONFLICT"),
    errors.PayloadTooLarge: (413, "PAYLOAD_TOO_LARGE"),
    errors.UnsupportedMediaType: (415, "UNSUPPORTED_MEDIA_TYPE"),
    errors.Locked: (423, "LOCKED"),
    errors.RateLimited: (429, "TOO_MANY_REQUESTS"),
}
NAMES: dict[int, str] = {
    **{status: name for status, name in STATUS.values()},
    405: "METHOD_NOT_ALLOWED",
    411: "LENGTH_REQUIRED",
    500: "INTERNAL",
}


def error_body(status: int, message: str, details: list[dict[str, Any]] | None = None) -> dict:
    body: dict[str, Any] = {
        "statusCode": status,
        "error": NAMES.get(status, "BAD_REQUEST" if status < 500 else "INTERNAL"),
        "message": message,
    }
    if details:
        body["details"] = details
    return body


def _write(resp: falcon.Response, status: int, body: dict[str, Any]) -> None:
    resp.status = status
    resp.media = body
    resp.content_type = falcon.MEDIA_JSON


def handle_app_error(
    req: falcon.Request, resp: falcon.Response, exc: errors.AppError, params: dict
) -> None:
    status, _ = STATUS[type(exc)]
    _write(resp, status, error_body(status, exc.message, exc.details))
    if isinstance(exc, errors.RateLimited):
        resp.set_header("Retry-After", str(exc.retry_after))
        resp.set_header("RateLimit-Policy", f'"default";q={exc.limit};w={exc.window}')
        resp.set_header("RateLimit", f'"default";r={exc.remaining};t={exc.retry_after}')


def handle_falcon_error(
    req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError, params: dict
) -> None:
    status = exc.status_code
    if isinstance(exc, falcon.HTTPRouteNotFound) or (status == 404 and not exc.description):
        message = f"route not found: {req.method} {req.path}"
    elif isinstance(exc, falcon.HTTPMethodNotAllowed):
        message = f"method not allowed: {req.method} {req.path}"
    else:
        message = exc.description or exc.title or "request failed"
    _write(resp, status, error_body(status, message))
    for name, value in (exc.headers or {}).items():
        resp.set_header(name, value)


def handle_unexpected(
    req: falcon.Request, resp: falcon.Response, exc: Exception, params: dict
) -> None:
    request_id = getattr(req.context, "request_id", "-")
    log.error("unexpected error request_id=%s", request_id, exc_info=exc)
    body = error_body(500, f"internal error (request id {request_id})")
    body["request_id"] = request_id
    _write(resp, 500, body)


def install(app: falcon.App) -> None:
    """Register the handlers: every error, falcon's own included, gets the one body."""
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(falcon.HTTPError, handle_falcon_error)
    app.add_error_handler(errors.AppError, handle_app_error)
