"""The events outbox: written in the transaction of the change it describes."""

from playhouse.apsw_ext import AutoField, CharField, ForeignKeyField

from appliance.models.db import BaseModel, JSONField, TimestampField
from appliance.models.organizations import Organization


class Event(BaseModel):
    seq = AutoField()
    id = CharField(unique=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    type = CharField()
    payload = JSONField()
    environment_id = CharField(null=True)
    deployment_slug = CharField(null=True)
    package_name = CharField(null=True)
    created_at = TimestampField()

    class Meta:
        indexes = ((("organization", "seq"), False),)
