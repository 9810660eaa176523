"""What the deployment services share: lookups, the stage moves and their events."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from appliance.domain import stages
from appliance.domain.stages import Stage
from appliance.errors import Invalid, NotFound
from appliance.models import Deployment, Environment, Task
from appliance.models.db import to_iso
from appliance.services.context import ServiceContext

ARTIFACT, BLUEPRINT = "artifact", "blueprint"


def text_field(body: dict[str, Any], name: str, required: bool = False, limit: int = 256) -> Any:
    """A string body field (None when absent and optional)."""
    value = body.get(name)
    if value is None or value == "":
        if required:
            raise Invalid(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string")
    if len(value) > limit:
        raise Invalid(f"{name} must be at most {limit} characters")
    return value.strip()


def bool_field(body: dict[str, Any], name: str) -> bool:
    """A boolean body field, false when absent."""
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise Invalid(f"{name} must be a boolean")
    return value


def check_fields(body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    """Refuse unknown body fields, naming them."""
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise Invalid(f"unknown fields: {', '.join(unknown)[:200]} (allowed: {', '.join(allowed)})")


# -- lookups -----------------------------------------------------------------------------


def get_activity(org_id: str, deployment_id: str) -> Deployment:
    """An activity of the organization by its id."""
    row = Deployment.get_or_none(Deployment.id == deployment_id, Deployment.organization == org_id)
    if row is None:
        raise NotFound(f"deployment not found: {str(deployment_id)[:80]}")
    return row


def latest_root(org_id: str, env_id: str, slug: str) -> Deployment | None:
    """The newest top-level activity of a slug in an environment."""
    return (
        Deployment.select()
        .where(
            Deployment.organization == org_id,
            Deployment.environment == env_id,
            Deployment.root_slug == slug,
            Deployment.parent.is_null(),
            Deployment.is_latest == True,  # noqa: E712
        )
        .first()
    )


def resolve_activity(org_id: str, id_or_slug: str, env_id: str | None = None) -> Deployment:
    """`deploymentIdOrSlug`: an activity by id, or a slug's latest top-level activity."""
    by_id = Deployment.get_or_none(Deployment.id == id_or_slug, Deployment.organization == org_id)
    if by_id is not None:
        return by_id
    query = Deployment.select().where(
        Deployment.organization == org_id,
        Deployment.root_slug == id_or_slug,
        Deployment.parent.is_null(),
        Deployment.is_latest == True,  # noqa: E712
    )
    if env_id is not None:
        query = query.where(Deployment.environment == env_id)
    found = list(query.limit(2))
    if not found:
        raise NotFound(f"deployment not found: {str(id_or_slug)[:80]}")
    if len(found) > 1:
        raise Invalid(f"deployment slug {id_or_slug} exists in several environments: give env")
    return found[0]


def get_task(org_id: str, task_id: str) -> Task:
    """A task of the organization ('task not found' otherwise)."""
    row = Task.get_or_none(Task.id == task_id, Task.organization == org_id)
    if row is None:
        raise NotFound(f"task not found: {str(task_id)[:80]}")
    return row


def task_activities(task: Task) -> list[Deployment]:
    """The task's activities in their stored (dependency) order."""
    return list(Deployment.select().where(Deployment.task == task.id).order_by(Deployment.position))


def environment_of(row: Deployment | Task) -> Environment:
    return Environment.get_by_id(row.environment_id)


# -- stage moves ---------------------------------------------------------------------------


def _stamp(ctx: ServiceContext, row: Deployment | Task, target: Stage) -> None:
    now = ctx.now()
    row.stage = str(target)
    row.status_timestamps = {**(row.status_timestamps or {}), str(target): to_iso(now)}
    row.updated_at = now


def _deployment_event(ctx: ServiceContext, row: Deployment, event: str) -> None:
    data = {
        "deployment": row.id,
        "slug": row.root_slug,
        "name": row.name,
        "version": row.version,
        "stage": row.stage,
        "task": row.task_id,
        "parent": row.parent_id,
    }
    ctx.emit(
        event,
        row.organization_id,
        data,
        environment_id=row.environment_id,
        deployment_slug=row.root_slug,
    )


_STAGE_EVENTS = {
    Stage.COMPLETED: "deployment:completed",
    Stage.ERROR: "deployment:failed",
    Stage.CANCELED: "deployment:canceled",
    Stage.PLAN_APPROVED: "deployment:approved",
}


def move_activity(
    ctx: ServiceContext, row: Deployment, target: str | Stage, checked: bool = True
) -> bool:
    """Move an activity through the stage table (409 naming both stages); emit its events.

    `checked` False is for derived (blueprint) stages, which follow their children.
    Returns whether the stage changed.
    """
    goal = Stage(target)
    if row.stage == goal:
        return False
    if checked:
        stages.check_move(row.stage, goal, row.command)
    _stamp(ctx, row, goal)
    row.save()
    _deployment_event(ctx, row, "deployment:updated")
    if goal in _STAGE_EVENTS:
        _deployment_event(ctx, row, _STAGE_EVENTS[goal])
    return True


def emit_task(ctx: ServiceContext, task: Task, event: str) -> None:
    data = {"task": task.id, "command": task.command, "stage": task.stage, "slug": task.slug}
    ctx.emit(
        event,
        task.organization_id,
        data,
        environment_id=task.environment_id,
        deployment_slug=task.slug,
    )


def move_task(ctx: ServiceContext, task: Task, target: str | Stage, checked: bool = True) -> bool:
    """Move a task (checked for claims, derived otherwise); stamps and emits task:updated."""
    goal = Stage(target)
    if task.stage == goal:
        return False
    if checked:
        stages.check_move(task.stage, goal, task.command)
    _stamp(ctx, task, goal)
    if stages.is_final(goal, task.command):
        task.completed_at = ctx.now()
        task.lease_until = None
    task.save()
    emit_task(ctx, task, "task:updated")
    return True


def refresh_derived(ctx: ServiceContext, task: Task, activities: list[Deployment]) -> None:
    """Blueprint activities follow their children, the task follows its artifacts."""
    children: dict[str, list[Deployment]] = defaultdict(list)
    for row in activities:
        if row.parent_id is not None:
            children[row.parent_id].append(row)
    # Deepest first: children come after their parent in position order.
    for row in reversed(activities):
        if row.type == BLUEPRINT and children[row.id]:
            move_activity(
                ctx, row, stages.aggregate_stage(c.stage for c in children[row.id]), False
            )
    artifacts = [row for row in activities if row.type != BLUEPRINT] or activities
    if artifacts:
        move_task(ctx, task, stages.aggregate_stage(row.stage for row in artifacts), False)
