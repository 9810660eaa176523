"""POST /package/install, /package/uninstall and /deployment/create (spec 4.2, 4.7)."""

from __future__ import annotations

import pytest

from appliance.models import Deployment, Event, Task
from tests.api.deploy_support import install, publish_and_enable, stack, zip_files
from tests.api.envhelpers import create_env
from tests.conftest import World, assert_error


@pytest.fixture
def org(world: World):
    stack(world, world.admin)
    return world.admin


def test_install_blueprint_creates_children_with_parent_and_depend(world: World, org) -> None:
    result = install(world, org, package="stack", props={"name": "web"}, slug="prod-stack")
    assert result.status_code == 200, result.text
    body = result.json
    assert set(body) == {"deployment", "task"}
    rows = list(
        Deployment.select().where(Deployment.task == body["task"]).order_by(Deployment.position)
    )
    assert [(r.name, r.alias, r.stage) for r in rows] == [
        ("stack", None, "pending"),
        ("net", "net", "pending"),
        ("app", "app", "pending"),
    ]
    root, net, app = rows
    assert root.id == body["deployment"] and root.slug == "prod-stack"
    assert net.parent_id == root.id and app.parent_id == root.id
    assert app.depend == [net.id] and net.depend == []
    assert root.props == {"name": "web", "replicas": 1}
    assert app.props == {"vpc_id": "data.net.vpc_id", "name": "web"}
    assert net.props == {"cidr": "10.1.0.0/16"}
    task = Task.get_by_id(body["task"])
    assert task.command == "install" and task.stage == "pending"
    types = [e.type for e in Event.select().where(Event.organization == org.org_id)]
    assert types.count("deployment:created") == 3 and "task:created" in types


@pytest.mark.parametrize(
    ("flags", "command"),
    [
        ({"force": True}, "force_install"),
        ({"planOnly": True}, "plan"),
        ({"validateOnly": True}, "validate"),
        ({"driftDetection": True}, "drift_detection"),
        ({}, "install"),
    ],
)
def test_flags_map_to_commands(world: World, org, flags, command) -> None:
    result = install(world, org, package="net", **flags)
    assert result.status_code == 200, result.text
    assert Task.get_by_id(result.json["task"]).command == command


def test_props_validation_reports_every_problem_at_once(world: World, org) -> None:
    result = install(world, org, package="stack", props={"replicas": "x", "bogus": 1})
    body = assert_error(result, 400, "invalid props: 3 problems")
    assert sorted(d["prop"] for d in body["details"]) == ["bogus", "name", "replicas"]
    assert Task.select().count() == 0


def test_environment_props_merge_and_enforced(world: World, org) -> None:
    env = create_env(world, org, "Staging")
    props = world.post(
        f"/api/v1/environment/{env['slug']}/props",
        org,
        json=[
            {"name": "tier", "content": "prod", "is_enforced": True},
            {"name": "cidr", "content": "10.9.0.0/16"},
        ],
    )
    assert props.status_code == 200, props.text
    result = install(world, org, package="net", env=env["slug"], props={"tier": "dev"})
    assert result.status_code == 200, result.text
    assert Deployment.get_by_id(result.json["deployment"]).props == {
        "cidr": "10.9.0.0/16",
        "tier": "prod",
    }


def test_slug_rules(world: World, org) -> None:
    first = install(world, org, package="net", slug="n1")
    assert first.status_code == 200
    assert_error(install(world, org, package="net", slug="n1"), 409, "slug already exists")
    assert_error(install(world, org, package="net", slug="n2", deployment="n1"), 400, "not both")
    # An activity on an existing slug waits for the previous one to finish.
    assert_error(install(world, org, package="net", deployment="n1"), 409, "in progress")
    Deployment.update(stage="completed").execute()
    again = install(world, org, deployment="n1", planOnly=True)
    assert again.status_code == 200, again.text
    latest = Deployment.get_by_id(again.json["deployment"])
    assert latest.root_slug == "n1" and latest.is_latest
    assert not Deployment.get_by_id(first.json["deployment"]).is_latest
    generated = install(world, org, package="net")
    assert Deployment.get_by_id(generated.json["deployment"]).root_slug == "net"


def test_environment_rules(world: World, org) -> None:
    env = create_env(world, org, "Old")
    world.delete("/api/v1/environment", org, json={"slug": env["slug"]})
    assert_error(install(world, org, package="net", env=env["slug"]), 400, "disabled")
    world.delete(f"/api/v1/environment/{env['slug']}", org)
    assert_error(install(world, org, package="net", env=env["slug"]), 400, "deleted")
    assert_error(install(world, org, package="net", env="nowhere"), 404, "environment not found")


def test_enabled_and_pre_release_rules(world: World, org) -> None:
    pre = {"name": "beta", "version": "2.0.0-rc.1", "native": {"type": "terraform"}}
    publish_and_enable(world, org, pre, zip_files({"main.tf": b"\n"}))
    assert_error(install(world, org, package="beta"), 400, "pre-release")
    env = create_env(world, org, "Edge", allow_pre_release=True)
    world.put(f"/api/v1/environment/{env['slug']}/edit", org, json={"allow_pre_release": True})
    assert install(world, org, package="beta", env=env["slug"]).status_code == 200
    assert_error(install(world, org, package="net", version="9.9.9"), 404, "not enabled")
    world.post("/api/v1/package/disable", org, json={"package": "net", "version": "1.0.0"})
    assert_error(install(world, org, package="net"), 404, "not found or not enabled")
    # A blueprint whose child is disabled cannot install either.
    assert_error(install(world, org, package="stack", props={"name": "x"}), 404, "net@1.0.0")


def test_install_permissions_and_bad_input(world: World, org) -> None:
    assert_error(world.post("/api/v1/package/install", json={"package": "net"}), 401)
    viewer = world.member(org, "v@x.example", "Viewer")
    assert_error(install(world, viewer, package="net"), 403, "create:deployment")
    other = world.new_org("other")
    assert_error(install(world, other, package="net"), 404, "not found or not enabled")
    assert_error(
        install(world, org, package="net", force=True, planOnly=True), 400, "contradictory"
    )
    assert_error(install(world, org, package="net", props=[1]), 400, "props must be an object")
    assert_error(install(world, org, package="net", surprise=1), 400, "unknown fields")
    assert_error(install(world, org), 400, "package is required")
    assert Task.select().count() == 0


def test_deployment_create(world: World, org) -> None:
    url = "/api/v1/deployment/create"
    created = world.post(url, org, json={"deploymentSlug": "s1", "blueprint": "net"})
    assert created.status_code == 200, created.text
    assert created.json["deployment"] == "s1"
    assert set(created.json) == {"deployment", "activity_id", "task"}
    assert_error(world.post(url, org, json={"deploymentSlug": "s2"}), 400, "blueprint is required")
    assert_error(world.post(url, org, json={}), 400, "deploymentSlug is required")
    Deployment.update(stage="completed").execute()
    again = world.post(url, org, json={"deploymentSlug": "s1", "driftDetection": True})
    assert again.status_code == 200, again.text
    assert Task.get_by_id(again.json["task"]).command == "drift_detection"
    assert_error(world.post(url, json={"deploymentSlug": "s1"}), 401)


def test_uninstall_reverses_dependencies(world: World, org) -> None:
    first = install(world, org, package="stack", props={"name": "web"}, slug="st")
    Deployment.update(stage="completed").execute()
    result = world.post("/api/v1/package/uninstall", org, json={"deployment": "st"})
    assert result.status_code == 200, result.text
    rows = list(
        Deployment.select()
        .where(Deployment.task == result.json["task"])
        .order_by(Deployment.position)
    )
    root, net, app = rows
    assert Task.get_by_id(result.json["task"]).command == "uninstall"
    assert net.depend == [app.id] and app.depend == []
    assert all(r.is_uninstall for r in rows) and root.root_slug == "st"
    assert first.json["deployment"] != root.id
    assert_error(world.post("/api/v1/package/uninstall", org, json={"deployment": "zz"}), 404)
    assert_error(
        world.post("/api/v1/package/uninstall", org, json={"deployment": "st", "force": True}),
        400,
    )
