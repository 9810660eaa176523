"""DESIGN.md 2: each layer imports only the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "appliance"

# Lower number = lower layer. A module may import its own layer and those below.
LAYERS = [
    (
        0,
        (
            "__init__",
            "__version__",
            "config",
            "errors",
            "events",
            "blobs",
            "masterkey",
            "models",
            "migrations",
            "domain",
        ),
    ),
    (1, ("services", "workers")),
    (2, ("app", "routes", "http", "resources")),
    (3, ("client",)),
    (4, ("runtime",)),
    (5, ("cli", "__main__")),
]
# The client and runtime talk HTTP only: they may not reach into the server.
FORBIDDEN = {
    "client": (
        "services",
        "workers",
        "app",
        "routes",
        "http",
        "resources",
        "models",
        "migrations",
        "blobs",
    ),
    "runtime": (
        "services",
        "workers",
        "app",
        "routes",
        "http",
        "resources",
        "models",
        "migrations",
        "blobs",
    ),
}


def layer_of(top: str) -> int:
    for level, names in LAYERS:
        if top in names:
            return level
    raise AssertionError(f"appliance.{top} is in no layer: add it to LAYERS")


def imports_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{a.name}" for a in node.names if node.module == "appliance"]
    return [name for name in found if name.startswith("appliance.")]


def test_no_upward_imports() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts == ("__init__.py",):
            continue
        top = rel.parts[0].removesuffix(".py")
        for name in imports_of(path):
            target = name.split(".")[1]
            if layer_of(target) > layer_of(top) or target in FORBIDDEN.get(top, ()):
                violations.append(f"{rel}: imports {name}")
    assert not violations, "\n".join(violations)


def test_falcon_only_in_the_http_layer() -> None:
    for path in PACKAGE.rglob("*.py"):
        top = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        if layer_of(top) < 2:
            assert "import falcon" not in path.read_text(encoding="utf-8"), path
