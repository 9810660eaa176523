"""Webhook subscriptions (spec 4.11, DESIGN.md 8): CRUD, listing, deliveries, test events."""

from __future__ import annotations

import base64
import os
import re
import uuid
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from peewee import JOIN, Value, fn

from appliance import events
from appliance.domain.listing import ListQuery, ListSpec
from appliance.domain.urls import check_endpoint
from appliance.errors import Invalid, NotFound
from appliance.masterkey import derive
from appliance.models import (
    DeliveryAttempt,
    Environment,
    Event,
    Organization,
    User,
    Webhook,
    WebhookDelivery,
)
from appliance.models.db import write_transaction
from appliance.services.context import ServiceContext
from appliance.services.listing import Columns, apply_filters, paginate

SCOPES = ("organization", "environment", "deployment", "blueprint")
MAX_NAME = 128
SECRET_PREFIX = "whsec_"
_FIELDS = ("name", "scope", "scope_id", "endpoint_url", "is_enabled", "events")
_READ_ONLY = ("id", "scope_slug", "created_by", "created_at", "updated_at")
_DEPLOYMENT_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
_PACKAGE_NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$")

WEBHOOK_LIST = ListSpec(
    sorts=("created_at", "name", "updated_at", "scope", "endpoint_url", "is_enabled"),
    default_sort="created_at",
    filters=("scope", "scope_id", "endpoint_url", "created_by", "is_enabled", "event"),
)
DELIVERY_LIST = ListSpec(
    sorts=("created_at", "status", "event_type"),
    default_sort="created_at",
    filters=("status", "event_type"),
)
DELIVERY_STATUSES = ("pending", "succeeded", "failed")


def _strict_bool(value: str) -> bool:
    lowered = value.lower()
    if lowered not in ("true", "false", "1", "0"):
        raise Invalid(f"expected true or false, got {value[:40]!r}")
    return lowered in ("true", "1")


def _user_pk(value: str) -> int:
    provider, _, number = value.partition("|")
    if provider != "local" or not number.isdigit():
        raise Invalid(f"created_by must be a user id (local|<n>), got {value[:40]!r}")
    return int(number)


def _one_of(allowed: tuple[str, ...]) -> Any:
    def convert(value: str) -> str:
        if value not in allowed:
            raise Invalid(f"unknown value {value[:40]!r} (allowed: {', '.join(allowed)})")
        return value

    return convert


_COLUMNS = Columns(
    sorts={
        "created_at": Webhook.created_at,
        "name": Webhook.name,
        "updated_at": Webhook.updated_at,
        "scope": Webhook.scope,
        "endpoint_url": Webhook.endpoint_url,
        "is_enabled": Webhook.is_enabled,
    },
    tiebreak=Webhook.id,
    search=Webhook.name,
    filters={
        "scope": (Webhook.scope, str),
        "scope_id": (Webhook.scope_id, str),
        "endpoint_url": (Webhook.endpoint_url, str),
        "created_by": (Webhook.created_by, _user_pk),
        "is_enabled": (Webhook.is_enabled, _strict_bool),
    },
)
_DELIVERY_COLUMNS = Columns(
    sorts={
        "created_at": WebhookDelivery.seq,
        "status": WebhookDelivery.status,
        "event_type": WebhookDelivery.event_type,
    },
    tiebreak=WebhookDelivery.seq,
    filters={
        "status": (WebhookDelivery.status, _one_of(DELIVERY_STATUSES)),
        "event_type": (WebhookDelivery.event_type, _one_of(events.EVENT_TYPES)),
    },
)


# --- the signing secret, encrypted at rest under the master key -----------------------------


def new_secret() -> str:
    """`whsec_` + base64 of 32 random bytes (Standard Webhooks)."""
    return SECRET_PREFIX + base64.b64encode(os.urandom(32)).decode("ascii")


def seal_secret(master_key: bytes, secret: str) -> str:
    nonce = os.urandom(12)
    sealed = AESGCM(derive(master_key, "webhook-secret")).encrypt(nonce, secret.encode(), None)
    return "v1." + base64.b64encode(nonce + sealed).decode("ascii")


def open_secret(master_key: bytes, stored: str) -> bytes:
    """The raw HMAC key of a webhook (the bytes behind `whsec_`)."""
    raw = base64.b64decode(stored.removeprefix("v1."))
    secret = AESGCM(derive(master_key, "webhook-secret")).decrypt(raw[:12], raw[12:], None)
    return base64.b64decode(secret.decode("ascii").removeprefix(SECRET_PREFIX))


# --- validation ---------------------------------------------------------------------------------


def _check_fields(body: dict[str, Any]) -> None:
    unknown = sorted(k for k in body if k not in _FIELDS and k not in _READ_ONLY)
    if unknown:
        raise Invalid(f"unknown field: {unknown[0][:80]} (allowed: {', '.join(_FIELDS)})")


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise Invalid(f"name must be a string of 1 to {MAX_NAME} characters")
    return name.strip()


def check_events(value: Any) -> list[str]:
    """A list of known event identifiers, duplicates dropped; empty means every event."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid("events must be an array of event identifiers")
    unknown = [v for v in value if v not in events.EVENT_TYPES]
    if unknown:
        raise Invalid(
            f"unknown event: {unknown[0][:80]} (known: {', '.join(events.EVENT_TYPES)})",
            [
                {"event": v[:80], "statusCode": 400, "error": "BAD_REQUEST", "message": "unknown"}
                for v in unknown[:20]
            ],
        )
    return list(dict.fromkeys(value))


def _resolve_scope(org: Organization, scope: Any, scope_id: Any) -> tuple[str, str, str]:
    """(scope, scope_id, scope_slug), with `scope_id` checked to exist in the organization."""
    if scope not in SCOPES:
        raise Invalid(f"scope must be one of: {', '.join(SCOPES)}")
    if scope_id is not None and (not isinstance(scope_id, str) or len(scope_id) > 256):
        raise Invalid("scope_id must be a string of at most 256 characters")
    if scope == "organization":
        if scope_id not in (None, "", org.id):
            raise Invalid("scope_id of an organization webhook must be the organization's id")
        return scope, org.id, org.name
    if not scope_id:
        raise Invalid(f"scope_id is required for scope {scope}")
    if scope == "environment":
        env = Environment.get_or_none(
            Environment.organization == org.id,
            (Environment.id == scope_id) | (Environment.slug == scope_id),
            Environment.is_deleted == False,  # noqa: E712 - peewee expression
        )
        if env is None:
            raise NotFound(f"environment not found: {scope_id[:80]}")
        return scope, env.id, env.slug
    # Deployments and packages are not in this branch yet: their references are
    # checked for shape only (DESIGN.md 8 decision).
    shape = _DEPLOYMENT_SLUG if scope == "deployment" else _PACKAGE_NAME
    if not shape.match(scope_id):
        raise Invalid(f"scope_id is not a valid {scope} reference: {scope_id[:80]}")
    return scope, scope_id, scope_id


def _check_url(ctx: ServiceContext, url: Any) -> str:
    settings = ctx.settings
    return check_endpoint(url, settings.resolve_host, settings.webhook_allow_list)


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"{name} must be a boolean")
    return value


# --- CRUD ---------------------------------------------------------------------------------------


def parse_webhook_id(raw: str) -> str:
    """A webhook path id must be a UUID."""
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise Invalid(f"webhookId must be a UUID, got {raw[:40]!r}") from None


def create_webhook(
    ctx: ServiceContext, org_id: str, user_pk: int | None, body: dict[str, Any]
) -> tuple[Webhook, str]:
    """Create a webhook; returns it and its signing secret (the only time it is shown)."""
    _check_fields(body)
    name = _check_name(body.get("name"))
    url = _check_url(ctx, body.get("endpoint_url"))
    wanted = check_events(body.get("events"))
    enabled = _check_bool("is_enabled", body.get("is_enabled", True))
    secret = new_secret()
    with write_transaction():
        org = Organization.get_by_id(org_id)
        scope, scope_id, scope_slug = _resolve_scope(
            org, body.get("scope") or "organization", body.get("scope_id")
        )
        row = Webhook.create(
            id=ctx.new_id(),
            organization=org_id,
            name=name,
            scope=scope,
            scope_id=scope_id,
            scope_slug=scope_slug,
            endpoint_url=url,
            is_enabled=enabled,
            events=wanted,
            secret=seal_secret(ctx.master_key, secret),
            after_seq=Event.select(fn.MAX(Event.seq)).scalar() or 0,
            created_by=user_pk,
            created_at=ctx.now(),
        )
    return row, secret


def get_webhook(org_id: str, webhook_id: str) -> Webhook:
    """The organization's webhook with its creator, or NotFound."""
    row = (
        Webhook.select(Webhook, User)
        .join(User, join_type=JOIN.LEFT_OUTER)
        .where(Webhook.organization == org_id, Webhook.id == parse_webhook_id(webhook_id))
        .first()
    )
    if row is None:
        raise NotFound(f"webhook not found: {webhook_id[:80]}")
    return row


def update_webhook(
    ctx: ServiceContext, org_id: str, webhook_id: str, body: dict[str, Any]
) -> Webhook:
    """Change any of the create fields; the secret stays."""
    _check_fields(body)
    changes: dict[str, Any] = {}
    if "name" in body:
        changes["name"] = _check_name(body["name"])
    if "endpoint_url" in body:
        changes["endpoint_url"] = _check_url(ctx, body["endpoint_url"])
    if "events" in body:
        changes["events"] = check_events(body["events"])
    if "is_enabled" in body:
        changes["is_enabled"] = _check_bool("is_enabled", body["is_enabled"])
    with write_transaction():
        row = get_webhook(org_id, webhook_id)
        if "scope" in body or "scope_id" in body:
            scope = body.get("scope") or row.scope
            scope_id = body.get("scope_id", row.scope_id if scope == row.scope else None)
            org = Organization.get_by_id(org_id)
            changes["scope"], changes["scope_id"], changes["scope_slug"] = _resolve_scope(
                org, scope, scope_id
            )
        for key, value in changes.items():
            setattr(row, key, value)
        row.updated_at = ctx.now()
        row.save()
    return row


def delete_webhook(org_id: str, webhook_id: str) -> str:
    """Delete a webhook and its delivery history."""
    with write_transaction():
        row = get_webhook(org_id, webhook_id)
        row.delete_instance()
    return row.id


def list_webhooks(org_id: str, lq: ListQuery, include_disabled: bool) -> dict[str, Any]:
    """A page of webhooks, the count of enabled ones, and the filter facets."""
    base = Webhook.select().where(Webhook.organization == org_id)
    if not include_disabled:
        base = base.where(Webhook.is_enabled == True)  # noqa: E712 - peewee expression
    wanted_events = lq.filters.get("event")
    if wanted_events:
        check_events(wanted_events)
        # Raw values: the JSON field's converter would quote the patterns again.
        clause = Webhook.events == Value("[]", converter=False)
        for name in wanted_events:
            pattern = Value(f'%"{name}"%', converter=False)
            clause |= Webhook.events**pattern  # ILIKE: plain LIKE on SQLite
        base = base.where(clause)
    lq_rest = ListQuery(
        lq.offset,
        lq.limit,
        lq.order,
        lq.sort,
        lq.search,
        {k: v for k, v in lq.filters.items() if k != "event"},
    )
    query = base.select(Webhook, User).join(User, join_type=JOIN.LEFT_OUTER)
    total, rows = paginate(query, lq_rest, _COLUMNS)
    enabled = (
        apply_filters(base, lq_rest, _COLUMNS)
        .where(Webhook.is_enabled == True)  # noqa: E712 - peewee expression
        .count()
    )
    return {"total": total, "stats": {"enable": enabled}, "rows": rows, "filters": _facets(org_id)}


def _facets(org_id: str) -> dict[str, Any]:
    """Distinct values of the organization's webhooks, one query."""
    rows = list(
        Webhook.select(
            Webhook.scope,
            Webhook.scope_id,
            Webhook.endpoint_url,
            Webhook.is_enabled,
            Webhook.events,
            User,
        )
        .join(User, join_type=JOIN.LEFT_OUTER)
        .where(Webhook.organization == org_id)
    )
    creators = {r.created_by.id: r.created_by for r in rows if r.created_by_id is not None}
    return {
        "scopes": sorted({r.scope for r in rows}),
        "scope_ids": sorted({r.scope_id for r in rows}),
        "endpoint_urls": sorted({r.endpoint_url for r in rows}),
        "created_bys": [creators[k] for k in sorted(creators)],
        "is_enabled": sorted({r.is_enabled for r in rows}),
        "events": sorted({e for r in rows for e in r.events}),
    }


# --- deliveries (extension) ----------------------------------------------------------------------


def list_deliveries(
    org_id: str, webhook_id: str, lq: ListQuery
) -> tuple[int, list[tuple[WebhookDelivery, list[DeliveryAttempt]]]]:
    """A page of a webhook's deliveries, each with its attempts (two queries)."""
    hook = get_webhook(org_id, webhook_id)
    query = (
        WebhookDelivery.select(WebhookDelivery, Event)
        .join(Event)
        .where(WebhookDelivery.webhook == hook.id)
    )
    total, rows = paginate(query, lq, _DELIVERY_COLUMNS)
    attempts: dict[int, list[DeliveryAttempt]] = {r.seq: [] for r in rows}
    if rows:
        for attempt in (
            DeliveryAttempt.select()
            .where(DeliveryAttempt.delivery.in_([r.seq for r in rows]))
            .order_by(DeliveryAttempt.delivery, DeliveryAttempt.number)
        ):
            attempts[attempt.delivery_id].append(attempt)
    return total, [(r, attempts[r.seq]) for r in rows]


def _new_delivery(ctx: ServiceContext, hook: Webhook, event: Any, **extra: Any) -> WebhookDelivery:
    now = ctx.now()
    return WebhookDelivery.create(
        id=ctx.new_id(),
        webhook=hook.id,
        organization=hook.organization_id,
        event=event.seq,
        event_type=event.type,
        status="pending",
        next_attempt_at=now,
        created_at=now,
        **extra,
    )


def redeliver(
    ctx: ServiceContext, org_id: str, webhook_id: str, delivery_id: str
) -> WebhookDelivery:
    """Queue the event of a delivery again (same webhook-id), behind the webhook's queue."""
    with write_transaction():
        hook = get_webhook(org_id, webhook_id)
        original = WebhookDelivery.get_or_none(
            WebhookDelivery.webhook == hook.id, WebhookDelivery.id == delivery_id
        )
        if original is None:
            raise NotFound(f"delivery not found: {delivery_id[:80]}")
        return _new_delivery(ctx, hook, original.event, redelivery_of=original.id)


def send_test(ctx: ServiceContext, org_id: str, webhook_id: str) -> WebhookDelivery:
    """Write a `webhook:test` event addressed to this webhook only, and queue its delivery."""
    with write_transaction():
        hook = get_webhook(org_id, webhook_id)
        event = events.emit(
            "webhook:test",
            org_id,
            {"webhook_id": hook.id, "name": hook.name},
            event_id=ctx.new_id(),
            at=ctx.now(),
        )
        return _new_delivery(ctx, hook, event)


def count_by_status(webhook_id: str) -> dict[str, int]:
    """Deliveries of a webhook per status (used by tests and the benchmark)."""
    query = (
        WebhookDelivery.select(WebhookDelivery.status, fn.COUNT(WebhookDelivery.seq).alias("n"))
        .where(WebhookDelivery.webhook == webhook_id)
        .group_by(WebhookDelivery.status)
    )
    return {row.status: row.n for row in query}
