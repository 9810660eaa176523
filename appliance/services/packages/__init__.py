"""The package registry (spec 4.2, DESIGN.md 5)."""

from appliance.services.packages.catalog import (
    SEARCH,
    changes,
    customizable,
    detail,
    search,
    status,
    versions,
)
from appliance.services.packages.downloads import (
    download_url,
    signature_valid,
    signed_blob_url,
)
from appliance.services.packages.enablement import set_enabled
from appliance.services.packages.lookup import get_version, resolve_enabled_version
from appliance.services.packages.organization_list import ORG_LIST, list_packages
from appliance.services.packages.publish import PublishForm, SpooledUpload, publish, spool_upload

__all__ = [
    "ORG_LIST",
    "SEARCH",
    "PublishForm",
    "SpooledUpload",
    "changes",
    "customizable",
    "detail",
    "download_url",
    "get_version",
    "list_packages",
    "publish",
    "resolve_enabled_version",
    "search",
    "set_enabled",
    "signature_valid",
    "signed_blob_url",
    "spool_upload",
    "status",
    "versions",
]
