"""Prop values: references, dependency order, resolution, install-time merge and validation.

A reference is a prop value (a string, or a string anywhere inside a list or map value)
that is exactly one of:
- `inputs.<name>`: an input of the blueprint (manifest child props),
- `data.<id>.<output>`: output `<output>` of the sibling child package `<id>`,
- `$<slug>.<key>`: output `<key>` of deployment `<slug>` in the same environment
  (install props, DESIGN.md 7.4).
Any other string is a literal. A reference whose source has no value yet stays as
its expression string (DESIGN.md 7.3 item 2).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from appliance.errors import Invalid

INPUT, DATA, DEPLOYMENT = "input", "data", "deployment"
ALL_KINDS = frozenset({INPUT, DATA, DEPLOYMENT})
MANIFEST_KINDS = frozenset({INPUT, DATA})
INSTALL_KINDS = frozenset({DEPLOYMENT})

_NAME = r"[A-Za-z0-9_]+"  # input names (spec 2.1)
_ID = r"[A-Za-z_][A-Za-z0-9_]*"  # child package ids (spec 2.1.3)
_OUTPUT = r"[A-Za-z_][A-Za-z0-9_-]*"  # output names (Terraform allows hyphens)
_SLUG = r"[A-Za-z0-9][A-Za-z0-9_-]*"  # deployment slugs
_PATTERNS = (
    (INPUT, re.compile(rf"inputs\.({_NAME})")),
    (DATA, re.compile(rf"data\.({_ID})\.({_OUTPUT})")),
    (DEPLOYMENT, re.compile(rf"\$({_SLUG})\.({_OUTPUT})")),
)


@dataclass(frozen=True)
class Reference:
    """A parsed reference: `source` is the input name, child id or deployment slug."""

    kind: str
    source: str
    key: str | None
    expression: str


def parse_reference(value: Any, kinds: frozenset[str] = ALL_KINDS) -> Reference | None:
    """The reference `value` is, or None when it is a literal (or a kind not in `kinds`)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    for kind, pattern in _PATTERNS:
        match = pattern.fullmatch(text)
        if match and kind in kinds:
            key = match.group(2) if kind != INPUT else None
            return Reference(kind, match.group(1), key, text)
    return None


def iter_references(value: Any, kinds: frozenset[str] = ALL_KINDS) -> Iterator[Reference]:
    """Every reference in `value`, looking inside lists and maps, in order."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from iter_references(item, kinds)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from iter_references(item, kinds)
    else:
        reference = parse_reference(value, kinds)
        if reference is not None:
            yield reference


def data_dependencies(props: Mapping[str, Any]) -> list[str]:
    """The child ids a child's props reference with `data.<id>.<output>` (its `depend`)."""
    found = [reference.source for reference in iter_references(props, frozenset({DATA}))]
    return list(dict.fromkeys(found))


# --- dependency order ----------------------------------------------------------------------


def topological_order(dependencies: Mapping[str, Iterable[str]]) -> list[str]:
    """Ids ordered so each comes after the ids it depends on; stable in the given order.

    An unknown dependency or a cycle is Invalid; the message names them.
    """
    needs = {node: list(dict.fromkeys(deps)) for node, deps in dependencies.items()}
    unknown = [
        f"{node} -> {dep}" for node, deps in needs.items() for dep in deps if dep not in needs
    ]
    if unknown:
        raise Invalid(f"reference to an unknown child package id: {', '.join(unknown)}")
    position = {node: index for index, node in enumerate(needs)}
    waiting = {node: len(deps) for node, deps in needs.items()}
    dependents: dict[str, list[str]] = {node: [] for node in needs}
    for node, deps in needs.items():
        for dep in deps:
            dependents[dep].append(node)
    ready = [node for node in needs if waiting[node] == 0]
    order: list[str] = []
    while ready:
        node = min(ready, key=position.__getitem__)
        ready.remove(node)
        order.append(node)
        for dependent in dependents[node]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                ready.append(dependent)
    if len(order) < len(needs):
        cycle = _find_cycle({node: needs[node] for node in needs if waiting[node] > 0})
        raise Invalid(f"dependency cycle: {' -> '.join(cycle)}")
    return order


def _find_cycle(stuck: Mapping[str, list[str]]) -> list[str]:
    """One cycle among nodes that all still wait on another stuck node."""
    path: list[str] = []
    node = next(iter(stuck))
    while node not in path:
        path.append(node)
        node = next(dep for dep in stuck[node] if dep in stuck)
    return path[path.index(node) :] + [node]


def child_order(children: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Child package ids (mapped to their props) in dependency order."""
    return topological_order({cid: data_dependencies(props) for cid, props in children.items()})


# --- resolution ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    """What references can resolve to so far."""

    inputs: Mapping[str, Any]
    outputs: Mapping[str, Mapping[str, Any]]  # child id -> output name -> value
    deployments: Mapping[str, Mapping[str, Any]]  # deployment slug -> output key -> value


def resolve_value(value: Any, known: Known, kinds: frozenset[str] = ALL_KINDS) -> Any:
    """`value` with each resolvable reference replaced; the others stay as expressions."""
    if isinstance(value, Mapping):
        return {key: resolve_value(item, known, kinds) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [resolve_value(item, known, kinds) for item in value]
    reference = parse_reference(value, kinds)
    if reference is None:
        return value
    if reference.kind == INPUT:
        if reference.source not in known.inputs:
            return value
        # An input may itself carry a `$<slug>.<key>` given at install.
        return resolve_value(known.inputs[reference.source], known, INSTALL_KINDS)
    table = known.outputs if reference.kind == DATA else known.deployments
    source = table.get(reference.source)
    if source is None or reference.key not in source:
        return value
    return source[reference.key]


def resolve_props(
    props: Mapping[str, Any],
    *,
    inputs: Mapping[str, Any] | None = None,
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
    deployments: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A props map resolved against the inputs and outputs known so far."""
    known = Known(inputs or {}, outputs or {}, deployments or {})
    return {name: resolve_value(value, known) for name, value in props.items()}


def unresolved(props: Mapping[str, Any]) -> list[str]:
    """The expressions still unresolved in `props`, in order."""
    return [reference.expression for reference in iter_references(props)]


# --- install-time merge (DESIGN.md 6) ---------------------------------------------------------


def merge_install_props(
    inputs: Mapping[str, Mapping[str, Any]],
    environment: Iterable[Mapping[str, Any]],
    props: Mapping[str, Any],
) -> dict[str, Any]:
    """Input defaults < environment properties < install props < enforced properties.

    Environment properties (`{name, content, is_enforced}`) apply only to inputs the
    package declares; their string content is read as the input's type when it can be.
    """
    merged = {name: spec["default"] for name, spec in inputs.items() if "default" in spec}
    properties = [p for p in environment if p.get("name") in inputs]
    for prop in properties:
        if not prop.get("is_enforced"):
            merged[prop["name"]] = coerce_content(prop.get("content"), inputs[prop["name"]])
    merged.update(props)
    for prop in properties:
        if prop.get("is_enforced"):
            merged[prop["name"]] = coerce_content(prop.get("content"), inputs[prop["name"]])
    return merged


_JSON_TYPES = {"number": (int, float), "bool": (bool,), "list": (list,), "map": (dict,)}


def coerce_content(content: Any, spec: Mapping[str, Any]) -> Any:
    """An environment property's string content as the input's `type`, when it parses."""
    wanted = _JSON_TYPES.get(spec.get("type", "any"))
    if wanted is None or not isinstance(content, str):
        return content
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if isinstance(value, wanted) and (bool in wanted or not isinstance(value, bool)):
        return value
    return content


# --- validation (DESIGN.md 7.4) ----------------------------------------------------------------


def _detail(prop: str, message: str) -> dict[str, Any]:
    return {"prop": prop, "statusCode": 400, "error": "BAD_REQUEST", "message": message}


def matches_type(value: Any, type_name: str) -> bool:
    """Whether a JSON value is of an input `type` (string, number, bool, list, map, any)."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "number":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not (isinstance(value, float) and not math.isfinite(value))
        )
    if type_name == "bool":
        return isinstance(value, bool)
    if type_name == "list":
        return isinstance(value, list)
    if type_name == "map":
        return isinstance(value, dict)
    return True


def _same(left: Any, right: Any) -> bool:
    """JSON equality: `true` is not `1`, `1` is `1.0`."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    return left == right


def _check_value(name: str, value: Any, spec: Mapping[str, Any]) -> str | None:
    type_name = spec.get("type", "any")
    if not matches_type(value, type_name):
        return f"prop {name} must be of type {type_name}, got {json.dumps(value)[:80]}"
    allowed = spec.get("allowed_values")
    if isinstance(allowed, list) and not any(_same(value, option) for option in allowed):
        options = ", ".join(json.dumps(option) for option in allowed)
        return f"prop {name} must be one of {options}, got {json.dumps(value)[:80]}"
    return None


def validate_props(
    inputs: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Every problem with merged props, one detail `{prop, statusCode, error, message}` each.

    An input without a default needs a non-null value; a value must match the input's
    `type` and `allowed_values`; a prop that is no input is unknown. A `$<slug>.<key>`
    value is resolved later, so only its form is checked now.
    """
    problems = []
    for name, spec in inputs.items():
        value = values.get(name)
        if value is None:
            if "default" not in spec:
                problems.append(_detail(name, f"missing value for required input {name}"))
            continue
        if parse_reference(value, INSTALL_KINDS) is not None:
            continue
        message = _check_value(name, value, spec)
        if message:
            problems.append(_detail(name, message))
    for name in values:
        if name not in inputs:
            known = ", ".join(inputs) or "none"
            problems.append(_detail(name, f"unknown prop {name} (inputs: {known})"))
    return problems


def check_props(inputs: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> None:
    """Raise one Invalid with a detail per problem when the props are not valid."""
    problems = validate_props(inputs, values)
    if problems:
        count = len(problems)
        raise Invalid(f"invalid props: {count} problem{'s' if count > 1 else ''}", details=problems)


def install_references(props: Mapping[str, Any]) -> Sequence[Reference]:
    """The `$<slug>.<key>` references in install props (deployments to look up)."""
    return list(iter_references(props, INSTALL_KINDS))
