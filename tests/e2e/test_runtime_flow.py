"""A runtime over HTTP against the real server: install a blueprint, plan, approve, apply,
outputs flowing from the first child into the second, then uninstall (issue 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests

from tests.api.deploy_support import APP, APP_PLAN, NET, NET_PLAN, STACK, module_zip
from tests.api.packages_support import FIXTURES, zip_files
from tests.e2e.server import ServerProcess


def expected_counts(plan: Path) -> dict[str, int]:
    """plannedMetadata as the fixtures' manifest.json lists the plan's counts."""
    entries = json.loads((FIXTURES / "manifest.json").read_text())["files"]
    relative = plan.relative_to(FIXTURES).as_posix()
    counts = next(e["plan_counts"] for e in entries if e["file"] == relative)
    return {
        "unchanged": counts["no-op"],
        "add": counts["create"] + counts["replace"],
        "change": counts["update"],
        "destroy": counts["delete"] + counts["replace"],
    }


class Api:
    def __init__(self, base: str, headers: dict[str, str]) -> None:
        self.base, self.headers = base, headers

    def call(self, method: str, path: str, expect: int = 200, **kw: Any) -> Any:
        result = requests.request(method, self.base + path, headers=self.headers, timeout=30, **kw)
        assert result.status_code == expect, (method, path, result.status_code, result.text)
        return result.json() if "json" in result.headers.get("Content-Type", "") else result


def publish(api: Api, manifest: dict[str, Any], archive: bytes) -> None:
    files = {
        "manifest": ("manifest.json", json.dumps(manifest).encode(), "application/json"),
        "package": ("package.zip", archive, "application/zip"),
    }
    api.call("POST", "/api/v1/package", files=files)
    api.call("POST", "/api/v1/package/enable", json={"package": manifest["name"]})


def runtime_credentials(data_dir: Path) -> dict[str, str]:
    command = [sys.executable, "-m", "appliance", "admin", "runtime", "create"]
    command += ["--org", "default", "--json", "--data-dir", str(data_dir)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def run_phase(runtime: Api, claim: str, report: Any) -> str:
    """Poll, claim the one piece of work, report every artifact; returns the task id."""
    [item] = runtime.call("GET", "/api/v1/tasks")
    task_id = item["taskId"]
    runtime.call(
        "POST", f"/api/v1/task/{task_id}/status", json={"status": claim, "token": item["token"]}
    )
    detail = runtime.call("GET", f"/api/v1/task/{task_id}")
    for deployment in detail["deployments"]:
        if deployment["type"] == "artifact":
            assert requests.get(deployment["package"]["url"], timeout=10).status_code == 200
            body = report(deployment)
            path = f"/api/v1/task/{task_id}/deployments/{deployment['guid']}"
            runtime.call("PUT", path, json=body)
            runtime.call(
                "POST",
                f"/api/v1/deployments/{deployment['guid']}/logs",
                json={"logs": f"{claim} ok\n"},
            )
    return task_id


def test_runtime_plays_a_blueprint_over_http(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        user = Api(server.base, {"Authorization": f"Bearer {server.key}"})
        creds = runtime_credentials(server.data_dir)
        runtime = Api(
            server.base, {"Authorization": f"Basic {creds['username']}:{creds['password']}"}
        )
        publish(user, NET, module_zip("vpc"))
        publish(user, APP, module_zip("s3"))
        publish(user, STACK, zip_files({"README.md": b"stack\n"}))
        created = user.call(
            "POST",
            "/api/v1/package/install",
            json={"package": "stack", "slug": "web", "props": {"name": "web"}},
        )

        plans = {"net": NET_PLAN, "app": APP_PLAN}
        task_id = run_phase(
            runtime, "planning", lambda d: {"plan": json.loads(plans[d["alias"]].read_text())}
        )
        status = user.call("GET", f"/api/v1/task/{task_id}/status")
        assert status["status"] == "planned"
        detail = user.call("GET", "/api/v1/deployment/web")
        children = {c["name"]: c for c in detail["children"]}
        for alias, plan in plans.items():
            metadata = children[alias]["parsed"]["data"]["plannedMetadata"]
            assert metadata == expected_counts(plan)
        assert runtime.call("GET", "/api/v1/tasks") == []

        user.call("POST", f"/api/v1/deployment/{created['deployment']}/approve")
        outputs = {
            "net": [{"key": "vpc_id", "type": "string", "value": "vpc-0abc", "is_sensitive": False}]
        }

        def apply(deployment: dict[str, Any]) -> dict[str, Any]:
            if deployment["alias"] == "app":
                # The second child runs after the first: re-read, its props now resolved.
                fresh = runtime.call("GET", f"/api/v1/task/{task_id}")
                app = next(d for d in fresh["deployments"] if d["alias"] == "app")
                assert app["props"] == {"vpc_id": "vpc-0abc", "name": "web"}
            return {"stage": "completed", "outputs": outputs.get(deployment["alias"], [])}

        assert run_phase(runtime, "installing", apply) == task_id
        listed = user.call("GET", "/api/v1/deployments?type=deployments&expand=true")
        [root] = listed["list"]
        assert root["stage"] == "completed"
        assert [c["stage"] for c in root["children"]] == ["completed", "completed"]
        found = user.call("GET", "/api/v1/deployment/web/outputs")
        keys = sorted((o["key"], o["value"]) for o in found["list"])
        assert keys == [("app_vpc", "vpc-0abc"), ("vpc_id", "vpc-0abc")]
        logs = user.call("GET", f"/api/v1/deployments/{created['deployment']}/logs")
        assert any(
            e["logs"] == "planning ok\ninstalling ok\n" for e in logs["deployments_logs"].values()
        )

        gone = user.call("POST", "/api/v1/package/uninstall", json={"deployment": "web"})
        run_phase(runtime, "planning", lambda d: {"stage": "planned"})
        user.call("POST", f"/api/v1/deployment/{gone['deployment']}/approve")
        run_phase(runtime, "installing", lambda d: {"stage": "completed"})
        archived = user.call("GET", "/api/v1/deployments?archived=true")
        assert archived["total"] == 2 and all(d["is_archived"] for d in archived["list"])
        assert user.call("GET", "/api/v1/deployments")["total"] == 0
        destroyed = user.call("GET", "/api/v1/deployments/outputs")
        assert destroyed["total"] == 0 or all(o["is_destroyed"] for o in destroyed["list"])
    finally:
        assert server.terminate() == 0
