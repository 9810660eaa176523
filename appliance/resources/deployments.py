"""4.7 Deployments, install/uninstall of 4.2: thin resources over services.deployments."""

from __future__ import annotations

from typing import Any

import falcon

from appliance.errors import Invalid, PayloadTooLarge, UnsupportedMediaType
from appliance.http.auth import principal, require
from appliance.http.params import list_query, read_json, read_object, switch
from appliance.services import deployments
from appliance.services.container import Services
from appliance.services.deployments import actions, queries


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


class DeploymentList(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Deployments (activities or one per slug) with stats."""
        options = {
            "type": req.get_param("type") or "activities",
            "latest": switch(req, "latest", False),
            "expand": switch(req, "expand", False),
            "archived": switch(req, "archived", False),
            "environment_id": req.get_param("environmentId"),
            "query": req.get_param("query"),
        }
        if options["type"] not in ("activities", "deployments"):
            raise Invalid("type must be activities or deployments")
        resp.media = queries.list_deployments(
            self.ctx,
            principal(req).organization_id,
            list_query(req, queries.DEPLOYMENT_LIST),
            options,
        )


class DeploymentRecord(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """One deployment with its parsed plan (or state), metadata blocks and children."""
        resp.media = queries.detail(
            self.ctx,
            principal(req).organization_id,
            deployment_id,
            req.get_param("parse_type") or "plan",
        )


class DeploymentProps(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """The deployment properties result."""
        resp.media = queries.props(principal(req).organization_id, deployment_id)


class DeploymentOutputs(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """Outputs of a slug's latest activity and its children (the path names the slug)."""
        lq = list_query(req, queries.OUTPUT_LIST)
        resp.media = queries.slug_outputs(principal(req).organization_id, deployment_id, lq)


class OrganizationOutputs(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Outputs of every latest deployment of the organization."""
        lq = list_query(req, queries.OUTPUT_LIST)
        resp.media = queries.organization_outputs(principal(req).organization_id, lq)


class OutputAlias(_Resource):
    @require("update:deployment")
    def on_put(self, req: falcon.Request, resp: falcon.Response, output_id: str) -> None:
        """Set an output's alias: `{id, alias}`."""
        resp.media = queries.set_alias(principal(req).organization_id, output_id, read_object(req))


class DeploymentPlan(_Resource):
    @require("read:deployment-plan")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """The stored plan file (JSON)."""
        resp.data = queries.plan_file(
            self.ctx, principal(req).organization_id, deployment_id, req.get_param("format")
        )
        resp.content_type = "application/json"


class DeploymentState(_Resource):
    @require("update:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """The state file (JSON) of the deployment's lineage."""
        resp.data = queries.state_file(self.ctx, principal(req).organization_id, deployment_id)
        resp.content_type = "application/json"


class DeploymentManifest(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """The package manifest as YAML."""
        resp.text = queries.manifest(principal(req).organization_id, deployment_id)
        resp.content_type = "application/yaml"


class DeploymentFilters(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The filter values of the deployment list."""
        resp.media = queries.filters(
            principal(req).organization_id, req.get_param("type"), switch(req, "archived", False)
        )


class DeploymentPlans(_Resource):
    @require("read:deployment")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The plans of several deployments as Markdown."""
        resp.text = queries.plans_markdown(principal(req).organization_id, read_object(req))
        resp.content_type = "text/markdown; charset=utf-8"


class PlanParse(_Resource):
    @require("read:deployment-plan")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Parse an uploaded Terraform JSON plan (multipart field plan_file); nothing stored."""
        filename, raw = _plan_upload(req, self.ctx.settings.limits.plan_file)
        resp.media = queries.parse_uploaded_plan(filename, raw)


def _plan_upload(req: falcon.Request, limit: int) -> tuple[str | None, bytes]:
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if media_type != "multipart/form-data":
        raise UnsupportedMediaType("expected multipart/form-data with a plan_file field")
    if req.content_length is not None and req.content_length > limit + 64 * 1024:
        raise PayloadTooLarge(f"plan file over the limit of {limit} bytes")
    try:
        for part in req.get_media():
            if part.name == "plan_file":
                raw = part.stream.read(limit + 1)
                if len(raw) > limit:
                    raise PayloadTooLarge(f"plan file over the limit of {limit} bytes")
                return part.filename, raw
    except falcon.MediaMalformedError as exc:
        raise Invalid(f"malformed multipart body: {exc.description or exc.title}") from None
    raise Invalid("form field plan_file is required")


class DeploymentImage(_Resource):
    @require("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """The deployment tree drawn as a PNG."""
        resp.data = queries.image(
            principal(req).organization_id, deployment_id, req.get_param("format")
        )
        resp.content_type = "image/png"
