"""Environment secrets: stored as uploaded (ciphertext only), batches all-or-nothing.

Values appear in the secrets endpoints' responses and in `secrets_for_task`
only; messages name keys, never values (DESIGN.md 6).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from peewee import JOIN

from appliance.domain import secretbox
from appliance.domain.listing import ListQuery, ListSpec
from appliance.errors import Invalid, NotFound
from appliance.models import Environment, EnvironmentSecret, User
from appliance.models.db import write_transaction
from appliance.services import environments, keys, records
from appliance.services.context import ServiceContext
from appliance.services.listing import Columns, paginate
from appliance.services.properties import batch, save_batch

KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,255}$")


def _user_pk(raw: str) -> int:
    provider, sep, number = raw.partition("|")
    if provider != "local" or not sep or not number.isdigit() or len(number) > 18:
        raise Invalid(f"not a user id: {raw[:80]}")
    return int(number)


SECRET_LIST = ListSpec(
    sorts=("created_at", "updated_at", "name", "environment"),
    default_sort="created_at",
    filters=("environment", "environment_id", "created_by"),
)
_COLUMNS = Columns(
    sorts={
        "created_at": EnvironmentSecret.created_at,
        "updated_at": EnvironmentSecret.updated_at,
        "name": EnvironmentSecret.key,
        "environment": Environment.slug,
    },
    tiebreak=EnvironmentSecret.id,
    search=EnvironmentSecret.key,
    filters={
        "environment": (Environment.slug, str),
        "environment_id": (Environment.id, str),
        "created_by": (EnvironmentSecret.created_by, _user_pk),
    },
)


@dataclass(frozen=True)
class TaskSecrets:
    """An environment's secrets for a runtime: plaintext, or ciphertext plus the key id."""

    secrets: dict[str, str]
    decryption_key_id: str | None


def _secrets(env: Environment) -> list[EnvironmentSecret]:
    return list(
        EnvironmentSecret.select()
        .where(EnvironmentSecret.environment == env)
        .order_by(EnvironmentSecret.key)
    )


def envelope(env: Environment) -> dict[str, Any]:
    """`{environment, secrets}`; the only place besides tasks that carries values."""
    account = environments.primary_accounts([env.id]).get(env.id)
    return {
        "environment": records.environment_envelope(env, account),
        "secrets": [records.environment_secret(s) for s in _secrets(env)],
    }


def get_secrets(org_id: str, id_or_slug: str) -> dict[str, Any]:
    return envelope(environments.resolve(org_id, id_or_slug))


def _item(raw: Any, index: int, modulus: int, allow_id: bool) -> dict[str, Any]:
    where = f"item {index}"
    if not isinstance(raw, dict):
        raise Invalid(f"{where}: must be an object {{key, value}}")
    unknown = set(raw) - ({"id", "key", "value"} if allow_id else {"key", "value"})
    if unknown:
        raise Invalid(f"{where}: unknown fields {', '.join(sorted(unknown))[:200]}")
    key = raw.get("key")
    if not isinstance(key, str) or not KEY.match(key):
        raise Invalid(f"{where}: key must match {KEY.pattern}")
    try:
        secretbox.parse(raw.get("value"), modulus)
    except Invalid as exc:
        raise Invalid(f"{where} ({key}): {exc.message}") from None
    item = {"key": key, "value": raw["value"]}
    if allow_id and raw.get("id") is not None:
        if not isinstance(raw["id"], str):
            raise Invalid(f"{where}: id must be a string")
        item["id"] = raw["id"]
    return item


def _items(ctx: ServiceContext, org_id: str, body: Any, allow_id: bool) -> list[dict[str, Any]]:
    """Validated items; with the appliance's own key each value must also decrypt, so a
    value encrypted for another key is refused now rather than at deployment time."""
    key = keys.current_key(ctx, org_id)
    raws = batch(body, "secrets {key, value}")
    items = [_item(raw, i, keys.modulus_bytes(key), allow_id) for i, raw in enumerate(raws)]
    private = keys.private_key_of(ctx, key)
    if private is not None:
        for index, item in enumerate(items):
            try:
                secretbox.decrypt(private, item["value"])
            except Invalid:
                raise Invalid(
                    f"item {index} ({item['key']}): not encrypted with the organization public key"
                ) from None
    return items


def _check_unique(rows: list[EnvironmentSecret]) -> None:
    environments.check_unique([r.key for r in rows], "secret with such key already exists")


def _changed(ctx: ServiceContext, env: Environment, change: str, names: list[str]) -> None:
    environments.emit_change(ctx, "environment:updated", env, change, secrets=sorted(names))


def create_secrets(
    ctx: ServiceContext, org_id: str, user_pk: int | None, id_or_slug: str, body: Any
) -> dict[str, Any]:
    """Add secrets; an existing (or repeated) key is a 409 and nothing is added."""
    items = _items(ctx, org_id, body, allow_id=False)
    with write_transaction():
        env = environments.resolve(org_id, id_or_slug)
        now = ctx.now()
        new = [
            EnvironmentSecret(
                id=ctx.new_id(),
                environment=env,
                key=item["key"],
                value=item["value"],
                created_by=user_pk,
                created_at=now,
            )
            for item in items
        ]
        _check_unique(_secrets(env) + new)
        for row in new:
            row.save(force_insert=True)
        _changed(ctx, env, "secrets_created", [r.key for r in new])
    return envelope(env)


def update_secrets(ctx: ServiceContext, org_id: str, id_or_slug: str, body: Any) -> dict[str, Any]:
    """Replace values by key (or by id, which may rename); unknown is a 404, nothing changes."""
    items = _items(ctx, org_id, body, allow_id=True)
    with write_transaction():
        env = environments.resolve(org_id, id_or_slug)
        rows = _secrets(env)
        by_id = {r.id: r for r in rows}
        by_key = {r.key: r for r in rows}
        touched = []
        for item in items:
            row = by_id.get(item["id"]) if "id" in item else by_key.get(item["key"])
            if row is None:
                raise NotFound(f"secret not found: {item.get('id', item['key'])[:80]}")
            row.key, row.value, row.updated_at = item["key"], item["value"], ctx.now()
            touched.append(row)
        _check_unique(rows)
        save_batch(EnvironmentSecret, EnvironmentSecret.key, touched)
        _changed(ctx, env, "secrets_updated", [r.key for r in touched])
    return envelope(env)


def delete_secrets(ctx: ServiceContext, org_id: str, id_or_slug: str, body: Any) -> dict[str, Any]:
    """Delete secrets by key; an unknown key is a 404 and nothing is deleted."""
    refs = batch(body, "secret keys")
    if not all(isinstance(ref, str) for ref in refs):
        raise Invalid("body must be an array of secret keys")
    with write_transaction():
        env = environments.resolve(org_id, id_or_slug)
        by_key = {r.key: r for r in _secrets(env)}
        missing = [ref for ref in refs if ref not in by_key]
        if missing:
            raise NotFound(f"secret not found: {missing[0][:80]}")
        ids = list({by_key[ref].id for ref in refs})
        EnvironmentSecret.delete().where(EnvironmentSecret.id.in_(ids)).execute()
        _changed(ctx, env, "secrets_deleted", list(set(refs)))
    return envelope(env)


def _organization_secrets(org_id: str) -> Any:
    return (
        EnvironmentSecret.select(EnvironmentSecret, Environment, User)
        .join(Environment)
        .switch(EnvironmentSecret)
        .join(User, JOIN.LEFT_OUTER, on=(EnvironmentSecret.created_by == User.id))
        .where(
            Environment.organization == org_id,
            Environment.is_deleted == False,  # noqa: E712
        )
    )


def list_organization_secrets(org_id: str, lq: ListQuery) -> dict[str, Any]:
    """Secret names across the organization (no values), in a fixed number of queries."""
    total, rows = paginate(_organization_secrets(org_id), lq, _COLUMNS)
    accounts = environments.primary_accounts(list({r.environment_id for r in rows}))
    items = [
        records.organization_secret(r, r.environment, accounts.get(r.environment_id), r.created_by)
        for r in rows
    ]
    every = _organization_secrets(org_id)  # facets list every choice, not just the page's
    env_facets = (
        every.select(Environment.id, Environment.name, Environment.slug, Environment.color)
        .distinct()
        .order_by(Environment.name, Environment.id)
        .dicts()
    )
    user_facets = (
        every.select(User.id, User.name, User.nickname, User.picture)
        .where(User.id.is_null(False))
        .distinct()
        .order_by(User.name, User.id)
        .dicts()
    )
    return {
        "total": total,
        "list": items,
        "filters": {
            "environments": list(env_facets),
            "users": [{**u, "id": records.user_id(u["id"])} for u in user_facets],
        },
    }


def secrets_for_task(ctx: ServiceContext, org_id: str, env_id: str) -> TaskSecrets:
    """An environment's secrets decrypted (own key), or as ciphertext with a managed key's id."""
    key = keys.current_key(ctx, org_id)
    env = Environment.get_or_none(Environment.id == env_id, Environment.organization == org_id)
    if env is None:
        raise NotFound(f"environment not found: {env_id[:80]}")
    rows = _secrets(env)
    if key.key_identifier is not None:
        return TaskSecrets({r.key: r.value for r in rows}, key.key_identifier)
    private = keys.private_key_of(ctx, key)
    assert private is not None  # an own key always has its private half
    values = {}
    for row in rows:
        try:
            values[row.key] = secretbox.decrypt(private, row.value).decode("utf-8")
        except (Invalid, UnicodeDecodeError):
            raise Invalid(
                f"secret {row.key} cannot be decrypted with the organization key"
            ) from None
    return TaskSecrets(values, None)
