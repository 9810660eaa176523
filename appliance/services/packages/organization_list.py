"""GET /packages (4.12): the versions an organization publishes or has enabled."""

from __future__ import annotations

from typing import Any

from peewee import JOIN, Case, fn

from appliance.domain.listing import ListQuery, ListSpec
from appliance.models import Deployment, Enablement, Package, PackageDownload, PackageVersion
from appliance.services.context import ServiceContext
from appliance.services.listing import Columns, as_bool, paginate
from appliance.services.packages import records
from appliance.services.packages.lookup import visible_to

ORG_LIST = ListSpec(
    sorts=("blueprint_metadata.downloaded_at", "name", "created", "version"),
    default_sort="blueprint_metadata.downloaded_at",
    filters=("type", "enabled", "is_pre_release", "owner", "name"),
)
_ENABLED = Case(None, [(Enablement.id.is_null(False), 1)], 0)


def _bit(value: str) -> int:
    return 1 if as_bool(value) else 0


_COLUMNS = Columns(
    sorts={
        "blueprint_metadata.downloaded_at": PackageDownload.downloaded_at,
        "name": PackageVersion.name,
        "created": PackageVersion.created_at,
        "version": PackageVersion.major * 1_000_000_000_000
        + PackageVersion.minor * 1_000_000
        + PackageVersion.patch,
    },
    tiebreak=PackageVersion.id,
    search=PackageVersion.name,
    filters={
        "type": (PackageVersion.type, str),
        "enabled": (_ENABLED, _bit),
        "is_pre_release": (PackageVersion.is_pre_release, as_bool),
        "owner": (PackageVersion.owner, str),
        "name": (PackageVersion.name, str),
    },
)


def list_packages(
    ctx: ServiceContext,
    org_id: str,
    lq: ListQuery,
    include_deployed: bool = True,
    latest_only: bool = False,
    include_pre_release: bool = False,
) -> dict[str, Any]:
    """The organization's packages: published by it or enabled for it, visible to it."""
    enabled_on = (Enablement.version == PackageVersion.id) & (Enablement.organization == org_id)
    download_on = (PackageDownload.version == PackageVersion.id) & (
        PackageDownload.organization == org_id
    )
    query = (
        PackageVersion.select(PackageVersion, Enablement, PackageDownload)
        .join(Enablement, JOIN.LEFT_OUTER, on=enabled_on, attr="enablement")
        .switch(PackageVersion)
        .join(PackageDownload, JOIN.LEFT_OUTER, on=download_on, attr="download")
        .where(
            visible_to(org_id),
            (PackageVersion.organization == org_id) | Enablement.id.is_null(False),
        )
    )
    if latest_only:
        query = query.where(PackageVersion.is_latest == True)  # noqa: E712
    if not include_pre_release:
        query = query.where(PackageVersion.is_pre_release == False)  # noqa: E712
    if not include_deployed:
        query = query.where(PackageVersion.id.not_in(_deployed(org_id)))
    total, rows = paginate(query, lq, _COLUMNS)
    counts = dict(
        _deployed(org_id, [row.id for row in rows])
        .select(Deployment.package_version, fn.COUNT(Deployment.id))
        .group_by(Deployment.package_version)
        .tuples()
    )
    base = ctx.settings.public_base_url
    items = [
        records.list_item(
            row,
            _present(row, "enablement"),
            _present(row, "download"),
            base,
            counts.get(row.id, 0),
        )
        for row in rows
    ]
    published = Package.select().where(Package.organization == org_id).count()
    return {"packages": items, "total": total, "published": published, "drafts": 0}


def _deployed(org_id: str, version_ids: list[str] | None = None) -> Any:
    """Package versions of the organization's live deployments (latest, not archived)."""
    query = Deployment.select(Deployment.package_version).where(
        Deployment.organization == org_id,
        Deployment.is_latest == True,  # noqa: E712
        Deployment.is_archived == False,  # noqa: E712
        Deployment.package_version.is_null(False),
    )
    if version_ids is not None:
        query = query.where(Deployment.package_version.in_(version_ids))
    return query


def _present(row: PackageVersion, attr: str) -> Any:
    joined = getattr(row, attr, None)
    return joined if joined is not None and joined.id is not None else None
