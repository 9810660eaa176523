"""4.8 Tasks (runtime) and the deployment logs of 4.7: thin resources."""

from __future__ import annotations

from typing import Any

import falcon

from appliance.http.auth import principal, require, require_runtime, require_user_or_runtime
from appliance.http.params import read_json, read_object, switch
from appliance.services.container import Services
from appliance.services.deployments import actions, logs, runtime


class _Resource:
    def __init__(self, services: Services) -> None:
        self.services = services

    @property
    def ctx(self) -> Any:
        return self.services.ctx


class PendingTasks(_Resource):
    @require_runtime
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Pending work of the runtime's organization, oldest first, with lease tokens."""
        resp.media = runtime.pending_tasks(self.ctx, principal(req).organization_id)


class TaskRecord(_Resource):
    @require_runtime
    def on_get(self, req: falcon.Request, resp: falcon.Response, task_id: str) -> None:
        """The task with its deployments in dependency order, resolved props and secrets."""
        resp.media = runtime.task_detail(self.ctx, principal(req).organization_id, task_id)

    @require("delete:deployment")
    def on_delete(self, req: falcon.Request, resp: falcon.Response, task_id: str) -> None:
        """Delete the task and its deployments: `{task, deployments}`."""
        resp.media = actions.delete_task(principal(req).organization_id, task_id)


class TaskStatus(_Resource):
    @require("read:task")
    def on_get(self, req: falcon.Request, resp: falcon.Response, task_id: str) -> None:
        """The task status, summarized or elaborated."""
        resp.media = runtime.task_status(
            principal(req).organization_id, task_id, switch(req, "elaborate", False)
        )

    @require_runtime
    def on_post(self, req: falcon.Request, resp: falcon.Response, task_id: str) -> None:
        """Claim the task (planning, installing) with its token, or report it failed."""
        resp.media = runtime.update_status(
            self.ctx,
            principal(req).organization_id,
            task_id,
            read_object(req),
            switch(req, "elaborate", False),
        )


class TaskDeployments(_Resource):
    @require_runtime
    def on_post(self, req: falcon.Request, resp: falcon.Response, task_id: str) -> None:
        """Register deployments the runtime discovered: `[{deployment}]`."""
        resp.media = runtime.register(
            self.ctx, principal(req).organization_id, task_id, read_json(req)
        )


class TaskDeploymentReport(_Resource):
    @require_runtime
    def on_put(
        self, req: falcon.Request, resp: falcon.Response, task_id: str, deployment_id: str
    ) -> None:
        """Report one deployment: stage, error, plan, state, outputs (extension)."""
        body = read_object(req, max_bytes=self.ctx.settings.limits.plan_file)
        resp.media = runtime.report(
            self.ctx, principal(req).organization_id, task_id, deployment_id, body
        )


class DeploymentLogs(_Resource):
    @require_user_or_runtime("read:deployment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """The activity's and its children's logs, joined in order."""
        resp.media = logs.read(principal(req).organization_id, deployment_id)

    @require_runtime
    def on_post(self, req: falcon.Request, resp: falcon.Response, deployment_id: str) -> None:
        """Append a chunk of log output."""
        limit = self.ctx.settings.limits.log_chunk + 64 * 1024
        resp.media = logs.append(
            self.ctx,
            principal(req).organization_id,
            deployment_id,
            read_object(req, max_bytes=limit),
        )
