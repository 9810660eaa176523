"""Deployments and tasks (spec 4.7, 4.8; DESIGN.md 7)."""

from appliance.services.deployments.install import create, install, uninstall

__all__ = ["create", "install", "uninstall"]
