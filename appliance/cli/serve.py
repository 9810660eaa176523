"""`appliance serve`: waitress serving the app, clean shutdown on SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import click
import waitress

from appliance.app import build_appliance
from appliance.config import MiB, Settings
from appliance.models.db import database
from appliance.workers import LeaseReaper, WebhookDelivery

INITIAL_KEY_FILE = "initial-admin-key"


def _write_initial_key(data_dir: Path, key: str) -> Path:
    path = data_dir / INITIAL_KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return path


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


@click.command()
@click.option(
    "--data-dir",
    envvar="APPLIANCE_DATA_DIR",
    type=click.Path(path_type=Path),
    default=None,
    help="Data directory (default ./data).",
)
@click.option("--host", envvar="APPLIANCE_HOST", default=None, help="Address to listen on.")
@click.option("--port", envvar="APPLIANCE_PORT", type=int, default=None, help="Port (8080).")
@click.option(
    "--threads",
    envvar="APPLIANCE_THREADS",
    type=click.IntRange(1, 256),
    default=None,
    help="Worker threads (16).",
)
def serve(data_dir: Path | None, host: str | None, port: int | None, threads: int | None) -> None:
    """Serve the appliance; on an empty data directory, bootstrap it first."""
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    settings = Settings.from_env(
        {"data_dir": data_dir, "host": host, "port": port, "threads": threads}
    )
    appliance = build_appliance(settings)
    delivery = WebhookDelivery(appliance.services.ctx) if settings.start_workers else None
    reaper = LeaseReaper(appliance.services.ctx) if settings.start_workers else None
    if delivery is not None and reaper is not None:
        delivery.start()
        reaper.start()
    if appliance.bootstrap is not None:
        path = _write_initial_key(settings.data_dir, appliance.bootstrap.api_key)
        click.echo(f"Admin API key (shown once, also in {path}):")
        click.echo(appliance.bootstrap.api_key)
    limits = settings.limits
    server = waitress.create_server(
        appliance.app,
        host=settings.host,
        port=settings.port,
        threads=settings.threads,
        connection_limit=settings.connection_limit,
        backlog=2048,
        asyncore_use_poll=True,  # select() stops at 1024 descriptors
        max_request_body_size=limits.package_upload + 16 * MiB,
        channel_timeout=120,
        expose_tracebacks=False,
        ident="appliance",
    )
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    click.echo(f"Serving on {settings.public_base_url} (data in {settings.data_dir})", err=True)
    sys.stdout.flush()
    try:
        server.run()
    finally:
        server.close()
        if delivery is not None:
            delivery.stop()
        if reaper is not None:
            reaper.stop()
        database.close()
        click.echo("Stopped.", err=True)
