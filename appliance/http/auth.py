"""Authentication as a per-responder hook, never middleware (DESIGN.md 2, rule 4)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import falcon

from appliance.services.auth import Principal


def _address(req: falcon.Request) -> str:
    return req.remote_addr or "unknown"


def _guard(responder: Callable, check: Callable[[falcon.Request], None], auth: tuple) -> Callable:
    """Run `check` before the responder (cheaper than falcon.before's per-call inspection)."""

    @wraps(responder)
    def guarded(resource: Any, req: falcon.Request, resp: falcon.Response, **params: Any) -> Any:
        check(req)
        return responder(resource, req, resp, **params)

    guarded.auth = auth  # type: ignore[attr-defined]
    return guarded


def require(permission: str) -> Callable[[Callable], Callable]:
    """Responder decorator: a user principal holding `permission`."""

    def check(req: falcon.Request) -> None:
        principal = req.context.services.auth.authenticate_user(req.auth, _address(req))
        principal.require(permission)
        req.context.principal = principal

    return lambda responder: _guard(responder, check, ("bearer", permission))


def require_runtime(responder: Callable) -> Callable:
    """Responder decorator: runtime Basic credentials."""

    def check(req: falcon.Request) -> None:
        req.context.principal = req.context.services.auth.authenticate_runtime(
            req.auth, _address(req)
        )

    return _guard(responder, check, ("basic", None))


def public(responder: Callable) -> Callable:
    """Mark a responder that needs no credentials (health, login, signed blobs)."""
    responder.auth = ("none", None)
    return responder


def principal(req: falcon.Request) -> Principal:
    """The caller the hook authenticated."""
    found = req.context.principal
    if found is None:
        raise RuntimeError("responder has no authentication hook")
    return found


def require_user_or_runtime(permission: str) -> Callable[[Callable], Callable]:
    """Responder decorator: a user holding `permission`, or runtime Basic credentials."""

    def check(req: falcon.Request) -> None:
        auth = req.context.services.auth
        if (req.auth or "").startswith("Basic "):
            req.context.principal = auth.authenticate_runtime(req.auth, _address(req))
            return
        found = auth.authenticate_user(req.auth, _address(req))
        found.require(permission)
        req.context.principal = found

    return lambda responder: _guard(responder, check, ("bearer", permission))
