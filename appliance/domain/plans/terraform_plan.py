"""Terraform JSON plans (`terraform show -json`) and plan entry lists to ParsedPlan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from appliance.domain.plans.common import (
    ADD,
    CHANGE,
    DESTROY,
    ENTRY_ACTIONS,
    REPLACE,
    UNCHANGED,
    ParsedPlan,
    check_format_version,
    count,
    decode_json,
    empty_counts,
    json_type,
    list_field,
    mark_unknown,
    redact,
)
from appliance.errors import Invalid

# Terraform's action lists (change.actions) to plan entry actions; "read" is skipped.
_TERRAFORM_ACTIONS: dict[tuple[str, ...], str] = {
    ("no-op",): UNCHANGED,
    ("create",): ADD,
    ("update",): CHANGE,
    ("delete",): DESTROY,
    ("delete", "create"): REPLACE,
    ("create", "delete"): REPLACE,
}
_READ = ("read",)


def parse_plan(document: Any) -> ParsedPlan:
    """A Terraform JSON plan, or a list of plan entries (DESIGN.md 7.3 item 4), parsed."""
    if isinstance(document, bytes | str):
        document = decode_json(document, "plan")
    if isinstance(document, list):
        return parse_plan_entries(document)
    if not isinstance(document, dict):
        raise Invalid(
            f"plan must be a JSON object (terraform show -json) or a list of plan entries, "
            f"got {json_type(document)}"
        )
    check_format_version(document, "plan")
    if "values" in document and not {"planned_values", "resource_changes"} & document.keys():
        raise Invalid("plan is a state (values, no planned_values): show a saved plan instead")
    changes = list_field(document, "resource_changes", "plan")
    drift_changes = list_field(document, "resource_drift", "plan")
    drift_after = {}
    drift_counts = empty_counts()
    for index, change in enumerate(drift_changes):
        parsed = _resource_change(change, index, "resource_drift")
        if parsed is not None:
            address, entry, raw = parsed
            count(drift_counts, entry["action"])
            drift_after[address] = redact(raw.get("after"), raw.get("after_sensitive"))
    resources: dict[str, dict[str, Any]] = {}
    counts = empty_counts()
    for index, change in enumerate(changes):
        parsed = _resource_change(change, index, "resource_changes")
        if parsed is None:
            continue
        address, entry, _raw = parsed
        if address in drift_after:
            entry["actual"] = drift_after[address]
        resources[address] = entry
        count(counts, entry["action"])
    outputs, output_counts = _output_changes(
        document.get("output_changes"), _sensitive_planned_outputs(document)
    )
    return ParsedPlan(resources, counts, drift_counts, outputs, output_counts)


def _actions(change: Any, where: str) -> tuple[str, ...]:
    actions = change.get("actions") if isinstance(change, dict) else None
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise Invalid(f"plan {where}: change.actions must be a list of strings")
    return tuple(actions)


def _resource_change(
    change: Any, index: int, key: str
) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """(address, plan entry, raw change) for one resource change; None when skipped."""
    where = f"{key}[{index}]"
    if not isinstance(change, dict):
        raise Invalid(f"plan {where} must be an object")
    address = change.get("address")
    if not isinstance(address, str) or not address:
        raise Invalid(f"plan {where} has no address")
    raw = change.get("change")
    actions = _actions(raw, f"{where} ({address})")
    if change.get("mode") == "data" or actions == _READ:
        return None
    action = _TERRAFORM_ACTIONS.get(actions)
    if action is None:
        raise Invalid(f"plan {where} ({address}): unsupported actions {list(actions)}")
    before = redact(raw.get("before"), raw.get("before_sensitive"))
    after = redact(raw.get("after"), raw.get("after_sensitive"))
    removed = action == DESTROY
    entry = {
        "type": change.get("type") if isinstance(change.get("type"), str) else None,
        "action": action,
        "state": before,
        "desired": None if removed else after,
        "planned": None if removed else mark_unknown(after, raw.get("after_unknown")),
        "actual": before,
        "force_replace": action == REPLACE,
    }
    return address, entry, raw


def _sensitive_planned_outputs(document: Mapping[str, Any]) -> set[str]:
    """Outputs marked sensitive in planned_values (Terraform 0.12 marks them only there)."""
    planned = document.get("planned_values")
    outputs = planned.get("outputs") if isinstance(planned, dict) else None
    if not isinstance(outputs, dict):
        return set()
    return {
        name
        for name, output in outputs.items()
        if isinstance(output, dict) and output.get("sensitive") is True
    }


def _output_changes(
    raw: Any, sensitive_names: set[str]
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    counts = empty_counts()
    if raw is None:
        return {}, counts
    if not isinstance(raw, dict):
        raise Invalid(f"plan output_changes must be an object, got {json_type(raw)}")
    outputs: dict[str, dict[str, Any]] = {}
    for name, change in raw.items():
        actions = _actions(change, f"output_changes.{name}")
        action = _TERRAFORM_ACTIONS.get(actions)
        if action is None:
            raise Invalid(f"plan output_changes.{name}: unsupported actions {list(actions)}")
        sensitive = name in sensitive_names or change.get("after_sensitive") is True
        value = None if action == DESTROY else redact(change.get("after"), sensitive)
        outputs[name] = {
            "action": action,
            "value": mark_unknown(value, change.get("after_unknown")),
            "is_sensitive": sensitive,
        }
        count(counts, action)
    return outputs, counts


_ENTRY_VALUE_KEYS = ("state", "desired", "planned", "actual")


def parse_plan_entries(entries: Sequence[Any]) -> ParsedPlan:
    """A list of `{address, type, action, state?, desired?, planned?, actual?}` entries."""
    resources: dict[str, dict[str, Any]] = {}
    counts = empty_counts()
    for index, item in enumerate(entries):
        if not isinstance(item, dict):
            raise Invalid(f"plan entry [{index}] must be an object, got {json_type(item)}")
        address = item.get("address")
        if not isinstance(address, str) or not address:
            raise Invalid(f"plan entry [{index}] has no address")
        if address in resources:
            raise Invalid(f"plan entry [{index}]: duplicate address {address}")
        action = item.get("action")
        if action not in ENTRY_ACTIONS:
            raise Invalid(
                f"plan entry [{index}] ({address}): action must be one of "
                f"{', '.join(ENTRY_ACTIONS)}, got {action!r}"
            )
        kind = item.get("type")
        if kind is not None and not isinstance(kind, str):
            raise Invalid(f"plan entry [{index}] ({address}): type must be a string")
        entry: dict[str, Any] = {"type": kind, "action": action}
        entry.update({key: item.get(key) for key in _ENTRY_VALUE_KEYS})
        entry["force_replace"] = action == REPLACE or item.get("force_replace") is True
        resources[address] = entry
        count(counts, action)
    return ParsedPlan(resources, counts)
