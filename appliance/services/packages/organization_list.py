"""GET /packages (4.12): the versions an organization publishes or has enabled."""

from __future__ import annotations

from typing import Any

from peewee import JOIN, Case

from appliance.domain.listing import ListQuery, ListSpec
from appliance.models import Enablement, Package, PackageDownload, PackageVersion
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
    # Deployments arrive with the deployments issue; until then nothing is deployed,
    # so include_deployed=False (only not-deployed packages) filters nothing out.
    del include_deployed
    total, rows = paginate(query, lq, _COLUMNS)
    base = ctx.settings.public_base_url
    items = [
        records.list_item(row, _present(row, "enablement"), _present(row, "download"), base)
        for row in rows
    ]
    published = Package.select().where(Package.organization == org_id).count()
    return {"packages": items, "total": total, "published": published, "drafts": 0}


def _present(row: PackageVersion, attr: str) -> Any:
    joined = getattr(row, attr, None)
    return joined if joined is not None and joined.id is not None else None
