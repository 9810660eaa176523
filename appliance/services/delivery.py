"""Webhook delivery (DESIGN.md 8): outbox fan-out, leased claims, signed POSTs, retries.

All coordination is in the database, so several processes may run the worker:
- fan-out reads events past the `webhooks` outbox cursor and writes one delivery row per
  matching webhook, advancing the cursor in the same transaction;
- a claim leases the due head of each enabled webhook's pending queue (plus the due rows
  right behind it), so deliveries of one webhook go out in event order, one at a time;
- each attempt's result is recorded with the lease renewed for the rest of the claim;
  a process that dies leaves leases that expire, and the rows are claimed again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter

from appliance.domain.urls import Resolver, pinned_url, resolve_endpoint
from appliance.errors import Invalid
from appliance.models import DeliveryAttempt, Event, OutboxCursor, Webhook, WebhookDelivery
from appliance.models.db import database, to_iso, write_transaction
from appliance.services.context import ServiceContext
from appliance.services.webhooks import open_secret

log = logging.getLogger("appliance.webhooks")

CURSOR = "webhooks"
RETRY_SCHEDULE = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
)
TIMEOUT_SECONDS = 10.0
MAX_RESPONSE_BYTES = 64 * 1024
USER_AGENT = "appliance-webhooks/1"
GROUP = 25  # results committed together
GROUP_SECONDS = 0.5


def covers(hook: Webhook, event: Event) -> bool:
    """Does the webhook's scope and event list take this event?"""
    if hook.events and event.type not in hook.events:
        return False
    if hook.scope == "organization":
        return True
    if hook.scope == "environment":
        return event.environment_id == hook.scope_id
    if hook.scope == "deployment":
        return event.deployment_slug == hook.scope_id
    return hook.scope == "blueprint" and event.package_name == hook.scope_id


def signature(key: bytes, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` (Standard Webhooks)."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def payload(event: Event) -> bytes:
    """The request body: `{id, type, timestamp, organization, data}`, fixed per event."""
    body = {
        "id": event.id,
        "type": event.type,
        "timestamp": to_iso(event.created_at),
        "organization": event.organization_id,
        "data": event.payload,
    }
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode("utf-8")


class PinnedTlsAdapter(HTTPAdapter):
    """TLS to a pinned address: SNI and certificate checks use the name in the Host header."""

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        host_header = request.headers.get("host")
        if host_header:
            name = urlsplit(f"//{host_header}").hostname or host_header
            pool_kwargs["server_hostname"] = name
            if verify:
                pool_kwargs["assert_hostname"] = name
        return host_params, pool_kwargs


@dataclass
class Outcome:
    """What one attempt did."""

    started_at: datetime
    url: str
    status_code: int | None = None
    error: str | None = None
    duration_ms: int = 0

    @property
    def succeeded(self) -> bool:
        return self.error is None and self.status_code is not None and self.status_code < 300


@dataclass
class Claimed:
    """A webhook's run of leased deliveries, with what is needed to send them."""

    webhook_id: str
    url: str
    key: bytes
    token: str
    deliveries: list[tuple[WebhookDelivery, str, bytes]]  # row, message id, body


class DeliveryWorker:
    """Fan-out plus delivery; `run_once()` does one pass and returns the attempts made."""

    def __init__(
        self,
        ctx: ServiceContext,
        *,
        resolve: Resolver | None = None,
        timeout: float = TIMEOUT_SECONDS,
        batch: int = 50,
        concurrency: int = 8,
        session_factory: Callable[[], requests.Session] = requests.Session,
    ) -> None:
        self.ctx = ctx
        self.resolve = resolve or ctx.settings.resolve_host
        self.timeout = timeout
        self.batch = batch
        self.lease = timedelta(seconds=timeout + 5)
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="webhook-delivery")
        self._local = threading.local()
        self._session_factory = session_factory

    def close(self) -> None:
        """Wait for attempts under way, then release the threads."""
        self._pool.shutdown(wait=True)

    def run_once(self) -> int:
        """Fan out new events, then attempt every due delivery once; returns attempts made."""
        database.connect(reuse_if_open=True)
        while self.fan_out():
            pass
        claims = self.claim()
        if not claims:
            return 0
        return sum(self._pool.map(self._deliver_run, claims))

    def drain(self, budget_seconds: float = 5.0) -> int:
        """Repeat run_once while there is due work, for at most `budget_seconds`."""
        done, deadline = 0, time.monotonic() + budget_seconds
        while time.monotonic() < deadline:
            made = self.run_once()
            if not made:
                break
            done += made
        return done

    # --- fan-out ---------------------------------------------------------------------------

    def fan_out(self, limit: int = 500) -> int:
        """Turn events past the cursor into delivery rows; returns the events consumed."""
        with write_transaction():
            cursor, _ = OutboxCursor.get_or_create(name=CURSOR, defaults={"seq": 0})
            batch = list(
                Event.select().where(Event.seq > cursor.seq).order_by(Event.seq).limit(limit)
            )
            if not batch:
                return 0
            hooks: dict[str, list[Webhook]] = {}
            for hook in Webhook.select().where(
                Webhook.organization.in_({e.organization_id for e in batch}),
                Webhook.is_enabled == True,  # noqa: E712 - peewee expression
            ):
                hooks.setdefault(hook.organization_id, []).append(hook)
            now = self.ctx.now()
            rows = [
                {
                    "id": self.ctx.new_id(),
                    "webhook": hook.id,
                    "organization": event.organization_id,
                    "event": event.seq,
                    "event_type": event.type,
                    "status": "pending",
                    "next_attempt_at": now,
                    "created_at": now,
                }
                for event in batch
                if event.type != "webhook:test"  # addressed to one webhook when written
                for hook in hooks.get(event.organization_id, ())
                if event.seq > hook.after_seq and covers(hook, event)
            ]
            for start in range(0, len(rows), 200):
                WebhookDelivery.insert_many(rows[start : start + 200]).execute()
            OutboxCursor.update(seq=batch[-1].seq).where(OutboxCursor.name == CURSOR).execute()
        return len(batch)

    # --- claims ----------------------------------------------------------------------------

    def claim(self) -> list[Claimed]:
        """Lease the due head of each enabled webhook's queue and the due rows behind it."""
        now = self.ctx.now()
        token = self.ctx.new_id()
        claims = []
        with write_transaction():
            for hook in Webhook.select().where(Webhook.is_enabled == True):  # noqa: E712
                run = self._due_run(hook.id, now)
                if not run:
                    continue
                ids = [d.seq for d in run]
                WebhookDelivery.update(lease_until=now + self.lease, lease_token=token).where(
                    WebhookDelivery.seq.in_(ids)
                ).execute()
                key = open_secret(self.ctx.master_key, hook.secret)
                claims.append(
                    Claimed(
                        hook.id,
                        hook.endpoint_url,
                        key,
                        token,
                        [(d, d.event.id, payload(d.event)) for d in run],
                    )
                )
        return claims

    def _due_run(self, webhook_id: str, now: datetime) -> list[WebhookDelivery]:
        """The pending rows at the head of the queue, in order, up to the first not due."""
        rows = (
            WebhookDelivery.select(WebhookDelivery, Event)
            .join(Event)
            .where(WebhookDelivery.webhook == webhook_id, WebhookDelivery.status == "pending")
            .order_by(WebhookDelivery.seq)
            .limit(self.batch)
        )
        run = []
        for row in rows:
            leased = row.lease_until is not None and row.lease_until > now
            if leased or row.next_attempt_at > now:
                break
            run.append(row)
        return run

    # --- attempts --------------------------------------------------------------------------

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = self._session_factory()
            session.trust_env = False  # no proxies or netrc from the environment
            session.mount("https://", PinnedTlsAdapter())
        return session

    def _deliver_run(self, claim: Claimed) -> int:
        """Send a webhook's claimed run in order, stopping at the first failure.

        Results are committed in small groups (one fsync per group): a crash re-sends at
        most one group, which at-least-once delivery allows.
        """
        database.connect(reuse_if_open=True)
        done: list[tuple[int, Outcome]] = []
        flushed_at = time.monotonic()
        for position, (row, message_id, body) in enumerate(claim.deliveries):
            outcome = self.attempt(claim, message_id, body)
            done.append((row.seq, outcome))
            last = position == len(claim.deliveries) - 1
            due = len(done) >= GROUP or time.monotonic() - flushed_at > GROUP_SECONDS
            if not outcome.succeeded or last or due:
                rest = [d.seq for d, _, _ in claim.deliveries[position + 1 :]]
                self.record(done, claim.token, rest)
                made = position + 1
                done, flushed_at = [], time.monotonic()
                if not outcome.succeeded:
                    return made
        return len(claim.deliveries)

    def attempt(self, claim: Claimed, message_id: str, body: bytes) -> Outcome:
        """One signed POST; never raises, whatever the receiver does."""
        started = self.ctx.now()
        outcome = Outcome(started, claim.url)
        clock = time.monotonic()
        try:
            addresses = resolve_endpoint(
                claim.url, self.resolve, self.ctx.settings.webhook_allow_list
            )
        except Invalid as exc:
            outcome.error = f"refused: {exc.message}"
            return outcome
        # Connect to the address just checked, so DNS cannot change between check and use.
        target, host_header = pinned_url(claim.url, addresses[0])
        timestamp = int(started.timestamp())
        headers = {
            "host": host_header,
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "webhook-id": message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature(claim.key, message_id, timestamp, body),
        }
        try:
            with self._session().post(
                target,
                data=body,
                headers=headers,
                timeout=(self.timeout, self.timeout),
                allow_redirects=False,
                stream=True,
            ) as response:
                outcome.status_code = response.status_code
                self._drain_body(response, clock + self.timeout)
        except Exception as exc:  # noqa: BLE001 - any receiver behaviour is one failed attempt
            outcome.error = f"{type(exc).__name__}: {str(exc)[:300]}"
        finally:
            outcome.duration_ms = int((time.monotonic() - clock) * 1000)
        if outcome.error is None and outcome.status_code is not None:
            code = outcome.status_code
            if 300 <= code < 400:
                outcome.error = f"redirect not followed (HTTP {code})"
            elif not 200 <= code < 300:
                outcome.error = f"HTTP {code}"
        return outcome

    @staticmethod
    def _drain_body(response: requests.Response, deadline: float) -> None:
        """Read a bounded part of the response so a slow body cannot hold the attempt."""
        read = 0
        for chunk in response.iter_content(8192):
            read += len(chunk)
            if read >= MAX_RESPONSE_BYTES or time.monotonic() > deadline:
                break

    def record(self, results: list[tuple[int, Outcome]], token: str, rest: list[int]) -> None:
        """Write the attempts, move the deliveries on, renew (or after a failure free) the rest."""
        now = self.ctx.now()
        with write_transaction():
            for seq, outcome in results:
                self._record_one(seq, token, outcome, now)
            if rest:
                keep = results[-1][1].succeeded
                WebhookDelivery.update(
                    lease_until=now + self.lease if keep else None,
                    lease_token=token if keep else None,
                ).where(
                    WebhookDelivery.seq.in_(rest), WebhookDelivery.lease_token == token
                ).execute()

    def _record_one(self, seq: int, token: str, outcome: Outcome, now: datetime) -> None:
        row = WebhookDelivery.get_or_none(WebhookDelivery.seq == seq)
        if row is None:  # the webhook was deleted meanwhile
            return
        # A late result from a lost lease still counts as an attempt, but moves nothing on.
        ours = row.lease_token == token and row.status == "pending"
        number = row.attempts = row.attempts + 1
        next_at = None
        if ours:
            row.last_status_code = outcome.status_code
            row.last_error = outcome.error
            row.lease_until = row.lease_token = None
            if outcome.succeeded:
                row.status, row.completed_at = "succeeded", now
            elif number <= len(RETRY_SCHEDULE):
                next_at = row.next_attempt_at = now + RETRY_SCHEDULE[number - 1]
            else:
                row.status, row.completed_at = "failed", now
        row.save()
        DeliveryAttempt.create(
            delivery=seq,
            number=number,
            started_at=outcome.started_at,
            finished_at=now,
            url=outcome.url,
            status_code=outcome.status_code,
            duration_ms=outcome.duration_ms,
            error=outcome.error,
            next_attempt_at=next_at,
        )
