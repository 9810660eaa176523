"""Cloud accounts: a provider account the runtime deploys into, attached to an environment."""

from playhouse.apsw_ext import BooleanField, CharField, ForeignKeyField

from appliance.models.db import BaseModel, JSONField, TimestampField
from appliance.models.environments import Environment
from appliance.models.organizations import Organization


class CloudAccount(BaseModel):
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
    cloud_config = JSONField(default=dict)
    profile = CharField(default="")
    is_primary = BooleanField(default=False)
    is_active = BooleanField(default=True)
    is_deleted = BooleanField(default=False)
    token_hash = CharField(null=True)
    created_at = TimestampField()
    updated_at = TimestampField(null=True)

    class Meta:
        indexes = (
            (("organization", "slug"), True),
            (("organization", "provider", "account_id"), False),
            (("environment", "is_primary"), False),
        )
