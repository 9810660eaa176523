"""Organizations, identity, credentials, environments and the events outbox."""

from peewee import Database
from playhouse.apsw_ext import (
    AutoField,
    BooleanField,
    CharField,
    ForeignKeyField,
    TextField,
)

from appliance.migrations import frozen_base


def apply(db: Database) -> None:
    Frozen = frozen_base(db)

    class Organization(Frozen):
        id = CharField(primary_key=True)
        name = CharField(unique=True)
        display_name = CharField()
        branding = TextField()
        metadata = TextField()
        is_trial = BooleanField(default=False)
        trial_started = TextField(null=True)
        created_at = TextField()

    class Role(Frozen):
        id = CharField(primary_key=True)
        name = CharField(unique=True)
        description = TextField()

    class User(Frozen):
        id = AutoField()
        email = CharField(unique=True)
        name = CharField()
        first_name = CharField(null=True)
        last_name = CharField(null=True)
        nickname = CharField()
        picture = CharField(default="")
        password_hash = CharField(null=True)
        created_at = TextField()

    class Membership(Frozen):
        id = AutoField()
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        user = ForeignKeyField(User, on_delete="CASCADE")
        created_at = TextField()

        class Meta:
            indexes = ((("organization", "user"), True),)

    class MemberRole(Frozen):
        membership = ForeignKeyField(Membership, on_delete="CASCADE")
        role = ForeignKeyField(Role)

        class Meta:
            primary_key = False
            indexes = ((("membership", "role"), True),)

    class Invitation(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        email = CharField()
        role = ForeignKeyField(Role)
        token_hash = CharField()
        invited_by = ForeignKeyField(User, null=True)
        created_at = TextField()
        expires_at = TextField()
        accepted_at = TextField(null=True)

        class Meta:
            indexes = ((("organization", "email"), False),)

    class ApiKey(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        user = ForeignKeyField(User, on_delete="CASCADE")
        name = CharField()
        key_hash = CharField(unique=True)
        is_disabled = BooleanField(default=False)
        created_at = TextField()
        updated_at = TextField(null=True)
        expiration_time = TextField(null=True)
        last_used_at = TextField(null=True)

        class Meta:
            indexes = (
                (("organization", "name"), True),
                (("organization", "created_at"), False),
            )

    class SessionToken(Frozen):
        token_hash = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        user = ForeignKeyField(User, on_delete="CASCADE")
        created_at = TextField()
        expires_at = TextField()

    class RuntimeCredential(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        username = CharField(unique=True)
        password_hash = CharField()
        name = CharField()
        created_at = TextField()
        revoked_at = TextField(null=True)

    class Environment(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        name = CharField()
        slug = CharField()
        color = CharField(default="#888888")
        allow_pre_release = BooleanField(default=False)
        is_default = BooleanField(default=False)
        is_active = BooleanField(default=True)
        is_deleted = BooleanField(default=False)
        created_at = TextField()

        class Meta:
            indexes = ((("organization", "slug"), True),)

    class EnvironmentUser(Frozen):
        environment = ForeignKeyField(Environment, on_delete="CASCADE")
        user = ForeignKeyField(User, on_delete="CASCADE")

        class Meta:
            primary_key = False
            indexes = ((("environment", "user"), True),)

    class Event(Frozen):
        seq = AutoField()
        id = CharField(unique=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        type = CharField()
        payload = TextField()
        environment_id = CharField(null=True)
        deployment_slug = CharField(null=True)
        package_name = CharField(null=True)
        created_at = TextField()

        class Meta:
            indexes = ((("organization", "seq"), False),)

    db.create_tables(
        [
            Organization,
            Role,
            User,
            Membership,
            MemberRole,
            Invitation,
            ApiKey,
            SessionToken,
            RuntimeCredential,
            Environment,
            EnvironmentUser,
            Event,
        ]
    )
