"""4.11 Webhooks: CRUD, listing, scopes, events, URL safety, and the delivery extensions."""

from __future__ import annotations

from typing import Any

import pytest

from appliance.events import EVENT_TYPES
from appliance.models import Environment, Webhook, WebhookDelivery
from appliance.services.delivery import DeliveryWorker
from tests.conftest import assert_error
from tests.webhooks_support import FakeDns, Receiver

DNS = FakeDns(
    {
        "hooks.example": ["10.0.0.5"],
        "metadata.example": ["169.254.169.254"],
        "zero.example": ["0.0.0.0"],
        "v6ll.example": ["fe80::1"],
    }
)
URL = "https://hooks.example/in"
UUID0 = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"resolve_host": DNS}


def create(world, caller, **fields: Any):
    body = {"name": "ci", "endpoint_url": URL, **fields}
    return world.post("/api/v1/webhook", caller, json=body)


def default_env(world, caller) -> Environment:
    return Environment.get(Environment.organization == caller.org_id)


# --- POST /webhook -------------------------------------------------------------------------------


def test_create_returns_every_field_and_the_secret_once(world) -> None:
    env = default_env(world, world.admin)
    result = create(
        world,
        world.admin,
        scope="environment",
        scope_id=env.slug,
        events=["deployment:created", "deployment:updated", "deployment:created"],
        is_enabled=False,
    )
    assert result.status_code == 200, result.text
    body = result.json
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 40
    assert set(body) == {
        "id", "name", "scope", "scope_id", "scope_slug", "endpoint_url", "is_enabled",
        "created_by", "created_at", "updated_at", "events", "secret",
    }  # fmt: skip
    assert body["name"] == "ci"
    assert (body["scope"], body["scope_id"], body["scope_slug"]) == (
        "environment",
        env.id,
        env.slug,
    )
    assert body["endpoint_url"] == URL
    assert body["is_enabled"] is False
    assert body["events"] == ["deployment:created", "deployment:updated"]
    assert body["created_by"]["id"] == world.admin.user_id
    assert body["created_at"].endswith("Z") and body["updated_at"] is None
    again = world.get(f"/api/v1/webhook/{body['id']}", world.admin).json
    assert "secret" not in again
    assert body["secret"] not in Webhook.get_by_id(body["id"]).secret  # sealed at rest
    assert again == {k: v for k, v in body.items() if k != "secret"}


def test_create_defaults_to_organization_scope_and_all_events(world) -> None:
    body = create(world, world.admin).json
    assert body["scope"] == "organization"
    assert body["scope_id"] == world.admin.org_id
    assert body["scope_slug"] == "default"
    assert body["events"] == [] and body["is_enabled"] is True


@pytest.mark.parametrize(
    ("scope", "scope_id", "slug"),
    [("deployment", "web-app", "web-app"), ("blueprint", "@acme/network", "@acme/network")],
)
def test_deployment_and_blueprint_scopes_take_shaped_references(
    world, scope: str, scope_id: str, slug: str
) -> None:
    body = create(world, world.admin, scope=scope, scope_id=scope_id).json
    assert (body["scope"], body["scope_id"], body["scope_slug"]) == (scope, scope_id, slug)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": ""}, "name"),
        ({"name": None}, "name"),
        ({"endpoint_url": "ftp://hooks.example/"}, "http or https"),
        ({"endpoint_url": "not a url"}, "http or https"),
        ({"endpoint_url": "https://user:pw@hooks.example/"}, "credentials"),
        ({"endpoint_url": "http://169.254.169.254/latest/meta-data"}, "link-local"),
        ({"endpoint_url": "http://[fe80::1]/"}, "link-local"),
        ({"endpoint_url": "http://0.0.0.0:8080/"}, "unspecified"),
        ({"endpoint_url": "http://[::]/"}, "unspecified"),
        ({"endpoint_url": "http://metadata.example/"}, "169.254.169.254"),
        ({"endpoint_url": "http://v6ll.example/"}, "link-local"),
        ({"endpoint_url": "http://zero.example/"}, "unspecified"),
        ({"endpoint_url": "http://nowhere.example/"}, "does not resolve"),
        ({"events": ["deployment:exploded"]}, "known: package:published"),
        ({"events": "deployment:created"}, "array"),
        ({"scope": "galaxy"}, "scope must be one of"),
        ({"scope": "environment"}, "scope_id is required"),
        ({"scope": "deployment", "scope_id": "Not A Slug!"}, "deployment reference"),
        ({"scope": "blueprint", "scope_id": "../etc"}, "blueprint reference"),
        ({"scope": "organization", "scope_id": "org_other"}, "organization's id"),
        ({"is_enabled": "yes"}, "boolean"),
        ({"colour": "red"}, "unknown field"),
    ],
)
def test_create_refuses_bad_input_and_creates_nothing(world, fields, message) -> None:
    assert_error(create(world, world.admin, **fields), 400, message)
    assert Webhook.select().count() == 0


def test_unknown_event_lists_every_known_one(world) -> None:
    body = assert_error(create(world, world.admin, events=["nope:x"]), 400, "unknown event")
    for name in EVENT_TYPES:
        assert name in body["message"]
    assert body["details"][0]["event"] == "nope:x"


def test_environment_scope_must_be_an_environment_of_the_organization(world) -> None:
    other = world.new_org("other")
    theirs = default_env(world, other)
    assert_error(create(world, world.admin, scope="environment", scope_id=theirs.id), 404)
    assert_error(create(world, world.admin, scope="environment", scope_id=UUID0), 404)
    assert Webhook.select().count() == 0


def test_allow_list_restricts_targets(world) -> None:
    settings = world.ctx.settings
    object.__setattr__(settings, "webhook_allow_list", ("10.0.0.0/24", "*.corp.example"))
    try:
        assert create(world, world.admin).status_code == 200  # 10.0.0.5
        assert_error(
            create(world, world.admin, endpoint_url="http://127.0.0.1:9/x"), 400, "allow-list"
        )
    finally:
        object.__setattr__(settings, "webhook_allow_list", ())


def test_create_needs_credentials_and_the_permission(world) -> None:
    assert_error(create(world, None), 401)
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert_error(create(world, viewer), 403, "create:webhook")
    assert Webhook.select().count() == 0


# --- GET / PUT / DELETE /webhook/{id} ------------------------------------------------------------


def test_get_put_delete_are_scoped_to_the_organization(world) -> None:
    hook = create(world, world.admin).json
    other = world.new_org("other")
    path = f"/api/v1/webhook/{hook['id']}"
    assert_error(world.get(path, other), 404)
    assert_error(world.put(path, other, json={"name": "x"}), 404)
    assert_error(world.delete(path, other), 404)
    assert world.get(path, world.admin).json["name"] == "ci"


def test_endpoints_refuse_missing_credentials_and_permissions(world) -> None:
    hook = create(world, world.admin).json
    path = f"/api/v1/webhook/{hook['id']}"
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    developer = world.member(world.admin, "d@x.example", "Developer")
    for call in (world.get, world.put, world.delete):
        assert_error(call(path, None, json={}), 401)
    assert_error(world.get("/api/v1/webhooks"), 401)
    assert_error(world.put(path, viewer, json={"name": "x"}), 403, "update:webhook")
    assert_error(world.delete(path, viewer), 403, "delete:webhook")
    nobody = _no_read(world)
    assert_error(world.get(path, nobody), 403, "read:webhook")
    assert_error(world.get("/api/v1/webhooks", nobody), 403, "read:webhook")
    assert world.get(path, developer).status_code == 200
    assert world.get(path, viewer).status_code == 200


def _no_read(world):
    """A member whose role lacks read:webhook: a role with no permissions at all."""
    from appliance.models import MemberRole, Membership

    caller = world.member(world.admin, "none@x.example", "Viewer")
    membership = Membership.get(Membership.user == caller.user_pk)
    MemberRole.delete().where(MemberRole.membership == membership).execute()
    return caller


def test_put_changes_fields_and_stamps_updated_at(world) -> None:
    hook = create(world, world.admin).json
    env = default_env(world, world.admin)
    path = f"/api/v1/webhook/{hook['id']}"
    body = {
        "name": "renamed",
        "endpoint_url": "http://127.0.0.1:9000/x",
        "is_enabled": False,
        "events": ["task:created"],
        "scope": "environment",
        "scope_id": env.id,
    }
    result = world.put(path, world.admin, json=body)
    assert result.status_code == 200, result.text
    updated = result.json
    for key, value in body.items():
        assert updated[key] == value
    assert updated["scope_slug"] == env.slug and updated["updated_at"] is not None
    assert "secret" not in updated
    back = world.put(path, world.admin, json={"scope": "organization"}).json
    assert (back["scope"], back["scope_id"]) == ("organization", world.admin.org_id)


@pytest.mark.parametrize(
    "body",
    [
        {"name": ""},
        {"endpoint_url": "http://169.254.169.254/"},
        {"events": ["x:y"]},
        {"scope": "deployment"},
        {"is_enabled": 1},
        {"secret": "whsec_x"},
    ],
)
def test_put_refuses_bad_input_and_changes_nothing(world, body) -> None:
    hook = create(world, world.admin).json
    path = f"/api/v1/webhook/{hook['id']}"
    assert_error(world.put(path, world.admin, json=body), 400)
    assert world.get(path, world.admin).json == {k: v for k, v in hook.items() if k != "secret"}


def test_bad_ids_are_400_and_unknown_ones_404(world) -> None:
    for call in (world.get, world.put, world.delete):
        assert_error(call("/api/v1/webhook/not-a-uuid", world.admin, json={}), 400, "UUID")
        assert_error(call(f"/api/v1/webhook/{UUID0}", world.admin, json={}), 404)


def test_delete_returns_the_id_and_removes_deliveries(world) -> None:
    hook = create(world, world.admin).json
    world.post(f"/api/v1/webhook/{hook['id']}/test", world.admin)
    result = world.delete(f"/api/v1/webhook/{hook['id']}", world.admin)
    assert result.json == {"id": hook["id"]}
    assert_error(world.get(f"/api/v1/webhook/{hook['id']}", world.admin), 404)
    assert WebhookDelivery.select().count() == 0


# --- GET /webhooks -------------------------------------------------------------------------------


def test_list_pages_sorts_searches_filters_and_counts(world) -> None:
    env = default_env(world, world.admin)
    a = create(world, world.admin, name="alpha", events=["task:created"]).json
    b = create(world, world.admin, name="beta", scope="environment", scope_id=env.id).json
    c = create(world, world.admin, name="gamma", is_enabled=False, events=["member:invited"]).json
    create(world, world.new_org("other"), name="alien")

    listing = world.get("/api/v1/webhooks", world.admin).json
    assert listing["total"] == 3 and listing["stats"] == {"enable": 2}
    assert [w["id"] for w in listing["list"]] == [c["id"], b["id"], a["id"]]  # newest first
    assert listing["list"][0] == {k: v for k, v in c.items() if k != "secret"}
    assert listing["filters"] == {
        "scopes": ["environment", "organization"],
        "scope_ids": sorted([env.id, world.admin.org_id]),
        "endpoint_urls": [URL],
        "created_bys": [a["created_by"]],
        "is_enabled": [False, True],
        "events": ["member:invited", "task:created"],
    }

    def names(query: str) -> list[str]:
        result = world.get(f"/api/v1/webhooks?{query}", world.admin)
        assert result.status_code == 200, result.text
        return [w["name"] for w in result.json["list"]]

    assert names("all=false") == ["beta", "alpha"]
    assert names("sort=name&order=ASC") == ["alpha", "beta", "gamma"]
    assert names("sort=name&order=ASC&offset=1&limit=1") == ["beta"]
    assert names("search=AMM") == ["gamma"]
    assert names("filter=[scope=environment]") == ["beta"]
    assert names("filter=[is_enabled=false]") == ["gamma"]
    assert names(f"filter=[created_by={world.admin.user_id}]") == ["gamma", "beta", "alpha"]
    # An empty events list takes every event, so it matches any event filter.
    assert names("filter=[event=task:created]&sort=name&order=ASC") == ["alpha", "beta"]
    assert world.get("/api/v1/webhooks?search=alp", world.admin).json["stats"] == {"enable": 1}


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "offset=-1",
        "sort=colour",
        "order=sideways",
        "all=maybe",
        "filter=[colour=red]",
        "filter=[is_enabled=perhaps]",
        "filter=[created_by=bob]",
        "filter=[event=nope:x]",
    ],
)
def test_list_refuses_bad_parameters(world, query: str) -> None:
    assert_error(world.get(f"/api/v1/webhooks?{query}", world.admin), 400)


# --- extensions: deliveries, redeliver, test -----------------------------------------------------


@pytest.fixture
def receiver():
    found = Receiver()
    yield found
    found.close()


def test_test_event_is_delivered_signed_and_listed(world, receiver) -> None:
    hook = create(world, world.admin, endpoint_url=receiver.url, events=["task:created"]).json
    other = create(world, world.admin, name="other", endpoint_url=receiver.url).json
    receiver.secret = hook["secret"]
    queued = world.post(f"/api/v1/webhook/{hook['id']}/test", world.admin)
    assert queued.status_code == 200, queued.text
    assert queued.json["status"] == "pending" and queued.json["event_type"] == "webhook:test"
    worker = DeliveryWorker(world.ctx, resolve=DNS)
    try:
        assert worker.run_once() == 1
    finally:
        worker.close()
    (got,) = receiver.received
    assert got.verified and got.payload["type"] == "webhook:test"
    assert got.payload["data"] == {"webhook_id": hook["id"], "name": "ci"}
    assert world.get(f"/api/v1/webhook/{other['id']}/deliveries", world.admin).json["total"] == 0

    listing = world.get(f"/api/v1/webhook/{hook['id']}/deliveries", world.admin).json
    assert listing["total"] == 1
    (delivery,) = listing["list"]
    assert delivery["id"] == queued.json["id"]
    assert delivery["event_id"] == got.payload["id"] == receiver.ids()[0]
    assert delivery["status"] == "succeeded" and delivery["attempt_count"] == 1
    assert delivery["last_status_code"] == 200 and delivery["completed_at"]
    (attempt,) = delivery["attempts"]
    assert attempt["status_code"] == 200 and attempt["error"] is None
    assert attempt["number"] == 1 and attempt["url"] == receiver.url
    assert attempt["duration_ms"] >= 0 and attempt["next_attempt_at"] is None


def test_redeliver_sends_the_same_event_again(world, receiver) -> None:
    hook = create(world, world.admin, endpoint_url=receiver.url).json
    receiver.secret = hook["secret"]
    first = world.post(f"/api/v1/webhook/{hook['id']}/test", world.admin).json
    worker = DeliveryWorker(world.ctx, resolve=DNS)
    try:
        worker.run_once()
        again = world.post(
            f"/api/v1/webhook/{hook['id']}/deliveries/{first['id']}/redeliver", world.admin
        )
        assert again.status_code == 200, again.text
        assert again.json["redelivery_of"] == first["id"]
        assert again.json["event_id"] == first["event_id"]
        worker.run_once()
    finally:
        worker.close()
    assert receiver.ids() == [first["event_id"], first["event_id"]]
    assert all(r.verified for r in receiver.received)
    assert receiver.received[0].body == receiver.received[1].body


def test_delivery_extensions_check_auth_org_and_input(world) -> None:
    hook = create(world, world.admin).json
    delivery = world.post(f"/api/v1/webhook/{hook['id']}/test", world.admin).json
    base = f"/api/v1/webhook/{hook['id']}"
    redeliver = f"{base}/deliveries/{delivery['id']}/redeliver"
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    other = world.new_org("other")
    assert_error(world.get(f"{base}/deliveries"), 401)
    assert_error(world.post(redeliver), 401)
    assert_error(world.post(f"{base}/test"), 401)
    assert_error(world.get(f"{base}/deliveries", _no_read(world)), 403, "read:webhook")
    assert_error(world.post(redeliver, viewer), 403, "update:webhook")
    assert_error(world.post(f"{base}/test", viewer), 403, "update:webhook")
    assert_error(world.get(f"{base}/deliveries", other), 404)
    assert_error(world.post(redeliver, other), 404)
    assert_error(world.post(f"{base}/test", other), 404)
    assert_error(world.post(f"{base}/deliveries/{UUID0}/redeliver", world.admin), 404)
    assert_error(world.get(f"{base}/deliveries?filter=[status=lost]", world.admin), 400)
    assert_error(world.get(f"{base}/deliveries?sort=colour", world.admin), 400)
    assert_error(world.post("/api/v1/webhook/nope/test", world.admin), 400, "UUID")
    assert WebhookDelivery.select().count() == 1
    listing = world.get(f"{base}/deliveries?filter=[status=pending]", world.admin).json
    assert listing["total"] == 1
