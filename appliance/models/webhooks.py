"""Webhooks, their deliveries (one per event and webhook), attempts, and the fan-out cursor."""

from playhouse.apsw_ext import (
    AutoField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from appliance.models.db import BaseModel, JSONField, TimestampField
from appliance.models.events import Event
from appliance.models.organizations import Organization, User


class Webhook(BaseModel):
    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    name = CharField()
    scope = CharField()
    scope_id = CharField()
    scope_slug = CharField()
    endpoint_url = TextField()
    is_enabled = BooleanField(default=True)
    events = JSONField(default=list)
    secret = TextField()  # whsec_..., encrypted under the master key
    after_seq = IntegerField(default=0)  # receives events past this outbox seq only
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = TimestampField()
    updated_at = TimestampField(null=True)

    class Meta:
        indexes = ((("organization", "created_at"), False),)


class WebhookDelivery(BaseModel):
    """One event to one webhook; `seq` orders deliveries per webhook (event order)."""

    seq = AutoField()
    id = CharField(unique=True)
    webhook = ForeignKeyField(Webhook, on_delete="CASCADE")
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    event = ForeignKeyField(Event, on_delete="CASCADE")
    event_type = CharField()
    status = CharField()  # pending | succeeded | failed
    attempts = IntegerField(default=0)
    next_attempt_at = TimestampField(null=True)
    lease_until = TimestampField(null=True)
    lease_token = CharField(null=True)
    last_status_code = IntegerField(null=True)
    last_error = TextField(null=True)
    redelivery_of = CharField(null=True)
    created_at = TimestampField()
    completed_at = TimestampField(null=True)

    class Meta:
        indexes = (
            (("webhook", "status", "seq"), False),
            (("status", "next_attempt_at"), False),
        )


class DeliveryAttempt(BaseModel):
    id = AutoField()
    delivery = ForeignKeyField(WebhookDelivery, on_delete="CASCADE")
    number = IntegerField()
    started_at = TimestampField()
    finished_at = TimestampField(null=True)
    url = TextField()
    status_code = IntegerField(null=True)
    duration_ms = IntegerField(null=True)
    error = TextField(null=True)
    next_attempt_at = TimestampField(null=True)

    class Meta:
        indexes = ((("delivery", "number"), True),)


class OutboxCursor(BaseModel):
    """How far a consumer of the events outbox has got (`seq` of the last event done)."""

    name = CharField(primary_key=True)
    seq = IntegerField(default=0)
