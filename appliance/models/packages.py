"""The registry: namespaces, packages, versions, children, enablements, downloads."""

from playhouse.apsw_ext import (
    AutoField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from appliance.models.db import BaseModel, JSONField, TimestampField
from appliance.models.organizations import Organization, User


class Namespace(BaseModel):
    """A scope (`@acme`), owned by the first organization that published into it."""

    scope = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    created_at = TimestampField()


class Package(BaseModel):
    """A package name within its owner's namespace."""

    id = CharField(primary_key=True)
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    name = CharField()
    scope = CharField(null=True)
    created_at = TimestampField()

    class Meta:
        indexes = ((("organization", "name"), True), (("name",), False))


class PackageVersion(BaseModel):
    """One immutable published version; `name` and `organization` copied for listing."""

    id = CharField(primary_key=True)
    package = ForeignKeyField(Package, on_delete="CASCADE")
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    name = CharField()
    version = CharField()
    major = IntegerField()
    minor = IntegerField()
    patch = IntegerField()
    prerelease = CharField(null=True)
    is_pre_release = BooleanField()
    is_latest = BooleanField(default=False)
    is_private = BooleanField(default=True)
    type = CharField()
    iac_type = JSONField()
    tags = JSONField()
    description = TextField(null=True)
    manifest = JSONField()
    manifest_format = CharField()
    config = JSONField()
    blob_sha256 = CharField(null=True)
    size = IntegerField(default=0)
    artifact_hash = CharField()
    has_state = BooleanField(default=False)
    git_commit_hash = CharField(null=True)
    git_remote_url = CharField(null=True)
    git_branch = CharField(null=True)
    git_subdir_path = CharField(null=True)
    publisher = ForeignKeyField(User, null=True, on_delete="SET NULL")
    owner = CharField()
    created_at = TimestampField()
    updated_at = TimestampField(null=True)

    class Meta:
        indexes = (
            (("package", "version"), True),
            (("name", "major", "minor", "patch"), False),
            (("organization", "created_at"), False),
            (("blob_sha256",), False),
        )


class PackageChild(BaseModel):
    """A registry child of a blueprint version, in manifest order."""

    id = AutoField()
    parent = ForeignKeyField(PackageVersion, on_delete="CASCADE", backref="children")
    child = ForeignKeyField(PackageVersion, backref="parents")
    alias = CharField()
    position = IntegerField()

    class Meta:
        indexes = ((("parent", "position"), True),)


class Enablement(BaseModel):
    """A version enabled for an organization (spec 3: only enabled versions install)."""

    id = AutoField()
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    version = ForeignKeyField(PackageVersion, on_delete="CASCADE")
    enabler_email = CharField()
    verified_at = TimestampField()

    class Meta:
        indexes = ((("organization", "version"), True),)


class PackageDownload(BaseModel):
    """Who in an organization last fetched a version's download URL, and how often."""

    id = AutoField()
    organization = ForeignKeyField(Organization, on_delete="CASCADE")
    version = ForeignKeyField(PackageVersion, on_delete="CASCADE")
    downloaded_by = CharField()
    downloaded_at = TimestampField()
    count = IntegerField(default=0)

    class Meta:
        indexes = ((("organization", "version"), True),)
