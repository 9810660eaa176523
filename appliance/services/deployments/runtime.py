"""The runtime protocol of DESIGN.md 7.3: pending work, task detail, claims, reports."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import defaultdict
from datetime import timedelta
from typing import Any

from appliance import masterkey
from appliance.domain import references, stages
from appliance.domain.plans import parse_plan, parse_state
from appliance.domain.stages import Stage
from appliance.errors import Conflict, Invalid
from appliance.models import Deployment, DeploymentOutput, PackageVersion, Task
from appliance.models.db import database, to_iso, write_transaction
from appliance.services import environments, records, secrets
from appliance.services.context import ServiceContext
from appliance.services.deployments import records as deployment_records
from appliance.services.deployments.common import (
    ARTIFACT,
    BLUEPRINT,
    check_fields,
    get_activity,
    get_task,
    move_activity,
    move_task,
    refresh_derived,
    task_activities,
)
from appliance.services.packages import signed_blob_url

_LEASED = (str(Stage.PLANNING), str(Stage.INSTALLING))
_CLAIMS = {Stage.PLANNING: Stage.PENDING, Stage.INSTALLING: Stage.PLAN_APPROVED}
PENDING_LIMIT = 100
# The hot path (DESIGN.md 1): hundreds of runtimes poll this; the SQL is built once and
# served by the (organization, stage, created_at) index.
_PENDING_SQL = (
    f'SELECT "id", "stage", "generation" FROM "{Task._meta.table_name}" '
    'WHERE "organization_id" = ? AND "stage" IN (?, ?) '
    'ORDER BY "created_at", "id" LIMIT ?'
)


def lease_token(ctx: ServiceContext, task_id: str, generation: int, stage: str) -> str:
    """The opaque token of one piece of work; it goes stale once the work is claimed."""
    key = masterkey.derive(ctx.master_key, "task-lease-token")
    return hmac.new(key, f"{task_id}:{generation}:{stage}".encode(), hashlib.sha256).hexdigest()


def pending_tasks(ctx: ServiceContext, org_id: str) -> list[dict[str, Any]]:
    """GET /tasks: pending (plan) and plan_approved (apply) tasks, oldest first."""
    rows = database.execute_sql(
        _PENDING_SQL, (org_id, str(Stage.PENDING), str(Stage.PLAN_APPROVED), PENDING_LIMIT)
    )
    return [
        {"taskId": task_id, "token": lease_token(ctx, task_id, generation, stage), "stage": stage}
        for task_id, stage, generation in rows
    ]


def _lease_until(ctx: ServiceContext) -> Any:
    return ctx.now() + timedelta(seconds=ctx.settings.task_lease_seconds)


def renew_lease(ctx: ServiceContext, task_id: str) -> None:
    """Any runtime call for a claimed task extends its lease."""
    with write_transaction():
        Task.update(lease_until=_lease_until(ctx)).where(
            Task.id == task_id, Task.stage.in_(_LEASED)
        ).execute()


# -- task detail ---------------------------------------------------------------------------


def dependency_order(activities: list[Deployment]) -> list[Deployment]:
    """Parents before children, each after the siblings it depends on."""
    ids = {row.id for row in activities}
    graph = {
        row.id: [d for d in row.depend if d in ids] + ([row.parent_id] if row.parent_id else [])
        for row in activities
    }
    by_id = {row.id: row for row in activities}
    return [by_id[i] for i in references.topological_order(graph)]


def outputs_of(activity_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Activity id -> output key -> value, in one query."""
    found: dict[str, dict[str, Any]] = defaultdict(dict)
    if activity_ids:
        rows = DeploymentOutput.select().where(DeploymentOutput.deployment.in_(activity_ids))
        for row in rows:
            found[row.deployment_id][row.key] = row.value
    return found


def _slug_outputs(org_id: str, env_id: str, slugs: set[str]) -> dict[str, dict[str, Any]]:
    """`$<slug>.<key>` sources: outputs of each slug's latest top-level activity."""
    if not slugs:
        return {}
    roots = Deployment.select(Deployment.id, Deployment.root_slug).where(
        Deployment.organization == org_id,
        Deployment.environment == env_id,
        Deployment.root_slug.in_(sorted(slugs)),
        Deployment.parent.is_null(),
        Deployment.is_latest == True,  # noqa: E712
    )
    by_id = {row.id: row.root_slug for row in roots}
    outputs = outputs_of(list(by_id))
    return {slug: outputs.get(root_id, {}) for root_id, slug in by_id.items()}


def resolved_props(org_id: str, activities: list[Deployment]) -> dict[str, dict[str, Any]]:
    """Each activity's props with every reference whose source has a value resolved."""
    if not activities:
        return {}
    outputs = outputs_of([row.id for row in activities])
    siblings: dict[str | None, dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in activities:
        if row.alias is not None:
            siblings[row.parent_id][row.alias] = outputs.get(row.id, {})
    slugs = {
        ref.source for row in activities for ref in references.install_references(row.props or {})
    }
    by_slug = _slug_outputs(org_id, activities[0].environment_id, slugs)
    return {
        row.id: references.resolve_props(
            row.props or {}, outputs=siblings[row.parent_id], deployments=by_slug
        )
        for row in activities
    }


def _package(ctx: ServiceContext, row: Deployment, version: PackageVersion | None) -> dict:
    url = signed_blob_url(ctx, version.blob_sha256) if version and version.blob_sha256 else None
    return {
        "qualified_name": row.name,
        "url": url,
        "version": row.version,
        "uniqueId": row.unique_id,
    }


def previous_state(row: Deployment) -> str | None:
    """The newest state of the activity's lineage (same slug, environment and alias)."""
    found = (
        Deployment.select(Deployment.state_sha256)
        .where(
            Deployment.organization == row.organization_id,
            Deployment.environment == row.environment_id,
            Deployment.root_slug == row.root_slug,
            Deployment.alias.is_null() if row.alias is None else Deployment.alias == row.alias,
            Deployment.state_sha256.is_null(False),
        )
        .order_by(Deployment.created_at.desc())
        .first()
    )
    return None if found is None else found.state_sha256


def lineage_states(row: Deployment) -> dict[str | None, str]:
    """Alias -> newest state of a slug's lineage, in one query (None is the top level)."""
    found: dict[str | None, str] = {}
    query = (
        Deployment.select(Deployment.alias, Deployment.state_sha256)
        .where(
            Deployment.organization == row.organization_id,
            Deployment.environment == row.environment_id,
            Deployment.root_slug == row.root_slug,
            Deployment.state_sha256.is_null(False),
        )
        .order_by(Deployment.created_at.desc())
        .tuples()
    )
    for alias, sha in query:
        found.setdefault(alias, sha)
    return found


def task_detail(ctx: ServiceContext, org_id: str, task_id: str) -> dict[str, Any]:
    """GET /task/{id}: the task, its deployments in dependency order, props and secrets."""
    task = get_task(org_id, task_id)
    renew_lease(ctx, task.id)
    activities = dependency_order(task_activities(task))
    versions = {
        v.id: v
        for v in PackageVersion.select().where(
            PackageVersion.id.in_([r.package_version_id for r in activities])
        )
    }
    props = resolved_props(org_id, activities)
    lineage = lineage_states(activities[0]) if activities else {}
    env = environments.resolve(org_id, task.environment_id)
    task_secrets = secrets.secrets_for_task(ctx, org_id, task.environment_id)
    items = []
    for row in activities:
        state = row.state_sha256 or lineage.get(row.alias)
        items.append(
            {
                "guid": row.id,
                "parent": row.parent_id,
                "taskId": task.id,
                "depend": row.depend,
                "stage": row.stage,
                "type": row.type,
                "plan_file": signed_blob_url(ctx, row.plan_sha256) if row.plan_sha256 else None,
                "state_file": signed_blob_url(ctx, state) if state else None,
                "origin_state_location": row.origin_state_location,
                "slug": row.slug,
                "alias": row.alias,
                "package": _package(ctx, row, versions.get(row.package_version_id)),
                "props": props[row.id],
            }
        )
    root = next((row for row in activities if row.parent_id is None), None)
    return {
        "taskId": task.id,
        "command": task.command,
        "planOnly": stages.is_plan_only(task.command),
        "user": None if task.user_id is None else records.user_id(task.user_id),
        "organization": org_id,
        "stage": task.stage,
        "environment": environments.render(org_id, env),
        "props": None if root is None else props[root.id],
        "secrets": task_secrets.secrets,
        "decryptionKeyId": task_secrets.decryption_key_id,
        "deployments": items,
    }


# -- claims and status -------------------------------------------------------------------


def _status_target(body: dict[str, Any]) -> Stage:
    check_fields(body, ("status", "token", "error"))
    status = body.get("status")
    allowed = (Stage.PLANNING, Stage.INSTALLING, Stage.ERROR)
    if status not in [str(s) for s in allowed]:
        raise Invalid(f"status must be one of {', '.join(allowed)}")
    return Stage(status)


def _claim(ctx: ServiceContext, task: Task, target: Stage, token: Any) -> None:
    source = _CLAIMS[target]
    if task.stage != source:
        stages.check_move(task.stage, target, task.command)  # names both stages
        raise Conflict(f"task is {task.stage}, not {source}: it cannot be claimed")
    expected = lease_token(ctx, task.id, task.generation, task.stage)
    if not isinstance(token, str) or not hmac.compare_digest(token, expected):
        raise Conflict("stale or unknown lease token: the work was claimed by another runtime")
    task.generation += 1
    task.lease_until = _lease_until(ctx)
    if target is Stage.PLANNING:
        task.attempts += 1
    move_task(ctx, task, target)
    for row in task_activities(task):
        if row.type != BLUEPRINT and row.stage == source:
            move_activity(ctx, row, target)


def _fail(ctx: ServiceContext, task: Task, message: str) -> None:
    if stages.is_final(task.stage, task.command):
        stages.check_move(task.stage, Stage.ERROR, task.command)
    task.errors = [{"message": message}]
    for row in task_activities(task):
        if row.type != BLUEPRINT and not stages.is_final(row.stage, row.command):
            row.errors = [{"message": message}]
            move_activity(ctx, row, Stage.ERROR)


def update_status(
    ctx: ServiceContext, org_id: str, task_id: str, body: Any, elaborate: bool
) -> dict[str, Any]:
    """POST /task/{id}/status: claim (compare-and-set on the lease token) or fail the task."""
    if not isinstance(body, dict):
        raise Invalid("the JSON body must be an object")
    target = _status_target(body)
    error = body.get("error")
    if error is not None and not isinstance(error, str):
        raise Invalid("error must be a string")
    with write_transaction():
        task = get_task(org_id, task_id)
        if target is Stage.ERROR:
            _fail(ctx, task, (error or "runtime reported a failure")[:4000])
        else:
            _claim(ctx, task, target, body.get("token"))
        activities = task_activities(task)
        refresh_derived(ctx, task, activities)
    return deployment_records.task_update(task, activities, elaborate)


# -- per-deployment report -----------------------------------------------------------------

_REPORT_STAGES = (Stage.PLANNED, Stage.NO_CHANGE, Stage.COMPLETED, Stage.ERROR)
_OUTPUT_TYPES = ("string", "number", "bool", "list", "map", "any")


def _outputs(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise Invalid("outputs must be a list of {key, type, value, is_sensitive}")
    found = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str) or not item["key"]:
            raise Invalid(f"outputs[{index}] needs a key (string)")
        kind = item.get("type", "any")
        if kind not in _OUTPUT_TYPES:
            raise Invalid(f"outputs[{index}].type must be one of {', '.join(_OUTPUT_TYPES)}")
        sensitive = item.get("is_sensitive", False)
        if not isinstance(sensitive, bool):
            raise Invalid(f"outputs[{index}].is_sensitive must be a boolean")
        found.append(
            {
                "key": item["key"][:256],
                "type": kind,
                "value": item.get("value"),
                "is_sensitive": sensitive,
            }
        )
    return found


def _report_fields(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise Invalid("the JSON body must be an object")
    check_fields(body, ("stage", "error", "plan", "outputs", "state"))
    report: dict[str, Any] = {"stage": None, "plan": None, "state": None, "outputs": None}
    if "plan" in body and body["plan"] is not None:
        report["plan"] = (body["plan"], parse_plan(body["plan"]))
    if "state" in body and body["state"] is not None:
        report["state"] = (body["state"], parse_state(body["state"]))
    if body.get("outputs") is not None:
        report["outputs"] = _outputs(body["outputs"])
    stage = body.get("stage")
    if stage is None and report["plan"] is not None:
        stage = Stage.PLANNED if report["plan"][1].has_changes else Stage.NO_CHANGE
    if stage not in [str(s) for s in _REPORT_STAGES]:
        raise Invalid(f"stage must be one of {', '.join(_REPORT_STAGES)}")
    error = body.get("error")
    if error is not None and not isinstance(error, str | dict | list):
        raise Invalid("error must be a string or error data")
    report["stage"], report["error"] = Stage(stage), error
    return report


def _store_json(ctx: ServiceContext, document: Any) -> str:
    data = json.dumps(document, separators=(",", ":")).encode()
    return ctx.blobs.put_bytes(data).sha256


def _write_outputs(ctx: ServiceContext, row: Deployment, outputs: list[dict[str, Any]]) -> None:
    now = ctx.now()
    existing = {
        o.key: o for o in DeploymentOutput.select().where(DeploymentOutput.deployment == row.id)
    }
    for item in outputs:
        found = existing.pop(item["key"], None)
        if found is not None:
            found.type, found.value = item["type"], item["value"]
            found.is_sensitive, found.updated_at = item["is_sensitive"], now
            found.save()
            continue
        DeploymentOutput.create(
            id=ctx.new_id(),
            organization=row.organization_id,
            deployment=row.id,
            deployment_slug=row.root_slug,
            package_id=row.package_version_id,
            key=item["key"],
            type=item["type"],
            value=item["value"],
            is_sensitive=item["is_sensitive"],
            created_at=now,
        )
    for stale in existing.values():
        stale.delete_instance()


def _apply_report(ctx: ServiceContext, task: Task, row: Deployment, report: dict) -> None:
    if report["plan"] is not None:
        document, parsed = report["plan"]
        record = parsed.parsed()
        if row.drift_detection:
            record["data"]["driftMetadata"] = dict(parsed.counts)
        row.parsed, row.plan_sha256 = record, _store_json(ctx, document)
    if report["state"] is not None:
        document, state = report["state"]
        row.state_sha256 = _store_json(ctx, document)
        row.state_metadata = {"managed": state.managed, "unmanaged": state.unmanaged}
    if report["error"] is not None:
        error = report["error"]
        row.errors = error if isinstance(error, list) else [error]
    if report["outputs"] is not None:
        _write_outputs(ctx, row, report["outputs"])
    move_activity(ctx, row, report["stage"])
    if report["stage"] is Stage.PLANNED and stages.auto_approves(row.command):
        move_activity(ctx, row, Stage.PLAN_APPROVED)


def _blueprint_outputs(ctx: ServiceContext, activities: list[Deployment]) -> None:
    """A completed blueprint's outputs: its manifest `outputs` over its children's."""
    outputs = outputs_of([row.id for row in activities])
    for row in activities:
        if row.type != BLUEPRINT or row.stage != Stage.COMPLETED:
            continue
        version = PackageVersion.get_or_none(PackageVersion.id == row.package_version_id)
        declared = (version.manifest.get("outputs") or {}) if version else {}
        children = {c.alias: outputs.get(c.id, {}) for c in activities if c.parent_id == row.id}
        values = [
            {
                "key": name,
                "type": "any",
                "value": references.resolve_props({"v": spec.get("value")}, outputs=children)["v"],
                "is_sensitive": False,
            }
            for name, spec in declared.items()
            if isinstance(spec, dict)
        ]
        _write_outputs(ctx, row, values)


def _archive_after_uninstall(task: Task) -> None:
    if not stages.is_uninstall(task.command) or task.stage != Stage.COMPLETED:
        return
    lineage = Deployment.select(Deployment.id).where(
        Deployment.organization == task.organization_id,
        Deployment.environment == task.environment_id,
        Deployment.root_slug == task.slug,
    )
    Deployment.update(is_archived=True).where(Deployment.id.in_(lineage)).execute()
    DeploymentOutput.update(is_destroyed=True).where(
        DeploymentOutput.deployment.in_(lineage)
    ).execute()


def report(
    ctx: ServiceContext, org_id: str, task_id: str, deployment_id: str, body: Any
) -> dict[str, Any]:
    """PUT /task/{taskId}/deployments/{deploymentId}: stage, error, plan, state, outputs."""
    fields = _report_fields(body)
    with write_transaction():
        task = get_task(org_id, task_id)
        row = get_activity(org_id, deployment_id)
        if row.task_id != task.id:
            raise Invalid(f"deployment {deployment_id} is not part of task {task_id}")
        if row.type == BLUEPRINT:
            raise Invalid("a blueprint activity follows its children; report the artifacts")
        _apply_report(ctx, task, row, fields)
        task.lease_until = _lease_until(ctx)
        task.save()
        activities = task_activities(task)
        refresh_derived(ctx, task, activities)
        _blueprint_outputs(ctx, activities)
        _archive_after_uninstall(task)
        row = Deployment.get_by_id(row.id)
    return {**deployment_records.approval(row), "task": task.id, "taskStage": task.stage}


# -- discovered deployments -------------------------------------------------------------------


def _registration(raw: Any, index: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise Invalid(f"item {index} must be an object")
    check_fields(raw, ("package", "dependencies", "parent", "action", "payload"))
    package = raw.get("package")
    if not isinstance(package, dict):
        raise Invalid(f"item {index}: package must be an object {{name, version, uniqueId, type}}")
    for name in ("name", "version", "uniqueId"):
        if not isinstance(package.get(name), str) or not package[name]:
            raise Invalid(f"item {index}: package.{name} is required (a string)")
    kind = package.get("type") or ARTIFACT
    if kind not in (ARTIFACT, BLUEPRINT):
        raise Invalid(f"item {index}: package.type must be artifact or blueprint")
    direct = (raw.get("dependencies") or {}).get("direct") or []
    if not isinstance(direct, list) or not all(isinstance(d, str) for d in direct):
        raise Invalid(f"item {index}: dependencies.direct must be a list of strings")
    payload = raw.get("payload")
    if payload is not None and not isinstance(payload, dict):
        raise Invalid(f"item {index}: payload must be an object")
    return {
        **package,
        "type": kind,
        "direct": direct,
        "parent": raw.get("parent"),
        "payload": payload,
        "action": raw.get("action"),
    }


def register(ctx: ServiceContext, org_id: str, task_id: str, body: Any) -> list[dict[str, Any]]:
    """POST /task/{id}/deployments: activities the runtime discovered (source-based)."""
    if not isinstance(body, list) or not body or len(body) > 1000:
        raise Invalid("body must be an array of 1 to 1000 deployments")
    items = [_registration(raw, i) for i, raw in enumerate(body)]
    with write_transaction():
        task = get_task(org_id, task_id)
        activities = task_activities(task)
        by_unique = {row.unique_id: row for row in activities if row.unique_id}
        ids = {row.id for row in activities}
        root = next(row for row in activities if row.parent_id is None)
        created = []
        for item in items:
            if item["uniqueId"] in by_unique:
                raise Conflict(f"deployment already exists: {item['uniqueId'][:200]}")
            parent = item["parent"] or root.id
            if parent not in ids:
                raise Invalid(f"parent {str(parent)[:80]} is not a deployment of this task")
            depend = [by_unique[d].id if d in by_unique else d for d in item["direct"]]
            unknown = [d for d in depend if d not in ids]
            if unknown:
                raise Invalid(f"unknown dependencies: {', '.join(unknown)[:200]}")
            row = _discovered(ctx, task, root, item, parent, depend, len(ids))
            by_unique[row.unique_id], created = row, [*created, row]
            ids.add(row.id)
        task.lease_until = _lease_until(ctx)
        task.save()
    return [{"deployment": row.id} for row in created]


def _discovered(
    ctx: ServiceContext,
    task: Task,
    root: Deployment,
    item: dict,
    parent: str,
    depend: list,
    position: int,
) -> Deployment:
    stage = str(Stage.PENDING) if task.stage == Stage.PENDING else task.stage
    if stage not in (Stage.PENDING, Stage.PLANNING):
        raise Conflict(
            f"task is {task.stage}: deployments can be registered only before planning ends"
        )
    return Deployment.create(
        id=ctx.new_id(),
        organization=task.organization_id,
        environment=task.environment_id,
        task=task.id,
        parent=parent,
        root_slug=task.slug,
        alias=item["uniqueId"][:128],
        position=position,
        name=item["name"][:256],
        version=item["version"][:64],
        type=item["type"],
        iac_type=root.iac_type,
        unique_id=item["uniqueId"][:256],
        command=task.command,
        stage=stage,
        is_uninstall=root.is_uninstall,
        is_plan_only=root.is_plan_only,
        drift_detection=root.drift_detection,
        props={},
        depend=depend,
        payload=item["payload"],
        status_timestamps={stage: to_iso(ctx.now())},
        created_at=ctx.now(),
    )


# -- the lease reaper ---------------------------------------------------------------------------


def reap(ctx: ServiceContext) -> int:
    """Expired leases: planning goes back to pending (at most N attempts), installing to error."""
    now = ctx.now()
    expired = list(
        Task.select(Task.id).where(Task.stage.in_(_LEASED), Task.lease_until < now).limit(100)
    )
    for found in expired:
        with write_transaction():
            task = Task.get_or_none(Task.id == found.id)
            if task is None or task.stage not in _LEASED or task.lease_until >= now:
                continue
            if task.stage == Stage.PLANNING and task.attempts < ctx.settings.task_max_attempts:
                _hand_back(ctx, task)
            else:
                _fail(ctx, task, "runtime lease expired")
            refresh_derived(ctx, task, task_activities(task))
    return len(expired)


def _hand_back(ctx: ServiceContext, task: Task) -> None:
    task.generation += 1
    task.lease_until = None
    move_task(ctx, task, Stage.PENDING)
    for row in task_activities(task):
        if row.stage == Stage.PLANNING:
            move_activity(ctx, row, Stage.PENDING)


def task_status(org_id: str, task_id: str, elaborate: bool) -> dict[str, Any]:
    """GET /task/{id}/status: the task status result."""
    task = get_task(org_id, task_id)
    return deployment_records.task_status(task, task_activities(task), elaborate)
