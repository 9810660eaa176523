"""The runtime protocol (DESIGN.md 7.3) in-process: poll, claim, report, approve, apply."""

from __future__ import annotations

import json

import pytest

from appliance.models import Deployment, DeploymentLog, Event, MemberRole, Membership, Task
from appliance.workers import LeaseReaper
from tests.api.deploy_support import APP_PLAN, NET_PLAN, install, plan_document, stack
from tests.api.helpers import Clock
from tests.conftest import World, assert_error

CLOCK = Clock()


@pytest.fixture
def settings_overrides():
    return {"clock": CLOCK}


def basic(creds: tuple[str, str]) -> dict[str, str]:
    return {"Authorization": f"Basic {creds[0]}:{creds[1]}"}


@pytest.fixture
def setup(world: World):
    stack(world, world.admin)
    creds = world.runtime(world.admin)
    result = install(world, world.admin, package="stack", props={"name": "web"}, slug="st")
    assert result.status_code == 200, result.text
    return basic(creds), result.json


def poll(world: World, headers) -> list:
    result = world.get("/api/v1/tasks", headers=headers)
    assert result.status_code == 200, result.text
    return result.json


def claim(world: World, headers, task_id: str, status: str, token: str | None):
    return world.post(
        f"/api/v1/task/{task_id}/status", headers=headers, json={"status": status, "token": token}
    )


def put_report(world: World, headers, task_id: str, dep_id: str, **body):
    return world.put(f"/api/v1/task/{task_id}/deployments/{dep_id}", headers=headers, json=body)


def test_full_cycle_with_force_free_approval(world: World, setup) -> None:
    headers, created = setup
    task_id = created["task"]
    [item] = poll(world, headers)
    assert item["taskId"] == task_id and item["stage"] == "pending" and item["token"]
    detail = world.get(f"/api/v1/task/{task_id}", headers=headers).json
    names = [d["package"]["qualified_name"] for d in detail["deployments"]]
    assert names == ["stack", "net", "app"]
    net, app = detail["deployments"][1], detail["deployments"][2]
    assert app["props"] == {"vpc_id": "data.net.vpc_id", "name": "web"}
    assert net["package"]["url"].startswith("http") and "signature=" in net["package"]["url"]
    assert detail["command"] == "install" and detail["planOnly"] is False
    assert detail["secrets"] == {} and detail["decryptionKeyId"] is None
    assert detail["environment"]["slug"] == "default"
    assert app["depend"] == [net["guid"]]

    claimed = claim(world, headers, task_id, "planning", item["token"])
    assert claimed.status_code == 200, claimed.text
    assert claimed.json["status"] == "planning"
    assert claimed.json["deployments"]["states"]["planning"] == 3
    assert_error(claim(world, headers, task_id, "planning", item["token"]), 409)
    assert poll(world, headers) == []

    for dep, path in ((net, NET_PLAN), (app, APP_PLAN)):
        done = put_report(world, headers, task_id, dep["guid"], plan=plan_document(path))
        assert done.status_code == 200, done.text
        assert done.json["stage"] == "planned"
    assert Deployment.get_by_id(net["guid"]).parsed["data"]["plannedMetadata"]["add"] == 7
    assert Task.get_by_id(task_id).stage == "planned"
    assert Deployment.get_by_id(created["deployment"]).stage == "planned"

    approved = world.post(f"/api/v1/deployment/{created['deployment']}/approve", world.admin)
    assert approved.status_code == 200, approved.text
    assert approved.json == {
        "deployment": created["deployment"],
        "parent": None,
        "type": "blueprint",
        "stage": "plan_approved",
    }
    [apply] = poll(world, headers)
    assert apply["stage"] == "plan_approved" and apply["token"] != item["token"]
    assert claim(world, headers, task_id, "installing", apply["token"]).status_code == 200

    outputs = [{"key": "vpc_id", "type": "string", "value": "vpc-123", "is_sensitive": False}]
    put_report(world, headers, task_id, net["guid"], stage="completed", outputs=outputs)
    again = world.get(f"/api/v1/task/{task_id}", headers=headers).json
    assert again["deployments"][2]["props"] == {"vpc_id": "vpc-123", "name": "web"}
    final = put_report(world, headers, task_id, app["guid"], stage="completed")
    assert final.json["taskStage"] == "completed"
    root = Deployment.get_by_id(created["deployment"])
    assert root.stage == "completed"
    status = world.get(f"/api/v1/task/{task_id}/status?elaborate=true", world.admin).json
    assert status["status"] == "completed" and status["completed"] is not None
    assert set(status["statusTimestamps"]) >= {"pending", "planning", "completed"}
    assert len(status["deployments"]["list"]) == 3
    types = {e.type for e in Event.select()}
    assert {"deployment:completed", "deployment:approved", "task:updated"} <= types


def test_force_install_approves_at_once(world: World, setup) -> None:
    headers, _ = setup
    Task.update(stage="canceled").execute()
    forced = install(world, world.admin, package="net", force=True).json
    [item] = poll(world, headers)
    claim(world, headers, forced["task"], "planning", item["token"])
    put_report(world, headers, forced["task"], forced["deployment"], plan=plan_document(NET_PLAN))
    assert Deployment.get_by_id(forced["deployment"]).stage == "plan_approved"
    assert poll(world, headers)[0]["stage"] == "plan_approved"


def test_plan_only_ends_at_planned_and_no_change(world: World, setup) -> None:
    headers, _ = setup
    Task.update(stage="canceled").execute()
    planned = install(world, world.admin, package="net", planOnly=True).json
    [item] = poll(world, headers)
    claim(world, headers, planned["task"], "planning", item["token"])
    put_report(world, headers, planned["task"], planned["deployment"], stage="no_change")
    assert Task.get_by_id(planned["task"]).stage == "no_change"
    # Final: approving it is an illegal move naming both stages.
    result = world.post(f"/api/v1/deployment/{planned['deployment']}/approve", world.admin)
    assert_error(result, 409, "no_change -> plan_approved")


def test_reporting_out_of_turn_is_409(world: World, setup) -> None:
    headers, created = setup
    task_id = created["task"]
    dep = Deployment.select().where(Deployment.alias == "net").first()
    result = put_report(world, headers, task_id, dep.id, stage="completed")
    assert_error(result, 409, "pending -> completed")
    assert_error(claim(world, headers, task_id, "installing", "x"), 409, "pending -> installing")
    assert_error(claim(world, headers, task_id, "planning", "stale"), 409, "token")
    bad = put_report(world, headers, task_id, dep.id, stage="bogus")
    assert_error(bad, 400, "stage must be one of")


def test_drift_detection_fills_drift_metadata(world: World, setup) -> None:
    headers, _ = setup
    Task.update(stage="canceled").execute()
    drift = install(world, world.admin, package="net", driftDetection=True).json
    [item] = poll(world, headers)
    claim(world, headers, drift["task"], "planning", item["token"])
    put_report(world, headers, drift["task"], drift["deployment"], plan=plan_document(APP_PLAN))
    data = Deployment.get_by_id(drift["deployment"]).parsed["data"]
    assert data["driftMetadata"] == {"unchanged": 0, "add": 0, "change": 1, "destroy": 1}


def test_lease_reaper(world: World, setup) -> None:
    headers, created = setup
    task_id = created["task"]
    reaper = LeaseReaper(world.ctx)
    for _attempt in range(3):
        [item] = poll(world, headers)
        assert claim(world, headers, task_id, "planning", item["token"]).status_code == 200
        assert reaper.run_once() == 0
        CLOCK.advance(seconds=world.ctx.settings.task_lease_seconds + 1)
        assert reaper.run_once() == 1
    assert Task.get_by_id(task_id).stage == "error"
    assert all(r.stage == "error" for r in Deployment.select())
    assert Task.get_by_id(task_id).errors == [{"message": "runtime lease expired"}]


def test_lease_renewed_and_installing_expiry_fails(world: World, setup) -> None:
    headers, created = setup
    task_id = created["task"]
    Task.update(stage="plan_approved").execute()
    Deployment.update(stage="plan_approved").execute()
    [item] = poll(world, headers)
    claim(world, headers, task_id, "installing", item["token"])
    CLOCK.advance(seconds=200)
    world.get(f"/api/v1/task/{task_id}", headers=headers)  # renews
    CLOCK.advance(seconds=200)
    assert LeaseReaper(world.ctx).run_once() == 0
    CLOCK.advance(seconds=400)
    assert LeaseReaper(world.ctx).run_once() == 1
    assert Task.get_by_id(task_id).stage == "error"


def test_cancel_and_error_rows(world: World, setup) -> None:
    headers, created = setup
    result = world.post(
        "/api/v1/deployments/cancel", world.admin, json={"deployments": [created["deployment"]]}
    )
    assert result.status_code == 200, result.text
    assert result.json[0]["stage"] == "canceled"
    assert Task.get_by_id(created["task"]).stage == "canceled"
    again = world.post(
        "/api/v1/deployments/cancel", world.admin, json={"deployments": [created["deployment"]]}
    )
    assert_error(again, 409, "canceled -> canceled")
    other = install(world, world.admin, package="net").json
    [item] = poll(world, headers)
    claim(world, headers, other["task"], "planning", item["token"])
    failed = world.post(
        f"/api/v1/task/{other['task']}/status",
        headers=headers,
        json={"status": "error", "error": "terraform init failed"},
    )
    assert failed.json["status"] == "error"
    assert Deployment.get_by_id(other["deployment"]).errors == [
        {"message": "terraform init failed"}
    ]


def test_runtime_isolation_and_auth(world: World, setup) -> None:
    _, created = setup
    other = world.new_org("other")
    foreign = basic(world.runtime(other))
    assert poll(world, foreign) == []
    assert_error(
        world.get(f"/api/v1/task/{created['task']}", headers=foreign), 404, "task not found"
    )
    assert_error(world.get("/api/v1/tasks"), 401, "runtime authentication failed")
    assert_error(world.get(f"/api/v1/task/{created['task']}", world.admin), 401)
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert world.get(f"/api/v1/task/{created['task']}/status", viewer).status_code == 200
    nobody = world.member(world.admin, "n@x.example", "Viewer")
    membership = Membership.get(Membership.user == nobody.user_pk)
    MemberRole.delete().where(MemberRole.membership == membership).execute()
    assert_error(world.get(f"/api/v1/task/{created['task']}/status", nobody), 403, "read:task")


def test_register_and_logs(world: World, setup) -> None:
    headers, created = setup
    task_id = created["task"]
    body = [
        {
            "package": {
                "name": "src",
                "version": "0.1.0",
                "uniqueId": "git-src",
                "type": "artifact",
            },
            "dependencies": {"direct": []},
            "parent": None,
            "action": "create",
            "payload": {"source": "git::https://example.com/x.git"},
        }
    ]
    url = f"/api/v1/task/{task_id}/deployments"
    result = world.post(url, headers=headers, json=body)
    assert result.status_code == 200, result.text
    [registered] = result.json
    assert_error(world.post(url, headers=headers, json=body), 409, "deployment already exists")
    assert_error(world.post(url, headers=headers, json={"x": 1}), 400)
    log_url = f"/api/v1/deployments/{registered['deployment']}/logs"
    for chunk in ("one\n", "two\n"):
        assert world.post(log_url, headers=headers, json={"logs": chunk}).status_code == 200
    logs = world.get(log_url, headers=headers).json["deployments_logs"]
    assert logs[registered["deployment"]]["logs"] == "one\ntwo\n"
    assert world.get(log_url, world.admin).status_code == 200
    assert_error(world.post(log_url, headers=headers, json={}), 400, "logs is required")
    assert DeploymentLog.select().count() == 2


def test_logs_capped(world: World, setup) -> None:
    headers, created = setup
    dep = created["deployment"]
    big = "x" * (1024 * 1024 - 10) + "\n"
    url = f"/api/v1/deployments/{dep}/logs"
    for _ in range(11):
        assert world.post(url, headers=headers, json={"logs": big}).status_code == 200
    text = world.get(url, headers=headers).json["deployments_logs"][dep]["logs"]
    assert text.startswith("[... earlier log output dropped")
    assert len(text.encode()) <= 10 * 1024 * 1024 + 200
    too_big = world.post(url, headers=headers, body=json.dumps({"logs": "y" * (1024 * 1024 + 1)}))
    assert_error(too_big, 413)


def test_uninstall_archives(world: World, setup) -> None:
    headers, created = setup
    Task.update(stage="completed").execute()
    Deployment.update(stage="completed").execute()
    gone = world.post("/api/v1/package/uninstall", world.admin, json={"deployment": "st"}).json
    [item] = poll(world, headers)
    claim(world, headers, gone["task"], "planning", item["token"])
    rows = list(
        Deployment.select().where(Deployment.task == gone["task"], Deployment.type == "artifact")
    )
    for row in rows:
        put_report(world, headers, gone["task"], row.id, stage="planned")
    world.post(f"/api/v1/deployment/{gone['deployment']}/approve", world.admin)
    [item] = poll(world, headers)
    claim(world, headers, gone["task"], "installing", item["token"])
    for row in rows:
        put_report(world, headers, gone["task"], row.id, stage="completed")
    assert Task.get_by_id(gone["task"]).stage == "completed"
    assert all(r.is_archived for r in Deployment.select().where(Deployment.root_slug == "st"))
