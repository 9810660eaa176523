"""4.5 Users, plus the login and invitation-accept extensions."""

from __future__ import annotations

import falcon

from appliance.errors import Invalid
from appliance.http.auth import principal, public, require
from appliance.http.params import read_object
from appliance.services import auth, members
from appliance.services.container import Services


class UserRecord:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:users")
    def on_get(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        """A member of the caller's organization."""
        member = members.get_member(principal(req).organization_id, members.parse_user_id(user_id))
        member.pop("assigned_environments")
        resp.media = member


class UserRoles:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("update:users")
    def on_post(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        """Replace or extend a member's roles."""
        user_pk = members.parse_user_id(user_id)
        body = read_object(req)
        resp.media = members.set_roles(
            principal(req).organization_id, user_pk, body.get("roles"), body.get("add")
        )


class Login:
    def __init__(self, services: Services) -> None:
        self.services = services

    @public
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Extension: e-mail and password for a 12-hour session token."""
        self.services.auth.failed_by_address.take(req.remote_addr or "unknown")
        body = read_object(req)
        resp.media = auth.login(
            self.services.ctx, body.get("email"), body.get("password"), body.get("organization")
        )


class InvitationAccept:
    def __init__(self, services: Services) -> None:
        self.services = services

    @public
    def on_post(self, req: falcon.Request, resp: falcon.Response, invitation_id: str) -> None:
        """Extension: accept an invitation, creating the user and membership."""
        if len(invitation_id) > 64:
            raise Invalid("invitation id too long")
        resp.media = members.accept_invitation(self.services.ctx, invitation_id, read_object(req))
