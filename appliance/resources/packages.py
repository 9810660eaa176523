"""4.2 Packages (registry), 4.12 the organization package list, and the signed blob endpoint."""

from __future__ import annotations

from typing import Any

import falcon

from appliance.domain import manifest as manifests
from appliance.domain.listing import parse_switch
from appliance.errors import Invalid, NotFound, PayloadTooLarge, UnsupportedMediaType
from appliance.http.auth import principal, public, require, require_user_or_runtime
from appliance.http.params import list_query, read_object, switch
from appliance.services import packages
from appliance.services.container import Services
from appliance.services.packages import records

_TEXT_FIELDS = {
    "state": "state",
    "private": "private",
    "artifactHash": "artifact_hash",
    "gitCommitHash": "git_commit_hash",
    "gitRemoteUrl": "git_remote_url",
    "gitBranch": "git_branch",
    "gitSubdirPath": "git_subdir_path",
}
_TEXT_MAX = 4096


class _Resource:
    def __init__(self, services: Services) -> None:
        self.services = services

    @property
    def ctx(self) -> Any:
        return self.services.ctx


def _required(req: falcon.Request, name: str) -> str:
    value = req.get_param(name)
    if not value:
        raise Invalid(f"{name} is required")
    return value


def _read_text(part: Any, name: str) -> str:
    raw = part.stream.read(_TEXT_MAX + 1)
    if len(raw) > _TEXT_MAX:
        raise Invalid(f"form field {name} over {_TEXT_MAX} bytes")
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise Invalid(f"form field {name} is not UTF-8 text") from None


def _form_parts(req: falcon.Request, ctx: Any) -> tuple[dict[str, Any], Any]:
    """Read the multipart form: the package streamed to disk, the rest into memory."""
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if media_type != "multipart/form-data":
        raise UnsupportedMediaType("publish expects multipart/form-data")
    limit = ctx.settings.limits.package_upload
    if req.content_length is not None and req.content_length > limit + manifests.MAX_MANIFEST_BYTES:
        raise PayloadTooLarge(f"package over the upload limit of {limit} bytes")
    fields: dict[str, Any] = {}
    archive = None
    try:
        for part in req.get_media():
            name = part.name
            if name in fields or (name == "package" and archive is not None):
                raise Invalid(f"form field {name} given twice")
            if name == "package":
                archive = packages.spool_upload(ctx, part.stream, limit)
            elif name == "manifest":
                content = part.stream.read(manifests.MAX_MANIFEST_BYTES + 1)
                fields["manifest"] = content
                fields["manifest_filename"] = part.filename
            elif name in _TEXT_FIELDS:
                fields[name] = _read_text(part, name)
            else:
                raise Invalid(f"unknown form field: {str(name)[:80]}")
    except falcon.MediaMalformedError as exc:
        if archive is not None:
            archive.discard()
        raise Invalid(f"malformed multipart body: {exc.description or exc.title}") from None
    except BaseException:
        if archive is not None:
            archive.discard()
        raise
    return fields, archive


def _publish_form(fields: dict[str, Any], archive: Any) -> packages.PublishForm:
    if "manifest" not in fields:
        raise Invalid("form field manifest is required")
    options = {_TEXT_FIELDS[k]: (v or None) for k, v in fields.items() if k in _TEXT_FIELDS}
    for flag, default in (("state", False), ("private", True)):
        options[flag] = parse_switch({flag: options.get(flag) or ""}, flag, default)
    return packages.PublishForm(
        manifest=fields["manifest"],
        manifest_filename=fields.get("manifest_filename"),
        archive=archive,
        **options,
    )


class PackageRecord(_Resource):
    @require("read:package")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The package detail: info, config and children of the selected version."""
        resp.media = packages.detail(
            self.ctx,
            principal(req).organization_id,
            _required(req, "name"),
            req.get_param("version"),
        )

    @require("create:package")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Publish a package (multipart/form-data: package, manifest and metadata fields)."""
        fields, archive = _form_parts(req, self.ctx)
        who = principal(req)
        try:
            row = packages.publish(
                self.ctx, who.organization_id, who.user_pk, _publish_form(fields, archive)
            )
        finally:
            if archive is not None:
                archive.discard()
        resp.media = records.package_info(
            row, None, self.ctx.settings.public_base_url, with_enabled=False
        )


class PackageVersions(_Resource):
    @require("read:package")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Every version of a package, newest first."""
        org_id = principal(req).organization_id
        resp.media = packages.versions(self.ctx, org_id, _required(req, "package"))


class PackageSearch(_Resource):
    @require("read:package")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Search packages by name (leading and trailing `*` wildcards)."""
        body = read_object(req, required=False)
        resp.media = packages.search(self.ctx, principal(req).organization_id, body)


class PackageStatus(_Resource):
    @require("read:package")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The versions of a package enabled for the organization."""
        resp.media = packages.status(
            principal(req).organization_id,
            _required(req, "package"),
            req.get_param("version"),
            switch(req, "include_pre_release", False),
        )


class PackageCustomizable(_Resource):
    @require("read:package")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Check that prop paths may be customized; suggests the closest existing one."""
        resp.media = packages.customizable(
            principal(req).organization_id,
            _required(req, "package"),
            req.get_param("version"),
            req.get_param_as_list("validate_props", delimiter=",") or [],
        )


class PackageEnablement(_Resource):
    """Enable or disable versions; one class, two routes."""

    def __init__(self, services: Services, enabled: bool) -> None:
        super().__init__(services)
        self.enabled = enabled

    @require("update:package")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Enable or disable one version or several for the organization."""
        who = principal(req)
        resp.media = packages.set_enabled(
            self.ctx, who.organization_id, who.user_pk, read_object(req), self.enabled
        )


class PackageDownload(_Resource):
    @require_user_or_runtime("read:package")
    def on_get(self, req: falcon.Request, resp: falcon.Response, first: str, rest: str) -> None:
        """A pre-signed download URL of a version's archive (users and runtimes)."""
        name, _, version = f"{first}/{rest}".rpartition("/")
        if not name or not version:
            raise NotFound("package not found: give /package/{name}/{version}")
        who = principal(req)
        url = packages.download_url(self.ctx, who.organization_id, name, version, who.user_pk)
        resp.media = {"url": url}


class PackageList(_Resource):
    @require("read:package")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The packages the organization publishes or has enabled."""
        resp.media = packages.list_packages(
            self.ctx,
            principal(req).organization_id,
            list_query(req, packages.ORG_LIST),
            include_deployed=switch(req, "all", True),
            latest_only=switch(req, "latest", False),
            include_pre_release=switch(req, "include_pre_release", False),
        )


class PackageChanges(_Resource):
    @require("read:package")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Which of the given versions' artifact hashes differ from the published ones."""
        resp.media = packages.changes(principal(req).organization_id, read_object(req))


class Blob(_Resource):
    @public
    def on_get(self, req: falcon.Request, resp: falcon.Response, sha256: str) -> None:
        """A package archive behind a signed URL (extension; no bearer token)."""
        expires = req.get_param("expires") or ""
        signature = req.get_param("signature") or ""
        if not packages.signature_valid(self.ctx, sha256, expires, signature):
            raise falcon.HTTPForbidden(description="download link expired or invalid")
        handle = self.ctx.blobs.open(sha256)
        resp.content_type = "application/zip"
        resp.set_header("Content-Disposition", f'attachment; filename="{sha256}.zip"')
        resp.set_stream(handle, self.ctx.blobs.path_for(sha256).stat().st_size)


class ManifestSchema(_Resource):
    @public
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The manifest JSON Schema, version 1 (extension)."""
        resp.media = manifests.schema()
