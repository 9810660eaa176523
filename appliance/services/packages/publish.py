"""Publishing (POST /package): validate, check the archive, store the blob, insert rows."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from appliance.domain import manifest as manifests
from appliance.domain import semver
from appliance.domain.archives import ArchiveLimits, artifact_hash_of_files, inspect_archive
from appliance.errors import Conflict, Invalid, NotFound, PayloadTooLarge
from appliance.models import Namespace, Package, PackageChild, PackageVersion, User
from appliance.models.db import write_transaction
from appliance.services.context import ServiceContext
from appliance.services.packages.lookup import visible_versions

CHUNK = 1024 * 1024
_HASH = re.compile(r"^[a-fA-F0-9]{64}\Z")
GIT_FIELD_MAX = 1024
EMPTY_ARTIFACT_HASH = artifact_hash_of_files({})


@dataclass(frozen=True)
class SpooledUpload:
    """An upload streamed to a temporary file in the blob store's file system."""

    path: Path
    sha256: str
    size: int

    def discard(self) -> None:
        """Remove the temporary file if it was not adopted into the store."""
        self.path.unlink(missing_ok=True)


@dataclass(frozen=True)
class PublishForm:
    """The fields of the publish form, already read from the request."""

    manifest: bytes
    manifest_filename: str | None = None
    archive: SpooledUpload | None = None
    state: bool = False
    private: bool = True
    artifact_hash: str | None = None
    git_commit_hash: str | None = None
    git_remote_url: str | None = None
    git_branch: str | None = None
    git_subdir_path: str | None = None


def spool_upload(ctx: ServiceContext, stream: BinaryIO, max_bytes: int) -> SpooledUpload:
    """Stream to a temporary file, hashing as it goes; never the whole upload in memory."""
    fd, path = ctx.blobs.temporary_file()
    digest = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise PayloadTooLarge(f"package over the upload limit of {max_bytes} bytes")
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return SpooledUpload(path, digest.hexdigest(), size)


def _check_form(form: PublishForm) -> None:
    if form.artifact_hash is not None and not _HASH.match(form.artifact_hash):
        raise Invalid("artifactHash must be 64 hexadecimal characters")
    for field in ("git_commit_hash", "git_remote_url", "git_branch", "git_subdir_path"):
        value = getattr(form, field)
        if value is not None and len(value) > GIT_FIELD_MAX:
            raise Invalid(f"{field} over {GIT_FIELD_MAX} characters")


def _scope(name: str) -> str | None:
    return name.split("/", 1)[0] if name.startswith("@") else None


def _check_free(org_id: str, name: str, version: str) -> None:
    """Namespace ownership and immutability: 409 before anything is written."""
    scope = _scope(name)
    if scope is not None:
        owner = Namespace.get_or_none(Namespace.scope == scope)
        if owner is not None and owner.organization_id != org_id:
            raise Conflict(f"namespace taken: {scope}")
    package = Package.get_or_none(Package.organization == org_id, Package.name == name)
    if package is None:
        return
    wanted = semver.parse(version)
    for (existing,) in (
        PackageVersion.select(PackageVersion.version)
        .where(PackageVersion.package == package)
        .tuples()
    ):
        if existing == version or semver.parse(existing).compare(wanted) == 0:
            raise Conflict(f"package version already exists: {name}@{existing}")


def _resolve_children(org_id: str, manifest: dict[str, Any]) -> list[tuple[str, PackageVersion]]:
    """(alias, version row) of each registry child; NotFound names the first missing."""
    found = []
    for child in manifest.get("packages") or []:
        if "version" not in child or "source" in child:
            continue
        rows = visible_versions(org_id, child["name"])
        row = next((r for r in rows if r.version == child["version"]), None)
        if row is None:
            raise NotFound(f"child package not found: {child['name']}@{child['version']}")
        found.append((manifests.child_id(child), row))
    return found


def _iac_type(manifest: dict[str, Any], children: list[tuple[str, PackageVersion]]) -> list[str]:
    if manifests.package_type(manifest) == "artifact":
        return [manifest["native"]["type"]]
    types = {t for _, row in children for t in row.iac_type}
    types |= {c["native"]["type"] for c in manifest["packages"] if "native" in c}
    return sorted(types)


def _mark_latest(package: Package) -> None:
    versions = [
        v
        for (v,) in PackageVersion.select(PackageVersion.version)
        .where(PackageVersion.package == package)
        .tuples()
    ]
    newest = semver.latest(versions)
    PackageVersion.update(is_latest=PackageVersion.version == newest).where(
        PackageVersion.package == package
    ).execute()


def _archive_hash(ctx: ServiceContext, form: PublishForm, manifest: dict[str, Any]) -> str:
    registered_artifact = "native" in manifest and "source" not in manifest
    if form.archive is None:
        if registered_artifact:
            raise Invalid("package: the zipped package content is required for an artifact")
        computed = EMPTY_ARTIFACT_HASH
    else:
        limits = ArchiveLimits(max_uncompressed=ctx.settings.limits.package_upload)
        computed = inspect_archive(form.archive.path, limits).artifact_hash
    if form.artifact_hash is not None and form.artifact_hash.lower() != computed:
        raise Invalid(f"artifactHash does not match the package content (computed {computed})")
    return computed


def publish(ctx: ServiceContext, org_id: str, user_pk: int, form: PublishForm) -> PackageVersion:
    """Publish atomically: on any failure no row is left and no new blob is reachable."""
    _check_form(form)
    manifest = manifests.parse_manifest(form.manifest, form.manifest_filename)
    name, version = manifest["name"], manifest["version"]
    _check_free(org_id, name, version)
    artifact_hash = _archive_hash(ctx, form, manifest)
    user = User.get_by_id(user_pk)
    blob = form.archive
    new_blob = False
    try:
        with write_transaction():
            _check_free(org_id, name, version)
            children = _resolve_children(org_id, manifest)
            if blob is not None:
                new_blob = not ctx.blobs.exists(blob.sha256)
                ctx.blobs.adopt(blob.path, blob.sha256)
            row = _insert(ctx, org_id, user, form, manifest, artifact_hash, children)
            ctx.emit(
                "package:published",
                org_id,
                {"name": name, "version": version, "type": row.type, "private": form.private},
                package_name=name,
            )
    except BaseException:
        if new_blob and blob is not None:
            _collect_blob(ctx, blob.sha256)
        raise
    return PackageVersion.get_by_id(row.id)


def _insert(
    ctx: ServiceContext,
    org_id: str,
    user: User,
    form: PublishForm,
    manifest: dict[str, Any],
    artifact_hash: str,
    children: list[tuple[str, PackageVersion]],
) -> PackageVersion:
    now = ctx.now()
    name = manifest["name"]
    scope = _scope(name)
    if scope is not None and Namespace.get_or_none(Namespace.scope == scope) is None:
        Namespace.create(scope=scope, organization=org_id, created_at=now)
    package = Package.get_or_none(Package.organization == org_id, Package.name == name)
    if package is None:
        package = Package.create(
            id=ctx.new_id(), organization=org_id, name=name, scope=scope, created_at=now
        )
    parsed = semver.parse(manifest["version"])
    row = PackageVersion.create(
        id=ctx.new_id(),
        package=package,
        organization=org_id,
        name=name,
        version=manifest["version"],
        major=parsed.major,
        minor=parsed.minor,
        patch=parsed.patch,
        prerelease=parsed.prerelease,
        is_pre_release=parsed.prerelease is not None,
        is_private=form.private,
        type=manifests.package_type(manifest),
        iac_type=_iac_type(manifest, children),
        tags=list(manifest.get("tags") or []),
        description=manifest.get("description"),
        manifest=manifest,
        manifest_format=manifests.manifest_format(form.manifest_filename, form.manifest),
        config=manifests.package_config(manifest, form.git_remote_url),
        blob_sha256=form.archive.sha256 if form.archive else None,
        size=form.archive.size if form.archive else 0,
        artifact_hash=artifact_hash,
        has_state=form.state,
        git_commit_hash=form.git_commit_hash,
        git_remote_url=form.git_remote_url,
        git_branch=form.git_branch,
        git_subdir_path=form.git_subdir_path,
        publisher=user,
        owner=user.email,
        created_at=now,
    )
    for position, (alias, child) in enumerate(children):
        PackageChild.create(parent=row, child=child, alias=alias, position=position)
    _mark_latest(package)
    return row


def _collect_blob(ctx: ServiceContext, sha256: str) -> None:
    """Delete a blob this publish added, unless a row refers to it after all."""
    with write_transaction():
        if not PackageVersion.select().where(PackageVersion.blob_sha256 == sha256).exists():
            ctx.blobs.delete(sha256)
