"""Settings: built once from flags, then `APPLIANCE_*` variables, then defaults."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MiB = 1024 * 1024


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


def new_uuid() -> str:
    """A fresh UUID4 string."""
    return str(uuid.uuid4())


def resolve_host(host: str) -> list[str]:
    """Every address `host` resolves to (DNS through the system resolver)."""
    infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


# Injected callables, never read from the environment.
_NOT_FROM_ENV = ("limits", "clock", "new_id", "resolve_host")


@dataclass(frozen=True)
class Limits:
    """Size and rate limits (DESIGN.md 9); each one a setting."""

    json_body: int = 1 * MiB
    json_depth: int = 64
    package_upload: int = 512 * MiB
    plan_file: int = 50 * MiB
    log_chunk: int = 1 * MiB
    log_per_activity: int = 10 * MiB
    rate_per_credential: float = 100.0
    burst_per_credential: int = 500
    failed_auth_rate: float = 20.0
    failed_auth_burst: int = 200


@dataclass(frozen=True)
class Settings:
    """Everything the process needs to know; passed down, never read from globals."""

    data_dir: Path = Path("data")
    database_url: str = ""
    blob_url: str = ""
    host: str = "127.0.0.1"
    port: int = 8080
    base_url: str = ""
    threads: int = 16
    connection_limit: int = 1000
    operator_token: str = ""
    webhook_allow_list: tuple[str, ...] = ()
    start_workers: bool = True
    auth_cache_seconds: float = 1.0
    # Secrets (DESIGN.md 6) and cloud account setup (spec 4.10).
    org_key_bits: int = 3072
    setup_cloud_provider: str = "aws"
    setup_role_arn: str = ""
    setup_template_url: str = ""
    setup_stack_name: str = "appliance-access"
    # Runtime task leases (DESIGN.md 7.3).
    task_lease_seconds: int = 300
    task_max_attempts: int = 3
    limits: Limits = field(default_factory=Limits)
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_uuid
    resolve_host: Callable[[str], list[str]] = resolve_host

    @property
    def database_path(self) -> Path:
        return self.data_dir / "appliance.db"

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def public_base_url(self) -> str:
        return (self.base_url or f"http://{self.host}:{self.port}").rstrip("/")

    @classmethod
    def from_env(
        cls, overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Flags (`overrides`, None values ignored) win over `APPLIANCE_*` variables."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        simple = {f.name: f.type for f in fields(cls) if f.name not in _NOT_FROM_ENV}
        for name in simple:
            raw = env.get(f"APPLIANCE_{name.upper()}")
            if raw is not None:
                values[name] = _coerce(name, raw)
        limit_values = {}
        for limit in fields(Limits):
            raw = env.get(f"APPLIANCE_LIMIT_{limit.name.upper()}")
            if raw is not None:
                limit_values[limit.name] = float(raw) if "rate" in limit.name else int(raw)
        if limit_values:
            values["limits"] = Limits(**limit_values)
        for name, value in (overrides or {}).items():
            if value is not None:
                values[name] = _coerce(name, value) if isinstance(value, str) else value
        settings = cls(**values)
        return replace(settings, data_dir=Path(settings.data_dir))


def _coerce(name: str, raw: str) -> Any:
    if name in ("port", "threads", "connection_limit", "org_key_bits"):
        return int(raw)
    if name == "start_workers":
        return raw.strip().lower() in ("1", "true", "yes")
    if name == "webhook_allow_list":
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    if name == "data_dir":
        return Path(raw)
    return raw
