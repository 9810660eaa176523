"""Cloud accounts (spec 4.6) and the account setup helpers (spec 4.10).

An account belongs to one environment; the first live account of an
environment is its primary (the environment record's `cloud_account`).
Delete disables, then marks deleted, and promotes the next account to primary.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from peewee import JOIN

from appliance.domain.listing import ListQuery, ListSpec
from appliance.domain.slugs import slugify, unique_slug
from appliance.domain.tokens import random_base62, sha256_hex
from appliance.errors import Conflict, Invalid, NotFound
from appliance.masterkey import derive
from appliance.models import CloudAccount, Environment
from appliance.models.db import write_transaction
from appliance.services import environments
from appliance.services.context import ServiceContext
from appliance.services.listing import Columns, as_bool, paginate

PROVIDER = re.compile(r"^[a-z][a-z0-9-]{1,31}$")
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
TOKEN_PREFIX = "cat_"
_FIELDS = frozenset(
    {
        "accountSlug",
        "accountName",
        "environment",
        "provider",
        "roleArnId",
        "cloudFormationStackId",
        "accountId",
        "externalId",
        "cloudConfig",  # extension: the record's cloud_config
        "profile",  # extension: the record's profile
    }
)

CLOUD_LIST = ListSpec(
    sorts=("created", "name", "slug", "provider"),
    default_sort="created",
    filters=("provider", "environment", "is_active", "is_deleted"),
)
_COLUMNS = Columns(
    sorts={
        "created": CloudAccount.created_at,
        "name": CloudAccount.name,
        "slug": CloudAccount.slug,
        "provider": CloudAccount.provider,
    },
    tiebreak=CloudAccount.id,
    search=CloudAccount.name,
    filters={
        "provider": (CloudAccount.provider, str),
        "environment": (Environment.slug, str),
        "is_active": (CloudAccount.is_active, as_bool),
        "is_deleted": (CloudAccount.is_deleted, as_bool),
    },
)


def external_id(ctx: ServiceContext, org_id: str) -> str:
    """The organization's stable external id for cross-account role trust (no storage)."""
    return "ext-" + derive(ctx.master_key, f"setup-external-id:{org_id}").hex()[:32]


def _text(body: dict[str, Any], name: str, required: bool, limit: int = 256) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise Invalid(f"{name} must be a string of 1 to {limit} characters")
    return value.strip()


def _validated(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise Invalid("the cloud account must be an object")
    unknown = set(body) - _FIELDS
    if unknown:
        raise Invalid(f"unknown fields: {', '.join(sorted(unknown))[:200]}")
    fields = {
        "name": _text(body, "accountName", True, 128),
        "provider": _text(body, "provider", True, 32),
        "account_id": _text(body, "accountId", True),
        "slug": _text(body, "accountSlug", False, 64),
        "environment": _text(body, "environment", False),
        "assume_role_arn": _text(body, "roleArnId", False, 2048) or "",
        "external_id": _text(body, "externalId", False),
        "cloudformation_stack_id": _text(body, "cloudFormationStackId", False, 2048),
        "profile": _text(body, "profile", False) or "",
    }
    if not PROVIDER.match(fields["provider"]):
        raise Invalid(f"provider must match {PROVIDER.pattern}")
    if fields["slug"] is not None and not SLUG.match(fields["slug"]):
        raise Invalid("accountSlug must be lowercase letters, digits and hyphens")
    config = body.get("cloudConfig", {})
    if not isinstance(config, dict):
        raise Invalid("cloudConfig must be an object")
    fields["cloud_config"] = config
    return fields


def _live(org_id: str) -> Any:
    return CloudAccount.select().where(
        CloudAccount.organization == org_id,
        CloudAccount.is_deleted == False,  # noqa: E712
    )


def _slug(org_id: str, wanted: str | None, name: str) -> str:
    taken = {
        row.slug
        for row in CloudAccount.select(CloudAccount.slug).where(CloudAccount.organization == org_id)
    }
    if wanted is not None:
        if wanted in taken:
            raise Conflict(f"cloud account slug already exists: {wanted}")
        return wanted
    return unique_slug(slugify(name), taken)


def create_account(ctx: ServiceContext, org_id: str, body: Any) -> CloudAccount:
    """A cloud account in the named (or default) environment; a live duplicate id is a 409."""
    fields = _validated(body)
    with write_transaction():
        env_ref = fields.pop("environment")
        env = (
            environments.resolve(org_id, env_ref)
            if env_ref
            else environments.default_environment(org_id)
        )
        duplicate = _live(org_id).where(
            CloudAccount.provider == fields["provider"],
            CloudAccount.account_id == fields["account_id"],
        )
        if duplicate.exists():
            raise Conflict(
                f"a cloud account with the account id already exists: {fields['account_id']}"
            )
        has_primary = environments.primary_accounts([env.id]).get(env.id) is not None
        account = CloudAccount.create(
            id=ctx.new_id(),
            organization=org_id,
            environment=env,
            **{
                **fields,
                "slug": _slug(org_id, fields["slug"], fields["name"]),
                "external_id": fields["external_id"] or external_id(ctx, org_id),
            },
            is_primary=not has_primary,
            created_at=ctx.now(),
        )
        _emit(ctx, env, "cloud_account_created", account)
    return account


def _emit(ctx: ServiceContext, env: Environment, change: str, account: CloudAccount) -> None:
    data = {"id": env.id, "slug": env.slug, "change": change, "cloud_account": account.id}
    ctx.emit("environment:updated", env.organization_id, data, environment_id=env.id)


def get_account(org_id: str, id_or_slug: str) -> CloudAccount:
    """A live account by id or slug."""
    found = list(
        _live(org_id).where((CloudAccount.id == id_or_slug) | (CloudAccount.slug == id_or_slug))
    )
    if not found:
        raise NotFound(f"cloud account not found: {id_or_slug[:80]}")
    return ([a for a in found if a.id == id_or_slug] or found)[0]


def account_by_provider(org_id: str, provider: str, account_id: str) -> CloudAccount:
    """A live account by provider and provider account id."""
    found = (
        _live(org_id)
        .where(CloudAccount.provider == provider, CloudAccount.account_id == account_id)
        .first()
    )
    if found is None:
        raise NotFound(f"cloud account not found: {provider[:40]}/{account_id[:80]}")
    return found


def delete_account(ctx: ServiceContext, org_id: str, id_or_slug: str) -> None:
    """Disable, then delete (soft); the environment's next account becomes primary."""
    with write_transaction():
        account = get_account(org_id, id_or_slug)
        was_primary = account.is_primary
        account.is_active = False
        account.save()
        account.is_deleted, account.is_primary, account.updated_at = True, False, ctx.now()
        account.save()
        env = account.environment
        if env is None:
            return
        if was_primary:
            successor = (
                _live(org_id)
                .where(CloudAccount.environment == env)
                .order_by(CloudAccount.created_at, CloudAccount.id)
                .first()
            )
            if successor is not None:
                successor.is_primary = True
                successor.save()
        _emit(ctx, env, "cloud_account_deleted", account)


def rotate_token(ctx: ServiceContext, org_id: str, id_or_slug: str) -> tuple[CloudAccount, str]:
    """A new static token: returned once, only its hash kept."""
    token = TOKEN_PREFIX + random_base62(40)
    with write_transaction():
        account = get_account(org_id, id_or_slug)
        account.token_hash = sha256_hex(token)
        account.updated_at = ctx.now()
        account.save()
    return account, token


def list_accounts(org_id: str, lq: ListQuery, include_all: bool) -> tuple[int, list[CloudAccount]]:
    """Active accounts, or with `all` every one including disabled and deleted."""
    query = (
        CloudAccount.select(CloudAccount)
        .join(Environment, JOIN.LEFT_OUTER)
        .where(CloudAccount.organization == org_id)
    )
    if not include_all:
        query = query.where(
            CloudAccount.is_active == True,  # noqa: E712
            CloudAccount.is_deleted == False,  # noqa: E712
        )
    return paginate(query, lq, _COLUMNS)


def preflight(ctx: ServiceContext, org_id: str, vendor: str | None) -> dict[str, str]:
    """What an operator needs to create the cross-account role, from settings."""
    if vendor:
        try:
            uuid.UUID(vendor)
        except ValueError:
            raise Invalid("vendor must be a UUID") from None
    settings = ctx.settings
    return {
        "cloud_provider": settings.setup_cloud_provider,
        "arn": settings.setup_role_arn,
        "template_url": settings.setup_template_url,
        "external_id": external_id(ctx, org_id),
        "organization": org_id,
        "stack_name": settings.setup_stack_name,
    }


def vendor_setup(ctx: ServiceContext, org_id: str, body: dict[str, Any]) -> CloudAccount:
    """`{cloud: {...}}`: a cloud account in the named environment."""
    unknown = set(body) - {"cloud"}
    if unknown or not isinstance(body.get("cloud"), dict):
        raise Invalid("body must be {cloud: {accountSlug, accountName, environment, ...}}")
    return create_account(ctx, org_id, body["cloud"])
