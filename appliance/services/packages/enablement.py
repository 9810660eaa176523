"""Enabling and disabling versions for an organization (spec 3)."""

from __future__ import annotations

from typing import Any

from appliance.domain import semver
from appliance.errors import Invalid, NotFound
from appliance.models import Enablement, PackageVersion, User
from appliance.models.db import write_transaction
from appliance.services.context import ServiceContext
from appliance.services.packages.lookup import enablements, find_versions, pick

MAX_VERSIONS = 100


def _selectors(body: dict[str, Any]) -> list[str | None]:
    raw = body.get("versions", body.get("version"))
    if raw is None or isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(v, str) for v in raw):
        if len(raw) > MAX_VERSIONS:
            raise Invalid(f"at most {MAX_VERSIONS} versions at once")
        return list(raw)
    raise Invalid("version must be a version string or a list of them")


def _chosen(org_id: str, body: dict[str, Any]) -> tuple[str, list[PackageVersion]]:
    name = body.get("package")
    if not isinstance(name, str) or not name.strip():
        raise Invalid("package is required")
    rows = find_versions(org_id, name)
    chosen: list[PackageVersion] = []
    for text in _selectors(body):
        row = pick(rows, semver.parse_selector(text))
        if row is None:
            raise NotFound(f"package version not found: {name[:256]}@{text or 'latest'}")
        if row not in chosen:
            chosen.append(row)
    return name, chosen


def set_enabled(
    ctx: ServiceContext, org_id: str, user_pk: int, body: dict[str, Any], enabled: bool
) -> dict[str, Any]:
    """Enable or disable one or several versions; emits package:enabled / package:disabled."""
    with write_transaction():
        name, rows = _chosen(org_id, body)
        existing = enablements(org_id, [r.id for r in rows])
        if enabled:
            email = User.get_by_id(user_pk).email
            changed = [r for r in rows if r.id not in existing]
            for row in changed:
                Enablement.create(
                    organization=org_id, version=row, enabler_email=email, verified_at=ctx.now()
                )
        else:
            changed = [r for r in rows if r.id in existing]
            Enablement.delete().where(
                Enablement.id.in_([existing[r.id].id for r in changed])
            ).execute()
        if changed:
            event = "package:enabled" if enabled else "package:disabled"
            data = {"name": name, "versions": [r.version for r in changed]}
            ctx.emit(event, org_id, data, package_name=name)
    return {"enabled": enabled, "versions": [r.version for r in rows]}
