"""Helpers of the deployment tests: a published, enabled blueprint of two artifacts."""

from __future__ import annotations

import json
from typing import Any

from tests.api.packages_support import FIXTURES, MODULES, dir_files, publish, zip_files
from tests.conftest import Caller, World

PLANS = FIXTURES / "terraform" / "plans"
NET_PLAN = PLANS / "hashicorp__terraform-json" / "basic.plan.json"
APP_PLAN = PLANS / "opentofu__opentofu" / "basic_delete.golden.plan.json"

NET = {
    "name": "net",
    "version": "1.0.0",
    "native": {"type": "terraform"},
    "inputs": {
        "cidr": {"type": "string", "default": "10.0.0.0/16"},
        "tier": {"type": "string", "allowed_values": ["dev", "prod"], "default": "dev"},
    },
    "outputs": {"vpc_id": {"value": "data.self.vpc_id"}},
}
APP = {
    "name": "app",
    "version": "1.0.0",
    "native": {"type": "terraform"},
    "inputs": {"vpc_id": {"type": "string"}, "name": {"type": "string"}},
}
STACK = {
    "name": "stack",
    "version": "1.0.0",
    "inputs": {"name": {"type": "string"}, "replicas": {"type": "number", "default": 1}},
    "packages": [
        {"name": "net", "id": "net", "version": "1.0.0", "props": {"cidr": "10.1.0.0/16"}},
        {
            "name": "app",
            "id": "app",
            "version": "1.0.0",
            "props": {"vpc_id": "data.net.vpc_id", "name": "inputs.name"},
        },
    ],
    "outputs": {"app_vpc": {"value": "data.net.vpc_id"}},
}


def _manifest_ok(manifest: dict[str, Any]) -> dict[str, Any]:
    # Outputs of artifacts reference themselves only in our fixtures' prose; drop them.
    return {k: v for k, v in manifest.items() if not (k == "outputs" and "native" in manifest)}


def module_zip(key: str) -> bytes:
    return zip_files(dir_files(MODULES[key][0]))


def publish_and_enable(
    world: World, caller: Caller, manifest: dict[str, Any], archive: bytes
) -> None:
    result = publish(world, caller, _manifest_ok(manifest), archive)
    assert result.status_code == 200, result.text
    enabled = world.post(
        "/api/v1/package/enable",
        caller,
        json={"package": manifest["name"], "version": manifest["version"]},
    )
    assert enabled.status_code == 200, enabled.text


def stack(world: World, caller: Caller) -> None:
    """Publish and enable net and app (real modules) and the blueprint stack."""
    publish_and_enable(world, caller, NET, module_zip("vpc"))
    publish_and_enable(world, caller, APP, module_zip("s3"))
    publish_and_enable(world, caller, STACK, zip_files({"README.md": b"stack\n"}))


def install(world: World, caller: Caller, **body: Any) -> Any:
    return world.post("/api/v1/package/install", caller, json=body)


def plan_document(path: Any) -> Any:
    return json.loads(path.read_text())


def run_to_completion(world: World, headers: dict[str, str], created: dict[str, str]) -> None:
    """Plan (real fixture plans), approve and apply a stack install in-process."""
    task_id = created["task"]
    plans = {"net": NET_PLAN, "app": APP_PLAN}
    token = world.get("/api/v1/tasks", headers=headers).json[0]["token"]
    body = {"status": "planning", "token": token}
    assert (
        world.post(f"/api/v1/task/{task_id}/status", headers=headers, json=body).status_code == 200
    )
    detail = world.get(f"/api/v1/task/{task_id}", headers=headers).json
    artifacts = [d for d in detail["deployments"] if d["type"] == "artifact"]
    for dep in artifacts:
        report = {"plan": plan_document(plans[dep["alias"]])}
        world.put(f"/api/v1/task/{task_id}/deployments/{dep['guid']}", headers=headers, json=report)
    world.post(f"/api/v1/deployment/{created['deployment']}/approve", world.admin)
    token = world.get("/api/v1/tasks", headers=headers).json[0]["token"]
    body = {"status": "installing", "token": token}
    assert (
        world.post(f"/api/v1/task/{task_id}/status", headers=headers, json=body).status_code == 200
    )
    outputs = {
        "net": [{"key": "vpc_id", "type": "string", "value": "vpc-1", "is_sensitive": False}],
        "app": [{"key": "password", "type": "string", "value": "hunter2", "is_sensitive": True}],
    }
    for dep in artifacts:
        report = {"stage": "completed", "outputs": outputs[dep["alias"]]}
        url = f"/api/v1/task/{task_id}/deployments/{dep['guid']}"
        assert world.put(url, headers=headers, json=report).status_code == 200
