"""4.4 Organization, roles, members and invitations, the internal trial endpoint."""

from __future__ import annotations

import falcon

from appliance.domain.listing import parse_list_query
from appliance.errors import NotFound
from appliance.http.auth import principal, public, require
from appliance.http.params import read_object
from appliance.services import members, organizations, records
from appliance.services.container import Services


class Roles:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:organization")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List the roles."""
        resp.media = [records.role(r) for r in organizations.list_roles()]


class OrganizationRecord:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:organization")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The caller's organization."""
        org = organizations.get_organization(principal(req).organization_id)
        resp.media = records.organization(org)

    @require("update:organization")
    def on_patch(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Change the display name, branding or metadata."""
        org = organizations.update_organization(
            self.services.ctx, principal(req).organization_id, read_object(req)
        )
        resp.media = records.organization(org)


class Members:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:users")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List members with their roles and environments."""
        lq = parse_list_query(req.params, members.MEMBER_LIST)
        total, rows = members.list_members(principal(req).organization_id, lq)
        resp.media = {"total": total, "members": rows}

    @require("create:users")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Invite people by e-mail with a role each."""
        who = principal(req)
        resp.media = members.invite(
            self.services.ctx, who.organization_id, who.user_pk, read_object(req)
        )


class Member:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("delete:users")
    def on_delete(self, req: falcon.Request, resp: falcon.Response, member_id: str) -> None:
        """Remove a member from the organization."""
        who = principal(req)
        members.remove_member(
            self.services.ctx, who.organization_id, members.parse_user_id(member_id)
        )
        resp.media = {"status": "success"}


class Trial:
    """Internal: needs the operator token; answers 404 when none is configured."""

    def __init__(self, services: Services) -> None:
        self.services = services

    @public
    def on_patch(self, req: falcon.Request, resp: falcon.Response, organization_id: str) -> None:
        """Switch an organization's trial flag (operator token)."""
        if not self.services.ctx.settings.operator_token:
            raise NotFound(f"route not found: {req.method} {req.path}")
        self.services.auth.authenticate_operator(req.auth, req.remote_addr or "unknown")
        body = read_object(req)
        is_trial = organizations.set_trial(self.services.ctx, organization_id, body.get("is_trial"))
        resp.media = {"is_trial": is_trial}
