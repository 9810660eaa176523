"""The services one app instance shares, built once by create_app()."""

from __future__ import annotations

from dataclasses import dataclass

from appliance.services.auth import Authenticator
from appliance.services.context import ServiceContext


@dataclass(frozen=True)
class Services:
    ctx: ServiceContext
    auth: Authenticator
