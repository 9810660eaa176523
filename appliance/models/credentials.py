"""API keys, session tokens and runtime credentials: only hashes are stored."""

from playhouse.apsw_ext import BooleanField, CharField, ForeignKeyField

from appliance.models.db import BaseModel, TimestampField
from appliance.models.organizations import Organization, User


class ApiKey(BaseModel):
    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    user = ForeignKeyField(User, on_delete="CASCADE")
    name = CharField()
    key_hash = CharField(unique=True)
    is_disabled = BooleanField(default=False)
    created_at = TimestampField()
    updated_at = TimestampField(null=True)
    expiration_time = TimestampField(null=True)
    last_used_at = TimestampField(null=True)

    class Meta:
        indexes = (
            (("organization", "name"), True),
            (("organization", "created_at"), False),
        )


class SessionToken(BaseModel):
    token_hash = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    user = ForeignKeyField(User, on_delete="CASCADE")
    created_at = TimestampField()
    expires_at = TimestampField()


class RuntimeCredential(BaseModel):
    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    username = CharField(unique=True)
    password_hash = CharField()
    name = CharField()
    created_at = TimestampField()
    revoked_at = TimestampField(null=True)
