"""Environments and their assigned users."""

from playhouse.apsw_ext import BooleanField, CharField, ForeignKeyField, TextField

from appliance.models.db import BaseModel, TimestampField
from appliance.models.organizations import Organization, User


class Environment(BaseModel):
    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    name = CharField()
    slug = CharField()
    color = CharField(default="#888888")
    allow_pre_release = BooleanField(default=False)
    is_default = BooleanField(default=False)
    is_active = BooleanField(default=True)
    is_deleted = BooleanField(default=False)
    created_at = TimestampField()

    class Meta:
        indexes = ((("organization", "slug"), True),)


class EnvironmentUser(BaseModel):
    environment = ForeignKeyField(Environment, on_delete="CASCADE")
    user = ForeignKeyField(User, on_delete="CASCADE")

    class Meta:
        primary_key = False
        indexes = ((("environment", "user"), True),)


class EnvironmentProperty(BaseModel):
    id = CharField(primary_key=True)
    environment = ForeignKeyField(Environment, on_delete="CASCADE")
    name = CharField()
    content = TextField()
    is_enforced = BooleanField(default=False)
    created_at = TimestampField()
    updated_at = TimestampField(null=True)

    class Meta:
        indexes = ((("environment", "name"), True),)


class EnvironmentSecret(BaseModel):
    """A secret as uploaded: ciphertext only (DESIGN.md 6)."""

    id = CharField(primary_key=True)
    environment = ForeignKeyField(Environment, on_delete="CASCADE")
    key = CharField()
    value = TextField()
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = TimestampField()
    updated_at = TimestampField(null=True)

    class Meta:
        indexes = ((("environment", "key"), True),)


class OrganizationKey(BaseModel):
    """An organization's secret-encryption key: its own pair (private key sealed) or managed."""

    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    public_key = TextField()
    sealed_private_key = TextField(null=True)
    key_identifier = CharField(null=True)
    is_current = BooleanField(default=True)
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = TimestampField()

    class Meta:
        indexes = ((("organization", "is_current"), False),)
