"""Permission strings (spec 5.5) and the fixed roles (DESIGN.md 4.4)."""

from __future__ import annotations

from functools import lru_cache

ACTIONS = ("create", "read", "update", "delete")
RESOURCES = (
    "organization_api_key",
    "package",
    "deployment",
    "deployment-plan",
    "environment",
    "secret",
    "organization",
    "users",
    "cloud",
    "task",
    "rescue",
    "vendor",
    "webhook",
)
ALL_PERMISSIONS: frozenset[str] = frozenset(f"{a}:{r}" for a in ACTIONS for r in RESOURCES)

_DEVELOPER = frozenset(
    {f"read:{r}" for r in RESOURCES if r != "secret"}
    | {
        "create:package",
        "update:package",
        "create:deployment",
        "update:deployment",
        "read:deployment-plan",
        "create:environment",
        "update:environment",
        "read:rescue",
    }
)
_VIEWER = frozenset(
    {
        "read:package",
        "read:deployment",
        "read:deployment-plan",
        "read:environment",
        "read:task",
        "read:cloud",
        "read:webhook",
        "read:organization",
        "read:users",
    }
)

ADMIN = "Admin"
ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    ADMIN: ALL_PERMISSIONS,
    "Developer": _DEVELOPER,
    "Viewer": _VIEWER,
}
ROLE_DESCRIPTIONS: dict[str, str] = {
    ADMIN: "Every permission, including members, keys and secrets",
    "Developer": "Publishes packages and deploys; reads everything but secrets",
    "Viewer": "Reads packages, deployments, environments and the organization",
}


@lru_cache(maxsize=64)
def permissions_of(role_names: tuple[str, ...]) -> frozenset[str]:
    """The union of the permissions of the named roles (sorted tuple, cached)."""
    granted: set[str] = set()
    for name in role_names:
        granted |= ROLE_PERMISSIONS.get(name, frozenset())
    return frozenset(granted)
