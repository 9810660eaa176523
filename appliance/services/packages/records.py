"""Package records of spec 2.2: info, version item, list item, change item."""

from __future__ import annotations

from typing import Any

from appliance.models import Enablement, PackageDownload, PackageVersion
from appliance.models.db import to_iso


def package_url(base_url: str, row: PackageVersion) -> str:
    """Where the version's download URL is obtained (GET /package/{name}/{version})."""
    return f"{base_url}/api/v1/package/{row.name}/{row.version}"


def _git(row: PackageVersion) -> dict[str, Any]:
    return {
        "git_commit_hash": row.git_commit_hash,
        "git_short_sha": row.git_commit_hash[:7] if row.git_commit_hash else None,
        "git_remote_url": row.git_remote_url,
        "git_branch": row.git_branch,
        "git_subdir_path": row.git_subdir_path,
    }


def package_info(
    row: PackageVersion,
    enablement: Enablement | None,
    base_url: str,
    with_enabled: bool = True,
) -> dict[str, Any]:
    """The package info record; `enabled` is left out where the spec says so."""
    record: dict[str, Any] = {
        "name": row.name,
        "version": row.version,
        "url": package_url(base_url, row),
        "created": to_iso(row.created_at),
        "updated": to_iso(row.updated_at),
        "is_latest": row.is_latest,
        "enabler_email": enablement.enabler_email if enablement else None,
        "verified_at": to_iso(enablement.verified_at) if enablement else None,
        "description": row.description,
        "type": row.type,
        "iac_type": list(row.iac_type),
        "tags": list(row.tags),
        "is_pre_release": row.is_pre_release,
        **_git(row),
        "owner": row.owner,
        "organization": row.organization_id,
    }
    if with_enabled:
        record["enabled"] = enablement is not None
    return record


def version_item(row: PackageVersion, enablement: Enablement | None) -> dict[str, Any]:
    """An item of the versions result."""
    return {
        "version": row.version,
        "is_pre_release": row.is_pre_release,
        "is_latest": row.is_latest,
        "iac_type": list(row.iac_type),
        "tags": list(row.tags),
        "created": to_iso(row.created_at),
        "description": row.description,
        **_git(row),
        "enabled": enablement is not None,
    }


def list_item(
    row: PackageVersion,
    enablement: Enablement | None,
    download: PackageDownload | None,
    base_url: str,
    deployments: int = 0,
) -> dict[str, Any]:
    """An item of the organization package list."""
    return {
        **package_info(row, enablement, base_url),
        "deployments": deployments,
        "active_git_trigger": None,
        "blueprint_metadata": {
            "published_environment": [],
            "downloaded_by": download.downloaded_by if download else None,
            "downloaded_at": to_iso(download.downloaded_at) if download else None,
        },
    }


def change_item(name: str, version: str, hash_: str, row: PackageVersion | None) -> dict[str, Any]:
    """A package change item: the caller's hash against the published one."""
    return {
        "id": row.id if row else None,
        "name": name,
        "version": version,
        "hash": hash_,
        "previous_hash": row.artifact_hash if row else None,
        "git_commit_hash": row.git_commit_hash if row else None,
        "git_short_sha": row.git_commit_hash[:7] if row and row.git_commit_hash else None,
        "git_remote_url": row.git_remote_url if row else None,
        "git_branch": row.git_branch if row else None,
        "git_subdir_path": row.git_subdir_path if row else None,
    }
