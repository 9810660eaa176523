"""Records of spec 2.4: tasks, task status, deployments, outputs, logs, approvals."""

from __future__ import annotations

from collections import Counter
from typing import Any

from appliance.domain.plans import empty_counts
from appliance.domain.stages import STAGES
from appliance.models import Deployment, DeploymentOutput, Task
from appliance.models.db import to_iso
from appliance.services import records


def stage_counts(activities: list[Deployment]) -> dict[str, Any]:
    """`{total, states}` with a count for every stage name."""
    counted = Counter(row.stage for row in activities)
    return {"total": len(activities), "states": {str(s): counted.get(str(s), 0) for s in STAGES}}


def status_timestamps(row: Task | Deployment) -> dict[str, str | None]:
    """A timestamp (or null) per stage name."""
    stamps = row.status_timestamps or {}
    return {str(s): stamps.get(str(s)) for s in STAGES}


def task_update(task: Task, activities: list[Deployment], elaborate: bool) -> dict[str, Any]:
    """The status update result: task, status, deployments, created, updated, completed."""
    result = {
        "task": task.id,
        "status": task.stage,
        "deployments": stage_counts(activities),
        "created": to_iso(task.created_at),
        "updated": to_iso(task.updated_at),
        "completed": to_iso(task.completed_at),
    }
    if elaborate:
        result["deployments"]["list"] = [
            {
                "deployment": row.id,
                "parent": row.parent_id,
                "name": row.name,
                "version": row.version,
                "type": row.type,
                "stage": row.stage,
                "errors": row.errors,
                "statusTimestamps": status_timestamps(row),
            }
            for row in activities
        ]
    return result


def task_status(task: Task, activities: list[Deployment], elaborate: bool) -> dict[str, Any]:
    """The task status result (GET /task/{id}/status)."""
    return {
        **task_update(task, activities, elaborate),
        "command": task.command,
        "planOnly": task.command in ("plan", "validate", "plan_uninstall", "drift_detection"),
        "statusTimestamps": status_timestamps(task),
        "errors": task.errors,
    }


def approval(row: Deployment) -> dict[str, Any]:
    """The approval (and cancel) result: deployment, parent, type, stage."""
    return {"deployment": row.id, "parent": row.parent_id, "type": row.type, "stage": row.stage}


def output(row: DeploymentOutput) -> dict[str, Any]:
    """A deployment output (sensitive values are not shown)."""
    return {
        "id": row.id,
        "deployment_slug": row.deployment_slug,
        "package_id": row.package_id,
        "alias": row.alias,
        "key": row.key,
        "type": row.type,
        "value": None if row.is_sensitive else row.value,
        "is_sensitive": row.is_sensitive,
        "is_hidden": row.is_hidden,
        "is_destroyed": row.is_destroyed,
        "created_at": to_iso(row.created_at),
        "updated_at": to_iso(row.updated_at),
    }


METADATA_BLOCKS = ("driftMetadata", "plannedMetadata", "outputMetadata", "plannedResourcesMetadata")


def parsed_data(row: Deployment) -> dict[str, Any]:
    """`parsed.data`: the metadata blocks, outputs and resources (zero until a plan)."""
    data = dict((row.parsed or {}).get("data") or {})
    for block in METADATA_BLOCKS:
        data.setdefault(block, empty_counts())
    data["plannedResourcesMetadata"] = dict(data.get("plannedMetadata") or empty_counts())
    data.setdefault("costMetadata", {"totalFrom": 0, "totalTo": 0, "totalMargin": 0})
    data["stateMetadata"] = row.state_metadata or {"managed": 0, "unmanaged": 0}
    data.setdefault("outputs", {})
    data.setdefault("resources", {})
    return data


def deployment(
    row: Deployment,
    *,
    base_url: str,
    environment: dict[str, Any] | None,
    users: dict[int, Any],
    outdated: bool,
    children: list[dict[str, Any]] | None = None,
    parse_type: str = "plan",
    state_data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The deployment record (list and detail) of spec 2.4."""
    data = parsed_data(row)
    if parse_type == "state" and state_data is not None:
        data = {**data, **state_data}
    reviewer = users.get(row.reviewed_by_id)
    path = f"{base_url}/api/v1/deployment/{row.id}"
    return {
        "deployment": row.id,
        "task": row.task_id,
        "parent": row.parent_id,
        "name": row.name,
        "version": row.version,
        "type": row.type,
        "uniqueId": row.unique_id,
        "stage": row.stage,
        "is_archived": row.is_archived,
        "created": to_iso(row.created_at),
        "timestamp": to_iso(row.updated_at or row.created_at),
        "outdated_package": outdated,
        "errors": row.errors,
        "plan_file_url": f"{path}/plan" if row.plan_sha256 else None,
        "state_file_url": f"{path}/state" if row.state_sha256 else None,
        "iac_type": row.iac_type,
        "parsed": {"type": parse_type, "data": data},
        **{block: data[block] for block in (*METADATA_BLOCKS, "costMetadata", "stateMetadata")},
        "user": records.user_summary(users.get(row.user_id)),
        "reviewed_by": None
        if reviewer is None
        else {
            **records.user_summary(reviewer),
            "action": row.review_action,
            "timestamp": to_iso(row.reviewed_at),
        },
        "slug": row.slug,
        "origin_state_location": row.origin_state_location,
        "environment": environment,
        "is_latest": row.is_latest,
        "is_uninstall": row.is_uninstall,
        "is_plan_only": row.is_plan_only,
        "drift_detection": row.drift_detection,
        "statusTimestamps": status_timestamps(row),
        "children": children or [],
    }
