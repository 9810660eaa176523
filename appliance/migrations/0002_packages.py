"""The registry: namespaces, packages, versions, children, enablements, downloads."""

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

    class Organization(Frozen):
        id = CharField(primary_key=True)

    class User(Frozen):
        id = AutoField()

    class Namespace(Frozen):
        scope = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        created_at = TextField()

    class Package(Frozen):
        id = CharField(primary_key=True)
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        name = CharField()
        scope = CharField(null=True)
        created_at = TextField()

        class Meta:
            indexes = ((("organization", "name"), True), (("name",), False))

    class PackageVersion(Frozen):
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
        iac_type = TextField()
        tags = TextField()
        description = TextField(null=True)
        manifest = TextField()
        manifest_format = CharField()
        config = TextField()
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
        created_at = TextField()
        updated_at = TextField(null=True)

        class Meta:
            indexes = (
                (("package", "version"), True),
                (("name", "major", "minor", "patch"), False),
                (("organization", "created_at"), False),
                (("blob_sha256",), False),
            )

    class PackageChild(Frozen):
        id = AutoField()
        parent = ForeignKeyField(PackageVersion, on_delete="CASCADE")
        child = ForeignKeyField(PackageVersion)
        alias = CharField()
        position = IntegerField()

        class Meta:
            indexes = ((("parent", "position"), True),)

    class Enablement(Frozen):
        id = AutoField()
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        version = ForeignKeyField(PackageVersion, on_delete="CASCADE")
        enabler_email = CharField()
        verified_at = TextField()

        class Meta:
            indexes = ((("organization", "version"), True),)

    class PackageDownload(Frozen):
        id = AutoField()
        organization = ForeignKeyField(Organization, on_delete="CASCADE")
        version = ForeignKeyField(PackageVersion, on_delete="CASCADE")
        downloaded_by = CharField()
        downloaded_at = TextField()
        count = IntegerField(default=0)

        class Meta:
            indexes = ((("organization", "version"), True),)

    db.create_tables(
        [Namespace, Package, PackageVersion, PackageChild, Enablement, PackageDownload]
    )
