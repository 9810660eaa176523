"""Environment properties and secrets, organization encryption keys, cloud accounts."""

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

    # Existing tables, only as far as the foreign keys below need them.
    class Organization(Frozen):
        id = CharField(primary_key=True)

    class User(Frozen):
        id = AutoField()

    class Environment(Frozen):
        id = CharField(primary_key=True)

    class EnvironmentProperty(Frozen):
        id = CharField(primary_key=True)
        environment = ForeignKeyField(Environment, on_delete="CASCADE")
        name = CharField()
        content = TextField()
        is_enforced = BooleanField(default=False)
        created_at = TextField()
        updated_at = TextField(null=True)

        class Meta:
            indexes = ((("environment", "name"), True),)

    class EnvironmentSecret(Frozen):
        id = CharField(primary_key=True)
        environment = ForeignKeyField(Environment, on_delete="CASCADE")
        key = CharField()
        value = TextField()
        created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
        created_at = TextField()
        updated_at = TextField(null=True)

        class Meta:
            indexes = ((("environment", "key"), True),)

    class OrganizationKey(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        public_key = TextField()
        sealed_private_key = TextField(null=True)
        key_identifier = CharField(null=True)
        is_current = BooleanField(default=True)
        created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
        created_at = TextField()

        class Meta:
            indexes = ((("organization", "is_current"), False),)

    class CloudAccount(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        environment = ForeignKeyField(Environment, null=True, on_delete="SET NULL")
        name = CharField()
        slug = CharField()
        provider = CharField()
        account_id = CharField()
        assume_role_arn = CharField(default="")
        external_id = CharField(default="")
        cloudformation_stack_id = CharField(null=True)
        cloud_config = TextField(default="{}")
        profile = CharField(default="")
        is_primary = BooleanField(default=False)
        is_active = BooleanField(default=True)
        is_deleted = BooleanField(default=False)
        token_hash = CharField(null=True)
        created_at = TextField()
        updated_at = TextField(null=True)

        class Meta:
            indexes = (
                (("organization", "slug"), True),
                (("organization", "provider", "account_id"), False),
                (("environment", "is_primary"), False),
            )

    db.create_tables([EnvironmentProperty, EnvironmentSecret, OrganizationKey, CloudAccount])
