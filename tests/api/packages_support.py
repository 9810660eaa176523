"""Helpers for the registry tests: zips, manifests and the multipart publish request."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from urllib3 import encode_multipart_formdata

from tests.conftest import SHARED

FIXTURES = SHARED / "fixtures"
MODULES = {
    "vpc": (FIXTURES / "terraform-modules/terraform-aws-modules__terraform-aws-vpc", "terraform"),
    "sg": (
        FIXTURES / "terraform-modules/terraform-aws-modules__terraform-aws-security-group",
        "terraform",
    ),
    "s3": (
        FIXTURES / "terraform-modules/terraform-aws-modules__terraform-aws-s3-bucket",
        "terraform",
    ),
    "eks": (
        FIXTURES / "terraform-modules/hashicorp__learn-terraform-provision-eks-cluster",
        "opentofu",
    ),
    "metrics-server": (
        FIXTURES / "helm-charts/kubernetes-sigs__metrics-server/metrics-server",
        "helm",
    ),
    "hello-world": (FIXTURES / "helm-charts/helm__examples/hello-world", "helm"),
    "cfn": (
        FIXTURES / "cloudformation/aws-cloudformation__aws-cloudformation-templates",
        "cloudformation",
    ),
    "identity": (FIXTURES / "bicep/Azure__bicep-registry-modules/user-assigned-identity", "bicep"),
    "storage": (FIXTURES / "bicep/Azure__azure-quickstart-templates", "bicep"),
}


def zip_files(files: dict[str, bytes]) -> bytes:
    """A zip of in-memory files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def dir_files(root: Path) -> dict[str, bytes]:
    """Every regular file under `root`, by relative `/` path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def artifact_manifest(name: str, iac: str = "terraform", **extra: Any) -> dict[str, Any]:
    return {"name": name, "version": "1.0.0", "native": {"type": iac}, **extra}


def publish(
    world: Any,
    caller: Any,
    manifest: dict[str, Any] | bytes,
    archive: bytes | None = b"default",
    manifest_name: str = "manifest.json",
    **fields: str,
) -> Any:
    """POST /api/v1/package as multipart/form-data."""
    content = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
    parts: list[tuple[str, Any]] = [("manifest", (manifest_name, content, "application/json"))]
    if archive == b"default":
        archive = zip_files({"main.tf": b'resource "null_resource" "x" {}\n'})
    if archive is not None:
        parts.append(("package", ("package.zip", archive, "application/zip")))
    parts.extend(fields.items())
    body, content_type = encode_multipart_formdata(parts)
    return world.post("/api/v1/package", caller, body=body, headers={"Content-Type": content_type})
