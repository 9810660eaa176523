"""The read and enablement endpoints of spec 4.2 and GET /packages (4.12)."""

from __future__ import annotations

import pytest

from tests.api.packages_support import artifact_manifest, publish
from tests.conftest import assert_error

VERSION_FIELDS = {
    "version", "is_pre_release", "is_latest", "iac_type", "tags", "created", "description",
    "git_commit_hash", "git_short_sha", "git_remote_url", "git_branch", "git_subdir_path",
    "enabled",
}  # fmt: skip

# (method, path, params or json, permission)
ENDPOINTS = [
    ("get", "/api/v1/package", {"params": {"name": "vpc"}}, "read:package"),
    ("get", "/api/v1/package/versions", {"params": {"package": "vpc"}}, "read:package"),
    ("post", "/api/v1/package/search", {"json": {"query": "vpc"}}, "read:package"),
    ("get", "/api/v1/package/status", {"params": {"package": "vpc"}}, "read:package"),
    (
        "get",
        "/api/v1/package/validation/customizable",
        {"params": {"package": "vpc", "validate_props": "cidr"}},
        "read:package",
    ),
    ("post", "/api/v1/package/enable", {"json": {"package": "vpc"}}, "update:package"),
    ("post", "/api/v1/package/disable", {"json": {"package": "vpc"}}, "update:package"),
    ("get", "/api/v1/package/vpc/1.0.0", {}, "read:package"),
    ("get", "/api/v1/packages", {}, "read:package"),
    (
        "post",
        "/api/v1/package-changes",
        {"json": {"packages": {"vpc": [{"version": "1.0.0", "hash": "0" * 64}]}}},
        "read:package",
    ),
]
# Every fixed role holds read:package; a Viewer lacks update:package.
NEEDS_UPDATE = [e for e in ENDPOINTS if e[3] == "update:package"]


@pytest.fixture
def vpc(world):
    manifest = artifact_manifest(
        "vpc",
        description="network",
        tags=["aws"],
        inputs={"cidr": {"type": "string", "default": "10.0.0.0/16"}, "extra": {"type": "map"}},
    )
    assert publish(world, world.admin, manifest).status_code == 200
    for version in ("1.1.0", "2.0.0-rc.1"):
        assert publish(world, world.admin, {**manifest, "version": version}).status_code == 200
    return world


def call(world, method, path, caller, kw):
    return getattr(world, method)(path, caller, **kw)


@pytest.mark.parametrize(("method", "path", "kw", "permission"), ENDPOINTS)
def test_needs_credentials(vpc, method, path, kw, permission) -> None:
    assert_error(call(vpc, method, path, None, kw), 401)


@pytest.mark.parametrize(("method", "path", "kw", "permission"), NEEDS_UPDATE)
def test_needs_the_permission(vpc, method, path, kw, permission) -> None:
    member = vpc.member(vpc.admin, "v@x.example", "Viewer")
    assert_error(call(vpc, method, path, member, kw), 403, permission)
    assert vpc.get("/api/v1/package/status", member, params={"package": "vpc"}).json == []


@pytest.mark.parametrize(("method", "path", "kw", "permission"), ENDPOINTS)
def test_private_package_of_another_org_is_not_found(vpc, method, path, kw, permission) -> None:
    other = vpc.new_org("Other")
    result = call(vpc, method, path, other, kw)
    if path == "/api/v1/package/search":
        assert result.json["total"] == 0
    elif path == "/api/v1/packages":
        assert result.json["total"] == 0
    elif path == "/api/v1/package-changes":
        assert result.json["changed"][0]["previous_hash"] is None
    else:
        assert_error(result, 404, "not found")


def test_detail_and_versions(vpc) -> None:
    detail = vpc.get("/api/v1/package", vpc.admin, params={"name": "vpc"}).json
    assert detail["package_info"]["version"] == "1.1.0" and detail["package_info"]["is_latest"]
    assert detail["package_children"] == []
    exact = vpc.get("/api/v1/package", vpc.admin, params={"name": "vpc", "version": "~1.0"})
    assert exact.json["package_info"]["version"] == "1.0.0"
    assert exact.json["package_info"]["is_latest"] is False
    versions = vpc.get("/api/v1/package/versions", vpc.admin, params={"package": "vpc"}).json
    assert "enabled" not in versions["package_info"]
    assert [v["version"] for v in versions["versions"]] == ["2.0.0-rc.1", "1.1.0", "1.0.0"]
    assert all(set(v) == VERSION_FIELDS for v in versions["versions"])
    assert [v["is_pre_release"] for v in versions["versions"]] == [True, False, False]
    assert_error(vpc.get("/api/v1/package/versions", vpc.admin), 400, "package is required")
    assert_error(
        vpc.get("/api/v1/package", vpc.admin, params={"name": "vpc", "version": "^x"}), 400
    )
    missing = vpc.get("/api/v1/package", vpc.admin, params={"name": "vpc", "version": "9.0.0"})
    assert_error(missing, 404, "package version not found")


def test_enable_disable_and_status(vpc) -> None:
    both = vpc.post(
        "/api/v1/package/enable", vpc.admin, json={"package": "vpc", "version": ["1.0.0", "1.1.0"]}
    )
    assert both.json == {"enabled": True, "versions": ["1.0.0", "1.1.0"]}
    vpc.post("/api/v1/package/enable", vpc.admin, json={"package": "vpc", "version": "2.0.0-rc.1"})
    status = vpc.get("/api/v1/package/status", vpc.admin, params={"package": "vpc"}).json
    assert [s["version"] for s in status] == ["1.1.0", "1.0.0"]
    assert set(status[0]) == {"name", "version", "is_pre_release", "created", "enabler"}
    assert status[0]["enabler"] == "admin@localhost"
    with_pre = vpc.get(
        "/api/v1/package/status",
        vpc.admin,
        params={"package": "vpc", "include_pre_release": "true"},
    ).json
    assert [s["version"] for s in with_pre] == ["2.0.0-rc.1", "1.1.0", "1.0.0"]
    ranged = vpc.get(
        "/api/v1/package/status", vpc.admin, params={"package": "vpc", "version": "~1.0"}
    )
    assert [s["version"] for s in ranged.json] == ["1.0.0"]
    off = vpc.post(
        "/api/v1/package/disable", vpc.admin, json={"package": "vpc", "version": "1.0.0"}
    )
    assert off.json == {"enabled": False, "versions": ["1.0.0"]}
    status = vpc.get("/api/v1/package/status", vpc.admin, params={"package": "vpc"}).json
    assert [s["version"] for s in status] == ["1.1.0"]
    bad = vpc.post("/api/v1/package/enable", vpc.admin, json={"package": "vpc", "version": 3})
    assert_error(bad, 400, "version")
    assert_error(vpc.post("/api/v1/package/enable", vpc.admin, json={}), 400, "package is required")
    missing = vpc.post(
        "/api/v1/package/enable", vpc.admin, json={"package": "vpc", "version": "7.0.0"}
    )
    assert_error(missing, 404)


def test_search(vpc) -> None:
    for name in ("vpc-peering", "@net/vpc", "subnet"):
        assert publish(vpc, vpc.admin, artifact_manifest(name)).status_code == 200

    def names(body):
        result = vpc.post("/api/v1/package/search", vpc.admin, json=body).json
        return [p["name"] for p in result["packages"]], result["results"], result["total"]

    assert names({"query": "vpc*"}) == (["vpc", "vpc-peering"], 2, 2)
    assert names({"query": "*vpc"}) == (["@net/vpc", "vpc"], 2, 2)
    assert names({"query": "net"}) == (["@net/vpc", "subnet"], 2, 2)
    assert names({"order": "DESC", "limit": 1, "offset": 1}) == (["vpc"], 1, 4)
    first = vpc.post("/api/v1/package/search", vpc.admin, json={"query": "vpc"}).json["packages"]
    own = next(p for p in first if p["name"] == "vpc")
    assert own["version"] == "1.1.0" and own["enabled"] is False
    assert_error(vpc.post("/api/v1/package/search", vpc.admin, json={"sort": "size"}), 400, "name")
    assert_error(vpc.post("/api/v1/package/search", vpc.admin, json={"limit": 0}), 400)


def test_customizable(vpc) -> None:
    def check(*paths):
        params = {"package": "vpc", "validate_props": ",".join(paths)}
        result = vpc.get("/api/v1/package/validation/customizable", vpc.admin, params=params)
        assert result.status_code == 200
        return result.json

    ok = check("cidr", "extra.key")
    assert ok["statusCode"] == 200 and ok["details"]["suggestion"] is None
    assert ok["details"]["package"] == "vpc" and ok["details"]["version"] == "1.1.0"
    bad = check("cidrr")
    assert bad["statusCode"] == 400 and bad["details"]["suggestion"] == "cidr"
    assert "cidrr" in bad["message"]
    missing = vpc.get(
        "/api/v1/package/validation/customizable", vpc.admin, params={"package": "vpc"}
    )
    assert_error(missing, 400, "validate_props")


def test_organization_package_list(vpc) -> None:
    vpc.post("/api/v1/package/enable", vpc.admin, json={"package": "vpc", "version": "1.0.0"})
    vpc.get("/api/v1/package/vpc/1.0.0", vpc.admin)
    listed = vpc.get("/api/v1/packages", vpc.admin).json
    assert listed["total"] == 2 and listed["published"] == 1 and listed["drafts"] == 0
    first = listed["packages"][0]
    assert first["version"] == "1.0.0" and first["enabled"] is True  # last downloaded first
    assert first["blueprint_metadata"]["downloaded_by"] == "admin@localhost"
    assert first["deployments"] == 0 and first["active_git_trigger"] is None
    latest = vpc.get("/api/v1/packages", vpc.admin, params={"latest": "true"}).json
    assert [p["version"] for p in latest["packages"]] == ["1.1.0"]
    pre = vpc.get("/api/v1/packages", vpc.admin, params={"include_pre_release": "1"}).json
    assert pre["total"] == 3
    enabled = vpc.get("/api/v1/packages", vpc.admin, params={"filter": "[enabled=true]"}).json
    assert [p["version"] for p in enabled["packages"]] == ["1.0.0"]
    by_version = vpc.get("/api/v1/packages", vpc.admin, params={"sort": "version", "order": "asc"})
    assert [p["version"] for p in by_version.json["packages"]] == ["1.0.0", "1.1.0"]
    assert vpc.get("/api/v1/packages", vpc.admin, params={"search": "zzz"}).json["total"] == 0
    assert_error(vpc.get("/api/v1/packages", vpc.admin, params={"sort": "nope"}), 400)
    assert_error(vpc.get("/api/v1/packages", vpc.admin, params={"filter": "[x=1]"}), 400)
    assert_error(vpc.get("/api/v1/packages", vpc.admin, params={"latest": "maybe"}), 400)


def test_package_changes(vpc) -> None:
    stored = vpc.get("/api/v1/package", vpc.admin, params={"name": "vpc"}).json
    assert stored  # the published artifact hash is compared below
    from appliance.models import PackageVersion

    row = PackageVersion.get(PackageVersion.name == "vpc", PackageVersion.version == "1.0.0")
    body = {
        "packages": {
            "vpc": [
                {"version": "1.0.0", "hash": row.artifact_hash},
                {"version": "1.1.0", "hash": "f" * 64},
            ],
            "unknown": [{"version": "1.0.0", "hash": "e" * 64}],
        }
    }
    result = vpc.post("/api/v1/package-changes", vpc.admin, json=body).json
    assert result["total"] == 3
    assert [c["version"] for c in result["unchanged"]] == ["1.0.0"]
    assert {(c["name"], c["previous_hash"] is None) for c in result["changed"]} == {
        ("vpc", False),
        ("unknown", True),
    }
    assert_error(vpc.post("/api/v1/package-changes", vpc.admin, json={"packages": []}), 400)
    bad = {"packages": {"vpc": [{"version": "1.0.0"}]}}
    assert_error(vpc.post("/api/v1/package-changes", vpc.admin, json=bad), 400, "hash")


def test_literal_routes_win_over_package_names(vpc) -> None:
    for name in ("status", "versions"):
        assert publish(vpc, vpc.admin, artifact_manifest(name)).status_code == 200
        assert vpc.get(f"/api/v1/package/{name}/1.0.0", vpc.admin).status_code == 200
    schema = vpc.get("/api/v1/schemas/manifest-v1.json")
    assert schema.status_code == 200 and schema.json["additionalProperties"] is False
