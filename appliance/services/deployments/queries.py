"""Reading deployments (spec 4.7): list, detail, props, outputs, plan, state, manifest."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import yaml
from peewee import fn

from appliance.domain.listing import ListQuery, ListSpec
from appliance.domain.plans import (
    ParsedPlan,
    PlanSection,
    parse_plan,
    parse_state,
    render_plans_markdown,
)
from appliance.domain.stages import STAGES, Stage
from appliance.domain.tree_image import TreeNode, render_tree_png
from appliance.errors import Invalid, NotFound
from appliance.models import (
    Deployment,
    DeploymentOutput,
    Environment,
    PackageVersion,
    User,
)
from appliance.models.db import to_iso, write_transaction
from appliance.services import environments, records
from appliance.services.context import ServiceContext
from appliance.services.deployments import records as deployment_records
from appliance.services.deployments.common import get_activity, resolve_activity
from appliance.services.deployments.runtime import previous_state
from appliance.services.listing import Columns, as_bool, paginate

DEPLOYMENT_LIST = ListSpec(
    sorts=("timestamp", "created", "name", "stage", "slug", "version"),
    default_sort="timestamp",
    filters=("stage", "name", "slug", "type", "environment", "iac_type", "is_uninstall"),
    min_limit=3,
)
_LIST_COLUMNS = Columns(
    sorts={
        "timestamp": fn.COALESCE(Deployment.updated_at, Deployment.created_at),
        "created": Deployment.created_at,
        "name": Deployment.name,
        "stage": Deployment.stage,
        "slug": Deployment.root_slug,
        "version": Deployment.version,
    },
    tiebreak=Deployment.id,
    search=Deployment.name,
    filters={
        "stage": (Deployment.stage, str),
        "name": (Deployment.name, str),
        "slug": (Deployment.root_slug, str),
        "type": (Deployment.type, str),
        "environment": (Environment.slug, str),
        "iac_type": (Deployment.iac_type, str),
        "is_uninstall": (Deployment.is_uninstall, as_bool),
    },
)
OUTPUT_LIST = ListSpec(
    sorts=("updated", "created", "key"),
    default_sort="updated",
    filters=("deployment_slug", "key", "type", "alias", "is_destroyed"),
    min_limit=3,
)
_OUTPUT_COLUMNS = Columns(
    sorts={
        "updated": fn.COALESCE(DeploymentOutput.updated_at, DeploymentOutput.created_at),
        "created": DeploymentOutput.created_at,
        "key": DeploymentOutput.key,
    },
    tiebreak=DeploymentOutput.id,
    search=DeploymentOutput.key,
    filters={
        "deployment_slug": (DeploymentOutput.deployment_slug, str),
        "key": (DeploymentOutput.key, str),
        "type": (DeploymentOutput.type, str),
        "alias": (DeploymentOutput.alias, str),
        "is_destroyed": (DeploymentOutput.is_destroyed, as_bool),
    },
)


# -- rendering many at once (no query per row) --------------------------------------------


class _Context:
    """What rendering a page of deployments needs, loaded in a few queries."""

    def __init__(self, org_id: str, rows: list[Deployment]) -> None:
        env_ids = list({row.environment_id for row in rows})
        envs = {e.id: e for e in Environment.select().where(Environment.id.in_(env_ids))}
        accounts = environments.primary_accounts(env_ids)
        self.environments = {
            env_id: records.environment(
                env,
                cloud_account=(
                    records.cloud_account(accounts[env_id], embedded=True)
                    if env_id in accounts
                    else None
                ),
            )
            for env_id, env in envs.items()
        }
        user_ids = {row.user_id for row in rows} | {row.reviewed_by_id for row in rows}
        user_ids.discard(None)
        self.users = {u.id: u for u in User.select().where(User.id.in_(list(user_ids)))}
        version_ids = [row.package_version_id for row in rows if row.package_version_id]
        self.latest = {
            v.id: v.is_latest
            for v in PackageVersion.select(PackageVersion.id, PackageVersion.is_latest).where(
                PackageVersion.id.in_(version_ids)
            )
        }

    def render(self, row: Deployment, base_url: str, **extra: Any) -> dict[str, Any]:
        return deployment_records.deployment(
            row,
            base_url=base_url,
            environment=self.environments.get(row.environment_id),
            users=self.users,
            outdated=not self.latest.get(row.package_version_id, True),
            **extra,
        )


def _tree(rows: list[Deployment]) -> dict[str, list[Deployment]]:
    """Parent id -> children (every descendant of `rows`, one query per level)."""
    children: dict[str, list[Deployment]] = defaultdict(list)
    level = [row.id for row in rows]
    while level:
        found = list(
            Deployment.select().where(Deployment.parent.in_(level)).order_by(Deployment.position)
        )
        for child in found:
            children[child.parent_id].append(child)
        level = [child.id for child in found]
    return children


def _render_tree(
    ctx: ServiceContext, org_id: str, rows: list[Deployment], expand: bool
) -> list[dict[str, Any]]:
    children = _tree(rows) if expand else {}
    every = rows + [c for group in children.values() for c in group]
    loaded = _Context(org_id, every)
    base = ctx.settings.public_base_url

    def render(row: Deployment) -> dict[str, Any]:
        kids = [render(child) for child in children.get(row.id, [])]
        return loaded.render(row, base, children=kids)

    return [render(row) for row in rows]


def list_deployments(
    ctx: ServiceContext, org_id: str, lq: ListQuery, options: dict[str, Any]
) -> dict[str, Any]:
    """GET /deployments: top-level activities (or one per slug), with stats."""
    query = (
        Deployment.select(Deployment)
        .join(Environment, on=Deployment.environment == Environment.id)
        .where(Deployment.organization == org_id, Deployment.parent.is_null())
    )
    if not options["archived"]:
        query = query.where(Deployment.is_archived == False)  # noqa: E712
    if options["type"] == "deployments" or options["latest"]:
        query = query.where(Deployment.is_latest == True)  # noqa: E712
    if options["environment_id"]:
        query = query.where(Deployment.environment == options["environment_id"])
    if options["query"]:
        text = options["query"].lower()
        query = query.where(
            fn.LOWER(Deployment.name).contains(text) | fn.LOWER(Deployment.root_slug).contains(text)
        )
    total, rows = paginate(query, lq, _LIST_COLUMNS)
    live_query = Deployment.select().where(
        Deployment.organization == org_id,
        Deployment.parent.is_null(),
        Deployment.is_latest == True,  # noqa: E712
        Deployment.is_archived == False,  # noqa: E712
    )
    live = live_query.where(Deployment.stage == Stage.COMPLETED).count()
    return {
        "total": total,
        "stats": {"live": live, "drafts": live_query.count() - live},
        "list": _render_tree(ctx, org_id, rows, options["expand"]),
    }


def detail(
    ctx: ServiceContext, org_id: str, id_or_slug: str, parse_type: str = "plan"
) -> dict[str, Any]:
    """GET /deployment/{idOrSlug}: the record with parsed plan or state and its children."""
    if parse_type not in ("plan", "state"):
        raise Invalid("parse_type must be plan or state")
    row = resolve_activity(org_id, id_or_slug)
    state_data = None
    if parse_type == "state" and row.state_sha256:
        state = parse_state(ctx.blobs.read_bytes(row.state_sha256))
        state_data = {"stateMetadata": state.metadata, "outputs": state.outputs}
    children = _render_tree(ctx, org_id, [row], True)[0]["children"]
    loaded = _Context(org_id, [row])
    return loaded.render(
        row,
        ctx.settings.public_base_url,
        children=children,
        parse_type=parse_type,
        state_data=state_data,
    )


def props(org_id: str, id_or_slug: str) -> dict[str, Any]:
    """GET /deployment/{idOrSlug}/props: the deployment properties result."""
    row = resolve_activity(org_id, id_or_slug)
    env = Environment.get_by_id(row.environment_id)
    return {
        "activity_id": row.id,
        "slug": row.slug,
        "updated": to_iso(row.updated_at),
        "package": row.name,
        "version": row.version,
        "env": env.slug,
        "props": row.props,
    }


# -- outputs --------------------------------------------------------------------------------


def _outputs_page(query: Any, lq: ListQuery) -> dict[str, Any]:
    total, rows = paginate(query, lq, _OUTPUT_COLUMNS)
    slugs = sorted({row.deployment_slug for row in query})
    packages = (
        PackageVersion.select(PackageVersion.id, PackageVersion.name, PackageVersion.version)
        .where(PackageVersion.id.in_([r.package_id for r in rows if r.package_id]))
        .order_by(PackageVersion.name)
    )
    return {
        "total": total,
        "list": [deployment_records.output(row) for row in rows],
        "filters": {"deployment_slugs": slugs},
        "metadata": {
            "packages": [{"id": p.id, "name": p.name, "version": p.version} for p in packages]
        },
    }


def slug_outputs(org_id: str, slug: str, lq: ListQuery) -> dict[str, Any]:
    """GET /deployment/{slug}/outputs: the slug's latest activity and its children."""
    roots = list(
        Deployment.select(Deployment.task).where(
            Deployment.organization == org_id,
            Deployment.root_slug == slug,
            Deployment.parent.is_null(),
            Deployment.is_latest == True,  # noqa: E712
        )
    )
    if not roots:
        raise NotFound(f"deployment not found: {slug[:80]}")
    activities = Deployment.select(Deployment.id).where(
        Deployment.task.in_([r.task_id for r in roots])
    )
    query = DeploymentOutput.select().where(DeploymentOutput.deployment.in_(activities))
    return _outputs_page(query, lq)


def organization_outputs(org_id: str, lq: ListQuery) -> dict[str, Any]:
    """GET /deployments/outputs: outputs of every latest activity of the organization."""
    latest = Deployment.select(Deployment.id).where(
        Deployment.organization == org_id,
        Deployment.is_latest == True,  # noqa: E712
    )
    query = DeploymentOutput.select().where(
        DeploymentOutput.organization == org_id, DeploymentOutput.deployment.in_(latest)
    )
    return _outputs_page(query, lq)


def set_alias(org_id: str, output_id: str, body: Any) -> dict[str, Any]:
    """PUT /deployment/outputs/{outputId}/set-alias: `{id, alias}`."""
    alias = body.get("alias") if isinstance(body, dict) else None
    if not isinstance(alias, str) or not alias.strip() or len(alias) > 128:
        raise Invalid("alias is required (a string of at most 128 characters)")
    with write_transaction():
        row = DeploymentOutput.get_or_none(
            DeploymentOutput.id == output_id, DeploymentOutput.organization == org_id
        )
        if row is None:
            raise NotFound(f"output not found: {str(output_id)[:80]}")
        row.alias = alias.strip()
        row.save()
    return {"id": row.id, "alias": row.alias}


# -- files -------------------------------------------------------------------------------------


def plan_file(ctx: ServiceContext, org_id: str, deployment_id: str, fmt: str | None) -> bytes:
    """GET /deployment/{id}/plan: the stored plan JSON."""
    if fmt not in (None, "", "json"):
        raise Invalid("format must be json")
    row = get_activity(org_id, deployment_id)
    if not row.plan_sha256:
        raise NotFound(f"deployment {row.id} has no plan yet")
    return ctx.blobs.read_bytes(row.plan_sha256)


def state_file(ctx: ServiceContext, org_id: str, deployment_id: str) -> bytes:
    """GET /deployment/{id}/state: the newest state of the activity's lineage."""
    row = get_activity(org_id, deployment_id)
    sha = row.state_sha256 or previous_state(row)
    if not sha:
        raise NotFound(f"deployment {row.id} has no state")
    return ctx.blobs.read_bytes(sha)


def manifest(org_id: str, id_or_slug: str) -> str:
    """GET /deployment/{idOrSlug}/manifest: the package manifest as YAML."""
    row = resolve_activity(org_id, id_or_slug)
    version = PackageVersion.get_or_none(PackageVersion.id == row.package_version_id)
    if version is None:
        raise NotFound(f"deployment {row.id} has no registry package manifest")
    return yaml.safe_dump(version.manifest, sort_keys=False)


def plans_markdown(org_id: str, body: Any) -> str:
    """POST /deployments/plans: Markdown of the parsed plans of the given deployments."""
    ids = body.get("deployments") if isinstance(body, dict) else None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise Invalid("deployments is required (a list of deployment ids)")
    if len(ids) > 1000:
        raise Invalid("at most 1000 deployments")
    rows = {
        r.id: r
        for r in Deployment.select().where(
            Deployment.organization == org_id, Deployment.id.in_(ids)
        )
    }
    missing = [i for i in ids if i not in rows]
    if missing:
        raise NotFound(f"deployment not found: {missing[0][:80]}")
    sections = []
    for deployment_id in ids:
        row = rows[deployment_id]
        data = (row.parsed or {}).get("data")
        plan = None
        if data is not None:
            plan = ParsedPlan(resources=data["resources"], counts=data["plannedMetadata"])
        sections.append(PlanSection(f"{row.root_slug}: {row.name}@{row.version}", plan))
    return render_plans_markdown(sections)


# -- filters ----------------------------------------------------------------------------------

FILTER_KEYS = ("slugs", "stages", "blueprints", "environments", "users", "types", "iac_types")


def filters(org_id: str, kind: str | None, archived: bool) -> dict[str, Any]:
    """GET /deployments/filters: the values present, for the list's filter menus."""
    if kind is not None and kind not in FILTER_KEYS:
        raise Invalid(f"type must be one of {', '.join(FILTER_KEYS)}")
    base = Deployment.select().where(
        Deployment.organization == org_id,
        Deployment.parent.is_null(),
        Deployment.is_archived == archived,
    )

    def distinct(column: Any) -> list[Any]:
        query = base.select(column).distinct().order_by(column).tuples()
        return [value for (value,) in query if value is not None]

    found: dict[str, Any] = {}
    wanted = [kind] if kind else list(FILTER_KEYS)
    for key in wanted:
        if key == "environments":
            env_ids = distinct(Deployment.environment)
            found[key] = [
                {"id": e.id, "name": e.name, "slug": e.slug, "color": e.color}
                for e in Environment.select()
                .where(Environment.id.in_(env_ids))
                .order_by(Environment.slug)
            ]
        elif key == "users":
            user_ids = distinct(Deployment.user)
            found[key] = [
                records.user_summary(u)
                for u in User.select().where(User.id.in_(user_ids)).order_by(User.name)
            ]
        elif key == "stages":
            present = set(distinct(Deployment.stage))
            found[key] = [str(s) for s in STAGES if str(s) in present]
        else:
            column = {
                "slugs": Deployment.root_slug,
                "blueprints": Deployment.name,
                "types": Deployment.type,
                "iac_types": Deployment.iac_type,
            }[key]
            found[key] = distinct(column)
    return {"deployments_filters": found}


def parse_uploaded_plan(filename: str | None, raw: bytes) -> dict[str, Any]:
    """POST /deployment/plan: an uploaded Terraform JSON plan parsed, not stored."""
    parsed = parse_plan(raw)
    return {"name": filename, "deployment": None, "parsed": {"data": parsed.parsed()["data"]}}


def image(org_id: str, deployment_id: str, fmt: str | None) -> bytes:
    """GET /deployment/{id}/image: the activity's tree as a PNG."""
    if fmt not in (None, "", "png"):
        raise Invalid("format must be png")
    row = get_activity(org_id, deployment_id)
    children = _tree([row])
    nodes, queue = [], [row]
    while queue:
        current = queue.pop(0)
        nodes.append(
            TreeNode(
                current.id,
                current.name,
                current.version,
                current.stage,
                current.parent_id if current.id != row.id else None,
                tuple(current.depend or ()),
            )
        )
        queue.extend(children.get(current.id, []))
    return render_tree_png(nodes)
