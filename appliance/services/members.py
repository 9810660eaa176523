"""Members, roles of members, invitations and the last-Admin rule (spec 4.4, 4.5)."""

from __future__ import annotations

import hmac
from collections import defaultdict
from datetime import timedelta
from typing import Any

from appliance.domain.listing import ListQuery, ListSpec
from appliance.domain.passwords import MIN_LENGTH, hash_password
from appliance.domain.permissions import ADMIN
from appliance.domain.tokens import random_base62, sha256_hex
from appliance.errors import Conflict, Invalid, NotFound
from appliance.models import (
    ApiKey,
    Environment,
    EnvironmentUser,
    Invitation,
    MemberRole,
    Membership,
    Organization,
    Role,
    SessionToken,
    User,
)
from appliance.models.db import write_transaction
from appliance.services import records
from appliance.services.context import ServiceContext
from appliance.services.listing import Columns, paginate
from appliance.services.organizations import add_member, check_email, get_organization

MEMBER_LIST = ListSpec(
    sorts=("created_at", "name", "email"), default_sort="created_at", filters=("role", "email")
)
_COLUMNS = Columns(
    sorts={"created_at": Membership.created_at, "name": User.name, "email": User.email},
    tiebreak=Membership.id,
    search=User.name.concat(" ").concat(User.email),
    filters={"role": (Role.name, str), "email": (User.email, str.lower)},
)
INVITATION_LIFETIME = timedelta(days=7)


def parse_user_id(raw: str) -> int:
    """`local|<n>` to the user's primary key; anything else is not found."""
    provider, sep, number = str(raw).partition("|")
    if provider != "local" or not sep or not number.isdigit() or len(number) > 18:
        raise NotFound(f"user not found: {str(raw)[:80]}")
    return int(number)


def membership_of(org_id: str, user_pk: int) -> Membership:
    membership = Membership.get_or_none(
        Membership.organization == org_id, Membership.user == user_pk
    )
    if membership is None:
        raise NotFound(f"user not found: {records.user_id(user_pk)}")
    return membership


def _roles_by_membership(membership_ids: list[int]) -> dict[int, list[Role]]:
    found: dict[int, list[Role]] = defaultdict(list)
    if membership_ids:
        query = (
            MemberRole.select(MemberRole.membership, Role)
            .join(Role)
            .where(MemberRole.membership.in_(membership_ids))
            .order_by(Role.name)
        )
        for row in query:
            found[row.membership_id].append(row.role)
    return found


def _environments_by_user(org_id: str, user_pks: list[int]) -> dict[int, list[Environment]]:
    found: dict[int, list[Environment]] = defaultdict(list)
    if user_pks:
        query = (
            EnvironmentUser.select(EnvironmentUser.user, Environment)
            .join(Environment)
            .where(
                EnvironmentUser.user.in_(user_pks),
                Environment.organization == org_id,
                Environment.is_deleted == False,  # noqa: E712
            )
            .order_by(Environment.name)
        )
        for row in query:
            found[row.user_id].append(row.environment)
    return found


def member_records(org_id: str, memberships: list[Membership]) -> list[dict[str, Any]]:
    """Member records for several memberships, in a constant number of queries."""
    roles = _roles_by_membership([m.id for m in memberships])
    envs = _environments_by_user(org_id, [m.user_id for m in memberships])
    return [records.member(m.user, roles[m.id], envs[m.user_id]) for m in memberships]


def list_members(org_id: str, lq: ListQuery) -> tuple[int, list[dict[str, Any]]]:
    query = Membership.select(Membership, User).join(User).where(Membership.organization == org_id)
    if "role" in lq.filters:
        query = query.switch(Membership).join(MemberRole).join(Role).distinct()
    total, rows = paginate(query, lq, _COLUMNS)
    return total, member_records(org_id, rows)


def get_member(org_id: str, user_pk: int) -> dict[str, Any]:
    membership = (
        Membership.select(Membership, User)
        .join(User)
        .where(Membership.organization == org_id, Membership.user == user_pk)
        .first()
    )
    if membership is None:
        raise NotFound(f"user not found: {records.user_id(user_pk)}")
    return member_records(org_id, [membership])[0]


def _admin_count(org_id: str) -> int:
    return (
        MemberRole.select()
        .join(Membership)
        .switch(MemberRole)
        .join(Role)
        .where(Membership.organization == org_id, Role.name == ADMIN)
        .count()
    )


def _is_admin(membership: Membership) -> bool:
    return (
        MemberRole.select()
        .join(Role)
        .where(MemberRole.membership == membership, Role.name == ADMIN)
        .exists()
    )


def set_roles(org_id: str, user_pk: int, role_ids: Any, add: Any) -> dict[str, Any]:
    """Replace (or with `add`, extend) a member's roles; the last Admin stays."""
    if (
        not isinstance(role_ids, list)
        or not role_ids
        or not all(isinstance(r, str) for r in role_ids)
    ):
        raise Invalid("roles must be a non-empty array of role ids")
    if add is not None and not isinstance(add, bool):
        raise Invalid("add must be a boolean")
    with write_transaction():
        membership = membership_of(org_id, user_pk)
        roles = list(Role.select().where(Role.id.in_(role_ids)))
        missing = sorted(set(role_ids) - {r.id for r in roles})
        if missing:
            raise Invalid(f"role does not exist: {', '.join(missing)}")
        was_admin = _is_admin(membership)
        if not add:
            MemberRole.delete().where(MemberRole.membership == membership).execute()
        for role in roles:
            MemberRole.insert(membership=membership, role=role).on_conflict_ignore().execute()
        if was_admin and not _is_admin(membership) and _admin_count(org_id) == 0:
            raise Conflict("an organization must keep at least one Admin")
    return get_member(org_id, user_pk)


def remove_member(ctx: ServiceContext, org_id: str, user_pk: int) -> None:
    """Remove a member; their keys and sessions stop working. The last Admin stays."""
    with write_transaction():
        membership = membership_of(org_id, user_pk)
        if _is_admin(membership) and _admin_count(org_id) <= 1:
            raise Conflict("an organization must keep at least one Admin")
        env_ids = Environment.select(Environment.id).where(Environment.organization == org_id)
        EnvironmentUser.delete().where(
            EnvironmentUser.user == user_pk, EnvironmentUser.environment.in_(env_ids)
        ).execute()
        membership.delete_instance()
        # Rejoining later must not revive the old credentials (DESIGN.md 4.3).
        ApiKey.update(is_disabled=True, updated_at=ctx.now()).where(
            ApiKey.organization == org_id,
            ApiKey.user == user_pk,
            ApiKey.is_disabled == False,  # noqa: E712
        ).execute()
        SessionToken.delete().where(
            SessionToken.organization == org_id, SessionToken.user == user_pk
        ).execute()
        ctx.emit("member:removed", org_id, {"id": records.user_id(user_pk)})


def _invite_one(
    ctx: ServiceContext, org: Organization, inviter_pk: int, invitee: Any
) -> dict[str, Any]:
    """One invitation, or raise the error that goes into `errors` for this invitee."""
    if not isinstance(invitee, dict):
        raise Invalid("each invitee must be an object {email, role}")
    email = check_email(invitee.get("email"))
    role = Role.get_or_none(Role.id == invitee.get("role"))
    if role is None:
        raise NotFound(f"role does not exist: {str(invitee.get('role'))[:80]}")
    member = (
        Membership.select().join(User).where(Membership.organization == org, User.email == email)
    )
    if member.exists():
        raise Conflict(f"already a member: {email}")
    token = random_base62(32)
    invitation = Invitation.create(
        id=f"uinv_{random_base62(16)}",
        organization=org,
        email=email,
        role=role,
        token_hash=sha256_hex(token),
        invited_by=inviter_pk,
        created_at=ctx.now(),
        expires_at=ctx.now() + INVITATION_LIFETIME,
    )
    ctx.emit("member:invited", org.id, {"id": invitation.id, "invitee": email, "role": role.id})
    url = f"{ctx.settings.public_base_url}/invitations/{invitation.id}?token={token}"
    return {"id": invitation.id, "invitee": email, "organization_id": org.id, "invitation_url": url}


def invite(ctx: ServiceContext, org_id: str, inviter_pk: int, body: Any) -> dict[str, Any]:
    """Invite several people; a failure for one appears in `errors`, the others succeed."""
    invitees = body.get("invitees") if isinstance(body, dict) else None
    if not isinstance(invitees, list) or not invitees or len(invitees) > 100:
        raise Invalid("invitees must be an array of 1 to 100 {email, role} objects")
    invites, errors = [], []
    with write_transaction():
        org = get_organization(org_id)
        for invitee in invitees:
            try:
                with write_transaction():
                    invites.append(_invite_one(ctx, org, inviter_pk, invitee))
            except (Invalid, NotFound, Conflict) as exc:
                email = invitee.get("email") if isinstance(invitee, dict) else None
                errors.append({"email": email, **error_item(exc)})
    return {"invites": invites, "errors": errors}


def error_item(exc: Exception) -> dict[str, Any]:
    """`{statusCode, error, message}` for a per-item failure."""
    code = {
        Invalid: (400, "BAD_REQUEST"),
        NotFound: (404, "NOT_FOUND"),
        Conflict: (409, "CONFLICT"),
    }[type(exc)]
    return {"statusCode": code[0], "error": code[1], "message": str(exc)}


def accept_invitation(ctx: ServiceContext, invitation_id: str, body: Any) -> dict[str, Any]:
    """Extension: accept an invitation, creating the user and the membership."""
    if not isinstance(body, dict):
        raise Invalid("body must be an object {token, name, password}")
    token, name, password = body.get("token"), body.get("name"), body.get("password")
    if not isinstance(token, str) or not isinstance(password, str):
        raise Invalid("token and password are required strings")
    if len(password) < MIN_LENGTH:
        raise Invalid(f"password must be at least {MIN_LENGTH} characters")
    if name is not None and (not isinstance(name, str) or len(name) > 256):
        raise Invalid("name must be a string of at most 256 characters")
    with write_transaction():
        invitation = Invitation.get_or_none(Invitation.id == invitation_id)
        if invitation is None or not hmac.compare_digest(sha256_hex(token), invitation.token_hash):
            raise NotFound(f"invitation not found: {invitation_id[:80]}")
        if invitation.accepted_at is not None or invitation.expires_at <= ctx.now():
            raise Conflict("invitation already accepted or expired")
        user = User.get_or_none(User.email == invitation.email)
        if user is None:
            local = invitation.email.split("@", 1)[0]
            user = User.create(
                email=invitation.email, name=name or local, nickname=local, created_at=ctx.now()
            )
        if user.password_hash is None:
            user.password_hash = hash_password(password)
            user.save()
        if Membership.get_or_none(
            Membership.organization == invitation.organization_id, Membership.user == user
        ):
            raise Conflict(f"already a member: {invitation.email}")
        add_member(ctx, invitation.organization, user, invitation.role)
        invitation.accepted_at = ctx.now()
        invitation.save()
    return get_member(invitation.organization_id, user.id)


def set_password(org_name: str, email: str, password: str) -> None:
    """Admin CLI: set a member's password (used by `auth/login`)."""
    if len(password) < MIN_LENGTH:
        raise Invalid(f"password must be at least {MIN_LENGTH} characters")
    with write_transaction():
        user = (
            User.select()
            .join(Membership)
            .join(Organization)
            .where(Organization.name == org_name, User.email == email.strip().lower())
            .first()
        )
        if user is None:
            raise NotFound(f"no member {email} in organization {org_name}")
        user.password_hash = hash_password(password)
        user.save()
