"""4.11 Webhooks, plus the deliveries, redeliver and test extensions."""

from __future__ import annotations

import falcon

from appliance.http.auth import principal, require
from appliance.http.params import list_query, read_object, switch
from appliance.services import records, webhooks
from appliance.services.container import Services


class WebhookCreate:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("create:webhook")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Create a webhook; the signing secret is in this response only."""
        who = principal(req)
        row, secret = webhooks.create_webhook(
            self.services.ctx, who.organization_id, who.user_pk, read_object(req)
        )
        hook = webhooks.get_webhook(who.organization_id, row.id)
        resp.media = {**records.webhook(hook), "secret": secret}


class WebhookRecord:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:webhook")
    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        """One webhook."""
        resp.media = records.webhook(
            webhooks.get_webhook(principal(req).organization_id, webhook_id)
        )

    @require("update:webhook")
    def on_put(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        """Change a webhook's fields."""
        org_id = principal(req).organization_id
        webhooks.update_webhook(self.services.ctx, org_id, webhook_id, read_object(req))
        resp.media = records.webhook(webhooks.get_webhook(org_id, webhook_id))

    @require("delete:webhook")
    def on_delete(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        """Delete a webhook and its deliveries."""
        resp.media = {"id": webhooks.delete_webhook(principal(req).organization_id, webhook_id)}


class WebhookList:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:webhook")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List webhooks with the count of enabled ones and the filter facets."""
        lq = list_query(req, webhooks.WEBHOOK_LIST)
        found = webhooks.list_webhooks(principal(req).organization_id, lq, switch(req, "all", True))
        resp.media = records.webhook_list(found)


class WebhookDeliveries:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("read:webhook")
    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        """List a webhook's deliveries with their attempts (extension)."""
        lq = list_query(req, webhooks.DELIVERY_LIST)
        total, rows = webhooks.list_deliveries(principal(req).organization_id, webhook_id, lq)
        resp.media = {"total": total, "list": [records.webhook_delivery(d, a) for d, a in rows]}


class WebhookRedeliver:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("update:webhook")
    def on_post(
        self, req: falcon.Request, resp: falcon.Response, webhook_id: str, delivery_id: str
    ) -> None:
        """Queue a delivery's event again, with the same webhook-id (extension)."""
        row = webhooks.redeliver(
            self.services.ctx, principal(req).organization_id, webhook_id, delivery_id
        )
        resp.media = records.webhook_delivery(row, [])


class WebhookTest:
    def __init__(self, services: Services) -> None:
        self.services = services

    @require("update:webhook")
    def on_post(self, req: falcon.Request, resp: falcon.Response, webhook_id: str) -> None:
        """Send a `webhook:test` event to this webhook only (extension)."""
        row = webhooks.send_test(self.services.ctx, principal(req).organization_id, webhook_id)
        resp.media = records.webhook_delivery(row, [])
