"""The read endpoints of spec 4.7 and task status/delete of 4.8."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image
from urllib3 import encode_multipart_formdata

from appliance.models import Deployment, DeploymentOutput, Task
from tests.api.deploy_support import (
    NET_PLAN,
    install,
    publish_and_enable,
    run_to_completion,
    stack,
    zip_files,
)
from tests.api.envhelpers import roleless, seal
from tests.api.packages_support import FIXTURES
from tests.conftest import World, assert_error

DEPLOYMENT_FIELDS = {
    "deployment", "task", "parent", "name", "version", "type", "uniqueId", "stage",
    "is_archived", "created", "timestamp", "outdated_package", "errors", "plan_file_url",
    "state_file_url", "iac_type", "parsed", "user", "reviewed_by", "slug",
    "origin_state_location", "environment", "is_latest", "is_uninstall", "is_plan_only",
    "drift_detection", "children", "driftMetadata", "plannedMetadata", "outputMetadata",
    "plannedResourcesMetadata", "costMetadata", "stateMetadata", "statusTimestamps",
}  # fmt: skip


@pytest.fixture
def done(world: World):
    stack(world, world.admin)
    headers = {"Authorization": "Basic {}:{}".format(*world.runtime(world.admin))}
    created = install(world, world.admin, package="stack", slug="web", props={"name": "w"}).json
    run_to_completion(world, headers, created)
    return created


def test_list_and_stats(world: World, done) -> None:
    pending = install(world, world.admin, package="net", slug="solo").json
    result = world.get("/api/v1/deployments?expand=true&sort=created&order=ASC", world.admin)
    assert result.status_code == 200, result.text
    body = result.json
    assert body["total"] == 2 and body["stats"] == {"live": 1, "drafts": 1}
    first = body["list"][0]
    assert set(first) == DEPLOYMENT_FIELDS
    assert first["deployment"] == done["deployment"] and first["stage"] == "completed"
    assert [c["name"] for c in first["children"]] == ["net", "app"]
    assert first["user"]["id"] == world.admin.user_id
    assert first["reviewed_by"]["action"] == "approve"
    assert first["environment"]["slug"] == "default"
    assert first["children"][0]["plannedMetadata"]["add"] == 7
    assert first["children"][0]["plan_file_url"].endswith("/plan")
    filtered = world.get("/api/v1/deployments?filter=[stage=pending]&limit=3", world.admin).json
    assert [d["deployment"] for d in filtered["list"]] == [pending["deployment"]]
    assert world.get("/api/v1/deployments?search=sta", world.admin).json["total"] == 1
    assert world.get("/api/v1/deployments", world.admin).json["list"][0]["children"] == []
    assert_error(world.get("/api/v1/deployments?limit=2", world.admin), 400, "between 3 and 1000")
    assert_error(world.get("/api/v1/deployments?type=x", world.admin), 400, "activities")
    assert_error(world.get("/api/v1/deployments?sort=bogus", world.admin), 400, "unknown sort")
    assert_error(world.get("/api/v1/deployments"), 401)
    assert_error(
        world.get("/api/v1/deployments", roleless(world, world.admin, "r@x.example")),
        403,
        "read:deployment",
    )
    assert world.get("/api/v1/deployments", world.new_org("other")).json["total"] == 0


def test_detail_props_manifest(world: World, done) -> None:
    detail = world.get("/api/v1/deployment/web", world.admin)
    assert detail.status_code == 200, detail.text
    assert set(detail.json) == DEPLOYMENT_FIELDS
    assert detail.json["parsed"]["type"] == "plan" and len(detail.json["children"]) == 2
    child = Deployment.get(Deployment.alias == "net")
    by_id = world.get(f"/api/v1/deployment/{child.id}", world.admin).json
    assert by_id["parsed"]["data"]["plannedMetadata"] == {
        "unchanged": 0,
        "add": 7,
        "change": 0,
        "destroy": 0,
    }
    assert_error(world.get("/api/v1/deployment/web?parse_type=x", world.admin), 400, "parse_type")
    props = world.get("/api/v1/deployment/web/props", world.admin).json
    assert props == {
        "activity_id": done["deployment"], "slug": "web", "updated": props["updated"],
        "package": "stack", "version": "1.0.0", "env": "default",
        "props": {"name": "w", "replicas": 1},
    }  # fmt: skip
    manifest = world.get("/api/v1/deployment/web/manifest", world.admin)
    assert manifest.headers["content-type"] == "application/yaml"
    assert "name: stack" in manifest.text
    other = world.new_org("other")
    for path in (
        "/api/v1/deployment/web",
        "/api/v1/deployment/web/props",
        "/api/v1/deployment/web/manifest",
    ):
        assert_error(world.get(path, other), 404, "deployment not found")


def test_outputs_and_alias(world: World, done) -> None:
    result = world.get("/api/v1/deployment/web/outputs?sort=key&order=ASC", world.admin)
    assert result.status_code == 200, result.text
    body = result.json
    assert [o["key"] for o in body["list"]] == ["app_vpc", "password", "vpc_id"]
    secret = body["list"][1]
    assert secret["is_sensitive"] and secret["value"] is None
    assert set(secret) == {
        "id", "deployment_slug", "package_id", "alias", "key", "type", "value",
        "is_sensitive", "is_hidden", "is_destroyed", "created_at", "updated_at",
    }  # fmt: skip
    assert body["filters"] == {"deployment_slugs": ["web"]}
    assert {p["name"] for p in body["metadata"]["packages"]} == {"stack", "net", "app"}
    org_wide = world.get("/api/v1/deployments/outputs?search=vpc", world.admin).json
    assert org_wide["total"] == 2
    output_id = body["list"][2]["id"]
    url = f"/api/v1/deployment/outputs/{output_id}/set-alias"
    assert world.put(url, world.admin, json={"alias": "main"}).json == {
        "id": output_id,
        "alias": "main",
    }
    assert DeploymentOutput.get_by_id(output_id).alias == "main"
    assert_error(world.put(url, world.admin, json={}), 400, "alias is required")
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert_error(world.put(url, viewer, json={"alias": "x"}), 403, "update:deployment")
    assert_error(world.put(url, world.new_org("o2"), json={"alias": "x"}), 404)
    assert_error(world.get("/api/v1/deployment/web/outputs?limit=1", world.admin), 400)
    assert_error(world.get("/api/v1/deployment/nope/outputs", world.admin), 404)


def test_plan_state_and_markdown(world: World, done) -> None:
    child = Deployment.get(Deployment.alias == "net")
    plan = world.get(f"/api/v1/deployment/{child.id}/plan", world.admin)
    assert plan.status_code == 200 and plan.json == json.loads(NET_PLAN.read_text())
    assert_error(world.get(f"/api/v1/deployment/{child.id}/plan?format=xml", world.admin), 400)
    assert_error(world.get(f"/api/v1/deployment/{child.id}/state", world.admin), 404, "no state")
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert_error(
        world.get(f"/api/v1/deployment/{child.id}/state", viewer), 403, "update:deployment"
    )
    markdown = world.post(
        "/api/v1/deployments/plans", world.admin, json={"deployments": [child.id]}
    )
    assert markdown.status_code == 200
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert "**7** to add" in markdown.text and "| null_resource.bar | add |" in markdown.text
    assert_error(world.post("/api/v1/deployments/plans", world.admin, json={}), 400)
    other = world.new_org("other")
    assert_error(
        world.post("/api/v1/deployments/plans", other, json={"deployments": [child.id]}), 404
    )


def test_plan_parse_upload(world: World) -> None:
    body, content_type = encode_multipart_formdata(
        [("plan_file", ("basic.plan.json", NET_PLAN.read_bytes(), "application/json"))]
    )
    result = world.post(
        "/api/v1/deployment/plan", world.admin, body=body, headers={"Content-Type": content_type}
    )
    assert result.status_code == 200, result.text
    assert result.json["name"] == "basic.plan.json"
    assert result.json["parsed"]["data"]["plannedMetadata"]["add"] == 7
    bad, bad_type = encode_multipart_formdata(
        [("plan_file", ("x.json", b"{}", "application/json"))]
    )
    result = world.post(
        "/api/v1/deployment/plan", world.admin, body=bad, headers={"Content-Type": bad_type}
    )
    assert_error(result, 400, "format_version")
    assert Deployment.select().count() == 0


def test_filters(world: World, done) -> None:
    result = world.get("/api/v1/deployments/filters", world.admin).json["deployments_filters"]
    assert result["slugs"] == ["web"] and result["stages"] == ["completed"]
    assert result["blueprints"] == ["stack"] and result["types"] == ["blueprint"]
    assert result["environments"][0]["slug"] == "default"
    assert result["users"][0]["id"] == world.admin.user_id
    assert world.get("/api/v1/deployments/filters?type=slugs", world.admin).json == {
        "deployments_filters": {"slugs": ["web"]}
    }
    assert_error(world.get("/api/v1/deployments/filters?type=x", world.admin), 400)
    archived = world.get("/api/v1/deployments/filters?archived=true", world.admin).json
    assert archived["deployments_filters"]["slugs"] == []


def test_task_status_and_delete(world: World, done) -> None:
    status = world.get(f"/api/v1/task/{done['task']}/status", world.admin).json
    assert set(status) == {
        "task", "status", "command", "planOnly", "deployments", "statusTimestamps",
        "errors", "created", "updated", "completed",
    }  # fmt: skip
    assert status["deployments"]["total"] == 3
    assert status["deployments"]["states"]["completed"] == 3
    assert_error(world.get(f"/api/v1/task/{done['task']}/status", world.new_org("o")), 404)
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert_error(world.delete(f"/api/v1/task/{done['task']}", viewer), 403, "delete:deployment")
    deleted = world.delete(f"/api/v1/task/{done['task']}", world.admin)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json["task"] == done["task"] and len(deleted.json["deployments"]) == 3
    assert Task.select().count() == 0 and Deployment.select().count() == 0
    assert_error(world.delete(f"/api/v1/task/{done['task']}", world.admin), 404, "task not found")


def test_approve_many(world: World, done) -> None:
    assert_error(
        world.post("/api/v1/deployments/approve", world.admin, json=[done["deployment"]]), 409
    )
    assert_error(world.post("/api/v1/deployments/approve", world.admin, json={}), 400)
    assert_error(world.post("/api/v1/deployments/approve", world.admin, json=["nope"]), 404)
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert_error(
        world.post("/api/v1/deployments/approve", viewer, json=["x"]), 403, "update:deployment"
    )


def test_image_png(world: World, done) -> None:
    result = world.get(f"/api/v1/deployment/{done['deployment']}/image", world.admin)
    assert result.status_code == 200
    assert result.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(result.content))
    assert image.format == "PNG" and image.size[0] >= 2 * 220  # two children side by side
    # The completed stage colour is drawn.
    assert (0x66, 0xBB, 0x6A) in {colour for _, colour in image.getcolors(100000)}
    assert_error(
        world.get(f"/api/v1/deployment/{done['deployment']}/image?format=svg", world.admin), 400
    )
    assert_error(
        world.get(f"/api/v1/deployment/{done['deployment']}/image", world.new_org("o")), 404
    )


def test_counts_in_environment_and_package_list(world: World, done) -> None:
    env = world.get("/api/v1/environment/default", world.admin).json
    assert env["associated_items_count"]["live_deployments"] == 1
    listed = world.get("/api/v1/packages?limit=100", world.admin).json["packages"]
    counts = {p["name"]: p["deployments"] for p in listed}
    assert counts == {"stack": 1, "net": 1, "app": 1}
    undeployed = world.get("/api/v1/packages?all=false", world.admin).json
    assert undeployed["packages"] == [] and undeployed["total"] == 0


def test_slug_references_and_secrets_in_task_detail(world: World, done) -> None:
    headers = {"Authorization": "Basic {}:{}".format(*world.runtime(world.admin))}
    sealed = seal(world, world.admin, "s3cr3t")
    url = "/api/v1/environment/default/settings/secrets"
    stored = world.post(url, world.admin, json=[{"key": "db_password", "value": sealed}])
    assert stored.status_code == 200, stored.text
    created = install(world, world.admin, package="net", props={"cidr": "$web.app_vpc"}).json
    detail = world.get(f"/api/v1/task/{created['task']}", headers=headers).json
    assert detail["deployments"][0]["props"]["cidr"] == "vpc-1"
    assert detail["props"]["cidr"] == "vpc-1"
    assert detail["secrets"] == {"db_password": "s3cr3t"}
    # Another organization's runtime reaches none of it.
    foreign = {"Authorization": "Basic {}:{}".format(*world.runtime(world.new_org("o")))}
    task_id, dep = created["task"], created["deployment"]
    assert_error(world.get(f"/api/v1/task/{task_id}", headers=foreign), 404)
    claim = {"status": "planning", "token": "x"}
    assert_error(world.post(f"/api/v1/task/{task_id}/status", headers=foreign, json=claim), 404)
    report = {"stage": "planned"}
    put = world.put(f"/api/v1/task/{task_id}/deployments/{dep}", headers=foreign, json=report)
    assert_error(put, 404)
    logs = world.post(f"/api/v1/deployments/{dep}/logs", headers=foreign, json={"logs": "x"})
    assert_error(logs, 404)


def test_reported_state_is_served_and_handed_to_the_next_activity(world: World) -> None:
    state_path = (
        FIXTURES / "terraform/state-json/hashicorp__terraform-json/110_sensitive_values.state.json"
    )
    manifest = {"name": "net", "version": "1.0.0", "native": {"type": "terraform"}}
    publish_and_enable(world, world.admin, manifest, zip_files({"main.tf": b"\n"}))
    headers = {"Authorization": "Basic {}:{}".format(*world.runtime(world.admin))}
    first = install(world, world.admin, package="net", slug="n", force=True).json
    token = world.get("/api/v1/tasks", headers=headers).json[0]["token"]
    world.post(
        f"/api/v1/task/{first['task']}/status",
        headers=headers,
        json={"status": "planning", "token": token},
    )
    url = f"/api/v1/task/{first['task']}/deployments/{first['deployment']}"
    world.put(url, headers=headers, json={"plan": json.loads(NET_PLAN.read_text())})
    token = world.get("/api/v1/tasks", headers=headers).json[0]["token"]
    world.post(
        f"/api/v1/task/{first['task']}/status",
        headers=headers,
        json={"status": "installing", "token": token},
    )
    state = json.loads(state_path.read_text())
    assert (
        world.put(url, headers=headers, json={"stage": "completed", "state": state}).status_code
        == 200
    )
    served = world.get(f"/api/v1/deployment/{first['deployment']}/state", world.admin)
    assert served.status_code == 200 and served.json == state
    detail = world.get("/api/v1/deployment/n?parse_type=state", world.admin).json
    assert detail["parsed"]["type"] == "state"
    assert detail["stateMetadata"]["managed"] + detail["stateMetadata"]["unmanaged"] == 7
    assert detail["state_file_url"].endswith("/state")
    second = install(world, world.admin, package="net", deployment="n").json
    task = world.get(f"/api/v1/task/{second['task']}", headers=headers).json
    assert task["deployments"][0]["state_file"] is not None
