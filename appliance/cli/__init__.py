"""The `appliance` command: serve, admin, and (later) the registry client."""

from __future__ import annotations

import click

from appliance import __version__
from appliance.cli.admin import admin
from appliance.cli.serve import serve


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-v", "--version", prog_name="appliance")
def root() -> None:
    """Self-hosted registry and deployment control plane for infrastructure-as-code."""


root.add_command(serve)
root.add_command(admin)


def main() -> None:
    """Console-script entry point."""
    root(prog_name="appliance")
