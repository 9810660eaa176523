"""Terraform states (`terraform show -json`, or raw terraform.tfstate v4) to ParsedState."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from appliance.domain.plans.common import (
    check_format_version,
    decode_json,
    json_type,
    list_field,
    value_type,
)
from appliance.errors import Invalid


@dataclass(frozen=True)
class ParsedState:
    """stateMetadata counts and the outputs of a state."""

    managed: int
    unmanaged: int
    outputs: dict[str, dict[str, Any]]

    @property
    def metadata(self) -> dict[str, int]:
        """The stateMetadata block."""
        return {"managed": self.managed, "unmanaged": self.unmanaged}


def parse_state(document: Any) -> ParsedState:
    """A state: `terraform show -json` output, or a raw terraform.tfstate (version 4)."""
    if isinstance(document, bytes | str):
        document = decode_json(document, "state")
    if not isinstance(document, dict):
        raise Invalid(f"state must be a JSON object, got {json_type(document)}")
    if "version" in document and "format_version" not in document:
        return _parse_raw_state(document)
    check_format_version(document, "state")
    values = document.get("values")
    values = {} if values is None else values
    if not isinstance(values, dict):
        raise Invalid("state values must be an object")
    managed = unmanaged = 0
    for resource in _module_resources(values.get("root_module"), "values.root_module"):
        if resource.get("mode", "managed") == "data":
            unmanaged += 1
        else:
            managed += 1
    return ParsedState(managed, unmanaged, _state_outputs(values.get("outputs")))


def _module_resources(module: Any, where: str) -> Iterable[dict[str, Any]]:
    if module is None:
        return
    if not isinstance(module, dict):
        raise Invalid(f"state {where} must be an object")
    for index, resource in enumerate(list_field(module, "resources", f"state {where}")):
        if not isinstance(resource, dict):
            raise Invalid(f"state {where}.resources[{index}] must be an object")
        yield resource
    for index, child in enumerate(list_field(module, "child_modules", f"state {where}")):
        yield from _module_resources(child, f"{where}.child_modules[{index}]")


def _parse_raw_state(document: Mapping[str, Any]) -> ParsedState:
    if document.get("version") != 4:
        raise Invalid(f"unsupported state version {document.get('version')!r}: supported is 4")
    managed = unmanaged = 0
    for index, resource in enumerate(list_field(document, "resources", "state")):
        if not isinstance(resource, dict):
            raise Invalid(f"state resources[{index}] must be an object")
        instances = len(list_field(resource, "instances", f"state resources[{index}]"))
        if resource.get("mode", "managed") == "data":
            unmanaged += instances
        else:
            managed += instances
    return ParsedState(managed, unmanaged, _state_outputs(document.get("outputs")))


def _state_outputs(raw: Any) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise Invalid(f"state outputs must be an object, got {json_type(raw)}")
    outputs = {}
    for name, output in raw.items():
        if not isinstance(output, dict) or "value" not in output:
            raise Invalid(f"state output {name} must be an object with a value")
        value = output["value"]
        outputs[name] = {
            "value": value,
            "type": output_type(output.get("type"), value),
            "is_sensitive": output.get("sensitive") is True,
        }
    return outputs


_CTY_TYPES = {"list": "list", "set": "list", "tuple": "list", "map": "map", "object": "map"}
_SIMPLE_TYPES = {"string": "string", "number": "number", "bool": "bool"}


def output_type(cty_type: Any, value: Any) -> str:
    """An output's type as an input type name (string, number, bool, list, map, any)."""
    if isinstance(cty_type, str):
        return _SIMPLE_TYPES.get(cty_type, "any")
    if isinstance(cty_type, list) and cty_type and isinstance(cty_type[0], str):
        return _CTY_TYPES.get(cty_type[0], "any")
    return value_type(value)
