"""Environments and their assigned users."""

from playhouse.apsw_ext import BooleanField, CharField, ForeignKeyField

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
