"""Tasks, deployment activities, their outputs and logs (DESIGN.md 7)."""

from playhouse.apsw_ext import (
    AutoField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from appliance.models.db import BaseModel, JSONField, TimestampField
from appliance.models.environments import Environment
from appliance.models.organizations import Organization, User
from appliance.models.packages import PackageVersion


class Task(BaseModel):
    """One unit of runtime work: an install, uninstall, plan, validate or drift detection."""

    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    environment = ForeignKeyField(Environment, on_delete="CASCADE")
    command = CharField()
    stage = CharField()
    slug = CharField()
    user = ForeignKeyField(User, null=True, on_delete="SET NULL")
    # The lease (DESIGN.md 7.3): `generation` changes at every claim or hand-back, so a
    # lease token derived from it goes stale; `attempts` counts planning claims.
    generation = IntegerField(default=0)
    attempts = IntegerField(default=0)
    lease_until = TimestampField(null=True)
    errors = JSONField(null=True)
    status_timestamps = JSONField()
    created_at = TimestampField()
    updated_at = TimestampField(null=True)
    completed_at = TimestampField(null=True)

    class Meta:
        indexes = (
            (("organization", "stage", "created_at"), False),
            (("stage", "lease_until"), False),
        )


class Deployment(BaseModel):
    """One activity of a deployment slug: its task, stage, version, props, plan and state."""

    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    environment = ForeignKeyField(Environment, on_delete="CASCADE")
    task = ForeignKeyField(Task, on_delete="CASCADE")
    parent = ForeignKeyField("self", null=True, on_delete="CASCADE")
    root_slug = CharField()
    slug = CharField(null=True)
    alias = CharField(null=True)
    position = IntegerField(default=0)
    name = CharField()
    version = CharField()
    package_version = ForeignKeyField(PackageVersion, null=True, on_delete="SET NULL")
    type = CharField()
    iac_type = CharField()
    unique_id = CharField(null=True)
    command = CharField()
    stage = CharField()
    is_latest = BooleanField(default=True)
    is_archived = BooleanField(default=False)
    is_uninstall = BooleanField(default=False)
    is_plan_only = BooleanField(default=False)
    drift_detection = BooleanField(default=False)
    props = JSONField()
    depend = JSONField()
    errors = JSONField(null=True)
    parsed = JSONField(null=True)
    plan_sha256 = CharField(null=True)
    state_sha256 = CharField(null=True)
    state_metadata = JSONField(null=True)
    origin_state_location = TextField(null=True)
    payload = JSONField(null=True)
    status_timestamps = JSONField()
    user = ForeignKeyField(User, null=True, on_delete="SET NULL")
    reviewed_by = ForeignKeyField(User, null=True, on_delete="SET NULL", backref="reviews")
    review_action = CharField(null=True)
    reviewed_at = TimestampField(null=True)
    created_at = TimestampField()
    updated_at = TimestampField(null=True)

    class Meta:
        indexes = (
            (("organization", "environment", "root_slug", "is_latest"), False),
            (("organization", "created_at"), False),
            (("task", "position"), False),
            (("parent",), False),
        )


class DeploymentOutput(BaseModel):
    """An output of an activity (reported by the runtime, or a blueprint's own)."""

    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    deployment = ForeignKeyField(Deployment, on_delete="CASCADE")
    deployment_slug = CharField()
    package_id = CharField(null=True)
    alias = CharField(null=True)
    key = CharField()
    type = CharField()
    value = JSONField(null=True)
    is_sensitive = BooleanField(default=False)
    is_hidden = BooleanField(default=False)
    is_destroyed = BooleanField(default=False)
    created_at = TimestampField()
    updated_at = TimestampField(null=True)

    class Meta:
        indexes = (
            (("deployment", "key"), True),
            (("organization", "deployment_slug"), False),
        )


class DeploymentLog(BaseModel):
    """One appended chunk of an activity's log, kept in order (`seq`)."""

    seq = AutoField()
    deployment = ForeignKeyField(Deployment, on_delete="CASCADE")
    content = TextField()
    size = IntegerField()
    created_at = TimestampField()

    class Meta:
        indexes = ((("deployment", "seq"), False),)
