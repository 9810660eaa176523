"""Environment properties: create, update and delete in all-or-nothing batches."""

from __future__ import annotations

import re
from typing import Any

from appliance.errors import Invalid, NotFound
from appliance.models import Environment, EnvironmentProperty
from appliance.models.db import write_transaction
from appliance.services import environments, records
from appliance.services.context import ServiceContext

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,255}$")
MAX_CONTENT = 64 * 1024
MAX_BATCH = 1000


def batch(body: Any, what: str) -> list[Any]:
    """A non-empty JSON array of at most MAX_BATCH items."""
    if not isinstance(body, list) or not body or len(body) > MAX_BATCH:
        raise Invalid(f"body must be an array of 1 to {MAX_BATCH} {what}")
    return body


def _item(raw: Any, index: int, need_id: bool) -> dict[str, Any]:
    """One validated item; the message names its position."""
    where = f"item {index}"
    if not isinstance(raw, dict):
        raise Invalid(f"{where}: must be an object")
    allowed = (
        {"id", "name", "content", "is_enforced"} if need_id else {"name", "content", "is_enforced"}
    )
    unknown = set(raw) - allowed
    if unknown:
        raise Invalid(f"{where}: unknown fields {', '.join(sorted(unknown))[:200]}")
    item: dict[str, Any] = {}
    if need_id:
        if not isinstance(raw.get("id"), str) or not raw["id"]:
            raise Invalid(f"{where}: id is required")
        item["id"] = raw["id"]
    if "name" in raw or not need_id:
        name = raw.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise Invalid(f"{where}: name must match {NAME.pattern}")
        item["name"] = name
    if "content" in raw or not need_id:
        content = raw.get("content")
        if not isinstance(content, str) or len(content) > MAX_CONTENT:
            raise Invalid(f"{where}: content must be a string of at most {MAX_CONTENT} characters")
        item["content"] = content
    if "is_enforced" in raw:
        if not isinstance(raw["is_enforced"], bool):
            raise Invalid(f"{where}: is_enforced must be a boolean")
        item["is_enforced"] = raw["is_enforced"]
    return item


def save_batch(model: Any, unique: Any, rows: list[Any]) -> None:
    """Save changed rows whose unique names may swap within the batch (a then b = b then a).

    Each row first takes its own id as a placeholder name, so no intermediate
    state breaks the unique index."""
    ids = [row.id for row in rows]
    model.update({unique: model.id}).where(model.id.in_(ids)).execute()
    for row in rows:
        row.save()


def _props(env: Environment) -> list[EnvironmentProperty]:
    return list(
        EnvironmentProperty.select()
        .where(EnvironmentProperty.environment == env)
        .order_by(EnvironmentProperty.name)
    )


def envelope(org_id: str, env: Environment) -> dict[str, Any]:
    """`{environment, props}`."""
    account = environments.primary_accounts([env.id]).get(env.id)
    return {
        "environment": records.environment_envelope(env, account),
        "props": [records.environment_property(p) for p in _props(env)],
    }


def get_props(org_id: str, id_or_slug: str) -> dict[str, Any]:
    return envelope(org_id, environments.resolve(org_id, id_or_slug))


def _check_unique(props: list[EnvironmentProperty]) -> None:
    environments.check_unique([p.name for p in props], "environment prop already exists")


def _changed(ctx: ServiceContext, env: Environment, change: str, names: list[str]) -> None:
    environments.emit_change(ctx, "environment:updated", env, change, props=sorted(names))


def create_props(ctx: ServiceContext, org_id: str, id_or_slug: str, body: Any) -> dict[str, Any]:
    """Add properties; an existing (or repeated) name is a 409 and nothing is added."""
    items = [_item(raw, i, need_id=False) for i, raw in enumerate(batch(body, "properties"))]
    with write_transaction():
        env = environments.resolve(org_id, id_or_slug)
        existing = _props(env)
        now = ctx.now()
        new = [
            EnvironmentProperty(
                id=ctx.new_id(),
                environment=env,
                name=item["name"],
                content=item["content"],
                is_enforced=item.get("is_enforced", False),
                created_at=now,
            )
            for item in items
        ]
        _check_unique(existing + new)
        for prop in new:
            prop.save(force_insert=True)
        _changed(ctx, env, "props_created", [p.name for p in new])
    return envelope(org_id, env)


def update_props(ctx: ServiceContext, org_id: str, id_or_slug: str, body: Any) -> dict[str, Any]:
    """Change properties by id; an unknown id is a 404, a name clash a 409, nothing changes."""
    items = [_item(raw, i, need_id=True) for i, raw in enumerate(batch(body, "properties"))]
    with write_transaction():
        env = environments.resolve(org_id, id_or_slug)
        by_id = {p.id: p for p in _props(env)}
        touched = []
        for item in items:
            prop = by_id.get(item["id"])
            if prop is None:
                raise NotFound(f"environment prop not found: {item['id'][:80]}")
            for field in ("name", "content", "is_enforced"):
                if field in item:
                    setattr(prop, field, item[field])
            prop.updated_at = ctx.now()
            touched.append(prop)
        _check_unique(list(by_id.values()))
        save_batch(EnvironmentProperty, EnvironmentProperty.name, touched)
        _changed(ctx, env, "props_updated", [p.name for p in touched])
    return envelope(org_id, env)


def delete_props(ctx: ServiceContext, org_id: str, id_or_slug: str, body: Any) -> dict[str, Any]:
    """Delete properties named by id or name; an unknown one is a 404 and nothing is deleted."""
    refs = batch(body, "property ids or names")
    if not all(isinstance(ref, str) for ref in refs):
        raise Invalid("body must be an array of property ids or names")
    with write_transaction():
        env = environments.resolve(org_id, id_or_slug)
        props = _props(env)
        lookup = {p.id: p for p in props} | {p.name: p for p in props}
        doomed: dict[str, EnvironmentProperty] = {}
        for ref in refs:
            prop = lookup.get(ref)
            if prop is None:
                raise NotFound(f"environment prop not found: {ref[:80]}")
            doomed[prop.id] = prop
        EnvironmentProperty.delete().where(EnvironmentProperty.id.in_(list(doomed))).execute()
        _changed(ctx, env, "props_deleted", [p.name for p in doomed.values()])
    return envelope(org_id, env)
