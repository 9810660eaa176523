"""Signed download URLs for package archives and their verification (DESIGN.md 5)."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta

from peewee import EXCLUDED

from appliance import masterkey
from appliance.errors import NotFound
from appliance.models import PackageDownload, User
from appliance.models.db import write_transaction
from appliance.services.context import ServiceContext
from appliance.services.packages.lookup import get_version

URL_LIFETIME = timedelta(minutes=15)
_PURPOSE = "package-download-url"


def _signature(ctx: ServiceContext, sha256: str, expires: int) -> str:
    key = masterkey.derive(ctx.master_key, _PURPOSE)
    return hmac.new(key, f"{sha256}:{expires}".encode(), hashlib.sha256).hexdigest()


def signed_blob_url(ctx: ServiceContext, sha256: str) -> str:
    """A URL to GET /api/v1/blobs/{sha256}, valid for 15 minutes, no bearer token needed."""
    expires = int((ctx.now() + URL_LIFETIME).timestamp())
    signature = _signature(ctx, sha256, expires)
    base = ctx.settings.public_base_url
    return f"{base}/api/v1/blobs/{sha256}?expires={expires}&signature={signature}"


def signature_valid(ctx: ServiceContext, sha256: str, expires: str, signature: str) -> bool:
    """Is this an unaltered, unexpired signed URL?"""
    if not expires.isdigit() or len(expires) > 12 or len(signature) != 64:
        return False
    if int(expires) < ctx.now().timestamp():
        return False
    return hmac.compare_digest(_signature(ctx, sha256, int(expires)), signature.lower())


def download_url(
    ctx: ServiceContext, org_id: str, name: str, version: str, user_pk: int | None
) -> str:
    """The signed URL of a version's archive; records who in the organization fetched it."""
    row = get_version(org_id, name, version)
    if row.blob_sha256 is None:
        raise NotFound(f"package has no archive to download: {row.name}@{row.version}")
    if user_pk is not None:  # a user fetching it; runtimes are not counted as downloads
        downloaded_by = User.get_by_id(user_pk).email
        with write_transaction():
            PackageDownload.insert(
                organization=org_id,
                version=row.id,
                downloaded_by=downloaded_by,
                downloaded_at=ctx.now(),
                count=1,
            ).on_conflict(
                conflict_target=[PackageDownload.organization, PackageDownload.version],
                update={
                    PackageDownload.downloaded_by: EXCLUDED.downloaded_by,
                    PackageDownload.downloaded_at: EXCLUDED.downloaded_at,
                    PackageDownload.count: PackageDownload.count + 1,
                },
            ).execute()
    return signed_blob_url(ctx, row.blob_sha256)
