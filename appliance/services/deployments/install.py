"""Install, uninstall and POST /deployment/create (spec 4.2, 4.7; DESIGN.md 6, 7.1, 7.4)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from appliance.domain import manifest as manifests
from appliance.domain import references, stages
from appliance.domain.slugs import slugify, unique_slug
from appliance.domain.stages import Command, Stage
from appliance.errors import Conflict, Invalid, NotFound
from appliance.models import (
    Deployment,
    Environment,
    EnvironmentProperty,
    PackageChild,
    PackageVersion,
    Task,
)
from appliance.models.db import to_iso, write_transaction
from appliance.services import environments
from appliance.services.context import ServiceContext
from appliance.services.deployments.common import (
    BLUEPRINT,
    bool_field,
    check_fields,
    emit_task,
    latest_root,
    resolve_activity,
    text_field,
)
from appliance.services.deployments.common import _deployment_event as deployment_event
from appliance.services.packages import resolve_enabled_version
from appliance.services.packages.lookup import enablements

_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
INSTALL_FIELDS = (
    "package",
    "version",
    "force",
    "planOnly",
    "validateOnly",
    "driftDetection",
    "env",
    "slug",
    "deployment",
    "props",
    "planId",
)
CREATE_FIELDS = (
    "deploymentSlug",
    "blueprint",
    "version",
    "force",
    "validateOnly",
    "planOnly",
    "driftDetection",
    "env",
    "props",
)


@dataclass
class Node:
    """One activity to create: a package version, its props and its place in the tree."""

    version: PackageVersion
    props: dict[str, Any]
    alias: str | None = None
    depends_on: list[str] = field(default_factory=list)  # sibling aliases
    children: list[Node] = field(default_factory=list)
    unique_id: str | None = None


@dataclass(frozen=True)
class Request:
    """A parsed install request."""

    command: Command
    env: Environment
    package: str
    selector: str | None
    slug: str
    existing: Deployment | None
    props: dict[str, Any]


# -- environment and flags ---------------------------------------------------------------


def target_environment(org_id: str, env: str | None) -> Environment:
    """The named environment, or the default; a disabled or deleted one is a 400."""
    if env is None:
        return environments.default_environment(org_id)
    found = list(
        Environment.select().where(
            Environment.organization == org_id,
            (Environment.id == env) | (Environment.slug == env),
        )
    )
    if not found:
        raise NotFound(f"environment not found: {env[:80]}")
    row = ([e for e in found if e.id == env] or found)[0]
    if row.is_deleted:
        raise Invalid(f"environment {row.slug} is deleted")
    if not row.is_active:
        raise Invalid(f"environment {row.slug} is disabled")
    return row


def _props(body: dict[str, Any], name: str = "props") -> dict[str, Any]:
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid(f"{name} must be an object")
    return value


def _command(body: dict[str, Any]) -> Command:
    return stages.command_for(
        force=bool_field(body, "force"),
        plan_only=bool_field(body, "planOnly"),
        validate_only=bool_field(body, "validateOnly"),
        drift_detection=bool_field(body, "driftDetection"),
    )


def _slug_taken(org_id: str, env_id: str, slug: str) -> bool:
    row = latest_root(org_id, env_id, slug)
    return row is not None and not row.is_archived


def _new_slug(org_id: str, env_id: str, wanted: str | None, package: str) -> str:
    if wanted is not None:
        if not _SLUG.match(wanted):
            raise Invalid("slug must be lowercase letters, digits, '-' or '_' (at most 64)")
        if _slug_taken(org_id, env_id, wanted):
            raise Conflict(f"deployment slug already exists: {wanted}")
        return wanted
    base = slugify(package.rsplit("/", 1)[-1])
    taken = {
        s
        for (s,) in Deployment.select(Deployment.root_slug)
        .where(
            Deployment.organization == org_id,
            Deployment.environment == env_id,
            Deployment.root_slug.startswith(base),
            Deployment.is_archived == False,  # noqa: E712
        )
        .tuples()
    }
    return unique_slug(base, taken)


def _existing(org_id: str, env: Environment, reference: str, package: str | None) -> Deployment:
    row = resolve_activity(org_id, reference, env.id)
    if row.environment_id != env.id:
        raise Invalid(f"deployment {reference} is not in environment {env.slug}")
    root = latest_root(org_id, env.id, row.root_slug)
    assert root is not None
    if package is not None and package != root.name:
        raise Invalid(f"deployment {root.root_slug} is of package {root.name}, not {package}")
    if root.is_archived:
        raise Invalid(f"deployment {root.root_slug} is uninstalled (archived)")
    if not stages.is_final(root.stage, root.command):
        raise Conflict(f"deployment {root.root_slug} has an activity in progress ({root.stage})")
    return root


def parse_install(org_id: str, body: dict[str, Any]) -> Request:
    """Check an install body: flags, environment, slug or existing deployment, props."""
    check_fields(body, INSTALL_FIELDS)
    if body.get("planId") is not None:
        raise Invalid("planId is not supported by this appliance")
    command = _command(body)
    env = target_environment(org_id, text_field(body, "env"))
    slug, reference = text_field(body, "slug", limit=64), text_field(body, "deployment")
    if slug is not None and reference is not None:
        raise Invalid("give slug (a new deployment) or deployment (an existing one), not both")
    package = text_field(body, "package")
    existing = _existing(org_id, env, reference, package) if reference is not None else None
    if existing is None and package is None:
        raise Invalid("package is required")
    name = existing.name if existing is not None else package
    final_slug = existing.root_slug if existing else _new_slug(org_id, env.id, slug, name)
    return Request(
        command, env, name, text_field(body, "version"), final_slug, existing, _props(body)
    )


def parse_create(org_id: str, body: dict[str, Any]) -> Request:
    """POST /deployment/create: a new slug, or a new activity of an existing one."""
    check_fields(body, CREATE_FIELDS)
    slug = text_field(body, "deploymentSlug", required=True, limit=64)
    command = _command(body)
    env = target_environment(org_id, text_field(body, "env"))
    package = text_field(body, "blueprint")
    root = latest_root(org_id, env.id, slug)
    if root is not None and not root.is_archived:
        existing = _existing(org_id, env, root.id, package)
        return Request(
            command, env, existing.name, text_field(body, "version"), slug, existing, _props(body)
        )
    if package is None:
        raise Invalid("blueprint is required for a new deployment")
    _new_slug(org_id, env.id, slug, package)
    return Request(command, env, package, text_field(body, "version"), slug, None, _props(body))


# -- the activity tree ---------------------------------------------------------------------


def _environment_properties(env: Environment) -> list[dict[str, Any]]:
    rows = EnvironmentProperty.select().where(EnvironmentProperty.environment == env.id)
    return [{"name": r.name, "content": r.content, "is_enforced": r.is_enforced} for r in rows]


def _pick_version(org_id: str, request: Request) -> PackageVersion:
    row = resolve_enabled_version(
        org_id, request.package, request.selector, request.env.allow_pre_release
    )
    if row.is_pre_release and not request.env.allow_pre_release:
        raise Invalid(
            f"environment {request.env.slug} does not accept pre-releases: {row.name}@{row.version}"
        )
    return row


def _children(org_id: str, parent: Node) -> list[Node]:
    """The registry children of a blueprint version, enabled, props resolved from inputs."""
    links = list(
        PackageChild.select(PackageChild, PackageVersion)
        .join(PackageVersion, on=PackageChild.child == PackageVersion.id)
        .where(PackageChild.parent == parent.version.id)
        .order_by(PackageChild.position)
    )
    enabled = enablements(org_id, [link.child.id for link in links])
    entries = {manifests.child_id(c): c for c in parent.version.manifest.get("packages") or []}
    nodes = []
    for link in links:
        child = link.child
        if child.id not in enabled:
            raise NotFound(f"package not found or not enabled: {child.name}@{child.version}")
        raw = manifests.child_props(entries.get(link.alias, {}))
        props = references.resolve_props(raw, inputs=parent.props)
        node = Node(child, props, link.alias, references.data_dependencies(raw))
        node.children = _children(org_id, node) if child.type == BLUEPRINT else []
        nodes.append(node)
    order = references.topological_order({n.alias: n.depends_on for n in nodes})
    by_alias = {n.alias: n for n in nodes}
    return [by_alias[alias] for alias in order]


def build_tree(org_id: str, request: Request) -> Node:
    """The root node with merged, validated props and its children expanded."""
    row = _pick_version(org_id, request)
    inputs = row.manifest.get("inputs") or {}
    merged = references.merge_install_props(
        inputs, _environment_properties(request.env), request.props
    )
    references.check_props(inputs, merged)
    root = Node(row, merged)
    if row.type == BLUEPRINT:
        root.children = _children(org_id, root)
    return root


def _flatten(node: Node, parent: Node | None = None) -> list[tuple[Node, Node | None]]:
    found = [(node, parent)]
    for child in node.children:
        found += _flatten(child, node)
    return found


# -- writing ---------------------------------------------------------------------------------


def _retire(org_id: str, env_id: str, slug: str) -> None:
    Deployment.update(is_latest=False).where(
        Deployment.organization == org_id,
        Deployment.environment == env_id,
        Deployment.root_slug == slug,
        Deployment.is_latest == True,  # noqa: E712
    ).execute()


def _create_rows(
    ctx: ServiceContext,
    org_id: str,
    user_pk: int | None,
    request: Request,
    tree: list[tuple[Node, Node | None]],
    reverse_depend: bool = False,
) -> tuple[Task, list[Deployment]]:
    now, stamp = ctx.now(), {str(Stage.PENDING): to_iso(ctx.now())}
    task = Task.create(
        id=ctx.new_id(),
        organization=org_id,
        environment=request.env.id,
        command=str(request.command),
        stage=str(Stage.PENDING),
        slug=request.slug,
        user=user_pk,
        status_timestamps=stamp,
        created_at=now,
    )
    ids = {id(node): ctx.new_id() for node, _ in tree}
    by_alias: dict[tuple[int, str], str] = {}
    for node, parent in tree:
        if parent is not None and node.alias is not None:
            by_alias[(id(parent), node.alias)] = ids[id(node)]
    depend: dict[int, list[str]] = {id(node): [] for node, _ in tree}
    for node, parent in tree:
        for alias in node.depends_on:
            source = by_alias[(id(parent), alias)]
            if reverse_depend:
                target = next(n for n, _ in tree if ids[id(n)] == source)
                depend[id(target)].append(ids[id(node)])
            else:
                depend[id(node)].append(source)
    plan_only = stages.is_plan_only(request.command)
    rows = []
    for position, (node, parent) in enumerate(tree):
        version = node.version
        rows.append(
            Deployment.create(
                id=ids[id(node)],
                organization=org_id,
                environment=request.env.id,
                task=task.id,
                parent=None if parent is None else ids[id(parent)],
                root_slug=request.slug,
                slug=request.slug if parent is None else None,
                alias=node.alias,
                position=position,
                name=version.name,
                version=version.version,
                package_version=version.id,
                type=version.type,
                iac_type=",".join(version.iac_type or []),
                unique_id=node.unique_id,
                command=str(request.command),
                stage=str(Stage.PENDING),
                is_uninstall=stages.is_uninstall(request.command),
                is_plan_only=plan_only,
                drift_detection=request.command is Command.DRIFT_DETECTION,
                props=node.props,
                depend=depend[id(node)],
                status_timestamps=stamp,
                user=user_pk,
                created_at=now,
            )
        )
    return task, rows


def _start(
    ctx: ServiceContext,
    org_id: str,
    user_pk: int | None,
    request: Request,
    tree: list[tuple[Node, Node | None]],
    reverse_depend: bool = False,
) -> tuple[Task, list[Deployment]]:
    with write_transaction():
        if request.existing is None and _slug_taken(org_id, request.env.id, request.slug):
            raise Conflict(f"deployment slug already exists: {request.slug}")
        if request.existing is not None:
            current = latest_root(org_id, request.env.id, request.slug)
            if current is None or current.id != request.existing.id:
                raise Conflict(f"deployment {request.slug} changed meanwhile; retry")
        _retire(org_id, request.env.id, request.slug)
        task, rows = _create_rows(ctx, org_id, user_pk, request, tree, reverse_depend)
        for row in rows:
            deployment_event(ctx, row, "deployment:created")
        emit_task(ctx, task, "task:created")
    return task, rows


def install(ctx: ServiceContext, org_id: str, user_pk: int | None, body: Any) -> dict[str, Any]:
    """POST /package/install: `{deployment, task}` (also for validateOnly)."""
    request = parse_install(org_id, _object(body))
    tree = _flatten(build_tree(org_id, request))
    task, rows = _start(ctx, org_id, user_pk, request, tree)
    return {"deployment": rows[0].id, "task": task.id}


def create(ctx: ServiceContext, org_id: str, user_pk: int | None, body: Any) -> dict[str, Any]:
    """POST /deployment/create: `{deployment, activity_id, task}` (deployment is the slug)."""
    request = parse_create(org_id, _object(body))
    tree = _flatten(build_tree(org_id, request))
    task, rows = _start(ctx, org_id, user_pk, request, tree)
    return {"deployment": request.slug, "activity_id": rows[0].id, "task": task.id}


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise Invalid("the JSON body must be an object")
    return body


def _previous_tree(org_id: str, root: Deployment) -> list[tuple[Node, Node | None]]:
    """The tree of a slug's latest activity, to uninstall it; versions must be enabled."""
    rows = list(
        Deployment.select().where(Deployment.task == root.task_id).order_by(Deployment.position)
    )
    versions = {
        v.id: v
        for v in PackageVersion.select().where(
            PackageVersion.id.in_([r.package_version_id for r in rows if r.package_version_id])
        )
    }
    enabled = enablements(org_id, versions)
    nodes: dict[str, Node] = {}
    tree: list[tuple[Node, Node | None]] = []
    for row in rows:
        version = versions.get(row.package_version_id)
        if version is None or version.id not in enabled:
            raise NotFound(f"package not found or not enabled: {row.name}@{row.version}")
        parent = nodes.get(row.parent_id) if row.parent_id else None
        aliases = {r.id: r.alias for r in rows}
        node = Node(
            version, row.props, row.alias, [aliases[d] for d in row.depend], [], row.unique_id
        )
        nodes[row.id] = node
        if parent is not None:
            parent.children.append(node)
        tree.append((node, parent))
    return tree


def uninstall(ctx: ServiceContext, org_id: str, user_pk: int | None, body: Any) -> dict[str, Any]:
    """POST /package/uninstall: an uninstall activity for the slug and its children."""
    body = _object(body)
    check_fields(body, ("deployment", "planOnly", "env"))
    reference = text_field(body, "deployment", required=True)
    command = stages.command_for(plan_only=bool_field(body, "planOnly"), uninstall=True)
    env_ref = text_field(body, "env")
    env = target_environment(org_id, env_ref) if env_ref else None
    found = resolve_activity(org_id, reference, env.id if env else None)
    env = env or Environment.get_by_id(found.environment_id)
    root = _existing(org_id, env, found.id, None)
    tree = _previous_tree(org_id, root)
    request = Request(command, env, root.name, root.version, root.root_slug, root, {})
    # Children are removed in reverse dependency order: every `depend` edge is reversed.
    task, rows = _start(ctx, org_id, user_pk, request, tree, reverse_depend=True)
    return {"deployment": rows[0].id, "task": task.id}
