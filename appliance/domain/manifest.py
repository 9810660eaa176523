"""Manifest loading and validation (spec 2.1), and the package config derived from it (2.2).

The rules live in `manifest.schema.json` (JSON Schema 2020-12, served as-is);
this module loads JSON or YAML safely, runs the schema, turns its errors into
one message per violation with its path in the manifest, and adds the checks
a schema cannot express (references between children, duplicate ids, cycles).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from appliance.errors import Invalid

SCHEMA_PATH = Path(__file__).with_name("manifest.schema.json")
MANIFEST_VERSION = 1
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_DEPTH = 64
_INPUT_REF = re.compile(r"^inputs\.([A-Za-z0-9_]+)\Z")
_DATA_REF = re.compile(r"^data\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z0-9_]+)\Z")
_TYPE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "map": lambda v: isinstance(v, dict),
}


@cache
def schema() -> dict[str, Any]:
    """The manifest JSON Schema document."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@cache
def _validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(schema())
    return Draft202012Validator(schema())


# ---------------------------------------------------------------- loading


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader without anchors, aliases, duplicate keys or non-JSON scalars."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise yaml.MarkedYAMLError(
                "while reading the manifest",
                None,
                "anchors and aliases are not allowed",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                raise yaml.MarkedYAMLError(
                    None, None, f"mapping keys must be strings, got {key!r}", key_node.start_mark
                )
            if key in seen:
                raise yaml.MarkedYAMLError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _scalar_as_text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


# Dates and timestamps stay text: a manifest is JSON-shaped.
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _scalar_as_text)


def _refuse_tag(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"the tag {node.tag} is not allowed", node.start_mark
    )


for _tag in ("binary", "set", "omap", "pairs"):
    _StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag)


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise Invalid(f"manifest: duplicate key {key!r}")
        found[key] = value
    return found


def _check_json_shaped(value: Any, path: str = "manifest", depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise Invalid(f"{path}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_json_shaped(item, _join(path, key), depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_json_shaped(item, f"{path}[{i}]", depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        raise Invalid(f"{path}: not a finite number")
    elif not isinstance(value, str | int | float | bool | type(None)):
        raise Invalid(f"{path}: not a JSON value ({type(value).__name__})")


def manifest_format(filename: str | None, content: bytes) -> str:
    """`json` or `yaml`, from the file name, else from the first character."""
    name = (filename or "").lower()
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    if name.endswith(".json"):
        return "json"
    return "json" if content.lstrip()[:1] in (b"{", b"[") else "yaml"


def load_manifest(content: bytes, filename: str | None = None) -> dict[str, Any]:
    """Parse manifest.json or manifest.yaml into a JSON-shaped object, safely."""
    if len(content) > MAX_MANIFEST_BYTES:
        raise Invalid(f"manifest over {MAX_MANIFEST_BYTES} bytes")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Invalid("manifest is not UTF-8 text") from None
    if manifest_format(filename, content) == "json":
        try:
            value = json.loads(text, object_pairs_hook=_reject_duplicates)
        except RecursionError:
            raise Invalid(f"manifest nested deeper than {MAX_DEPTH} levels") from None
        except ValueError as exc:
            raise Invalid(f"manifest is not valid JSON: {str(exc)[:200]}") from None
    else:
        try:
            value = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - strict safe loader
        except RecursionError:
            raise Invalid(f"manifest nested deeper than {MAX_DEPTH} levels") from None
        except yaml.YAMLError as exc:
            raise Invalid(f"manifest is not valid YAML: {str(exc)[:300]}") from None
    if not isinstance(value, dict):
        raise Invalid("manifest must be an object")
    _check_json_shaped(value)
    return value


# ---------------------------------------------------------------- validation


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _path(parts: Any) -> str:
    path = ""
    for part in parts:
        path = _join(path, part)
    return path


def _where(path: str) -> str:
    return path or "manifest"


def _describe(subschema: Any, fallback: str) -> str:
    if isinstance(subschema, dict) and subschema.get("description"):
        return str(subschema["description"])
    return fallback


def _variant_index(instance: dict[str, Any], titles: list[str]) -> int:
    """Which oneOf alternative the author meant, from the discriminating fields."""
    if titles[0] == "blueprint":
        if "packages" in instance:
            return 0
        return 1 if "source" in instance else 2
    return 1 if "source" in instance else 0


def _variant_errors(error: ValidationError, base: str) -> Iterator[str]:
    """The violations of the variant the author evidently meant (not of every variant)."""
    variants = [_resolve(alt) for alt in error.validator_value]
    titles = [v["title"] for v in variants]
    instance = error.instance if isinstance(error.instance, dict) else {}
    if titles[0] == "blueprint" and not {"packages", "native", "source"} & set(instance):
        yield (
            f"{_where(base)}: needs packages (a blueprint) or native (an artifact, "
            "with source for a remote one)"
        )
        return
    chosen = variants[_variant_index(instance, titles)]
    for field in chosen.get("required", []):
        if field not in instance:
            yield f"{_join(base, field)}: is required in a {chosen['title']}"
    for field, allowed in chosen.get("properties", {}).items():
        if allowed is False and field in instance:
            yield f"{_join(base, field)}: is not allowed in a {chosen['title']}"


def _resolve(subschema: dict[str, Any]) -> dict[str, Any]:
    ref = subschema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        return schema()["$defs"][ref.split("/")[-1]]
    return subschema


def _messages(error: ValidationError) -> Iterator[str]:  # noqa: C901 - one branch per keyword
    path = _path(error.absolute_path)
    kind = error.validator
    if kind == "oneOf":
        yield from _variant_errors(error, path)
    elif kind == "additionalProperties" and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        for key in error.instance:
            if key not in known:
                yield f"{_join(path, key)}: unknown field"
    elif kind == "propertyNames" or (kind == "pattern" and _is_key_error(error)):
        wanted = _describe(error.schema, "valid")
        yield f"{_join(path, error.instance)}: invalid key, must be {wanted}"
    elif kind == "required":
        for field in error.validator_value:
            if isinstance(error.instance, dict) and field not in error.instance:
                yield f"{_join(path, field)}: is required"
    elif kind == "pattern":
        wanted = _describe(error.schema, f"matching {error.validator_value}")
        yield f"{_where(path)}: {_short(error.instance)} is not {wanted}"
    elif kind == "enum":
        allowed = ", ".join(str(v) for v in error.validator_value)
        yield f"{_where(path)}: {_short(error.instance)} is not one of {allowed}"
    elif kind == "type":
        wanted = _article(error.validator_value)
        yield f"{_where(path)}: must be {wanted}, got {_kind(error.instance)}"
    elif kind in ("minLength", "maxLength"):
        yield (
            f"{_where(path)}: must be 1 to 256 characters"
            if path in ("name",)
            else (f"{_where(path)}: {error.message}")
        )
    else:
        yield f"{_where(path)}: {error.message}"


def _is_key_error(error: ValidationError) -> bool:
    return bool(error.schema_path) and "propertyNames" in error.schema_path


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _article(type_name: Any) -> str:
    names = {"object": "an object", "array": "an array", "string": "a string"}
    names |= {"boolean": "a boolean", "integer": "an integer", "number": "a number"}
    return names.get(str(type_name), str(type_name))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def schema_violations(manifest: Any) -> list[str]:
    """Every JSON Schema violation, each as `path: message`."""
    found: list[str] = []
    for error in _validator().iter_errors(manifest):
        found.extend(_messages(error))
    return found


def child_id(child: dict[str, Any]) -> str:
    """A child's local alias: its `id`, else derived from the last part of its name."""
    if isinstance(child.get("id"), str):
        return child["id"]
    name = str(child.get("name", "child")).rsplit("/", 1)[-1]
    alias = re.sub(r"[^A-Za-z0-9_]", "_", name) or "child"
    return f"_{alias}" if alias[0].isdigit() else alias


def child_props(child: dict[str, Any]) -> dict[str, Any]:
    """A child's props (`inputs` is an alias)."""
    value = child.get("props", child.get("inputs"))
    return value if isinstance(value, dict) else {}


def _terms(value: Any) -> list[str]:
    """The `??`-separated terms of a prop value (a non-string is one literal term)."""
    if not isinstance(value, str):
        return []
    return [term.strip() for term in value.split("??")]


def _reference_violations(manifest: dict[str, Any]) -> Iterator[str]:
    inputs = manifest.get("inputs") if isinstance(manifest.get("inputs"), dict) else {}
    children = [c for c in manifest.get("packages") or [] if isinstance(c, dict)]
    ids = [child_id(c) for c in children]
    for i, child in enumerate(children):
        base = f"packages[{i}]"
        if ids.count(ids[i]) > 1 and ids.index(ids[i]) != i:
            yield f"{base}.id: duplicate id {ids[i]!r} (also packages[{ids.index(ids[i])}])"
        if "props" in child and "inputs" in child:
            yield f"{base}: give props or inputs (its alias), not both"
        field = "props" if "props" in child else "inputs"
        for key, value in child_props(child).items():
            for term in _terms(value):
                yield from _term_violations(f"{base}.{field}.{key}", term, inputs, ids, ids[i])
    if manifest.get("packages") is not None:
        outputs = manifest.get("outputs") if isinstance(manifest.get("outputs"), dict) else {}
        for key, output in outputs.items():
            value = output.get("value") if isinstance(output, dict) else None
            for term in _terms(value):
                where = f"outputs.{key}.value"
                if not _DATA_REF.match(term) and not _INPUT_REF.match(term):
                    yield f"{where}: {term!r} is not a data.<package>.<output> reference"
                yield from _term_violations(where, term, inputs, ids, None)
    yield from _cycle_violations(children, ids)


def _term_violations(
    where: str, term: str, inputs: dict[str, Any], ids: list[str], own_id: str | None
) -> Iterator[str]:
    if match := _INPUT_REF.match(term):
        if match.group(1) not in inputs:
            yield f"{where}: {term!r} refers to an input that is not declared"
    elif match := _DATA_REF.match(term):
        if match.group(1) == own_id:
            yield f"{where}: {term!r} refers to its own package"
        elif match.group(1) not in ids:
            yield f"{where}: {term!r} refers to a package id that is not in packages"


def dependencies(children: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Child id -> ids of the siblings whose outputs its props reference."""
    ids = [child_id(c) for c in children]
    found: dict[str, set[str]] = {}
    for child, own in zip(children, ids, strict=True):
        refs = set()
        for value in child_props(child).values():
            for term in _terms(value):
                if (m := _DATA_REF.match(term)) and m.group(1) in ids and m.group(1) != own:
                    refs.add(m.group(1))
        found[own] = refs
    return found


def _cycle_violations(children: list[dict[str, Any]], ids: list[str]) -> Iterator[str]:
    graph = dependencies(children)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*trail, node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*trail, node])):
                return cycle
        state[node] = 2
        return None

    for node in graph:
        if node not in state and (cycle := visit(node, [])):
            yield f"packages: dependency cycle {' -> '.join(cycle)}"
            return


def _input_violations(manifest: dict[str, Any]) -> Iterator[str]:
    inputs = manifest.get("inputs") if isinstance(manifest.get("inputs"), dict) else {}
    for name, spec in inputs.items():
        if not isinstance(spec, dict) or "default" not in spec:
            continue
        default = spec["default"]
        check = _TYPE_CHECKS.get(spec.get("type", "any"))
        if check is not None and default is not None and not check(default):
            yield f"inputs.{name}.default: does not match type {spec['type']}"
        allowed = spec.get("allowed_values")
        if isinstance(allowed, list) and default is not None and default not in allowed:
            yield f"inputs.{name}.default: is not one of its allowed_values"


def violations(manifest: Any) -> list[str]:
    """Every violation of spec 2.1, schema and cross-references, each as `path: message`."""
    found = schema_violations(manifest)
    if isinstance(manifest, dict):
        found.extend(_reference_violations(manifest))
        found.extend(_input_violations(manifest))
    return sorted(dict.fromkeys(found))


def validate(manifest: Any) -> dict[str, Any]:
    """The manifest itself, or Invalid with one `details` entry per violation."""
    problems = violations(manifest)
    if problems:
        summary = "; ".join(problems[:5]) + (
            f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        details = [
            {"path": p.split(": ", 1)[0], "statusCode": 400, "error": "BAD_REQUEST", "message": p}
            for p in problems
        ]
        raise Invalid(f"invalid manifest: {summary}", details)
    return manifest


def parse_manifest(content: bytes, filename: str | None = None) -> dict[str, Any]:
    """Load and validate a manifest file."""
    return validate(load_manifest(content, filename))


# ---------------------------------------------------------------- derived facts


def package_type(manifest: dict[str, Any]) -> str:
    """`blueprint` when the manifest has packages, else `artifact`."""
    return "blueprint" if "packages" in manifest else "artifact"


def expression(value: Any, inputs: dict[str, Any]) -> str:
    """A child prop value as a config expression: `Props.x`, `Data.id.out`, quoted literals."""
    terms = _terms(value) if isinstance(value, str) and _is_reference_chain(value) else None
    if terms is None:
        return json.dumps(value)
    parts = []
    for term in terms:
        if match := _INPUT_REF.match(term):
            parts.append(f"Props.{match.group(1)}")
        elif match := _DATA_REF.match(term):
            parts.append(f"Data.{match.group(1)}.{match.group(2)}")
        else:
            parts.append(json.dumps(term))
    last = _INPUT_REF.match(terms[-1])
    if last:
        spec = inputs.get(last.group(1))
        if isinstance(spec, dict) and spec.get("default") is not None:
            parts.append(json.dumps(spec["default"]))
    return " ?? ".join(parts)


def _is_reference_chain(value: str) -> bool:
    return any(_INPUT_REF.match(t) or _DATA_REF.match(t) for t in _terms(value))


def package_config(manifest: dict[str, Any], git_remote_url: str | None) -> dict[str, Any]:
    """The package config record of spec 2.2, derived from a valid manifest."""
    inputs = manifest.get("inputs") or {}
    native = manifest.get("native") or {}
    children = manifest.get("packages") or []
    return {
        "name": manifest["name"],
        "description": manifest.get("description"),
        "version": manifest["version"],
        "tags": list(manifest.get("tags") or []),
        "manifest_version": MANIFEST_VERSION,
        "state": "managed",
        "repository": {"type": "git" if git_remote_url else None, "url": git_remote_url},
        "props": {
            name: {
                "type": spec.get("type", "any"),
                "description": spec.get("description"),
                "default": spec.get("default"),
                "value": spec.get("default"),
                "allowed_values": spec.get("allowed_values"),
            }
            for name, spec in inputs.items()
        },
        "computed": {},
        "outs": {
            name: {"type": "any", "description": spec.get("description"), "value": spec["value"]}
            for name, spec in (manifest.get("outputs") or {}).items()
        },
        "packages": [
            {
                "id": child_id(child),
                "name": child["name"],
                "version": child.get("version"),
                "props": {
                    key: {"value": expression(value, inputs)}
                    for key, value in child_props(child).items()
                },
                "path": (child.get("native") or {}).get("path"),
                "kind": "source" if "source" in child else "registry",
            }
            for child in children
        ],
        "native": {
            "type": native.get("type"),
            "version": native.get("version"),
            "path": native.get("path"),
            "state_path": native.get("state_path"),
        },
    }
