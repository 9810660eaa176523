"""4.3 Secrets and 4.4 public keys: ciphertext only at rest, decrypted only for tasks."""

from __future__ import annotations

import logging
import uuid

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from appliance.domain import secretbox
from appliance.errors import Invalid
from appliance.models import Event, OrganizationKey
from appliance.services import secrets as secret_service
from tests.api.envhelpers import create_env, public_key, seal
from tests.conftest import assert_error

SECRETS = "/api/v1/environment/{}/settings/secrets"


def _keys(world, slug: str, caller=None) -> list[str]:
    result = world.get(SECRETS.format(slug), caller or world.admin)
    assert result.status_code == 200, result.text
    return [s["key"] for s in result.json["secrets"]]


@pytest.fixture
def env(world):
    created = create_env(world, world.admin, "Vault")
    batch = [
        {"key": "DB_PASSWORD", "value": seal(world, world.admin, "hunter2")},
        {"key": "API_TOKEN", "value": seal(world, world.admin, "tok")},
    ]
    result = world.post(SECRETS.format("vault"), world.admin, json=batch)
    assert result.status_code == 200, result.text
    return created


def test_round_trip_decrypts_and_plaintext_is_nowhere_at_rest(world, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    env = create_env(world, world.admin, "Round trip")
    plaintext = f"plain-{uuid.uuid4().hex}"
    value = seal(world, world.admin, plaintext)
    result = world.post(
        SECRETS.format(env["slug"]), world.admin, json=[{"key": "K", "value": value}]
    )
    assert result.status_code == 200, result.text
    assert result.json["environment"]["guid"] == env["id"]
    [stored] = result.json["secrets"]
    assert set(stored) == {"id", "key", "value"} and stored["value"] == value
    got = secret_service.secrets_for_task(world.ctx, world.admin.org_id, env["id"])
    assert got.secrets == {"K": plaintext} and got.decryption_key_id is None
    world.get(f"/api/v1/environment/{env['slug']}", world.admin)
    world.get("/api/v1/environment/settings/secrets", world.admin)
    on_disk = b"".join(p.read_bytes() for p in world.data_dir.glob("appliance.db*"))
    assert value.encode() in on_disk  # stored as given
    assert plaintext.encode() not in on_disk
    assert plaintext not in caplog.text
    assert all(value not in str(e.payload) for e in Event.select())


@pytest.mark.parametrize(
    "value",
    [
        "hunter2",
        "v1.abc.def.ghi",
        "v2.AAAA.AAAA.AAAA",
        None,
        5,
    ],
)
def test_a_value_not_in_the_ciphertext_format_is_400_without_echo(world, env, value) -> None:
    batch = [{"key": "NEW", "value": value}]
    body = assert_error(world.post(SECRETS.format("vault"), world.admin, json=batch), 400)
    if isinstance(value, str):
        assert value not in body["message"]
    assert "NEW" not in _keys(world, "vault")


def test_a_value_for_another_key_is_400(world, env) -> None:
    other = world.new_org("Other")
    batch = [{"key": "NEW", "value": seal(world, other, "x")}]
    assert_error(world.post(SECRETS.format("vault"), world.admin, json=batch), 400, "public key")


@pytest.mark.parametrize(
    "keys",
    [["NEW", "DB_PASSWORD"], ["NEW", "NEW"]],
)
def test_create_conflict_is_409_and_adds_nothing(world, env, keys) -> None:
    batch = [{"key": k, "value": seal(world, world.admin, "x")} for k in keys]
    result = world.post(SECRETS.format("vault"), world.admin, json=batch)
    assert_error(result, 409, "secret with such key already exists")
    assert sorted(_keys(world, "vault")) == ["API_TOKEN", "DB_PASSWORD"]


@pytest.mark.parametrize("bad", [{"key": "bad key"}, {"key": "OK", "extra": 1}, "K"])
def test_one_bad_item_adds_nothing(world, env, bad) -> None:
    good = {"key": "GOOD", "value": seal(world, world.admin, "x")}
    if isinstance(bad, dict):
        bad = {"value": seal(world, world.admin, "x"), **bad}
    assert_error(world.post(SECRETS.format("vault"), world.admin, json=[good, bad]), 400)
    assert "GOOD" not in _keys(world, "vault")


def test_update_by_key_and_by_id(world, env) -> None:
    rows = {s["key"]: s for s in world.get(SECRETS.format("vault"), world.admin).json["secrets"]}
    new_value = seal(world, world.admin, "changed")
    batch = [
        {"key": "DB_PASSWORD", "value": new_value},
        {"id": rows["API_TOKEN"]["id"], "key": "RENAMED", "value": seal(world, world.admin, "t")},
    ]
    result = world.put(SECRETS.format("vault"), world.admin, json=batch)
    assert result.status_code == 200, result.text
    got = secret_service.secrets_for_task(world.ctx, world.admin.org_id, env["id"])
    assert got.secrets == {"DB_PASSWORD": "changed", "RENAMED": "t"}


def test_update_unknown_is_404_and_a_clash_409_nothing_changes(world, env) -> None:
    rows = {s["key"]: s for s in world.get(SECRETS.format("vault"), world.admin).json["secrets"]}
    value = seal(world, world.admin, "changed")
    unknown = [{"key": "DB_PASSWORD", "value": value}, {"key": "MISSING", "value": value}]
    assert_error(world.put(SECRETS.format("vault"), world.admin, json=unknown), 404, "MISSING")
    clash = [
        {"key": "DB_PASSWORD", "value": value},
        {"id": rows["API_TOKEN"]["id"], "key": "DB_PASSWORD", "value": value},
    ]
    assert_error(world.put(SECRETS.format("vault"), world.admin, json=clash), 409)
    got = secret_service.secrets_for_task(world.ctx, world.admin.org_id, env["id"])
    assert got.secrets == {"DB_PASSWORD": "hunter2", "API_TOKEN": "tok"}


def test_update_bad_value_is_400(world, env) -> None:
    batch = [{"key": "DB_PASSWORD", "value": "plain"}]
    assert_error(world.put(SECRETS.format("vault"), world.admin, json=batch), 400)


def test_delete_by_key_all_or_nothing(world, env) -> None:
    assert_error(
        world.delete(SECRETS.format("vault"), world.admin, json=["DB_PASSWORD", "NOPE"]),
        404,
        "NOPE",
    )
    assert len(_keys(world, "vault")) == 2
    result = world.delete(SECRETS.format("vault"), world.admin, json=["DB_PASSWORD"])
    assert result.status_code == 200 and [s["key"] for s in result.json["secrets"]] == ["API_TOKEN"]
    assert_error(world.delete(SECRETS.format("vault"), world.admin, json=[1]), 400)


def test_developer_cannot_read_secret_values(world, env) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    assert_error(world.get(SECRETS.format("vault"), dev), 403, "read:secret")
    assert world.get("/api/v1/environment/settings/secrets", dev).status_code == 200


# -- public keys ------------------------------------------------------------------------


def test_every_organization_has_its_own_key_pair_sealed_at_rest(world) -> None:
    other = world.new_org("Other")
    mine, theirs = public_key(world, world.admin), public_key(world, other)
    assert mine.startswith("-----BEGIN PUBLIC KEY-----") and mine != theirs
    assert secretbox.load_public_key(mine).key_size == 2048  # tests use 2048-bit keys
    row = OrganizationKey.get(OrganizationKey.organization == world.admin.org_id)
    assert "PRIVATE" not in row.sealed_private_key
    assert world.get("/api/v1/public-keys", world.admin).json == {"public_key": mine}


def test_an_organization_without_a_key_gets_one_on_first_use(world) -> None:
    OrganizationKey.delete().where(OrganizationKey.organization == world.admin.org_id).execute()
    pem = public_key(world, world.admin)
    assert public_key(world, world.admin) == pem
    assert (
        OrganizationKey.select().where(OrganizationKey.organization == world.admin.org_id).count()
        == 1
    )


def _managed(bits: int = 2048):
    private = secretbox.generate_private_key(bits)
    return private, secretbox.public_pem(private)


def test_managed_key_passes_secrets_through_with_its_identifier(world, env) -> None:
    private, pem = _managed()
    arn = "arn:aws:kms:eu-west-1:123456789012:key/abcd"
    result = world.post(
        "/api/v1/public-keys", world.admin, json={"public_key": pem, "key_identifier": arn}
    )
    assert result.status_code == 200, result.text
    body = result.json
    assert set(body) == {"public_key", "key_identifier", "created_at", "created_by"}
    assert body["key_identifier"] == arn and body["created_by"]["id"] == world.admin.user_id
    assert public_key(world, world.admin) == pem
    value = secretbox.encrypt(pem, "kms-plain")
    result = world.post(SECRETS.format("vault"), world.admin, json=[{"key": "KMS", "value": value}])
    assert result.status_code == 200, result.text
    got = secret_service.secrets_for_task(world.ctx, world.admin.org_id, env["id"])
    assert got.decryption_key_id == arn
    assert got.secrets["KMS"] == value
    assert secretbox.decrypt(private, got.secrets["KMS"]) == b"kms-plain"


@pytest.mark.parametrize(
    "body, message",
    [
        ({"key_identifier": "k"}, "public_key"),
        ({"public_key": "nope", "key_identifier": "k"}, "public_key"),
        ({"public_key": "PEM2048", "key_identifier": ""}, "key_identifier"),
        ({"public_key": "PEM1024", "key_identifier": "k"}, "2048"),
        ({"public_key": "PEMEC", "key_identifier": "k"}, "RSA"),
    ],
)
def test_bad_managed_key_is_400_and_keeps_the_key(world, body, message) -> None:
    pems = {
        "PEM2048": _managed()[1],
        "PEM1024": secretbox.public_pem(secretbox.generate_private_key(1024)),
        "PEMEC": _ec_pem(),
    }
    before = public_key(world, world.admin)
    if body.get("public_key") in pems:
        body = {**body, "public_key": pems[body["public_key"]]}
    assert_error(world.post("/api/v1/public-keys", world.admin, json=body), 400, message)
    assert public_key(world, world.admin) == before


def _ec_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def test_secretbox_round_trip_and_tamper_detection() -> None:
    private = secretbox.generate_private_key(2048)
    token = secretbox.encrypt(secretbox.public_pem(private), "héllo")
    assert token.startswith("v1.") and len(token.split(".")) == 4
    assert secretbox.decrypt(private, token) == "héllo".encode()
    head, wrapped, nonce, sealed = token.split(".")
    flipped = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    with pytest.raises(Invalid):
        secretbox.decrypt(private, ".".join((head, wrapped, nonce, flipped)))
