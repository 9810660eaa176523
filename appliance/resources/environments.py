"""4.3 Environments, properties and secrets; 4.4 public keys."""

from __future__ import annotations

import falcon

from appliance.http.auth import principal, require
from appliance.http.params import list_query, read_json, read_object
from appliance.services import environments, keys, properties, records, secrets
from appliance.services.container import Services


class _Resource:
    def __init__(self, services: Services) -> None:
        self.services = services

    def record(self, req: falcon.Request, env: environments.Environment) -> dict:
        return environments.render(principal(req).organization_id, env)


class EnvironmentCollection(_Resource):
    """POST creates; PUT enables and DELETE disables by `{slug}`."""

    @require("create:environment")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Create an environment."""
        ctx, org_id = self.services.ctx, principal(req).organization_id
        resp.media = self.record(
            req, environments.create_environment(ctx, org_id, read_object(req))
        )

    @require("update:environment")
    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Enable an environment."""
        env = environments.set_active(
            self.services.ctx, principal(req).organization_id, read_object(req), True
        )
        resp.media = self.record(req, env)

    @require("delete:environment")
    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Disable an environment."""
        env = environments.set_active(
            self.services.ctx, principal(req).organization_id, read_object(req), False
        )
        resp.media = self.record(req, env)


class EnvironmentItem(_Resource):
    @require("read:environment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Describe an environment with its cloud accounts and item counts."""
        org_id = principal(req).organization_id
        env = environments.resolve(org_id, id_or_slug)
        resp.media = environments.render(org_id, env, detail=True)

    @require("delete:environment")
    def on_delete(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Delete (soft) an environment."""
        env = environments.delete_environment(
            self.services.ctx, principal(req).organization_id, id_or_slug
        )
        resp.media = self.record(req, env)


class EnvironmentDefault(_Resource):
    @require("update:environment")
    def on_put(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Make the environment the organization default."""
        env = environments.set_default(
            self.services.ctx, principal(req).organization_id, id_or_slug
        )
        resp.media = self.record(req, env)


class EnvironmentEdit(_Resource):
    @require("update:environment")
    def on_put(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Edit name, color, allow_pre_release and users."""
        env = environments.edit_environment(
            self.services.ctx, principal(req).organization_id, id_or_slug, read_object(req)
        )
        resp.media = self.record(req, env)


class EnvironmentClone(_Resource):
    @require("create:environment")
    def on_put(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Clone an environment with its properties and users."""
        env = environments.clone_environment(
            self.services.ctx, principal(req).organization_id, id_or_slug, read_object(req)
        )
        resp.media = self.record(req, env)


class EnvironmentProps(_Resource):
    @require("read:environment")
    def on_get(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """List an environment's properties."""
        resp.media = properties.get_props(principal(req).organization_id, id_or_slug)

    @require("update:environment")
    def on_post(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Add properties (all or nothing)."""
        org_id = principal(req).organization_id
        resp.media = properties.create_props(self.services.ctx, org_id, id_or_slug, read_json(req))

    @require("update:environment")
    def on_put(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Change properties by id (all or nothing)."""
        org_id = principal(req).organization_id
        resp.media = properties.update_props(self.services.ctx, org_id, id_or_slug, read_json(req))

    @require("update:environment")
    def on_delete(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Delete properties by id or name (all or nothing)."""
        org_id = principal(req).organization_id
        resp.media = properties.delete_props(self.services.ctx, org_id, id_or_slug, read_json(req))


class EnvironmentSecrets(_Resource):
    @require("read:secret")
    def on_get(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """List an environment's secrets (encrypted values)."""
        resp.media = secrets.get_secrets(principal(req).organization_id, id_or_slug)

    @require("create:secret")
    def on_post(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Add encrypted secrets (all or nothing)."""
        who = principal(req)
        resp.media = secrets.create_secrets(
            self.services.ctx, who.organization_id, who.user_pk, id_or_slug, read_json(req)
        )

    @require("update:secret")
    def on_put(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Replace secret values (all or nothing)."""
        org_id = principal(req).organization_id
        resp.media = secrets.update_secrets(self.services.ctx, org_id, id_or_slug, read_json(req))

    @require("delete:secret")
    def on_delete(self, req: falcon.Request, resp: falcon.Response, id_or_slug: str) -> None:
        """Delete secrets by key (all or nothing)."""
        org_id = principal(req).organization_id
        resp.media = secrets.delete_secrets(self.services.ctx, org_id, id_or_slug, read_json(req))


class OrganizationSecrets(_Resource):
    @require("read:environment")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Secret names across the organization."""
        lq = list_query(req, secrets.SECRET_LIST)
        resp.media = secrets.list_organization_secrets(principal(req).organization_id, lq)


class PublicKeys(_Resource):
    @require("read:organization")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The PEM public key secrets are encrypted with."""
        key = keys.current_key(self.services.ctx, principal(req).organization_id)
        resp.media = records.public_key(key, None)

    @require("update:organization")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Register a managed key: from now on secrets reach runtimes undecrypted."""
        body, who = read_object(req), principal(req)
        key, creator = keys.register_managed_key(
            self.services.ctx,
            who.organization_id,
            who.user_pk,
            body.get("public_key"),
            body.get("key_identifier"),
        )
        resp.media = records.public_key(key, creator, created=True)
