"""The admin CLI works on the data directory, with the exact `--json` shapes of DESIGN.md 4.2."""

from __future__ import annotations

import json

from click.testing import CliRunner
from falcon import testing

from appliance.app import build_appliance
from appliance.cli import root
from appliance.models.db import database
from tests.conftest import make_settings


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(root, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.output


def test_admin_commands_and_their_json(tmp_path) -> None:
    data = str(tmp_path / "data")
    code, out = run(
        "admin",
        "org",
        "create",
        "Acme Corp",
        "--admin-email",
        "Ops@Acme.example",
        "--json",
        "--data-dir",
        data,
    )
    assert code == 0, out
    created = json.loads(out)
    assert set(created) == {"organization", "user", "api_key"}
    assert created["organization"]["name"] == "acme-corp"
    assert created["organization"]["id"].startswith("org_")
    assert created["user"]["email"] == "ops@acme.example"
    assert [r["name"] for r in created["user"]["roles"]] == ["Admin"]
    assert created["api_key"].startswith("apk_")

    code, out = run(
        "admin",
        "key",
        "create",
        "--org",
        "acme-corp",
        "--email",
        "ops@acme.example",
        "--name",
        "ci",
        "--json",
        "--data-dir",
        data,
    )
    assert code == 0, out
    second_key = json.loads(out)["api_key"]

    code, out = run(
        "admin",
        "runtime",
        "create",
        "--org",
        "acme-corp",
        "--name",
        "rt1",
        "--json",
        "--data-dir",
        data,
    )
    runtime = json.loads(out)
    assert runtime["username"].startswith("rt_") and len(runtime["password"]) == 40
    code, out = run("admin", "runtime", "list", "--org", "acme-corp", "--json", "--data-dir", data)
    listed = json.loads(out)
    assert [r["username"] for r in listed] == [runtime["username"]]
    assert "password" not in out and runtime["password"] not in out
    code, out = run(
        "admin",
        "runtime",
        "revoke",
        "--org",
        "acme-corp",
        runtime["username"],
        "--json",
        "--data-dir",
        data,
    )
    assert code == 0 and json.loads(out)["revoked"] is True

    code, out = run(
        "admin",
        "user",
        "set-password",
        "--org",
        "acme-corp",
        "--email",
        "ops@acme.example",
        "--json",
        "--data-dir",
        data,
        input="correct horse\ncorrect horse\n",
    )
    assert code == 0, out

    database.close()
    appliance = build_appliance(make_settings(tmp_path / "data"))
    try:
        client = testing.TestClient(appliance.app)
        for key in (created["api_key"], second_key):
            r = client.simulate_get(
                "/api/v1/organization", headers={"Authorization": f"Bearer {key}"}
            )
            assert r.status_code == 200 and r.json["name"] == "acme-corp"
        login = client.simulate_post(
            "/api/v1/auth/login",
            json={
                "email": "ops@acme.example",
                "password": "correct horse",
                "organization": "acme-corp",
            },
        )
        assert login.status_code == 200, login.text
        token = login.json["access_token"]
        r = client.simulate_get(
            "/api/v1/organization", headers={"Authorization": f"Bearer {token}"}
        )
        assert r.json["name"] == "acme-corp"
    finally:
        database.close()


def test_admin_errors_are_clean_messages(tmp_path) -> None:
    data = str(tmp_path / "data")
    run("admin", "org", "create", "Acme", "--admin-email", "a@acme.example", "--data-dir", data)
    code, out = run(
        "admin", "org", "create", "Acme", "--admin-email", "a@acme.example", "--data-dir", data
    )
    assert code == 1 and "already exists" in out
    code, out = run(
        "admin", "key", "create", "--org", "nope", "--email", "a@acme.example", "--data-dir", data
    )
    assert code == 1 and "organization not found" in out
    database.close()
