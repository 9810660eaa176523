"""Deployment logs (DESIGN.md 7.3 item 6): chunks appended in order, capped per activity."""

from __future__ import annotations

from typing import Any

from peewee import fn

from appliance.errors import Invalid, PayloadTooLarge
from appliance.models import Deployment, DeploymentLog
from appliance.models.db import to_iso, write_transaction
from appliance.services.context import ServiceContext
from appliance.services.deployments.common import get_activity
from appliance.services.deployments.runtime import renew_lease

DROPPED_MARKER = "[... earlier log output dropped: over the per-deployment limit ...]\n"


def append(ctx: ServiceContext, org_id: str, deployment_id: str, body: Any) -> dict[str, Any]:
    """POST /deployments/{id}/logs: append one chunk; drop the oldest past the cap."""
    if not isinstance(body, dict) or not isinstance(body.get("logs"), str):
        raise Invalid("logs is required (a string)")
    chunk = body["logs"]
    size = len(chunk.encode("utf-8"))
    limits = ctx.settings.limits
    if size > limits.log_chunk:
        raise PayloadTooLarge(f"log chunk over the limit of {limits.log_chunk} bytes")
    with write_transaction():
        row = get_activity(org_id, deployment_id)
        DeploymentLog.create(deployment=row.id, content=chunk, size=size, created_at=ctx.now())
        _cap(row, limits.log_per_activity)
        renew_lease(ctx, row.task_id)
    return {"message": "logs appended"}


def _cap(row: Deployment, limit: int) -> None:
    total = (
        DeploymentLog.select(fn.COALESCE(fn.SUM(DeploymentLog.size), 0))
        .where(DeploymentLog.deployment == row.id)
        .scalar()
    )
    if total <= limit:
        return
    chunks = list(
        DeploymentLog.select(DeploymentLog.seq, DeploymentLog.size, DeploymentLog.content)
        .where(DeploymentLog.deployment == row.id)
        .order_by(DeploymentLog.seq)
    )
    dropped = []
    for chunk in chunks[:-1]:
        if total <= limit:
            break
        dropped.append(chunk.seq)
        total -= chunk.size
    if not dropped:
        return
    DeploymentLog.delete().where(DeploymentLog.seq.in_(dropped)).execute()
    marker = DROPPED_MARKER.encode("utf-8")
    # The marker takes the place of the first surviving chunk's predecessor.
    first = (
        DeploymentLog.select()
        .where(DeploymentLog.deployment == row.id)
        .order_by(DeploymentLog.seq)
        .first()
    )
    if first is not None and not first.content.startswith(DROPPED_MARKER):
        first.content = DROPPED_MARKER + first.content
        first.size += len(marker)
        first.save()


def read(org_id: str, deployment_id: str) -> dict[str, Any]:
    """GET /deployments/{id}/logs: the activity's and its children's logs, joined."""
    row = get_activity(org_id, deployment_id)
    rows = [
        row,
        *Deployment.select().where(Deployment.parent == row.id).order_by(Deployment.position),
    ]
    chunks: dict[str, list[str]] = {r.id: [] for r in rows}
    for chunk in (
        DeploymentLog.select(DeploymentLog.deployment, DeploymentLog.content)
        .where(DeploymentLog.deployment.in_(list(chunks)))
        .order_by(DeploymentLog.seq)
    ):
        chunks[chunk.deployment_id].append(chunk.content)
    return {
        "deployments_logs": {
            r.id: {
                "name": r.name,
                "version": r.version,
                "stage": r.stage,
                "type": r.type,
                "parent": r.parent_id,
                "uniqueId": r.unique_id,
                "created_at": to_iso(r.created_at),
                "logs": "".join(chunks[r.id]),
            }
            for r in rows
        }
    }
