"""Organizations: creation (with their admin and default environment), record, roles, trial."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from appliance.domain.permissions import ADMIN, ROLE_DESCRIPTIONS
from appliance.domain.slugs import slugify
from appliance.domain.tokens import random_base62
from appliance.errors import Conflict, Invalid, NotFound
from appliance.models import Environment, MemberRole, Membership, Organization, Role, User
from appliance.models.db import PreparedLookup, write_transaction
from appliance.services import api_keys, keys
from appliance.services.context import ServiceContext

EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}$")
DEFAULT_ORGANIZATION = "default"
BOOTSTRAP_EMAIL = "admin@localhost"


@dataclass(frozen=True)
class NewOrganization:
    organization: Organization
    user: User
    api_key: str


def ensure_roles() -> dict[str, Role]:
    """The fixed roles, each with a stable `rol_` id made once."""
    with write_transaction():
        existing = {r.name: r for r in Role.select()}
        for name, description in ROLE_DESCRIPTIONS.items():
            if name not in existing:
                existing[name] = Role.create(
                    id=f"rol_{random_base62(16)}", name=name, description=description
                )
    return existing


def check_email(email: str) -> str:
    """A normalised e-mail address, or a 400."""
    if not isinstance(email, str) or not EMAIL.match(email.strip()):
        raise Invalid(f"not an e-mail address: {str(email)[:80]!r}")
    return email.strip().lower()


def find_or_create_user(ctx: ServiceContext, email: str, name: str | None = None) -> User:
    """The user with this e-mail, created when new (runs inside a transaction)."""
    user = User.get_or_none(User.email == email)
    if user is None:
        local = email.split("@", 1)[0]
        user = User.create(email=email, name=name or local, nickname=local, created_at=ctx.now())
    return user


def add_member(ctx: ServiceContext, org: Organization, user: User, role: Role) -> Membership:
    """Make `user` a member of `org` with `role` (inside a transaction)."""
    membership = Membership.create(organization=org, user=user, created_at=ctx.now())
    MemberRole.create(membership=membership, role=role)
    return membership


def create_organization(
    ctx: ServiceContext, name: str, admin_email: str, display_name: str | None = None
) -> NewOrganization:
    """An organization with an Admin member, its default environment and a first API key."""
    if not isinstance(name, str) or not name.strip() or len(name) > 128:
        raise Invalid("organization name must be 1 to 128 characters")
    slug = slugify(name)
    email = check_email(admin_email)
    roles = ensure_roles()
    private_key = keys.new_private_key(ctx)
    with write_transaction():
        if Organization.select().where(Organization.name == slug).exists():
            raise Conflict(f"organization already exists: {slug}")
        org = Organization.create(
            id=f"org_{random_base62(16)}",
            name=slug,
            display_name=display_name or name.strip(),
            branding={},
            metadata={"org_status": "active"},
            created_at=ctx.now(),
        )
        user = find_or_create_user(ctx, email)
        add_member(ctx, org, user, roles[ADMIN])
        Environment.create(
            id=ctx.new_id(),
            organization=org,
            name="default",
            slug="default",
            is_default=True,
            created_at=ctx.now(),
        )
        keys.store_key_pair(ctx, org.id, private_key)
        key = api_keys.create_key(ctx, org.id, user.id, "initial-admin-key")
    return NewOrganization(org, user, key)


def bootstrap(ctx: ServiceContext) -> NewOrganization | None:
    """On an empty database: the `default` organization and its admin (DESIGN.md 4.2)."""
    ensure_roles()
    if Organization.select().exists():
        return None
    return create_organization(ctx, DEFAULT_ORGANIZATION, BOOTSTRAP_EMAIL, "Default")


# Read on most requests; remembered briefly (see PreparedLookup), callers must not mutate it.
_organization_by_id = PreparedLookup(Organization, Organization.id, remember_seconds=1.0)


def get_organization(org_id: str, for_update: bool = False) -> Organization:
    """The organization; `for_update` reads the row afresh, for a caller that changes it."""
    if for_update:
        org = Organization.get_or_none(Organization.id == org_id)
    else:
        org = _organization_by_id.first(org_id)
    if org is None:
        raise NotFound(f"organization not found: {org_id}")
    return org


def organization_by_name(name: str) -> Organization:
    org = Organization.get_or_none(Organization.name == name)
    if org is None:
        raise NotFound(f"organization not found: {name}")
    return org


def update_organization(ctx: ServiceContext, org_id: str, body: dict[str, Any]) -> Organization:
    """PATCH: `display_name`, `branding`, `metadata`; `name` cannot change."""
    unknown = set(body) - {"name", "display_name", "branding", "metadata"}
    if unknown:
        raise Invalid(f"unknown fields: {', '.join(sorted(unknown))}")
    with write_transaction():
        org = get_organization(org_id, for_update=True)
        if "name" in body and body["name"] != org.name:
            raise Invalid("organization name cannot be changed")
        if "display_name" in body:
            value = body["display_name"]
            if not isinstance(value, str) or not value.strip() or len(value) > 256:
                raise Invalid("display_name must be 1 to 256 characters")
            org.display_name = value.strip()
        for field in ("branding", "metadata"):
            if field in body:
                value = body[field]
                if not isinstance(value, dict):
                    raise Invalid(f"{field} must be an object")
                setattr(org, field, {**(getattr(org, field) or {}), **value})
        if "branding" in body and not isinstance(org.branding.get("logo_url", ""), str | None):
            raise Invalid("branding.logo_url must be a string or null")
        if "metadata" in body and not isinstance(org.metadata.get("org_status", ""), str):
            raise Invalid("metadata.org_status must be a string")
        org.save()
    return org


def set_trial(ctx: ServiceContext, org_id: str, is_trial: Any) -> bool:
    """The internal trial switch."""
    if not isinstance(is_trial, bool):
        raise Invalid("is_trial must be a boolean")
    with write_transaction():
        org = get_organization(org_id, for_update=True)
        if is_trial and not org.is_trial:
            org.trial_started = ctx.now()
        org.is_trial = is_trial
        org.save()
    return org.is_trial


def list_roles() -> list[Role]:
    return list(Role.select().order_by(Role.name))
