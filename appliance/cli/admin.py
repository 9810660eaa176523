"""`appliance admin`: works on the data directory directly, safely beside a running server."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from appliance.app import open_services
from appliance.cli.output import emit
from appliance.config import Settings
from appliance.errors import AppError
from appliance.models import Membership, User
from appliance.services import api_keys, members, organizations, records, runtimes
from appliance.services.container import Services

data_dir_option = click.option(
    "--data-dir",
    envvar="APPLIANCE_DATA_DIR",
    type=click.Path(path_type=Path),
    default=None,
    help="Data directory (default ./data).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
org_option = click.option("--org", "org_name", required=True, help="Organization name.")


def with_services(command: Callable[..., Any]) -> Callable[..., Any]:
    """Open the data directory (migrating it), pass Services, report errors as ClickException."""

    @wraps(command)
    def run(data_dir: Path | None, **kwargs: Any) -> Any:
        services, _ = open_services(Settings.from_env({"data_dir": data_dir}), bootstrap=False)
        try:
            return command(services, **kwargs)
        except AppError as exc:
            raise click.ClickException(exc.message) from None

    return data_dir_option(run)


@click.group()
def admin() -> None:
    """Administer the appliance on this machine (no HTTP needed)."""


@admin.group("org")
def org_group() -> None:
    """Organizations."""


@org_group.command("create")
@click.argument("name")
@click.option("--admin-email", required=True, help="E-mail of the organization's first Admin.")
@json_option
@with_services
def org_create(services: Services, name: str, admin_email: str, as_json: bool) -> None:
    """Create an organization with its Admin, default environment and an API key."""
    created = organizations.create_organization(services.ctx, name, admin_email)
    roles = members.get_member(created.organization.id, created.user.id)["roles"]
    value = {
        "organization": records.organization(created.organization),
        "user": {**records.user(created.user, []), "roles": roles},
        "api_key": created.api_key,
    }
    emit(
        value,
        as_json,
        f"Created {created.organization.name}; Admin API key (shown once):\n{created.api_key}",
    )


@admin.group("key")
def key_group() -> None:
    """API keys."""


def _member_pk(org_id: str, email: str) -> int:
    user = (
        User.select(User.id)
        .join(Membership)
        .where(Membership.organization == org_id, User.email == email.strip().lower())
        .first()
    )
    if user is None:
        raise click.ClickException(f"no member {email} in this organization")
    return user.id


@key_group.command("create")
@org_option
@click.option("--email", required=True, help="The member the key acts as.")
@click.option("--name", default=None, help="Key name, unique in the organization.")
@json_option
@with_services
def key_create(
    services: Services, org_name: str, email: str, name: str | None, as_json: bool
) -> None:
    """Create an API key for a member."""
    org = organizations.organization_by_name(org_name)
    key = api_keys.create_key(services.ctx, org.id, _member_pk(org.id, email), name)
    emit({"api_key": key}, as_json, key)


@admin.group("runtime")
def runtime_group() -> None:
    """Runtime credentials."""


@runtime_group.command("create")
@org_option
@click.option("--name", default=None, help="A name to recognise the runtime by.")
@json_option
@with_services
def runtime_create(services: Services, org_name: str, name: str | None, as_json: bool) -> None:
    """Create runtime Basic credentials (the password is shown once)."""
    org = organizations.organization_by_name(org_name)
    creds = runtimes.create_runtime(services.ctx, org.id, name)
    emit(creds, as_json, f"username: {creds['username']}\npassword: {creds['password']}")


@runtime_group.command("list")
@org_option
@json_option
@with_services
def runtime_list(services: Services, org_name: str, as_json: bool) -> None:
    """List runtime credentials."""
    rows = runtimes.list_runtimes(organizations.organization_by_name(org_name).id)
    lines = [
        f"{r['username']}  {r['name']}  {'revoked' if r['revoked_at'] else 'active'}" for r in rows
    ]
    emit(rows, as_json, "\n".join(lines) or "no runtimes")


@runtime_group.command("revoke")
@org_option
@click.argument("username")
@json_option
@with_services
def runtime_revoke(services: Services, org_name: str, username: str, as_json: bool) -> None:
    """Revoke a runtime's credentials."""
    org = organizations.organization_by_name(org_name)
    runtimes.revoke_runtime(services.ctx, org.id, username)
    emit({"username": username, "revoked": True}, as_json, f"revoked {username}")


@admin.group("user")
def user_group() -> None:
    """Users."""


@user_group.command("set-password")
@org_option
@click.option("--email", required=True, help="The member's e-mail.")
@click.password_option(help="New password (prompted when not given).")
@json_option
@with_services
def user_set_password(
    services: Services, org_name: str, email: str, password: str, as_json: bool
) -> None:
    """Set a member's password, for `auth/login`."""
    members.set_password(org_name, email, password)
    emit({"email": email.strip().lower(), "password_set": True}, as_json, "password set")
