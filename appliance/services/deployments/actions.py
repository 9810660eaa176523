"""Approve and cancel (spec 4.7; DESIGN.md 7.2, 7.4): per deployment, all or nothing."""

from __future__ import annotations

from typing import Any

from appliance.domain import stages
from appliance.domain.stages import Stage
from appliance.errors import Conflict, Invalid
from appliance.models import Deployment, Task
from appliance.models.db import write_transaction
from appliance.services.context import ServiceContext
from appliance.services.deployments import records
from appliance.services.deployments.common import (
    BLUEPRINT,
    get_activity,
    get_task,
    move_activity,
    refresh_derived,
    task_activities,
)

_CANCELABLE = {Stage.PENDING, Stage.PLANNING, Stage.PLANNED, Stage.PLAN_APPROVED}


def _descendants(row: Deployment, activities: list[Deployment]) -> list[Deployment]:
    """The artifact activities under `row` (itself when it is an artifact)."""
    if row.type != BLUEPRINT:
        return [row]
    found = []
    for child in activities:
        if child.parent_id == row.id:
            found += _descendants(child, activities)
    return found


def _ids(body: Any, key: str | None) -> list[str]:
    value = body.get(key) if key is not None and isinstance(body, dict) else body
    if not isinstance(value, list) or not value or len(value) > 1000:
        raise Invalid(f"{key or 'body'} must be a list of 1 to 1000 deployment ids")
    if not all(isinstance(item, str) for item in value):
        raise Invalid("deployment ids must be strings")
    return list(dict.fromkeys(value))


def _apply(
    ctx: ServiceContext, org_id: str, ids: list[str], target: Stage, user_pk: int | None
) -> list[dict[str, Any]]:
    with write_transaction():
        rows = [get_activity(org_id, i) for i in ids]
        results = []
        for row in rows:
            task = Task.get_by_id(row.task_id)
            activities = task_activities(task)
            current = next(a for a in activities if a.id == row.id)
            _move_tree(ctx, current, activities, target, user_pk)
            refresh_derived(ctx, task, activities)
            results.append(records.approval(Deployment.get_by_id(row.id)))
    return results


def _move_tree(
    ctx: ServiceContext,
    row: Deployment,
    activities: list[Deployment],
    target: Stage,
    user_pk: int | None,
) -> None:
    artifacts = _descendants(row, activities)
    if target is Stage.PLAN_APPROVED:
        movable = [a for a in artifacts if a.stage == Stage.PLANNED]
    else:
        movable = [a for a in artifacts if a.stage in _CANCELABLE]
    if not movable:
        stages.check_move(row.stage, target, row.command)
        raise Conflict(f"nothing to move to {target} under deployment {row.id}")
    for artifact in movable:
        stages.check_move(artifact.stage, target, artifact.command)
    for artifact in movable:
        if target is Stage.PLAN_APPROVED:
            artifact.reviewed_by, artifact.review_action = user_pk, "approve"
            artifact.reviewed_at = ctx.now()
        move_activity(ctx, artifact, target)
    if target is Stage.PLAN_APPROVED and row.type == BLUEPRINT:
        row.reviewed_by, row.review_action, row.reviewed_at = user_pk, "approve", ctx.now()
        row.save()


def approve(
    ctx: ServiceContext, org_id: str, user_pk: int | None, deployment_id: str
) -> dict[str, Any]:
    """POST /deployment/{id}/approve: planned -> plan_approved (a blueprint: its children)."""
    return _apply(ctx, org_id, [deployment_id], Stage.PLAN_APPROVED, user_pk)[0]


def approve_many(
    ctx: ServiceContext, org_id: str, user_pk: int | None, body: Any
) -> list[dict[str, Any]]:
    """POST /deployments/approve: a list of ids, all approved or none (404/409 otherwise)."""
    return _apply(ctx, org_id, _ids(body, None), Stage.PLAN_APPROVED, user_pk)


def cancel_many(
    ctx: ServiceContext, org_id: str, user_pk: int | None, body: Any
) -> list[dict[str, Any]]:
    """POST /deployments/cancel (extension): `{deployments: [id]}`, all or none."""
    return _apply(ctx, org_id, _ids(body, "deployments"), Stage.CANCELED, user_pk)


def delete_task(org_id: str, task_id: str) -> dict[str, Any]:
    """DELETE /task/{id}: the task and its deployments; the slug's previous activity is latest."""
    with write_transaction():
        task = get_task(org_id, task_id)
        if task.stage in (Stage.PLANNING, Stage.INSTALLING):
            raise Conflict(f"task is {task.stage}: a runtime holds it; cancel or wait")
        ids = [row.id for row in task_activities(task)]
        was_latest = (
            Deployment.select()
            .where(
                Deployment.task == task.id,
                Deployment.is_latest == True,  # noqa: E712
            )
            .exists()
        )
        task.delete_instance()  # cascades to deployments, outputs and logs
        if was_latest:
            previous = (
                Deployment.select(Deployment.task)
                .where(
                    Deployment.organization == org_id,
                    Deployment.environment == task.environment_id,
                    Deployment.root_slug == task.slug,
                    Deployment.parent.is_null(),
                )
                .order_by(Deployment.created_at.desc())
                .first()
            )
            if previous is not None:
                Deployment.update(is_latest=True).where(
                    Deployment.task == previous.task_id
                ).execute()
    return {"task": task_id, "deployments": ids}
