"""Finding packages and versions an organization may see, and resolving selectors."""

from __future__ import annotations

from collections.abc import Iterable

from peewee import Expression

from appliance.domain import semver
from appliance.errors import NotFound
from appliance.models import Enablement, PackageVersion


def visible_to(org_id: str) -> Expression:
    """Rows of the organization itself, or public ones."""
    return (PackageVersion.organization == org_id) | (PackageVersion.is_private == False)  # noqa: E712


def visible_versions(org_id: str, name: str) -> list[PackageVersion]:
    """The versions of `name` the organization sees (its own package first, else the oldest)."""
    rows = list(
        PackageVersion.select()
        .where(PackageVersion.name == name, visible_to(org_id))
        .order_by(PackageVersion.created_at, PackageVersion.id)
    )
    own = [r for r in rows if r.organization_id == org_id]
    if own:
        return own
    return [r for r in rows if rows and r.package_id == rows[0].package_id]


def find_versions(org_id: str, name: str) -> list[PackageVersion]:
    """As visible_versions(), NotFound when there are none."""
    if not isinstance(name, str) or not name.strip():
        raise NotFound("package not found: no package name given")
    rows = visible_versions(org_id, name)
    if not rows:
        raise NotFound(f"package not found: {name[:256]}")
    return rows


def pick(
    rows: list[PackageVersion], selector: semver.Selector, include_pre_release: bool = False
) -> PackageVersion | None:
    """The row the selector picks, or None."""
    by_version = {r.version: r for r in rows}
    chosen = selector.resolve(by_version, include_pre_release)
    return by_version.get(chosen) if chosen else None


def get_version(
    org_id: str, name: str, selector_text: str | None, include_pre_release: bool = False
) -> PackageVersion:
    """The version of `name` a selector picks; NotFound for the package or the version."""
    selector = semver.parse_selector(selector_text)
    row = pick(find_versions(org_id, name), selector, include_pre_release)
    if row is None:
        raise NotFound(f"package version not found: {name[:256]}@{selector.text}")
    return row


def enablements(org_id: str, version_ids: Iterable[str]) -> dict[str, Enablement]:
    """Version id -> the organization's enablement of it, in one query."""
    ids = list(dict.fromkeys(version_ids))
    if not ids:
        return {}
    rows = Enablement.select().where(Enablement.organization == org_id, Enablement.version.in_(ids))
    return {row.version_id: row for row in rows}


def resolve_enabled_version(
    org_id: str, name: str, selector: str | None, allow_pre_release: bool = False
) -> PackageVersion:
    """The enabled version to install, or NotFound('package not found or not enabled')."""
    parsed = semver.parse_selector(selector)
    rows = visible_versions(org_id, name) if isinstance(name, str) else []
    enabled = enablements(org_id, [r.id for r in rows])
    row = pick([r for r in rows if r.id in enabled], parsed, allow_pre_release)
    if row is None:
        raise NotFound(f"package not found or not enabled: {str(name)[:256]}@{parsed.text}")
    return row
