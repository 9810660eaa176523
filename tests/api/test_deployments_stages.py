"""Every row of the stage table (DESIGN.md 7.2) through the service, and illegal moves."""

from __future__ import annotations

import pytest

from appliance.domain.stages import STAGES, TRANSITIONS, find_transition
from appliance.models import Deployment, Task
from appliance.workers import LeaseReaper
from tests.api.deploy_support import NET_PLAN, install, plan_document, publish_and_enable
from tests.api.helpers import Clock
from tests.api.packages_support import zip_files
from tests.api.test_deployments_runtime import basic, claim, poll, put_report
from tests.conftest import World, assert_error

CLOCK = Clock()
PATH = ("pending", "planning", "planned", "plan_approved", "installing")


@pytest.fixture
def settings_overrides():
    return {"clock": CLOCK}


@pytest.fixture
def rt(world: World):
    manifest = {"name": "net", "version": "1.0.0", "native": {"type": "terraform"}}
    publish_and_enable(world, world.admin, manifest, zip_files({"main.tf": b"\n"}))
    return basic(world.runtime(world.admin))


def advance(world: World, headers, to: str) -> dict:
    """Install `net` and drive it through the real endpoints up to stage `to`."""
    created = install(world, world.admin, package="net").json
    task_id, dep = created["task"], created["deployment"]
    steps = {
        "planning": lambda: claim(
            world, headers, task_id, "planning", poll(world, headers)[0]["token"]
        ),
        "planned": lambda: put_report(world, headers, task_id, dep, plan=plan_document(NET_PLAN)),
        "plan_approved": lambda: world.post(f"/api/v1/deployment/{dep}/approve", world.admin),
        "installing": lambda: claim(
            world, headers, task_id, "installing", poll(world, headers)[0]["token"]
        ),
    }
    for stage in PATH[1 : PATH.index(to) + 1]:
        result = steps[stage]()
        assert result.status_code == 200, result.text
    assert Deployment.get_by_id(dep).stage == to
    return created


@pytest.mark.parametrize("source", PATH)
def test_error_from_every_non_final_stage(world: World, rt, source: str) -> None:
    created = advance(world, rt, source)
    result = world.post(
        f"/api/v1/task/{created['task']}/status",
        headers=rt,
        json={"status": "error", "error": "boom"},
    )
    assert result.status_code == 200, result.text
    assert Deployment.get_by_id(created["deployment"]).stage == "error"
    assert Task.get_by_id(created["task"]).stage == "error"
    stamps = Deployment.get_by_id(created["deployment"]).status_timestamps
    assert set(stamps) == {*PATH[: PATH.index(source) + 1], "error"}


@pytest.mark.parametrize("source", PATH[:4])
def test_cancel_from_every_cancelable_stage(world: World, rt, source: str) -> None:
    created = advance(world, rt, source)
    body = {"deployments": [created["deployment"]]}
    result = world.post("/api/v1/deployments/cancel", world.admin, json=body)
    assert result.status_code == 200, result.text
    assert Task.get_by_id(created["task"]).stage == "canceled"


def test_installing_cannot_be_canceled(world: World, rt) -> None:
    created = advance(world, rt, "installing")
    body = {"deployments": [created["deployment"]]}
    result = world.post("/api/v1/deployments/cancel", world.admin, json=body)
    assert_error(result, 409, "installing -> canceled")


def test_the_happy_rows_and_no_change(world: World, rt) -> None:
    created = advance(world, rt, "installing")
    done = put_report(world, rt, created["task"], created["deployment"], stage="completed")
    assert done.json["stage"] == "completed"
    stays = install(world, world.admin, package="net").json
    claim(world, rt, stays["task"], "planning", poll(world, rt)[0]["token"])
    put_report(world, rt, stays["task"], stays["deployment"], stage="no_change")
    assert Task.get_by_id(stays["task"]).stage == "no_change"


def test_planning_lease_expiry_hands_back(world: World, rt) -> None:
    created = advance(world, rt, "planning")
    CLOCK.advance(seconds=world.ctx.settings.task_lease_seconds + 1)
    assert LeaseReaper(world.ctx).run_once() == 1
    assert Deployment.get_by_id(created["deployment"]).stage == "pending"


def test_every_table_row_is_covered_here() -> None:
    """The rows this module drives; a new row in the table fails until a test drives it."""
    driven = {(None, "pending"), ("planning", "pending")}
    driven |= {(a, b) for a, b in zip(PATH, PATH[1:], strict=False)}
    driven |= {("planning", "no_change"), ("installing", "completed")}
    driven |= {(s, "error") for s in PATH} | {(s, "canceled") for s in PATH[:4]}
    rows = {(None if r.source is None else str(r.source), str(r.target)) for r in TRANSITIONS}
    assert rows == driven


@pytest.mark.parametrize("target", ["planned", "completed", "installing", "no_change"])
def test_illegal_moves_from_pending_are_409(world: World, rt, target: str) -> None:
    created = advance(world, rt, "pending")
    assert find_transition("pending", target) is None
    result = (
        put_report(world, rt, created["task"], created["deployment"], stage=target)
        if target
        in (
            "planned",
            "completed",
            "no_change",
        )
        else claim(world, rt, created["task"], target, "x")
    )
    assert_error(result, 409, f"pending -> {target}")
    assert len(STAGES) == 9
