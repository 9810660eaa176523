"""One function per record type: models to the JSON records of spec 2."""

from __future__ import annotations

from typing import Any

from appliance.models import (
    ApiKey,
    CloudAccount,
    DeliveryAttempt,
    Environment,
    EnvironmentProperty,
    EnvironmentSecret,
    Organization,
    OrganizationKey,
    Role,
    User,
    Webhook,
    WebhookDelivery,
)
from appliance.models.db import to_iso


def user_id(user_pk: int) -> str:
    """The public id of a user: `local|<n>`."""
    return f"local|{user_pk}"


def organization(org: Organization) -> dict[str, Any]:
    return {
        "id": org.id,
        "name": org.name,
        "display_name": org.display_name,
        "branding": {"logo_url": None, **(org.branding or {})},
        "metadata": {"org_status": "active", **(org.metadata or {})},
        "is_trial": org.is_trial,
        "created_at": to_iso(org.created_at),
        "trial_started": to_iso(org.trial_started),
    }


def role(r: Role) -> dict[str, Any]:
    return {"id": r.id, "name": r.name, "description": r.description}


def user_summary(u: User | None) -> dict[str, Any] | None:
    """`{id, name, nickname, picture}` as embedded in other records."""
    if u is None:
        return None
    return {"id": user_id(u.id), "name": u.name, "nickname": u.nickname, "picture": u.picture}


def user(u: User, roles: list[Role]) -> dict[str, Any]:
    return {
        "id": user_id(u.id),
        "name": u.name,
        "email": u.email,
        "picture": u.picture,
        "roles": [role(r) for r in roles],
        "first_name": u.first_name,
        "last_name": u.last_name,
        "nickname": u.nickname,
        "created_at": to_iso(u.created_at),
    }


def member(u: User, roles: list[Role], environments: list[Environment]) -> dict[str, Any]:
    return {**user(u, roles), "assigned_environments": [environment(e) for e in environments]}


def environment(
    env: Environment,
    users: list[dict[str, Any]] | None = None,
    cloud_account: dict[str, Any] | None = None,
    cloud_accounts: list[dict[str, Any]] | None = None,
    associated_items_count: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The environment record; `users` is omitted where the record is embedded without,
    `cloud_accounts` and `associated_items_count` appear in the describe result only."""
    record: dict[str, Any] = {
        "id": env.id,
        "slug": env.slug,
        "name": env.name,
        "color": env.color,
        "allow_pre_release": env.allow_pre_release,
        "is_default": env.is_default,
        "is_active": env.is_active,
        "is_deleted": env.is_deleted,
        "created": to_iso(env.created_at),
        "cloud_account": cloud_account,
    }
    if users is not None:
        record["users"] = users
    if cloud_accounts is not None:
        record["cloud_accounts"] = cloud_accounts
    if associated_items_count is not None:
        record["associated_items_count"] = associated_items_count
    return record


CLOUD_CONFIG_KEYS = (
    "service_account_email",
    "scopes",
    "cluster_name",
    "service_account_namespace",
    "service_account_name",
    "cluster_oidc_url",
)


def cloud_account(
    account: CloudAccount, embedded: bool = False, brief: bool = False
) -> dict[str, Any]:
    """The cloud account record; `embedded` (in an environment or task) adds `is_primary`,
    `brief` (the props and secrets envelopes) drops `profile`."""
    record: dict[str, Any] = {
        "id": account.id,
        "name": account.name,
        "provider": account.provider,
        "slug": account.slug,
        "is_active": account.is_active,
        "is_deleted": account.is_deleted,
        "created": to_iso(account.created_at),
        "cloud_account": account.account_id,
        "assume_role_arn": account.assume_role_arn,
        "external_id": account.external_id,
        "cloud_config": {
            **{key: None for key in CLOUD_CONFIG_KEYS},
            **(account.cloud_config or {}),
        },
    }
    if not brief:
        record["profile"] = account.profile
    if embedded and not brief:
        record["is_primary"] = account.is_primary
    return record


def environment_envelope(env: Environment, account: CloudAccount | None) -> dict[str, Any]:
    """`environment` of the props and secrets results."""
    return {
        "guid": env.id,
        "slug": env.slug,
        "cloudAccount": None if account is None else cloud_account(account, brief=True),
    }


def environment_property(prop: EnvironmentProperty) -> dict[str, Any]:
    return {
        "id": prop.id,
        "name": prop.name,
        "content": prop.content,
        "is_enforced": prop.is_enforced,
    }


def environment_secret(secret: EnvironmentSecret) -> dict[str, Any]:
    """Only the secrets endpoints render this: it carries the (encrypted) value."""
    return {"id": secret.id, "key": secret.key, "value": secret.value}


def organization_secret(
    secret: EnvironmentSecret,
    env: Environment,
    account: CloudAccount | None,
    creator: User | None,
) -> dict[str, Any]:
    """An item of the organization-wide secret listing (no value)."""
    return {
        "name": secret.key,
        "environment": {
            "id": env.id,
            "slug": env.slug,
            "name": env.name,
            "color": env.color,
            "is_default": env.is_default,
            "is_active": env.is_active,
            "created": to_iso(env.created_at),
            "cloud_account": None if account is None else cloud_account(account, embedded=True),
        },
        "created_at": to_iso(secret.created_at),
        "updated_at": to_iso(secret.updated_at),
        "created_by": user_summary(creator),
    }


def public_key(key: OrganizationKey, creator: User | None, created: bool = False) -> dict[str, Any]:
    """`{public_key}`; on creation also `key_identifier`, `created_at`, `created_by`."""
    record: dict[str, Any] = {"public_key": key.public_key}
    if created:
        record["key_identifier"] = key.key_identifier
        record["created_at"] = to_iso(key.created_at)
        record["created_by"] = user_summary(creator)
    return record


def api_key(key: ApiKey, creator: User) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "created_at": to_iso(key.created_at),
        "expiration_time": to_iso(key.expiration_time),
        "updated_at": to_iso(key.updated_at),
        "created_by": user_summary(creator),
        "is_disabled": key.is_disabled,
    }


def webhook(w: Webhook) -> dict[str, Any]:
    """The webhook record (spec 2.5); `created_by` must be joined in."""
    return {
        "id": w.id,
        "name": w.name,
        "scope": w.scope,
        "scope_id": w.scope_id,
        "scope_slug": w.scope_slug,
        "endpoint_url": w.endpoint_url,
        "is_enabled": w.is_enabled,
        "created_by": user_summary(w.created_by) if w.created_by_id is not None else None,
        "created_at": to_iso(w.created_at),
        "updated_at": to_iso(w.updated_at),
        "events": list(w.events),
    }


def webhook_list(found: dict[str, Any]) -> dict[str, Any]:
    """`{total, stats, list, filters}` of GET /webhooks."""
    facets = found["filters"]
    return {
        "total": found["total"],
        "stats": found["stats"],
        "list": [webhook(w) for w in found["rows"]],
        "filters": {**facets, "created_bys": [user_summary(u) for u in facets["created_bys"]]},
    }


def delivery_attempt(a: DeliveryAttempt) -> dict[str, Any]:
    return {
        "number": a.number,
        "url": a.url,
        "started_at": to_iso(a.started_at),
        "finished_at": to_iso(a.finished_at),
        "status_code": a.status_code,
        "duration_ms": a.duration_ms,
        "error": a.error,
        "next_attempt_at": to_iso(a.next_attempt_at),
    }


def webhook_delivery(d: WebhookDelivery, attempts: list[DeliveryAttempt]) -> dict[str, Any]:
    """A delivery (extension): one event to one webhook, with every attempt made."""
    return {
        "id": d.id,
        "webhook_id": d.webhook_id,
        "event_id": d.event.id,  # the webhook-id header and payload `id`
        "event_type": d.event_type,
        "status": d.status,
        "attempt_count": d.attempts,
        "next_attempt_at": to_iso(d.next_attempt_at) if d.status == "pending" else None,
        "last_status_code": d.last_status_code,
        "last_error": d.last_error,
        "redelivery_of": d.redelivery_of,
        "created_at": to_iso(d.created_at),
        "completed_at": to_iso(d.completed_at),
        "attempts": [delivery_attempt(a) for a in attempts],
    }
