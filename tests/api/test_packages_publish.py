"""POST /api/v1/package and the download round trip (spec 4.2, DESIGN.md 5)."""

from __future__ import annotations

import zipfile
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from appliance.domain.archives import artifact_hash_of_files
from appliance.errors import NotFound
from appliance.models import Event, Package, PackageVersion
from appliance.services import packages
from tests.api.packages_support import (
    MODULES,
    artifact_manifest,
    dir_files,
    publish,
    zip_files,
)
from tests.conftest import assert_error

INFO_FIELDS = {
    "name", "version", "url", "created", "updated", "is_latest", "enabler_email",
    "verified_at", "description", "type", "iac_type", "tags", "is_pre_release",
    "git_commit_hash", "git_short_sha", "git_remote_url", "git_branch", "git_subdir_path",
    "owner", "organization",
}  # fmt: skip


def local(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path


def blob_files(world) -> list[Path]:
    return [p for p in (world.data_dir / "blobs" / "sha256").rglob("*") if p.is_file()]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_fixture_module_publishes_with_its_iac_type(world, module: str) -> None:
    root, iac = MODULES[module]
    files = dir_files(root)
    result = publish(
        world,
        world.admin,
        artifact_manifest(f"@fixtures/{module}", iac, description=f"{module} module"),
        zip_files(files),
        artifactHash=artifact_hash_of_files(files),
        gitCommitHash="0123456789abcdef0123456789abcdef01234567",
        gitRemoteUrl="https://git.example/fixtures.git",
        gitBranch="main",
        gitSubdirPath=module,
    )
    assert result.status_code == 200, result.text
    info = result.json
    assert set(info) == INFO_FIELDS  # no `enabled` in the publish result
    assert info["iac_type"] == [iac] and info["type"] == "artifact"
    assert info["is_latest"] is True and info["is_pre_release"] is False
    assert info["git_short_sha"] == "0123456" and info["git_branch"] == "main"
    assert info["organization"] == world.admin.org_id and info["owner"] == "admin@localhost"
    assert info["enabler_email"] is None and info["updated"] is None


def test_blueprint_of_two_fixtures_shows_config_and_children(world) -> None:
    for module in ("vpc", "sg"):
        root, iac = MODULES[module]
        inputs = {"name": {"type": "string", "default": module}}
        manifest = artifact_manifest(f"@acme/{module}", iac, inputs=inputs)
        assert publish(world, world.admin, manifest, zip_files(dir_files(root))).status_code == 200
    blueprint = {
        "name": "@acme/network",
        "version": "1.0.0",
        "inputs": {"cidr": {"type": "string", "default": "10.0.0.0/16"}},
        "packages": [
            {
                "name": "@acme/vpc",
                "id": "vpc",
                "version": "1.0.0",
                "props": {"cidr": "inputs.cidr"},
            },
            {
                "name": "@acme/sg",
                "id": "sg",
                "version": "1.0.0",
                "props": {"vpc_id": "data.vpc.vpc_id", "name": "web"},
            },
        ],
        "outputs": {"vpc_id": {"value": "data.vpc.vpc_id"}},
    }
    published = publish(world, world.admin, blueprint, archive=None)
    assert published.status_code == 200, published.text
    assert published.json["type"] == "blueprint" and published.json["iac_type"] == ["terraform"]
    detail = world.get("/api/v1/package", world.admin, params={"name": "@acme/network"}).json
    assert detail["package_info"]["enabled"] is False
    config = detail["config"]
    props = {c["id"]: c["props"] for c in config["packages"]}
    assert props["vpc"]["cidr"]["value"] == 'Props.cidr ?? "10.0.0.0/16"'
    assert props["sg"]["vpc_id"]["value"] == "Data.vpc.vpc_id"
    assert props["sg"]["name"]["value"] == '"web"'
    assert config["props"]["cidr"]["default"] == "10.0.0.0/16"
    assert config["manifest_version"] == 1 and config["state"] == "managed"
    assert [c["name"] for c in detail["package_children"]] == ["@acme/vpc", "@acme/sg"]
    assert all(set(c) == INFO_FIELDS | {"enabled"} for c in detail["package_children"])


def test_download_returns_the_exact_bytes_and_refuses_altered_or_expired(world) -> None:
    archive = zip_files({"main.tf": b"# one\n", "vars.tf": b"# two\n"})
    assert publish(world, world.admin, artifact_manifest("dl"), archive).status_code == 200
    url = world.get("/api/v1/package/dl/1.0.0", world.admin).json["url"]
    assert url.startswith(world.ctx.settings.public_base_url + "/api/v1/blobs/")
    fetched = world.get(local(url))  # no credentials needed
    assert fetched.status_code == 200 and fetched.content == archive
    altered = local(url).replace("expires=", "expires=1")
    assert_error(world.get(altered), 403, "expired or invalid")
    sha = urlsplit(url).path.rsplit("/", 1)[1]
    other = local(url).replace(sha, "0" * 64)
    assert_error(world.get(other), 403)
    assert_error(world.get(local(url).split("&signature")[0]), 403)


@pytest.fixture
def settings_overrides(request):
    clock = getattr(request, "param", None)
    return {"clock": clock} if clock else {}


class Clock:
    def __init__(self) -> None:
        from datetime import UTC, datetime

        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self):
        return self.now


CLOCK = Clock()


@pytest.mark.parametrize("settings_overrides", [CLOCK], indirect=True)
def test_signed_url_expires_after_15_minutes(world) -> None:
    assert publish(world, world.admin, artifact_manifest("exp")).status_code == 200
    url = local(world.get("/api/v1/package/exp/1.0.0", world.admin).json["url"])
    CLOCK.now += timedelta(minutes=14)
    assert world.get(url).status_code == 200
    CLOCK.now += timedelta(minutes=2)
    assert_error(world.get(url), 403, "expired")


def test_runtime_may_fetch_a_download_url(world) -> None:
    assert publish(world, world.admin, artifact_manifest("rt")).status_code == 200
    username, password = world.runtime(world.admin)
    result = world.get(
        "/api/v1/package/rt/latest", headers={"Authorization": f"Basic {username}:{password}"}
    )
    assert result.status_code == 200 and "/api/v1/blobs/" in result.json["url"]


@pytest.mark.parametrize(
    ("entries", "fragment"),
    [
        ([("../../outside.txt", b"x")], "zip slip"),
        ([("/tmp/absolute.txt", b"x")], "absolute"),
        ([("bomb.bin", b"\0" * (4 * 1024 * 1024))], "zip bomb"),
    ],
)
def test_malicious_archive_refused_and_nothing_written(world, tmp_path, entries, fragment) -> None:
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries:
            archive.writestr(name, content)
    before = set(world.data_dir.parent.rglob("*"))
    result = publish(world, world.admin, artifact_manifest("evil"), path.read_bytes())
    assert_error(result, 400, fragment)
    assert set(world.data_dir.parent.rglob("*")) - before <= {
        p for p in world.data_dir.rglob("*") if "wal" in p.name or "shm" in p.name
    }
    assert PackageVersion.select().count() == 0 and blob_files(world) == []
    assert list((world.data_dir / "blobs" / "tmp").iterdir()) == []


def test_symlink_archive_refused(world) -> None:
    info = zipfile.ZipInfo("link")
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(info, "/etc/passwd")
    assert_error(
        publish(world, world.admin, artifact_manifest("s"), buffer.getvalue()), 400, "symlink"
    )


def test_same_version_twice_is_409_and_first_content_untouched(world) -> None:
    first = zip_files({"main.tf": b"first"})
    assert publish(world, world.admin, artifact_manifest("imm"), first).status_code == 200
    again = publish(world, world.admin, artifact_manifest("imm"), zip_files({"main.tf": b"second"}))
    assert_error(again, 409, "package version already exists")
    build = publish(world, world.admin, artifact_manifest("imm", version="1.0.0+other"))
    assert_error(build, 409, "already exists")
    url = world.get("/api/v1/package/imm/1.0.0", world.admin).json["url"]
    assert world.get(local(url)).content == first
    assert len(blob_files(world)) == 1


def test_taken_scope_is_409_for_another_organization(world) -> None:
    assert publish(world, world.admin, artifact_manifest("@acme/vpc")).status_code == 200
    other = world.new_org("Other")
    assert_error(publish(world, other, artifact_manifest("@acme/net")), 409, "namespace taken")
    assert publish(world, other, artifact_manifest("vpc")).status_code == 200  # own namespace


def test_private_package_invisible_to_another_organization(world) -> None:
    assert publish(world, world.admin, artifact_manifest("@acme/secret")).status_code == 200
    assert (
        publish(world, world.admin, artifact_manifest("@acme/open"), private="false").status_code
        == 200
    )
    other = world.new_org("Other")
    assert_error(world.get("/api/v1/package", other, params={"name": "@acme/secret"}), 404)
    assert_error(world.get("/api/v1/package/@acme/secret/1.0.0", other), 404)
    found = world.post("/api/v1/package/search", other, json={"query": "@acme/*"}).json
    assert [p["name"] for p in found["packages"]] == ["@acme/open"] and found["total"] == 1
    enabled = world.post("/api/v1/package/enable", other, json={"package": "@acme/open"})
    assert enabled.json == {"enabled": True, "versions": ["1.0.0"]}
    assert packages.resolve_enabled_version(other.org_id, "@acme/open", "latest").version == "1.0.0"


def test_disabled_version_cannot_be_resolved_for_install(world) -> None:
    assert publish(world, world.admin, artifact_manifest("inst")).status_code == 200
    with pytest.raises(NotFound, match="package not found or not enabled"):
        packages.resolve_enabled_version(world.admin.org_id, "inst", "1.0.0")
    world.post("/api/v1/package/enable", world.admin, json={"package": "inst", "version": "1.0.0"})
    assert packages.resolve_enabled_version(world.admin.org_id, "inst", "^1.0.0").version == "1.0.0"
    result = world.post(
        "/api/v1/package/disable", world.admin, json={"package": "inst", "version": ["1.0.0"]}
    )
    assert result.json == {"enabled": False, "versions": ["1.0.0"]}
    with pytest.raises(NotFound, match="not enabled"):
        packages.resolve_enabled_version(world.admin.org_id, "inst", "1.0.0")
    kinds = [e.type for e in Event.select().where(Event.package_name == "inst").order_by(Event.seq)]
    assert kinds == ["package:published", "package:enabled", "package:disabled"]


def test_missing_child_is_404_and_leaves_nothing(world) -> None:
    blueprint = {
        "name": "bp",
        "version": "1.0.0",
        "packages": [{"name": "ghost", "version": "1.0.0"}],
    }
    assert_error(
        publish(world, world.admin, blueprint), 404, "child package not found: ghost@1.0.0"
    )
    assert Package.select().count() == 0 and blob_files(world) == []
    assert Event.select().where(Event.type == "package:published").count() == 0


def test_bad_publish_input(world) -> None:
    assert_error(publish(world, world.admin, b"{", archive=None), 400, "not valid JSON")
    bad = {"name": "Bad", "version": "1.0", "native": {"type": "x"}}
    body = assert_error(publish(world, world.admin, bad), 400, "invalid manifest")
    assert {d["path"] for d in body["details"]} == {"name", "version", "native.type"}
    wrong = publish(world, world.admin, artifact_manifest("h"), artifactHash="a" * 64)
    assert_error(wrong, 400, "artifactHash does not match")
    assert_error(publish(world, world.admin, artifact_manifest("h"), artifactHash="xyz"), 400, "64")
    assert_error(publish(world, world.admin, artifact_manifest("h"), archive=None), 400, "required")
    assert_error(
        publish(world, world.admin, artifact_manifest("h"), colour="red"), 400, "unknown form field"
    )
    not_multipart = world.post("/api/v1/package", world.admin, json={"manifest": "x"})
    assert_error(not_multipart, 415)
    assert PackageVersion.select().count() == 0


def test_yaml_manifest_publishes(world) -> None:
    text = b"name: yam\nversion: 2.0.0-rc.1\nnative:\n  type: helm\ntags: [a, b]\n"
    result = publish(world, world.admin, text, manifest_name="manifest.yaml")
    assert result.status_code == 200, result.text
    assert result.json["is_pre_release"] is True and result.json["tags"] == ["a", "b"]


def test_publish_permissions(world) -> None:
    assert_error(publish(world, None, artifact_manifest("p")), 401)
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert_error(publish(world, viewer, artifact_manifest("p")), 403, "create:package")
