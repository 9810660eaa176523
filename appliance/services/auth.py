"""Who is calling: API keys, session tokens (bearer) and runtimes (Basic), with rate limits.

The lookups run on every request, so their statements are built once
(DESIGN.md 1: the query builder costs ten times the statement itself).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from appliance.domain.passwords import verify_password
from appliance.domain.permissions import permissions_of
from appliance.domain.tokens import looks_like_api_key, random_base62, sha256_hex
from appliance.errors import Forbidden, Invalid, NotFound, Unauthenticated
from appliance.models import Membership, Organization, SessionToken, User
from appliance.models.db import TimestampField, commits, database, to_iso, write_transaction
from appliance.services.context import ServiceContext
from appliance.services.ratelimit import TokenBucketLimiter

SESSION_PREFIX = "ses_"
SESSION_LIFETIME = timedelta(hours=12)
LAST_USED_EVERY = timedelta(minutes=1)
_stamp = TimestampField().db_value


@dataclass(frozen=True)
class _CachedLookup:
    commits: int
    fresh_until: float
    row: tuple
    role_names: tuple[str, ...]


_CACHE_LIMIT = 10_000


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: a user (by key or session) or a runtime."""

    kind: str
    organization_id: str
    permissions: frozenset[str]
    user_pk: int | None = None
    runtime_id: str | None = None

    def require(self, permission: str) -> None:
        if permission not in self.permissions:
            raise Forbidden(permission)


class Authenticator:
    """Resolves Authorization headers to principals; counts requests per credential."""

    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        limits = ctx.settings.limits
        self.per_credential = TokenBucketLimiter(
            limits.rate_per_credential, limits.burst_per_credential
        )
        self.failed_by_address = TokenBucketLimiter(
            limits.failed_auth_rate, limits.failed_auth_burst
        )
        self._touched: dict[str, float] = {}
        self._touch_lock = threading.Lock()
        self._lookups: dict[str, _CachedLookup] = {}
        p = database.param
        roles = (
            "JOIN membership m ON m.organization_id = c.organization_id AND m.user_id = c.user_id "
            "LEFT JOIN member_role mr ON mr.membership_id = m.id "
            "LEFT JOIN role r ON r.id = mr.role_id "
        )
        self._api_key_sql = (
            "SELECT c.id, c.organization_id, c.user_id, c.is_disabled, c.expiration_time, "
            f"c.last_used_at, r.name FROM api_key c {roles}WHERE c.key_hash = {p}"
        )
        self._session_sql = (
            "SELECT c.token_hash, c.organization_id, c.user_id, 0, c.expires_at, NULL, r.name "
            f"FROM session_token c {roles}WHERE c.token_hash = {p}"
        )
        self._runtime_sql = (
            "SELECT id, organization_id, password_hash, revoked_at "
            f"FROM runtime_credential WHERE username = {p}"
        )

    def _failed(self, address: str, message: str) -> Unauthenticated:
        self.failed_by_address.take(address or "unknown")
        return Unauthenticated(message)

    def authenticate_user(self, header: str | None, address: str) -> Principal:
        """`Authorization: Bearer <api key or session token>`."""
        if not header or not header.startswith("Bearer "):
            raise self._failed(address, "failed to authenticate the user: missing bearer token")
        token = header[len("Bearer ") :].strip()
        if looks_like_api_key(token):
            sql = self._api_key_sql
        elif token.startswith(SESSION_PREFIX) and len(token) == len(SESSION_PREFIX) + 43:
            sql = self._session_sql
        else:
            raise self._failed(address, "failed to authenticate the user")
        digest = sha256_hex(token)
        found = self._lookup(sql, digest)
        if found is None:
            raise self._failed(address, "failed to authenticate the user")
        cred_id, org_id, user_pk, disabled, expires, last_used = found.row
        if disabled or (expires is not None and expires <= _stamp(self.ctx.now())):
            raise self._failed(address, "failed to authenticate the user")
        self.per_credential.take(digest)
        if sql is self._api_key_sql:
            self._touch(cred_id, last_used)
        return Principal("user", org_id, permissions_of(found.role_names), user_pk=user_pk)

    def _lookup(self, sql: str, digest: str) -> _CachedLookup | None:
        """The credential's row and roles, remembered for `auth_cache_seconds`.

        In the threaded server every SQLite call hands the GIL over twice, which made the
        lookup cost a third of a request's throughput. Any commit by this process makes
        every remembered lookup stale, so a change made here (deactivation, removal, new
        roles) applies to the next request; other processes see it within the TTL.
        """
        ttl = self.ctx.settings.auth_cache_seconds
        now = time.monotonic()
        cached = self._lookups.get(digest)
        if cached is not None and cached.commits == commits.value and cached.fresh_until > now:
            return cached
        generation = commits.value
        rows = list(database.execute_sql(sql, (digest,)))
        if not rows:
            return None
        names = tuple(sorted(row[6] for row in rows if row[6] is not None))
        found = _CachedLookup(generation, now + ttl, tuple(rows[0][:6]), names)
        if ttl > 0:
            if len(self._lookups) >= _CACHE_LIMIT:
                self._lookups.clear()
            self._lookups[digest] = found
        return found

    def _touch(self, key_id: str, last_used: str | None) -> None:
        """Record `last_used_at`, at most once a minute per key."""
        now = self.ctx.now()
        cutoff = _stamp(now - LAST_USED_EVERY)
        if last_used is not None and last_used > cutoff:
            return
        with self._touch_lock:
            if self._touched.get(key_id, 0.0) > now.timestamp() - 60:
                return
            self._touched[key_id] = now.timestamp()
        with write_transaction():
            database.execute_sql(
                f"UPDATE api_key SET last_used_at = {database.param} WHERE id = {database.param}",
                (_stamp(now), key_id),
            )

    def authenticate_operator(self, header: str | None, address: str) -> None:
        """`Authorization: Bearer <operator token>`; failures count like any other."""
        expected = self.ctx.settings.operator_token
        given = (header or "").removeprefix("Bearer ").strip()
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            raise self._failed(address, "failed to authenticate the operator")

    def authenticate_runtime(self, header: str | None, address: str) -> Principal:
        """`Authorization: Basic base64(user:pass)` or the literal `Basic user:pass` form."""
        failure = "runtime authentication failed"
        if not header or not header.startswith("Basic "):
            raise self._failed(address, failure)
        raw = header[len("Basic ") :].strip()
        if ":" not in raw:  # base64 never contains ':'
            try:
                raw = base64.b64decode(raw, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                raise self._failed(address, failure) from None
        username, sep, password = raw.partition(":")
        if not sep or not username.startswith("rt_") or len(username) > 64:
            raise self._failed(address, failure)
        rows = list(database.execute_sql(self._runtime_sql, (username,)))
        if not rows:
            raise self._failed(address, failure)
        runtime_id, org_id, password_hash, revoked = rows[0]
        if revoked is not None or not hmac.compare_digest(sha256_hex(password), password_hash):
            raise self._failed(address, failure)
        self.per_credential.take(f"runtime:{runtime_id}")
        return Principal("runtime", org_id, frozenset(), runtime_id=runtime_id)


def login(ctx: ServiceContext, email: object, password: object, organization: object) -> dict:
    """Extension `POST /auth/login`: a 12-hour session token for the command-line client."""
    if not isinstance(email, str) or not isinstance(password, str):
        raise Invalid("email and password are required strings")
    if organization is not None and not isinstance(organization, str):
        raise Invalid("organization must be a string")
    user = User.get_or_none(User.email == email.strip().lower())
    if user is None or not verify_password(password, user.password_hash):
        raise Unauthenticated("failed to authenticate the user: wrong e-mail or password")
    memberships = Membership.select(Membership, Organization).join(Organization)
    memberships = memberships.where(Membership.user == user).order_by(Membership.id)
    if organization:
        memberships = memberships.where(
            (Organization.name == organization) | (Organization.id == organization)
        )
    membership = memberships.first()
    if membership is None:
        raise NotFound(f"organization not found for this user: {organization or '(any)'}")
    token = SESSION_PREFIX + random_base62(43)
    now = ctx.now()
    expires = now + SESSION_LIFETIME
    with write_transaction():
        SessionToken.create(
            token_hash=sha256_hex(token),
            organization=membership.organization_id,
            user=user,
            created_at=now,
            expires_at=expires,
        )
    return {"access_token": token, "token_type": "Bearer", "expires_at": to_iso(expires)}
