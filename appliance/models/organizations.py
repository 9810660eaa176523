"""Organizations, roles, users, memberships and invitations."""

from playhouse.apsw_ext import (
    AutoField,
    BooleanField,
    CharField,
    ForeignKeyField,
    TextField,
)

from appliance.models.db import BaseModel, JSONField, TimestampField


class Organization(BaseModel):
    id = CharField(primary_key=True)
    name = CharField(unique=True)
    display_name = CharField()
    branding = JSONField(default=dict)
    metadata = JSONField(default=dict)
    is_trial = BooleanField(default=False)
    trial_started = TimestampField(null=True)
    created_at = TimestampField()


class Role(BaseModel):
    id = CharField(primary_key=True)
    name = CharField(unique=True)
    description = TextField()


class User(BaseModel):
    """A person; `id` renders as `local|<id>` (this appliance is its identity provider)."""

    id = AutoField()
    email = CharField(unique=True)
    name = CharField()
    first_name = CharField(null=True)
    last_name = CharField(null=True)
    nickname = CharField()
    picture = CharField(default="")
    password_hash = CharField(null=True)
    created_at = TimestampField()


class Membership(BaseModel):
    id = AutoField()
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    user = ForeignKeyField(User, on_delete="CASCADE")
    created_at = TimestampField()

    class Meta:
        indexes = ((("organization", "user"), True),)


class MemberRole(BaseModel):
    membership = ForeignKeyField(Membership, on_delete="CASCADE")
    role = ForeignKeyField(Role)

    class Meta:
        primary_key = False
        indexes = ((("membership", "role"), True),)


class Invitation(BaseModel):
    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    email = CharField()
    role = ForeignKeyField(Role)
    token_hash = CharField()
    invited_by = ForeignKeyField(User, null=True)
    created_at = TimestampField()
    expires_at = TimestampField()
    accepted_at = TimestampField(null=True)

    class Meta:
        indexes = ((("organization", "email"), False),)
