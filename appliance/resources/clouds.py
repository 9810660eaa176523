"""4.6 Cloud accounts and 4.10 setup."""

from __future__ import annotations

import falcon

from appliance.http.auth import principal, require
from appliance.http.params import list_query, read_object, switch
from appliance.services import clouds, records
from appliance.services.container import Services


class _Resource:
    def __init__(self, services: Services) -> None:
        self.services = services


class CloudCreate(_Resource):
    @require("create:cloud")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Create a cloud account in an environment."""
        account = clouds.create_account(
            self.services.ctx, principal(req).organization_id, read_object(req)
        )
        resp.media = records.cloud_account(account)


class CloudItem(_Resource):
    @require("read:cloud")
    def on_get(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """A cloud account by id or slug."""
        resp.media = records.cloud_account(
            clouds.get_account(principal(req).organization_id, id_or_slug)
        )

    @require("delete:cloud")
    def on_delete(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Disable, then delete, a cloud account."""
        clouds.delete_account(self.services.ctx, principal(req).organization_id, id_or_slug)
        resp.media = {"success": True}


class CloudByProvider(_Resource):
    @require("read:cloud")
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, provider: str, account_id: str
    ) -> None:
        """A cloud account by provider and provider account id."""
        account = clouds.account_by_provider(principal(req).organization_id, provider, account_id)
        resp.media = records.cloud_account(account)


class CloudTokenRotate(_Resource):
    @require("create:cloud")
    def on_post(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Rotate the static token; the new token is in this response only (`token`)."""
        account, token = clouds.rotate_token(
            self.services.ctx, principal(req).organization_id, id_or_slug
        )
        resp.media = {**records.cloud_account(account), "token": token}


class CloudList(_Resource):
    @require("read:cloud")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Cloud accounts: active ones, or every one with `all`."""
        lq = list_query(req, clouds.CLOUD_LIST)
        total, rows = clouds.list_accounts(
            principal(req).organization_id, lq, switch(req, "all", False)
        )
        resp.set_header("X-Total-Count", str(total))
        resp.media = [records.cloud_account(a) for a in rows]


class SetupPreflight(_Resource):
    @require("read:vendor")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """What the operator needs to create the cross-account role."""
        resp.media = clouds.preflight(
            self.services.ctx, principal(req).organization_id, req.get_param("vendor")
        )


class VendorSetup(_Resource):
    @require("create:cloud")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Create a cloud account from the setup flow."""
        account = clouds.vendor_setup(
            self.services.ctx, principal(req).organization_id, read_object(req)
        )
        resp.media = records.cloud_account(account)
