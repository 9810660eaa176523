"""4.7 Deployments, install/uninstall of 4.2: thin resources over services.deployments."""

from __future__ import annotations

from typing import Any

import falcon

from appliance.http.auth import principal, require
from appliance.http.params import read_json, read_object
from appliance.services import deployments
from appliance.services.container import Services
from appliance.services.deployments import actions


class _Resource:
    def __init__(self, services: Services) -> None:
        self.services = services

    @property
    def ctx(self) -> Any:
        return self.services.ctx


class PackageInstall(_Resource):
    @require("create:deployment")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Install a package version into an environment: `{deployment, task}`."""
        who = principal(req)
        resp.media = deployments.install(
            self.ctx, who.organization_id, who.user_pk, read_object(req)
        )


class PackageUninstall(_Resource):
    @require("create:deployment")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Uninstall a deployment (and its children): `{deployment, task}`."""
        who = principal(req)
        resp.media = deployments.uninstall(
            self.ctx, who.organization_id, who.user_pk, read_object(req)
        )


class DeploymentCreate(_Resource):
    @require("create:deployment")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Create a deployment or a new activity of one: `{deployment, activity_id, task}`."""
        who = principal(req)
        resp.media = deployments.create(
            self.ctx, who.organization_id, who.user_pk, read_object(req)
        )


class DeploymentApprove(_Resource):
    @require("update:deployment")
    def on_post(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """Approve the plan of one deployment: the approval result."""
        who = principal(req)
        resp.media = actions.approve(self.ctx, who.organization_id, who.user_pk, deployment_id)


class DeploymentsApprove(_Resource):
    @require("update:deployment")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Approve several deployments (all or none): a list of approval results."""
        who = principal(req)
        resp.media = actions.approve_many(
            self.ctx, who.organization_id, who.user_pk, read_json(req)
        )


class DeploymentsCancel(_Resource):
    @require("update:deployment")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Cancel several deployments (extension; all or none): a list of results."""
        who = principal(req)
        resp.media = actions.cancel_many(
            self.ctx, who.organization_id, who.user_pk, read_object(req)
        )
