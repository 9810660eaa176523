"""THE route table: one block per specification section."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import falcon

from appliance.http.health import Healthz, Readyz
from appliance.http.openapi import OpenApiDocument
from appliance.resources import (
    api_keys,
    clouds,
    deployments,
    environments,
    organization,
    packages,
    tasks,
    users,
    webhooks,
)
from appliance.services.container import Services

Factory = Callable[[Services], Any]

ROUTES: list[tuple[str, Factory]] = [
    # Operations
    ("/healthz", Healthz),
    ("/readyz", Readyz),
    ("/api/v1/openapi.json", OpenApiDocument),
    # 4.1 API keys
    ("/api/v1/auth/key", api_keys.ApiKeyCreate),
    ("/api/v1/auth/keys", api_keys.ApiKeyList),
    ("/api/v1/auth/key/activate", partial(api_keys.ApiKeyState, active=True)),
    ("/api/v1/auth/key/deactivate", partial(api_keys.ApiKeyState, active=False)),
    ("/api/v1/auth/login", users.Login),  # extension
    # 4.2 Packages (registry) and 4.12 organization package listing
    ("/api/v1/package", packages.PackageRecord),
    ("/api/v1/package/versions", packages.PackageVersions),
    ("/api/v1/package/search", packages.PackageSearch),
    ("/api/v1/package/status", packages.PackageStatus),
    ("/api/v1/package/validation/customizable", packages.PackageCustomizable),
    ("/api/v1/package/enable", partial(packages.PackageEnablement, enabled=True)),
    ("/api/v1/package/disable", partial(packages.PackageEnablement, enabled=False)),
    ("/api/v1/package/install", deployments.PackageInstall),
    ("/api/v1/package/uninstall", deployments.PackageUninstall),
    ("/api/v1/package/{first}/{rest:path}", packages.PackageDownload),
    ("/api/v1/packages", packages.PackageList),
    ("/api/v1/package-changes", packages.PackageChanges),
    ("/api/v1/blobs/{sha256}", packages.Blob),  # extension
    ("/api/v1/schemas/manifest-v1.json", packages.ManifestSchema),  # extension
    # 4.3 Environments
    ("/api/v1/environment", environments.EnvironmentCollection),
    ("/api/v1/environment/settings/secrets", environments.OrganizationSecrets),
    ("/api/v1/environment/{id_or_slug}", environments.EnvironmentItem),
    ("/api/v1/environment/{id_or_slug}/default", environments.EnvironmentDefault),
    ("/api/v1/environment/{id_or_slug}/edit", environments.EnvironmentEdit),
    ("/api/v1/environment/{id_or_slug}/clone", environments.EnvironmentClone),
    ("/api/v1/environment/{id_or_slug}/props", environments.EnvironmentProps),
    ("/api/v1/environment/{id_or_slug}/settings/secrets", environments.EnvironmentSecrets),
    # 4.4 Organization
    ("/api/v1/public-keys", environments.PublicKeys),
    ("/api/v1/organization/roles", organization.Roles),
    ("/api/v1/organization", organization.OrganizationRecord),
    ("/api/v1/organization/members", organization.Members),
    ("/api/v1/organization/members/{member_id}", organization.Member),
    ("/internal-api/v1/organization/{organization_id}/trial", organization.Trial),
    ("/api/v1/invitations/{invitation_id}/accept", users.InvitationAccept),  # extension
    # 4.5 Users
    ("/api/v1/user/{user_id}", users.UserRecord),
    ("/api/v1/user/{user_id}/roles", users.UserRoles),
    # 4.11 Webhooks
    ("/api/v1/webhook", webhooks.WebhookCreate),
    ("/api/v1/webhook/{webhook_id}", webhooks.WebhookRecord),
    ("/api/v1/webhooks", webhooks.WebhookList),
    ("/api/v1/webhook/{webhook_id}/deliveries", webhooks.WebhookDeliveries),  # extension
    (
        "/api/v1/webhook/{webhook_id}/deliveries/{delivery_id}/redeliver",
        webhooks.WebhookRedeliver,
    ),  # extension
    ("/api/v1/webhook/{webhook_id}/test", webhooks.WebhookTest),  # extension
    # 4.6 Cloud accounts
    ("/api/v1/cloud", clouds.CloudCreate),
    ("/api/v1/cloud/{id_or_slug}", clouds.CloudItem),
    ("/api/v1/cloud/provider/{provider}/account/{account_id}", clouds.CloudByProvider),
    ("/api/v1/cloud/{id_or_slug}/token/rotate", clouds.CloudTokenRotate),
    ("/api/v1/clouds", clouds.CloudList),
    # 4.7 Deployments
    ("/api/v1/deployment/create", deployments.DeploymentCreate),
    ("/api/v1/deployment/plan", deployments.PlanParse),
    ("/api/v1/deployment/{deployment_id}", deployments.DeploymentRecord),
    ("/api/v1/deployment/{deployment_id}/props", deployments.DeploymentProps),
    ("/api/v1/deployment/{deployment_id}/plan", deployments.DeploymentPlan),
    ("/api/v1/deployment/{deployment_id}/state", deployments.DeploymentState),
    ("/api/v1/deployment/{deployment_id}/manifest", deployments.DeploymentManifest),
    ("/api/v1/deployment/{deployment_id}/image", deployments.DeploymentImage),
    ("/api/v1/deployment/{deployment_id}/outputs", deployments.DeploymentOutputs),
    ("/api/v1/deployment/outputs/{output_id}/set-alias", deployments.OutputAlias),
    ("/api/v1/deployments", deployments.DeploymentList),
    ("/api/v1/deployments/filters", deployments.DeploymentFilters),
    ("/api/v1/deployments/outputs", deployments.OrganizationOutputs),
    ("/api/v1/deployments/plans", deployments.DeploymentPlans),
    ("/api/v1/deployments/{deployment_id}/logs", tasks.DeploymentLogs),
    ("/api/v1/deployment/{deployment_id}/approve", deployments.DeploymentApprove),
    ("/api/v1/deployments/approve", deployments.DeploymentsApprove),
    ("/api/v1/deployments/cancel", deployments.DeploymentsCancel),  # extension
    # 4.8 Tasks (runtime)
    ("/api/v1/tasks", tasks.PendingTasks),
    ("/api/v1/task/{task_id}", tasks.TaskRecord),
    ("/api/v1/task/{task_id}/status", tasks.TaskStatus),
    ("/api/v1/task/{task_id}/deployments", tasks.TaskDeployments),
    ("/api/v1/task/{task_id}/deployments/{deployment_id}", tasks.TaskDeploymentReport),  # extension
    # 4.10 Setup
    ("/api/v1/setup/preflight", clouds.SetupPreflight),
    ("/api/v1/vendor/setup", clouds.VendorSetup),
]

HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def operations(resource: Any) -> dict[str, Callable]:
    """Method -> responder of one resource (only the ones it defines)."""
    found = {}
    for method in HTTP_METHODS:
        responder = getattr(resource, f"on_{method.lower()}", None)
        if responder is not None:
            found[method] = responder
    return found


def build(services: Services) -> list[tuple[str, Any]]:
    """Instantiate every resource once."""
    built = [(path, factory(services)) for path, factory in ROUTES]
    for _, resource in built:
        if isinstance(resource, OpenApiDocument):
            resource.routes = built
    return built


def add_routes(app: falcon.App, services: Services) -> list[tuple[str, Any]]:
    built = build(services)
    for path, resource in built:
        app.add_route(path, resource)
    return built
