"""Peewee models, one module per group."""

from appliance.models.credentials import ApiKey, RuntimeCredential, SessionToken
from appliance.models.db import database
from appliance.models.environments import Environment, EnvironmentUser
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

__all__ = [
    "ApiKey",
    "Enablement",
    "Namespace",
    "Package",
    "PackageChild",
    "PackageDownload",
    "PackageVersion",
    "Environment",
    "EnvironmentUser",
    "Event",
    "Invitation",
    "MemberRole",
    "Membership",
    "Organization",
    "Role",
    "RuntimeCredential",
    "SessionToken",
    "User",
    "database",
]
