"""Reading the registry: detail, versions, search, status, customizable props, changes."""

from __future__ import annotations

import difflib
from typing import Any

from peewee import SQL, NodeList, fn

from appliance.domain import semver
from appliance.domain.listing import ListSpec, parse_list_query
from appliance.errors import Invalid
from appliance.models import Package, PackageChild, PackageVersion
from appliance.models.db import to_iso
from appliance.services.context import ServiceContext
from appliance.services.listing import Columns, paginate
from appliance.services.packages import records
from appliance.services.packages.lookup import (
    enablements,
    find_versions,
    get_version,
    visible_to,
    visible_versions,
)

SEARCH = ListSpec(
    sorts=("name", "created"), default_sort="name", default_order="ASC", default_limit=10
)
_SEARCH_COLUMNS = Columns(
    sorts={"name": Package.name, "created": Package.created_at}, tiebreak=Package.id
)
MAX_CHANGES = 1000


def _base(ctx: ServiceContext) -> str:
    return ctx.settings.public_base_url


def children_of(row: PackageVersion) -> list[PackageVersion]:
    """The registry children of a blueprint version, in manifest order."""
    query = (
        PackageVersion.select()
        .join(PackageChild, on=PackageChild.child == PackageVersion.id)
        .where(PackageChild.parent == row.id)
        .order_by(PackageChild.position)
    )
    return list(query)


def detail(ctx: ServiceContext, org_id: str, name: str, selector: str | None) -> dict[str, Any]:
    """GET /package: info, config and children of the selected version."""
    row = get_version(org_id, name, selector)
    children = children_of(row)
    enabled = enablements(org_id, [row.id, *(c.id for c in children)])
    return {
        "package_info": records.package_info(row, enabled.get(row.id), _base(ctx)),
        "config": row.config,
        "package_children": [
            records.package_info(c, enabled.get(c.id), _base(ctx)) for c in children
        ],
    }


def versions(ctx: ServiceContext, org_id: str, name: str) -> dict[str, Any]:
    """GET /package/versions: the latest version's info and every version, newest first."""
    rows = find_versions(org_id, name)
    ordered = sorted(rows, key=lambda r: (semver.sort_key(r.version), r.version), reverse=True)
    latest = next((r for r in ordered if r.is_latest), ordered[0])
    enabled = enablements(org_id, [r.id for r in rows])
    return {
        "package_info": records.package_info(
            latest, enabled.get(latest.id), _base(ctx), with_enabled=False
        ),
        "versions": [records.version_item(r, enabled.get(r.id)) for r in ordered],
    }


def _like_pattern(query: str) -> str:
    """`*` wildcards anchor the match; plain text matches anywhere in the name."""
    escaped = query.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    if "*" in escaped:
        return escaped.replace("*", "%")
    return f"%{escaped}%"


def search(ctx: ServiceContext, org_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST /package/search: one row per visible package (its latest visible version)."""
    params = {k: body.get(k) for k in ("offset", "limit", "order", "sort")}
    lq = parse_list_query(params, SEARCH)
    query_text = body.get("query")
    if query_text is not None and (not isinstance(query_text, str) or len(query_text) > 256):
        raise Invalid("query must be a string of at most 256 characters")
    visible = PackageVersion.select(PackageVersion.package).where(visible_to(org_id))
    packages = Package.select().where(Package.id.in_(visible))
    if query_text and query_text.strip():
        pattern = _like_pattern(query_text.strip())
        packages = packages.where(
            NodeList((fn.LOWER(Package.name), SQL("LIKE"), pattern, SQL("ESCAPE '\\'")))
        )
    total, page = paginate(packages, lq, _SEARCH_COLUMNS)
    by_package: dict[str, list[PackageVersion]] = {}
    for row in PackageVersion.select().where(
        PackageVersion.package.in_([p.id for p in page]), visible_to(org_id)
    ):
        by_package.setdefault(row.package_id, []).append(row)
    latest_rows = []
    for package in page:
        rows = {r.version: r for r in by_package.get(package.id, [])}
        latest_rows.append(rows[semver.latest(rows)])
    enabled = enablements(org_id, [r.id for r in latest_rows])
    found = [records.package_info(r, enabled.get(r.id), _base(ctx)) for r in latest_rows]
    return {"packages": found, "results": len(found), "total": total}


def status(
    org_id: str, name: str, selector: str | None, include_pre_release: bool
) -> list[dict[str, Any]]:
    """GET /package/status: the enabled versions (matching the selector when given)."""
    rows = find_versions(org_id, name)
    enabled = enablements(org_id, [r.id for r in rows])
    rows = [r for r in rows if r.id in enabled]
    if selector:
        parsed = semver.parse_selector(selector)
        if parsed.kind == "latest":
            chosen = parsed.resolve([r.version for r in rows], include_pre_release)
            rows = [r for r in rows if r.version == chosen]
        else:
            rows = [r for r in rows if parsed.matches(r.version, include_pre_release)]
    elif not include_pre_release:
        rows = [r for r in rows if not r.is_pre_release]
    rows.sort(key=lambda r: (semver.sort_key(r.version), r.version), reverse=True)
    return [
        {
            "name": r.name,
            "version": r.version,
            "is_pre_release": r.is_pre_release,
            "created": to_iso(r.created_at),
            "enabler": enabled[r.id].enabler_email,
        }
        for r in rows
    ]


def customizable_paths(row: PackageVersion) -> tuple[set[str], set[str]]:
    """(exact prop paths, prefixes under which any sub-path is customizable)."""
    inputs = row.manifest.get("inputs") or {}
    exact = set(inputs)
    prefixes = {n for n, spec in inputs.items() if spec.get("type", "any") in ("map", "any")}
    for child in row.config.get("packages") or []:
        exact |= {f"{child['id']}.{key}" for key in child.get("props") or {}}
    for alias, child in _child_aliases(row):
        child_inputs = child.manifest.get("inputs") or {}
        exact |= {f"{alias}.{key}" for key in child_inputs}
    return exact, prefixes


def _child_aliases(row: PackageVersion) -> list[tuple[str, PackageVersion]]:
    query = (
        PackageChild.select(PackageChild, PackageVersion)
        .join(PackageVersion, on=PackageChild.child == PackageVersion.id)
        .where(PackageChild.parent == row.id)
    )
    return [(link.alias, link.child) for link in query]


def customizable(org_id: str, name: str, selector: str | None, paths: list[str]) -> dict[str, Any]:
    """Which prop paths may be customized; the closest existing one as suggestion."""
    if not paths:
        raise Invalid("validate_props is required (a list of prop paths)")
    row = get_version(org_id, name, selector)
    exact, prefixes = customizable_paths(row)
    bad = [p for p in paths if p not in exact and p.split(".", 1)[0] not in prefixes]
    context = {"package": row.name, "version": row.version, "suggestion": None}
    if not bad:
        return {
            "statusCode": 200,
            "error": None,
            "message": "props are customizable",
            "details": context,
        }
    close = difflib.get_close_matches(bad[0], sorted(exact | prefixes), n=1, cutoff=0.0)
    context["suggestion"] = close[0] if close else None
    return {
        "statusCode": 400,
        "error": "BAD_REQUEST",
        "message": f"not customizable: {', '.join(bad)[:500]}",
        "details": context,
    }


def changes(org_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST /package-changes: compare the caller's hashes with the published ones."""
    packages = body.get("packages")
    if not isinstance(packages, dict):
        raise Invalid("packages must be an object of package name to [{version, hash}]")
    items = [
        (name, entry)
        for name, entries in packages.items()
        for entry in (entries if isinstance(entries, list) else [None])
    ]
    if len(items) > MAX_CHANGES:
        raise Invalid(f"at most {MAX_CHANGES} versions per request")
    changed, unchanged = [], []
    rows_by_name = {name: visible_versions(org_id, name) for name in packages}
    for name, entry in items:
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) for k in ("version", "hash")
        ):
            raise Invalid(f"packages.{name[:256]}: each entry needs version and hash strings")
        rows = rows_by_name[name]
        row = next((r for r in rows if r.version == entry["version"]), None)
        if row is None and rows:
            row = next((r for r in rows if r.is_latest), None)
        item = records.change_item(name, entry["version"], entry["hash"], row)
        same = row is not None and row.artifact_hash == entry["hash"].lower()
        (unchanged if same else changed).append(item)
    return {"changed": changed, "unchanged": unchanged, "total": len(items)}
