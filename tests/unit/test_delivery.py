"""The delivery worker: matching, signatures, retries on an injected clock, order, leases,
receivers that misbehave, and URL safety at delivery time. No sleeping."""

from __future__ import annotations

import json
import socket
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError

from appliance.models import DeliveryAttempt, Environment, WebhookDelivery
from appliance.models.db import write_transaction
from appliance.services import webhooks
from appliance.services.delivery import RETRY_SCHEDULE, DeliveryWorker, Outcome
from tests.webhooks_support import Clock, FakeDns, Receiver

CLOCK = Clock()
DNS = FakeDns({"hooks.example": ["127.0.0.1"]})


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    CLOCK.__init__()
    DNS.table["hooks.example"] = ["127.0.0.1"]
    return {"clock": CLOCK, "resolve_host": DNS}


@pytest.fixture
def receiver():
    found = Receiver()
    found.check_time = False  # the injected clock is years from the wall clock
    yield found
    found.close()


@pytest.fixture
def worker(world):
    found = DeliveryWorker(world.ctx, timeout=1.0)
    yield found
    found.close()


def subscribe(world, url: str, org=None, **fields: Any) -> tuple[str, str]:
    org = org or world.admin
    row, secret = webhooks.create_webhook(
        world.ctx, org.org_id, org.user_pk, {"name": "w", "endpoint_url": url, **fields}
    )
    return row.id, secret


def emit(world, event: str, org=None, data: dict | None = None, **scope: Any) -> None:
    org = org or world.admin
    with write_transaction():
        world.ctx.emit(event, org.org_id, data or {"n": 1}, **scope)


def deliveries(webhook_id: str) -> list[WebhookDelivery]:
    return list(
        WebhookDelivery.select()
        .where(WebhookDelivery.webhook == webhook_id)
        .order_by(WebhookDelivery.seq)
    )


def attempts(delivery: WebhookDelivery) -> list[DeliveryAttempt]:
    return list(delivery.deliveryattempt_set.order_by(DeliveryAttempt.number))


# --- matching ----------------------------------------------------------------------------------


def test_events_reach_each_enabled_webhook_whose_scope_and_events_cover_them(
    world, receiver, worker
) -> None:
    env = Environment.get(Environment.organization == world.admin.org_id)
    other = world.new_org("other")
    every, _ = subscribe(world, receiver.url)
    tasks, _ = subscribe(world, receiver.url, events=["task:created"])
    in_env, _ = subscribe(world, receiver.url, scope="environment", scope_id=env.id)
    in_dep, _ = subscribe(world, receiver.url, scope="deployment", scope_id="web")
    in_pkg, _ = subscribe(world, receiver.url, scope="blueprint", scope_id="@acme/net")
    off, _ = subscribe(world, receiver.url, is_enabled=False)
    theirs, _ = subscribe(world, receiver.url, org=other)

    emit(world, "task:created", environment_id=env.id, deployment_slug="web")
    emit(world, "deployment:updated", environment_id="elsewhere", deployment_slug="api")
    emit(world, "package:published", package_name="@acme/net")
    worker.fan_out()

    def got(hook: str) -> list[str]:
        return [d.event_type for d in deliveries(hook)]

    assert got(every) == ["task:created", "deployment:updated", "package:published"]
    assert got(tasks) == ["task:created"]
    assert got(in_env) == ["task:created"]
    assert got(in_dep) == ["task:created"]
    assert got(in_pkg) == ["package:published"]
    assert got(off) == [] and got(theirs) == []
    assert worker.fan_out() == 0  # the cursor moved on: nothing is fanned out twice


def test_webhooks_created_after_an_event_do_not_receive_it(world, receiver, worker) -> None:
    emit(world, "task:created")
    CLOCK.advance(timedelta(seconds=1))
    hook, _ = subscribe(world, receiver.url)
    worker.fan_out()
    assert deliveries(hook) == []


# --- signatures, payload, headers --------------------------------------------------------------


def test_delivery_is_signed_per_standard_webhooks_and_tampering_is_detected(
    world, receiver, worker
) -> None:
    hook, secret = subscribe(world, receiver.url)
    receiver.secret = secret
    emit(world, "deployment:created", data={"slug": "web"}, deployment_slug="web")
    assert worker.run_once() == 1
    (got,) = receiver.received
    assert got.verified
    headers = {k.lower(): v for k, v in got.headers.items()}
    assert headers["content-type"] == "application/json"
    assert headers["webhook-timestamp"] == str(int(CLOCK.now.timestamp()))
    assert headers["webhook-signature"].startswith("v1,")
    body = json.loads(got.body)
    assert set(body) == {"id", "type", "timestamp", "organization", "data"}
    assert body["id"] == headers["webhook-id"]
    assert body["type"] == "deployment:created" and body["data"] == {"slug": "web"}
    assert body["organization"] == world.admin.org_id
    assert body["timestamp"] == "2030-01-01T00:00:00.000Z"

    verifier = StandardWebhook(secret)
    stamp = CLOCK.now
    assert (
        verifier.sign(headers["webhook-id"], stamp, got.body.decode())
        == (headers["webhook-signature"])
    )
    tampered = got.body.replace(b'"web"', b'"evil"')
    with pytest.raises(WebhookVerificationError):
        StandardWebhook(secret).verify(tampered, {**headers, "webhook-timestamp": _now()})
    wrong_secret = webhooks.new_secret()
    receiver.secret = wrong_secret
    assert not receiver._verify(got.headers, got.body).verified
    (delivery,) = deliveries(hook)
    assert delivery.status == "succeeded"


def _now() -> str:
    return str(int(time.time()))


# --- retries on the injected clock -------------------------------------------------------------


def test_fails_twice_then_succeeds_with_the_same_webhook_id(world, worker) -> None:
    receiver = Receiver(respond=lambda n: 500 if n < 2 else 204)
    receiver.check_time = False
    try:
        hook, secret = subscribe(world, receiver.url)
        receiver.secret = secret
        emit(world, "task:created")
        assert worker.run_once() == 1
        CLOCK.advance(timedelta(seconds=4))
        assert worker.run_once() == 0  # not due before 5 s
        CLOCK.advance(timedelta(seconds=1))
        assert worker.run_once() == 1
        CLOCK.advance(timedelta(minutes=5))
        assert worker.run_once() == 1
        CLOCK.advance(timedelta(days=2))
        assert worker.run_once() == 0
        ids = receiver.ids()
        assert len(ids) == 3 and len(set(ids)) == 1
        assert all(r.verified for r in receiver.received)
        assert len({r.body for r in receiver.received}) == 1
    finally:
        receiver.close()
    (delivery,) = deliveries(hook)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("succeeded", 3, 204)
    log = attempts(delivery)
    assert [a.status_code for a in log] == [500, 500, 204]
    assert [a.error for a in log] == ["HTTP 500", "HTTP 500", None]
    assert log[0].next_attempt_at == log[0].finished_at + RETRY_SCHEDULE[0]
    assert log[1].next_attempt_at == log[1].finished_at + RETRY_SCHEDULE[1]
    assert log[2].next_attempt_at is None


def test_always_failing_receiver_ends_failed_after_the_schedule(world, worker) -> None:
    receiver = Receiver(respond=lambda n: 503)
    try:
        hook, _ = subscribe(world, receiver.url)
        emit(world, "task:created")
        assert worker.run_once() == 1
        for delay in RETRY_SCHEDULE:
            CLOCK.advance(delay - timedelta(seconds=1))
            assert worker.run_once() == 0
            CLOCK.advance(timedelta(seconds=1))
            assert worker.run_once() == 1
        CLOCK.advance(timedelta(days=7))
        assert worker.run_once() == 0
        assert len(receiver.received) == 1 + len(RETRY_SCHEDULE)
    finally:
        receiver.close()
    (delivery,) = deliveries(hook)
    assert delivery.status == "failed" and delivery.attempts == 7
    assert delivery.completed_at is not None
    log = attempts(delivery)
    assert [a.number for a in log] == list(range(1, 8))
    assert log[-1].next_attempt_at is None and log[-1].error == "HTTP 503"


def test_order_per_webhook_follows_event_order(world, worker) -> None:
    receiver = Receiver(respond=lambda n: 500 if n == 0 else 200)
    try:
        hook, _ = subscribe(world, receiver.url)
        for n in range(5):
            emit(world, "task:updated", data={"n": n})
        assert worker.run_once() == 1  # the head failed: nothing behind it goes out
        assert worker.run_once() == 0
        CLOCK.advance(RETRY_SCHEDULE[0])
        assert worker.run_once() == 5
        order = [json.loads(r.body)["data"]["n"] for r in receiver.received]
    finally:
        receiver.close()
    assert order == [0, 0, 1, 2, 3, 4]
    assert {d.status for d in deliveries(hook)} == {"succeeded"}


# --- leases: coordination through the database --------------------------------------------------


def test_a_claimed_delivery_is_not_claimed_again_until_its_lease_expires(world, receiver) -> None:
    subscribe(world, receiver.url)
    emit(world, "task:created")
    first = DeliveryWorker(world.ctx, timeout=1.0)
    second = DeliveryWorker(world.ctx, timeout=1.0)
    try:
        first.fan_out()
        claims = first.claim()  # a process that claims, then dies before sending
        assert len(claims) == 1
        assert second.run_once() == 0
        CLOCK.advance(first.lease + timedelta(seconds=1))
        assert second.run_once() == 1
        assert len(receiver.received) == 1
        # The first process's late result is kept as an attempt but changes nothing.
        (claim,) = claims
        late = Outcome(CLOCK.now, receiver.url, status_code=500, error="HTTP 500")
        first.record([(claim.deliveries[0][0].seq, late)], claim.token, [])
    finally:
        first.close()
        second.close()
    (delivery,) = WebhookDelivery.select()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    assert [a.status_code for a in attempts(delivery)] == [200, 500]


# --- receivers that misbehave --------------------------------------------------------------------


def _raw_server(reply: bytes, delay: float = 0.0) -> tuple[socket.socket, str]:
    """A TCP server that answers every connection with `reply` after `delay` seconds."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                time.sleep(delay)
                try:
                    conn.sendall(reply)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    return server, f"http://127.0.0.1:{server.getsockname()[1]}/hook"


def _closed_port() -> str:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}/hook"


@pytest.mark.parametrize("kind", ["slow", "closed", "garbage", "redirect"])
def test_the_worker_survives_any_receiver(world, worker, kind: str) -> None:
    server = None
    redirecting = None
    if kind == "slow":
        server, url = _raw_server(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", delay=2.5)
    elif kind == "garbage":
        server, url = _raw_server(b"\x00\xffthis is not http\r\n\r\n")
    elif kind == "redirect":
        redirecting = Receiver(respond=lambda n: 302)
        url = redirecting.url
    else:
        url = _closed_port()
    try:
        hook, _ = subscribe(world, url)
        emit(world, "task:created")
        assert worker.run_once() == 1
    finally:
        if server is not None:
            server.close()
        if redirecting is not None:
            assert len(redirecting.received) == 1  # the redirect was not followed
            redirecting.close()
    (delivery,) = deliveries(hook)
    assert delivery.status == "pending" and delivery.attempts == 1
    (attempt,) = attempts(delivery)
    assert attempt.error
    assert attempt.next_attempt_at == attempt.finished_at + RETRY_SCHEDULE[0]
    if kind == "redirect":
        assert attempt.status_code == 302 and "redirect not followed" in attempt.error
    if kind == "slow":
        assert "Timeout" in attempt.error


# --- URL safety at delivery time ---------------------------------------------------------------


def test_a_name_that_later_resolves_to_metadata_is_refused_at_delivery(
    world, receiver, worker
) -> None:
    port = receiver.url.split(":")[2].split("/")[0]
    hook, _ = subscribe(world, f"http://hooks.example:{port}/hook")
    emit(world, "task:created")
    assert worker.run_once() == 1
    assert len(receiver.received) == 1  # resolved to loopback: delivered
    DNS.table["hooks.example"] = ["169.254.169.254"]
    emit(world, "task:updated")
    assert worker.run_once() == 1
    assert len(receiver.received) == 1  # nothing was sent
    second = deliveries(hook)[1]
    (attempt,) = attempts(second)
    assert attempt.status_code is None
    assert attempt.error.startswith("refused:") and "169.254.169.254" in attempt.error
    assert second.status == "pending" and second.last_error == attempt.error
