"""Webhooks, deliveries, delivery attempts and the outbox cursor (issue 6)."""

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

    class Event(Frozen):
        seq = AutoField()

    class Webhook(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        name = CharField()
        scope = CharField()
        scope_id = CharField()
        scope_slug = CharField()
        endpoint_url = TextField()
        is_enabled = BooleanField(default=True)
        events = TextField()
        secret = TextField()
        after_seq = IntegerField(default=0)
        created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
        created_at = TextField()
        updated_at = TextField(null=True)

        class Meta:
            indexes = ((("organization", "created_at"), False),)

    class WebhookDelivery(Frozen):
        seq = AutoField()
        id = CharField(unique=True)
        webhook = ForeignKeyField(Webhook, on_delete="CASCADE")
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        event = ForeignKeyField(Event, on_delete="CASCADE")
        event_type = CharField()
        status = CharField()
        attempts = IntegerField(default=0)
        next_attempt_at = TextField(null=True)
        lease_until = TextField(null=True)
        lease_token = CharField(null=True)
        last_status_code = IntegerField(null=True)
        last_error = TextField(null=True)
        redelivery_of = CharField(null=True)
        created_at = TextField()
        completed_at = TextField(null=True)

        class Meta:
            indexes = (
                (("webhook", "status", "seq"), False),
                (("status", "next_attempt_at"), False),
            )

    class DeliveryAttempt(Frozen):
        id = AutoField()
        delivery = ForeignKeyField(WebhookDelivery, on_delete="CASCADE")
        number = IntegerField()
        started_at = TextField()
        finished_at = TextField(null=True)
        url = TextField()
        status_code = IntegerField(null=True)
        duration_ms = IntegerField(null=True)
        error = TextField(null=True)
        next_attempt_at = TextField(null=True)

        class Meta:
            indexes = ((("delivery", "number"), True),)

    class OutboxCursor(Frozen):
        name = CharField(primary_key=True)
        seq = IntegerField(default=0)

    db.create_tables([Webhook, WebhookDelivery, DeliveryAttempt, OutboxCursor])
