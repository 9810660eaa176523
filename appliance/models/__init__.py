"""Peewee models, one module per group."""

from appliance.models.clouds import CloudAccount
from appliance.models.credentials import ApiKey, RuntimeCredential, SessionToken
from appliance.models.db import database
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

__all__ = [
    "ApiKey",
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
    "OrganizationKey",
    "Role",
    "RuntimeCredential",
    "SessionToken",
    "User",
    "database",
]
