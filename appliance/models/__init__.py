"""Peewee models, one module per group."""

from appliance.models.clouds import CloudAccount
from appliance.models.credentials import ApiKey, RuntimeCredential, SessionToken
from appliance.models.db import database
from appliance.models.deployments import Deployment, DeploymentLog, DeploymentOutput, Task
from appliance.models.environments import (
    Environment,
    EnvironmentProperty,
    EnvironmentSecret,
    EnvironmentUser,
    OrganizationKey,
)
from appliance.models.events import Event
from appliance.models.organizations import (
    Invitation,
    MemberRole,
    Membership,
    Organization,
    Role,
    User,
)
from appliance.models.packages import (
    Enablement,
    Namespace,
    Package,
    PackageChild,
    PackageDownload,
    PackageVersion,
)
from appliance.models.webhooks import DeliveryAttempt, OutboxCursor, Webhook, WebhookDelivery

__all__ = [
    "ApiKey",
    "DeliveryAttempt",
    "Deployment",
    "DeploymentLog",
    "DeploymentOutput",
    "Enablement",
    "Namespace",
    "Package",
    "PackageChild",
    "PackageDownload",
    "PackageVersion",
    "CloudAccount",
    "Environment",
    "EnvironmentProperty",
    "EnvironmentSecret",
    "EnvironmentUser",
    "Event",
    "Invitation",
    "MemberRole",
    "Membership",
    "Organization",
    "OutboxCursor",
    "OrganizationKey",
    "Role",
    "RuntimeCredential",
    "SessionToken",
    "Task",
    "User",
    "Webhook",
    "WebhookDelivery",
    "database",
]
