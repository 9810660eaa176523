"""Event identifiers (DESIGN.md 8) and the outbox writer."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from appliance.models.db import database
from appliance.models.events import Event

EVENT_TYPES: tuple[str, ...] = (
    "package:published",
    "package:enabled",
    "package:disabled",
    "deployment:created",
    "deployment:updated",
    "deployment:completed",
    "deployment:failed",
    "deployment:approved",
    "deployment:canceled",
    "task:created",
    "task:updated",
    "environment:created",
    "environment:updated",
    "environment:deleted",
    "member:invited",
    "member:removed",
    "api_key:created",
    "api_key:deactivated",
    "webhook:test",
)


def emit(
    event: str,
    organization_id: str,
    data: dict[str, Any],
    *,
    event_id: str,
    at: datetime,
    environment_id: str | None = None,
    deployment_slug: str | None = None,
    package_name: str | None = None,
) -> Event:
    """Write an event to the outbox; must run inside the transaction of its change."""
    if event not in EVENT_TYPES:
        raise ValueError(f"unknown event type: {event}")
    if not database.in_transaction():
        raise RuntimeError("emit() must run inside the transaction of the change")
    return Event.create(
        id=event_id,
        organization=organization_id,
        type=event,
        payload=data,
        environment_id=environment_id,
        deployment_slug=deployment_slug,
        package_name=package_name,
        created_at=at,
    )
