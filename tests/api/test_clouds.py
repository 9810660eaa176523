"""4.6 Cloud accounts and 4.10 setup."""

from __future__ import annotations

import re
import uuid

import pytest

from appliance.domain.tokens import sha256_hex
from appliance.models import CloudAccount
from tests.api.envhelpers import create_env, roleless
from tests.conftest import assert_error

RECORD = {
    "id",
    "name",
    "provider",
    "slug",
    "is_active",
    "is_deleted",
    "created",
    "cloud_account",
    "assume_role_arn",
    "external_id",
    "cloud_config",
    "profile",
}
CONFIG = {
    "service_account_email",
    "scopes",
    "cluster_name",
    "service_account_namespace",
    "service_account_name",
    "cluster_oidc_url",
}


def account_body(**fields):
    body = {
        "accountSlug": "prod-aws",
        "accountName": "Prod AWS",
        "environment": "default",
        "provider": "aws",
        "roleArnId": "arn:aws:iam::123456789012:role/deployer",
        "cloudFormationStackId": None,
        "accountId": "123456789012",
        "externalId": "ext-given",
    }
    body.update(fields)
    return {k: v for k, v in body.items() if v is not ...}


def create_account(world, caller=None, **fields):
    result = world.post("/api/v1/cloud", caller or world.admin, json=account_body(**fields))
    assert result.status_code == 200, result.text
    return result.json


def test_create_returns_every_field_and_becomes_the_environment_primary(world) -> None:
    account = create_account(world, cloudConfig={"cluster_name": "eks-1", "extra": 1})
    assert set(account) == RECORD
    uuid.UUID(account["id"])
    assert (account["name"], account["slug"], account["provider"]) == (
        "Prod AWS",
        "prod-aws",
        "aws",
    )
    assert account["cloud_account"] == "123456789012"
    assert account["assume_role_arn"] == "arn:aws:iam::123456789012:role/deployer"
    assert account["external_id"] == "ext-given"
    assert (account["is_active"], account["is_deleted"]) == (True, False)
    assert set(account["cloud_config"]) == CONFIG | {"extra"}
    assert account["cloud_config"]["cluster_name"] == "eks-1"
    env = world.get("/api/v1/environment/default", world.admin).json
    assert env["cloud_account"]["id"] == account["id"]
    assert env["cloud_account"]["is_primary"] is True
    assert [a["id"] for a in env["cloud_accounts"]] == [account["id"]]
    props = world.get("/api/v1/environment/default/props", world.admin).json
    assert props["environment"]["cloudAccount"]["id"] == account["id"]
    assert not {"is_primary", "profile"} & set(props["environment"]["cloudAccount"])


def test_second_account_is_not_primary_and_takes_over_when_the_first_is_deleted(world) -> None:
    first = create_account(world)
    second = create_account(world, accountSlug=..., accountName="Second", accountId="2")
    assert second["slug"] == "second"
    env = world.get("/api/v1/environment/default", world.admin).json
    assert [(a["id"], a["is_primary"]) for a in env["cloud_accounts"]] == [
        (first["id"], True),
        (second["id"], False),
    ]
    assert world.delete(f"/api/v1/cloud/{first['slug']}", world.admin).json == {"success": True}
    row = CloudAccount.get_by_id(first["id"])
    assert (row.is_active, row.is_deleted) == (False, True)
    assert (
        world.get("/api/v1/environment/default", world.admin).json["cloud_account"]["id"]
        == (second["id"])
    )
    assert_error(world.get(f"/api/v1/cloud/{first['id']}", world.admin), 404)


def test_duplicate_account_id_is_409(world) -> None:
    create_account(world)
    result = world.post("/api/v1/cloud", world.admin, json=account_body(accountSlug="other"))
    assert_error(result, 409, "account id already exists")
    result = world.post("/api/v1/cloud", world.admin, json=account_body(accountName="x"))
    assert_error(result, 409)
    assert CloudAccount.select().count() == 1


def test_a_deleted_account_id_can_be_added_again(world) -> None:
    first = create_account(world)
    world.delete(f"/api/v1/cloud/{first['id']}", world.admin)
    again = create_account(world, accountSlug=...)
    assert again["slug"] == "prod-aws-2"


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"accountName": ...}, "accountName"),
        ({"accountId": ""}, "accountId"),
        ({"provider": "AWS!"}, "provider"),
        ({"accountSlug": "Not A Slug"}, "accountSlug"),
        ({"cloudConfig": []}, "cloudConfig"),
        ({"surprise": 1}, "unknown"),
    ],
)
def test_create_bad_input_is_400(world, fields, message) -> None:
    assert_error(
        world.post("/api/v1/cloud", world.admin, json=account_body(**fields)), 400, message
    )
    assert CloudAccount.select().count() == 0


def test_create_in_an_unknown_environment_is_404(world) -> None:
    result = world.post("/api/v1/cloud", world.admin, json=account_body(environment="nope"))
    assert_error(result, 404, "environment not found")


def test_get_by_id_slug_and_provider_account(world) -> None:
    account = create_account(world)
    for path in (
        f"/api/v1/cloud/{account['id']}",
        "/api/v1/cloud/prod-aws",
        "/api/v1/cloud/provider/aws/account/123456789012",
    ):
        result = world.get(path, world.admin)
        assert result.status_code == 200 and result.json == account
    assert_error(world.get("/api/v1/cloud/provider/gcp/account/123456789012", world.admin), 404)


def test_token_rotation_returns_the_token_once_and_keeps_a_hash(world) -> None:
    account = create_account(world)
    first = world.post(f"/api/v1/cloud/{account['slug']}/token/rotate", world.admin).json
    second = world.post(f"/api/v1/cloud/{account['slug']}/token/rotate", world.admin).json
    assert set(first) == RECORD | {"token"}
    assert re.match(r"^cat_[0-9A-Za-z]{40}$", first["token"]) and first["token"] != second["token"]
    assert CloudAccount.get_by_id(account["id"]).token_hash == sha256_hex(second["token"])
    assert "token" not in world.get(f"/api/v1/cloud/{account['id']}", world.admin).json


def test_list_active_by_default_all_with_the_switch(world) -> None:
    create_env(world, world.admin, "Other env")
    a = create_account(world, accountSlug=..., accountName="Alpha", accountId="1")
    b = create_account(world, accountSlug=..., accountName="Beta", accountId="2", provider="gcp")
    c = create_account(
        world, accountSlug=..., accountName="Gamma", accountId="3", environment="other-env"
    )
    world.delete(f"/api/v1/cloud/{a['id']}", world.admin)
    result = world.get("/api/v1/clouds", world.admin, params={"sort": "name", "order": "asc"})
    assert [x["id"] for x in result.json] == [b["id"], c["id"]]
    assert result.headers["X-Total-Count"] == "2"
    everything = world.get("/api/v1/clouds", world.admin, params={"all": "true", "sort": "name"})
    assert [x["name"] for x in everything.json] == ["Gamma", "Beta", "Alpha"]
    page = world.get("/api/v1/clouds", world.admin, params={"all": "1", "limit": 1, "offset": 1})
    assert len(page.json) == 1 and page.headers["X-Total-Count"] == "3"
    assert [
        x["name"] for x in world.get("/api/v1/clouds", world.admin, params={"search": "amm"}).json
    ] == ["Gamma"]
    by_env = world.get("/api/v1/clouds", world.admin, params={"filter": "[environment=other-env]"})
    assert [x["id"] for x in by_env.json] == [c["id"]]
    by_provider = world.get("/api/v1/clouds", world.admin, params={"filter": "[provider=gcp]"})
    assert [x["id"] for x in by_provider.json] == [b["id"]]


@pytest.mark.parametrize(
    "params", [{"all": "maybe"}, {"sort": "secret"}, {"limit": 0}, {"filter": "[x=1]"}]
)
def test_list_bad_parameters_are_400(world, params) -> None:
    assert_error(world.get("/api/v1/clouds", world.admin, params=params), 400)


# -- setup ------------------------------------------------------------------------------


@pytest.fixture
def settings_overrides():
    return {
        "setup_role_arn": "arn:aws:iam::999999999999:root",
        "setup_template_url": "https://templates.example/appliance.yaml",
        "setup_stack_name": "appliance-stack",
    }


def test_preflight_is_stable_per_organization(world) -> None:
    other = world.new_org("Other")
    first = world.get("/api/v1/setup/preflight", world.admin)
    assert first.status_code == 200, first.text
    assert first.json == {
        "cloud_provider": "aws",
        "arn": "arn:aws:iam::999999999999:root",
        "template_url": "https://templates.example/appliance.yaml",
        "external_id": first.json["external_id"],
        "organization": world.admin.org_id,
        "stack_name": "appliance-stack",
    }
    again = world.get("/api/v1/setup/preflight", world.admin, params={"vendor": str(uuid.uuid4())})
    assert again.json["external_id"] == first.json["external_id"]
    theirs = world.get("/api/v1/setup/preflight", other).json
    assert theirs["external_id"] != first.json["external_id"]
    assert_error(world.get("/api/v1/setup/preflight", world.admin, params={"vendor": "x"}), 400)


def test_vendor_setup_creates_the_account_in_the_named_environment(world) -> None:
    env = create_env(world, world.admin, "Vendor env")
    body = {"cloud": account_body(environment=env["slug"], externalId=...)}
    result = world.post("/api/v1/vendor/setup", world.admin, json=body)
    assert result.status_code == 200, result.text
    assert set(result.json) == RECORD
    preflight = world.get("/api/v1/setup/preflight", world.admin).json
    assert result.json["external_id"] == preflight["external_id"]
    described = world.get(f"/api/v1/environment/{env['id']}", world.admin).json
    assert described["cloud_account"]["id"] == result.json["id"]


@pytest.mark.parametrize("body", [{}, {"cloud": "x"}, {"cloud": {}}, {"cloud": {}, "x": 1}])
def test_vendor_setup_bad_input_is_400(world, body) -> None:
    assert_error(world.post("/api/v1/vendor/setup", world.admin, json=body), 400)
    assert CloudAccount.select().count() == 0


# -- access -----------------------------------------------------------------------------

ENDPOINTS = [
    ("post", "/api/v1/cloud", "create:cloud", account_body(accountSlug="n", accountId="9")),
    ("get", "/api/v1/cloud/{acc}", "read:cloud", None),
    ("delete", "/api/v1/cloud/{acc}", "delete:cloud", None),
    ("get", "/api/v1/cloud/provider/aws/account/{accid}", "read:cloud", None),
    ("post", "/api/v1/cloud/{acc}/token/rotate", "create:cloud", None),
    ("get", "/api/v1/clouds", "read:cloud", None),
    ("get", "/api/v1/setup/preflight", "read:vendor", None),
    ("post", "/api/v1/vendor/setup", "create:cloud", {"cloud": account_body(accountId="8")}),
]


def _call(world, method, path, body, caller, account):
    path = path.replace("{acc}", account["slug"]).replace("{accid}", account["cloud_account"])
    return getattr(world, method)(path, caller, **({} if body is None else {"json": body}))


@pytest.mark.parametrize("method, path, permission, body", ENDPOINTS)
def test_without_credentials_is_401(world, method, path, permission, body) -> None:
    account = create_account(world)
    assert_error(_call(world, method, path, body, None, account), 401)


@pytest.mark.parametrize("method, path, permission, body", ENDPOINTS)
def test_without_the_permission_is_403_naming_it(world, method, path, permission, body) -> None:
    account = create_account(world)
    caller = roleless(world, world.admin, "nobody@x.example")
    assert_error(_call(world, method, path, body, caller, account), 403, permission)
    assert CloudAccount.get_by_id(account["id"]).is_deleted is False


def test_viewer_reads_accounts_but_not_vendor_setup(world) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert world.get("/api/v1/clouds", viewer).status_code == 200
    assert_error(world.get("/api/v1/setup/preflight", viewer), 403, "read:vendor")
    result = world.post("/api/v1/vendor/setup", viewer, json={"cloud": account_body()})
    assert_error(result, 403, "create:cloud")


@pytest.mark.parametrize("method, path, permission, body", [e for e in ENDPOINTS if "{acc" in e[1]])
def test_another_organizations_account_is_404(world, method, path, permission, body) -> None:
    other = world.new_org("Other")
    account = create_account(world, other)
    assert_error(_call(world, method, path, body, world.admin, account), 404, "not found")
    assert CloudAccount.get_by_id(account["id"]).is_deleted is False
    assert world.get("/api/v1/clouds", world.admin).json == []
