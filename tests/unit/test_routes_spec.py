"""The route table against the specification's endpoint list (DESIGN.md 2, rule 4).

PENDING lists the specification endpoints of later issues; it only shrinks.
EXTENSIONS lists routes the specification does not name.
"""

from __future__ import annotations

import re

from appliance.routes import ROUTES, operations
from tests.conftest import SHARED

ENDPOINT = re.compile(r"^- (GET|POST|PUT|PATCH|DELETE) (/[^ ]+?)\.?\s")
PARAM = re.compile(r"\{[^}]+\}")

PENDING = {
    # 4.2 Packages: install/uninstall (issue 5)
    # 4.7 Deployments and 4.8 tasks (issue 5)
    # 4.9 Rescue (not yet filed)
    "POST /api/v1/rescue/tf/extract",
    "POST /api/v1/rescue",
}

EXTENSIONS = {
    "GET /healthz",
    "GET /readyz",
    "GET /api/v1/openapi.json",
    "POST /api/v1/auth/login",
    "POST /api/v1/invitations/{}/accept",
    "GET /api/v1/blobs/{}",
    "GET /api/v1/schemas/manifest-v1.json",
    "GET /api/v1/webhook/{}/deliveries",
    "POST /api/v1/webhook/{}/deliveries/{}/redeliver",
    "POST /api/v1/webhook/{}/test",
    "PUT /api/v1/task/{}/deployments/{}",
    "POST /api/v1/deployments/cancel",
}


def normalise(method: str, path: str) -> str:
    return f"{method} {PARAM.sub('{}', path)}"


def spec_endpoints() -> set[str]:
    text = (SHARED / "spec" / "interface.md").read_text(encoding="utf-8")
    return {
        normalise(m.group(1), m.group(2))
        for line in text.splitlines()
        if (m := ENDPOINT.match(line))
    }


def routed() -> set[str]:
    found = set()
    for path, factory in ROUTES:
        resource_class = getattr(factory, "func", factory)
        for method in operations(resource_class):
            found.add(normalise(method, path))
    return found


def test_every_spec_endpoint_is_routed_or_pending() -> None:
    missing = spec_endpoints() - routed() - PENDING
    assert not missing, f"specification endpoints neither routed nor pending: {sorted(missing)}"


def test_pending_only_lists_unrouted_spec_endpoints() -> None:
    assert not PENDING & routed(), f"routed now, remove from PENDING: {sorted(PENDING & routed())}"
    assert PENDING <= spec_endpoints(), sorted(PENDING - spec_endpoints())


def test_every_route_is_in_the_spec_or_a_named_extension() -> None:
    unknown = routed() - spec_endpoints() - EXTENSIONS
    assert not unknown, f"routes neither in the specification nor EXTENSIONS: {sorted(unknown)}"
