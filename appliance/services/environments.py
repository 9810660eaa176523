"""Environments: slugs, the one organization default, enable/disable, soft delete, clone.

Default rule (DESIGN.md 6): exactly one default at any time. Creating with
`default`, or set-default, moves it; set-default needs an active environment;
disabling or deleting the default is a 409 until another environment is made
the default (the default never moves implicitly).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from peewee import fn

from appliance.domain.slugs import slugify, unique_slug
from appliance.errors import Conflict, Invalid, NotFound
from appliance.models import (
    CloudAccount,
    Deployment,
    Environment,
    EnvironmentProperty,
    EnvironmentSecret,
    EnvironmentUser,
    MemberRole,
    Membership,
    Role,
    User,
)
from appliance.models.db import write_transaction
from appliance.services import records
from appliance.services.context import ServiceContext

COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}){1,2}$")
RESERVED_SLUGS = frozenset({"settings"})
DEFAULT_COLOR = "#888888"
MAX_NAME = 128
_EDIT_FIELDS = frozenset({"name", "color", "allow_pre_release", "users"})


# -- lookups -----------------------------------------------------------------------------


def resolve(org_id: str, id_or_slug: str) -> Environment:
    """The organization's environment by id or slug; deleted ones are not found."""
    found = list(
        Environment.select().where(
            Environment.organization == org_id,
            Environment.is_deleted == False,  # noqa: E712
            (Environment.id == id_or_slug) | (Environment.slug == id_or_slug),
        )
    )
    if not found:
        raise NotFound(f"environment not found: {str(id_or_slug)[:80]}")
    by_id = [e for e in found if e.id == id_or_slug]
    return (by_id or found)[0]


def default_environment(org_id: str) -> Environment:
    """The organization default (used by install when no `env` is given)."""
    env = Environment.get_or_none(
        Environment.organization == org_id,
        Environment.is_default == True,  # noqa: E712
        Environment.is_deleted == False,  # noqa: E712
    )
    if env is None:
        raise NotFound("the organization has no default environment")
    return env


def primary_accounts(env_ids: list[str]) -> dict[str, CloudAccount]:
    """The primary live cloud account of each environment, in one query."""
    if not env_ids:
        return {}
    query = CloudAccount.select().where(
        CloudAccount.environment.in_(env_ids),
        CloudAccount.is_primary == True,  # noqa: E712
        CloudAccount.is_deleted == False,  # noqa: E712
    )
    return {account.environment_id: account for account in query}


def _users_by_environment(org_id: str, env_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """User records (with their roles in the organization) per environment: two queries."""
    rows = list(
        EnvironmentUser.select(EnvironmentUser.environment, User)
        .join(User)
        .where(EnvironmentUser.environment.in_(env_ids))
        .order_by(User.name, User.id)
    )
    roles: dict[int, list[Role]] = defaultdict(list)
    user_pks = list({row.user.id for row in rows})
    if user_pks:
        role_rows = (
            MemberRole.select(MemberRole, Membership.user, Role)
            .join(Membership)
            .switch(MemberRole)
            .join(Role)
            .where(Membership.organization == org_id, Membership.user.in_(user_pks))
            .order_by(Role.name)
        )
        for row in role_rows:
            roles[row.membership.user_id].append(row.role)
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        found[row.environment_id].append(records.user(row.user, roles[row.user.id]))
    return found


def render(org_id: str, env: Environment, detail: bool = False) -> dict[str, Any]:
    """The environment record; `detail` adds `cloud_accounts` and `associated_items_count`."""
    users = _users_by_environment(org_id, [env.id])[env.id]
    primary = None if env.is_deleted else primary_accounts([env.id]).get(env.id)
    account = None if primary is None else records.cloud_account(primary, embedded=True)
    if not detail:
        return records.environment(env, users, account)
    accounts = CloudAccount.select().where(
        CloudAccount.environment == env.id,
        CloudAccount.is_deleted == False,  # noqa: E712
    )
    counts = {
        "members": len(users),
        "properties": EnvironmentProperty.select()
        .where(EnvironmentProperty.environment == env.id)
        .count(),
        "secrets": EnvironmentSecret.select()
        .where(EnvironmentSecret.environment == env.id)
        .count(),
        "live_deployments": live_deployments(env.id),
    }
    return records.environment(
        env,
        users,
        account,
        cloud_accounts=[
            records.cloud_account(a, embedded=True)
            for a in accounts.order_by(CloudAccount.created_at, CloudAccount.id)
        ],
        associated_items_count=counts,
    )


def live_deployments(env_id: str) -> int:
    """Deployments of the environment: slugs whose latest activity is not archived."""
    return (
        Deployment.select()
        .where(
            Deployment.environment == env_id,
            Deployment.parent.is_null(),
            Deployment.is_latest == True,  # noqa: E712
            Deployment.is_archived == False,  # noqa: E712
        )
        .count()
    )


# -- validation --------------------------------------------------------------------------


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > MAX_NAME:
        raise Invalid(f"name must be a string of 1 to {MAX_NAME} characters")
    return value.strip()


def _color(value: Any) -> str:
    if not isinstance(value, str) or not COLOR.match(value):
        raise Invalid("color must match ^#(?:[0-9a-fA-F]{3}){1,2}$")
    return value


def _boolean(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"{name} must be a boolean")
    return value


def _member_user_pks(org_id: str, value: Any) -> list[int]:
    """User ids (`local|<n>`) of members of the organization; anything else is a 400."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid("users must be an array of user ids")
    if len(value) > 1000:
        raise Invalid("users must list at most 1000 user ids")
    wanted: dict[str, int | None] = {}
    for raw in value:
        provider, sep, number = raw.partition("|")
        ok = provider == "local" and sep and number.isdigit() and len(number) <= 18
        wanted[raw] = int(number) if ok else None
    pks = [pk for pk in wanted.values() if pk is not None]
    members = {
        m.user_id
        for m in Membership.select(Membership.user).where(
            Membership.organization == org_id, Membership.user.in_(pks)
        )
    }
    unknown = [raw for raw, pk in wanted.items() if pk not in members]
    if unknown:
        shown = ", ".join(u[:80] for u in unknown[:10])
        raise Invalid(f"not members of the organization: {shown}")
    return list(dict.fromkeys(pk for pk in wanted.values() if pk is not None))


def _new_slug(org_id: str, name: str) -> str:
    base = slugify(name)
    taken = {
        row.slug
        for row in Environment.select(Environment.slug).where(
            Environment.organization == org_id,
            (Environment.slug == base) | Environment.slug.startswith(f"{base}-"),
        )
    }
    return unique_slug(base, taken, RESERVED_SLUGS)


def emit_change(
    ctx: ServiceContext, event: str, env: Environment, change: str, **extra: Any
) -> None:
    """An environment event, scoped to the environment, inside the caller's transaction."""
    data = {"id": env.id, "slug": env.slug, "name": env.name, "change": change, **extra}
    ctx.emit(event, env.organization_id, data, environment_id=env.id)


def check_unique(names: list[str], conflict: str) -> None:
    """A 409 `<conflict>: <name>` for the first name that appears twice."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise Conflict(f"{conflict}: {name}")
        seen.add(name)


def _make_default(env: Environment) -> None:
    Environment.update(is_default=False).where(
        Environment.organization == env.organization_id, Environment.id != env.id
    ).execute()
    env.is_default = True


# -- operations --------------------------------------------------------------------------


def create_environment(ctx: ServiceContext, org_id: str, body: dict[str, Any]) -> Environment:
    """A new active environment; with `default` it becomes the organization default."""
    unknown = set(body) - {"name", "color", "default", "allow_pre_release"}
    if unknown:
        raise Invalid(f"unknown fields: {', '.join(sorted(unknown))[:200]}")
    name = _name(body.get("name"))
    color = _color(body["color"]) if body.get("color") is not None else DEFAULT_COLOR
    make_default = _boolean("default", body.get("default", False))
    allow = _boolean("allow_pre_release", body.get("allow_pre_release", False))
    with write_transaction():
        has_default = (
            Environment.select()
            .where(
                Environment.organization == org_id,
                Environment.is_default == True,  # noqa: E712
                Environment.is_deleted == False,  # noqa: E712
            )
            .exists()
        )
        env = Environment.create(
            id=ctx.new_id(),
            organization=org_id,
            name=name,
            slug=_new_slug(org_id, name),
            color=color,
            allow_pre_release=allow,
            is_default=False,
            created_at=ctx.now(),
        )
        if make_default or not has_default:
            _make_default(env)
            env.save()
        emit_change(ctx, "environment:created", env, "created")
    return env


def set_active(ctx: ServiceContext, org_id: str, body: dict[str, Any], active: bool) -> Environment:
    """Enable or disable by `slug` (or id); the default cannot be disabled."""
    slug = body.get("slug")
    if not isinstance(slug, str) or not slug:
        raise Invalid("slug is required")
    with write_transaction():
        env = resolve(org_id, slug)
        if not active and env.is_default:
            raise Conflict("the default environment cannot be disabled; make another the default")
        if env.is_active != active:
            env.is_active = active
            env.save()
            emit_change(ctx, "environment:updated", env, "enabled" if active else "disabled")
    return env


def delete_environment(ctx: ServiceContext, org_id: str, id_or_slug: str) -> Environment:
    """Soft delete; the slug stays taken. The default cannot be deleted."""
    with write_transaction():
        env = resolve(org_id, id_or_slug)
        if env.is_default:
            raise Conflict("the default environment cannot be deleted; make another the default")
        env.is_deleted = True
        env.is_active = False
        env.save()
        emit_change(ctx, "environment:deleted", env, "deleted")
    return env


def set_default(ctx: ServiceContext, org_id: str, id_or_slug: str) -> Environment:
    """Make an active environment the organization default."""
    with write_transaction():
        env = resolve(org_id, id_or_slug)
        if not env.is_active:
            raise Conflict(f"a disabled environment cannot be the default: {env.slug}")
        if not env.is_default:
            _make_default(env)
            env.save()
            emit_change(ctx, "environment:updated", env, "default")
    return env


def edit_environment(
    ctx: ServiceContext, org_id: str, id_or_slug: str, body: dict[str, Any]
) -> Environment:
    """Change name, color, allow_pre_release or the assigned users; the slug never changes."""
    unknown = set(body) - _EDIT_FIELDS
    if unknown:
        raise Invalid(f"unknown fields: {', '.join(sorted(unknown))[:200]}")
    if not body:
        raise Invalid(f"nothing to change; give one of {', '.join(sorted(_EDIT_FIELDS))}")
    changes: dict[str, Any] = {}
    if "name" in body:
        changes["name"] = _name(body["name"])
    if "color" in body:
        changes["color"] = _color(body["color"])
    if "allow_pre_release" in body:
        changes["allow_pre_release"] = _boolean("allow_pre_release", body["allow_pre_release"])
    with write_transaction():
        env = resolve(org_id, id_or_slug)
        user_pks = _member_user_pks(org_id, body["users"]) if "users" in body else None
        for field, value in changes.items():
            setattr(env, field, value)
        env.save()
        if user_pks is not None:
            EnvironmentUser.delete().where(EnvironmentUser.environment == env).execute()
            _add_users(env.id, user_pks)
        emit_change(ctx, "environment:updated", env, "edited")
    return env


def _add_users(env_id: str, user_pks: list[int]) -> None:
    if user_pks:
        EnvironmentUser.insert_many(
            [{"environment": env_id, "user": pk} for pk in user_pks]
        ).execute()


def clone_environment(
    ctx: ServiceContext, org_id: str, id_or_slug: str, body: dict[str, Any]
) -> Environment:
    """A copy with properties, users, color and allow_pre_release (no secrets, no accounts)."""
    unknown = set(body) - {"name"}
    if unknown:
        raise Invalid(f"unknown fields: {', '.join(sorted(unknown))[:200]}")
    name = _name(body.get("name"))
    with write_transaction():
        source = resolve(org_id, id_or_slug)
        env = Environment.create(
            id=ctx.new_id(),
            organization=org_id,
            name=name,
            slug=_new_slug(org_id, name),
            color=source.color,
            allow_pre_release=source.allow_pre_release,
            is_default=False,
            created_at=ctx.now(),
        )
        now = ctx.now()
        props = EnvironmentProperty.select().where(EnvironmentProperty.environment == source)
        copies = [
            {
                "id": ctx.new_id(),
                "environment": env.id,
                "name": p.name,
                "content": p.content,
                "is_enforced": p.is_enforced,
                "created_at": now,
            }
            for p in props
        ]
        if copies:
            EnvironmentProperty.insert_many(copies).execute()
        users = EnvironmentUser.select(EnvironmentUser.user).where(
            EnvironmentUser.environment == source
        )
        _add_users(env.id, [row.user_id for row in users])
        emit_change(ctx, "environment:created", env, "cloned")
    return env


def default_count(org_id: str) -> int:
    """How many live environments are marked default (the invariant says exactly one)."""
    return (
        Environment.select(fn.COUNT(Environment.id))
        .where(
            Environment.organization == org_id,
            Environment.is_default == True,  # noqa: E712
            Environment.is_deleted == False,  # noqa: E712
        )
        .scalar()
    )
