"""create_app(settings): database, migrations, blob store, services, middleware, routes."""

from __future__ import annotations

from dataclasses import dataclass

import falcon

from appliance import masterkey, migrations
from appliance.blobs import BlobStore
from appliance.config import Settings
from appliance.http import errors as http_errors
from appliance.http.middleware import RequestContext
from appliance.models.db import open_database
from appliance.routes import add_routes
from appliance.services import organizations
from appliance.services.auth import Authenticator
from appliance.services.container import Services
from appliance.services.context import ServiceContext


@dataclass
class Appliance:
    app: falcon.App
    services: Services
    bootstrap: organizations.NewOrganization | None


def open_services(
    settings: Settings, bootstrap: bool = True
) -> tuple[Services, organizations.NewOrganization | None]:
    """Everything below HTTP: data directory, schema, keys, blob store, first organization."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = open_database(settings.database_path)
    db.connect(reuse_if_open=True)
    migrations.migrate(db)
    ctx = ServiceContext(
        settings=settings,
        blobs=BlobStore(settings.blob_dir),
        master_key=masterkey.load_or_create(settings.data_dir),
    )
    created = organizations.bootstrap(ctx) if bootstrap else None
    return Services(ctx=ctx, auth=Authenticator(ctx)), created


def build_appliance(settings: Settings) -> Appliance:
    services, created = open_services(settings)
    app = falcon.App(middleware=[RequestContext(services)])
    app.req_options.strip_url_path_trailing_slash = True
    http_errors.install(app)
    add_routes(app, services)
    return Appliance(app, services, created)


def create_app(settings: Settings) -> falcon.App:
    """The WSGI application for `settings`."""
    return build_appliance(settings).app
