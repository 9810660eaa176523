"""Domain errors: one type per condition, no HTTP here (http/errors.py maps them)."""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    """Base of every error the service reports to a caller."""

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class Invalid(AppError):
    """The input is wrong; `details` lists one entry per problem."""


class Unauthenticated(AppError):
    """No credential, or one that does not authenticate."""

    def __init__(self, message: str = "failed to authenticate the user") -> None:
        super().__init__(message)


class Forbidden(AppError):
    """The caller lacks a permission; the message names it."""

    def __init__(self, permission: str) -> None:
        super().__init__(f"missing required scopes: {permission}")
        self.permission = permission


class NotFound(AppError):
    """The addressed record does not exist in the caller's organization."""


class Conflict(AppError):
    """The change collides with existing state."""


class PayloadTooLarge(AppError):
    """The request body is over its limit."""


class UnsupportedMediaType(AppError):
    """The request body is not of a media type the endpoint accepts."""


class Locked(AppError):
    """The record is locked by other work."""


class RateLimited(AppError):
    """Too many requests; retry after `retry_after` seconds."""

    def __init__(self, retry_after: int, limit: int, window: int, remaining: int = 0) -> None:
        super().__init__("too many requests")
        self.retry_after = retry_after
        self.limit = limit
        self.window = window
        self.remaining = remaining
