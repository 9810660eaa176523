"""The appliance: registry and deployment control plane for infrastructure-as-code packages."""

__version__ = "0.1.0"
