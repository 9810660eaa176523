"""Tasks, deployment activities, outputs and logs (issue 5)."""

from peewee import Database
from playhouse.apsw_ext import (
    AutoField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from appliance.migrations import frozen_base


def apply(db: Database) -> None:
    Frozen = frozen_base(db)

    # Existing tables, only as far as the foreign keys need them.
    class Organization(Frozen):
        id = CharField(primary_key=True)

    class User(Frozen):
        id = AutoField()

    class Environment(Frozen):
        id = CharField(primary_key=True)

    class PackageVersion(Frozen):
        id = CharField(primary_key=True)

    class Task(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        environment = ForeignKeyField(Environment, on_delete="CASCADE")
        command = CharField()
        stage = CharField()
        slug = CharField()
        user = ForeignKeyField(User, null=True, on_delete="SET NULL")
        generation = IntegerField(default=0)
        attempts = IntegerField(default=0)
        lease_until = TextField(null=True)
        errors = TextField(null=True)
        status_timestamps = TextField()
        created_at = TextField()
        updated_at = TextField(null=True)
        completed_at = TextField(null=True)

        class Meta:
            indexes = (
                (("organization", "stage", "created_at"), False),
                (("stage", "lease_until"), False),
            )

    class Deployment(Frozen):
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
        props = TextField()
        depend = TextField()
        errors = TextField(null=True)
        parsed = TextField(null=True)
        plan_sha256 = CharField(null=True)
        state_sha256 = CharField(null=True)
        state_metadata = TextField(null=True)
        origin_state_location = TextField(null=True)
        payload = TextField(null=True)
        status_timestamps = TextField()
        user = ForeignKeyField(User, null=True, on_delete="SET NULL")
        reviewed_by = ForeignKeyField(User, null=True, on_delete="SET NULL", backref="reviews")
        review_action = CharField(null=True)
        reviewed_at = TextField(null=True)
        created_at = TextField()
        updated_at = TextField(null=True)

        class Meta:
            indexes = (
                (("organization", "environment", "root_slug", "is_latest"), False),
                (("organization", "created_at"), False),
                (("task", "position"), False),
                (("parent",), False),
            )

    class DeploymentOutput(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        deployment = ForeignKeyField(Deployment, on_delete="CASCADE")
        deployment_slug = CharField()
        package_id = CharField(null=True)
        alias = CharField(null=True)
        key = CharField()
        type = CharField()
        value = TextField(null=True)
        is_sensitive = BooleanField(default=False)
        is_hidden = BooleanField(default=False)
        is_destroyed = BooleanField(default=False)
        created_at = TextField()
        updated_at = TextField(null=True)

        class Meta:
            indexes = (
                (("deployment", "key"), True),
                (("organization", "deployment_slug"), False),
            )

    class DeploymentLog(Frozen):
        seq = AutoField()
        deployment = ForeignKeyField(Deployment, on_delete="CASCADE")
        content = TextField()
        size = IntegerField()
        created_at = TextField()

        class Meta:
            indexes = ((("deployment", "seq"), False),)

    db.create_tables([Task, Deployment, DeploymentOutput, DeploymentLog])
