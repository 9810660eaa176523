"""What the plan and state parsers share: counts, JSON checks, sensitive and unknown values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from appliance.errors import Invalid

# Plan entry actions. The counts use the first four; a replace adds one and destroys one.
UNCHANGED, ADD, CHANGE, DESTROY, REPLACE = "unchanged", "add", "change", "destroy", "replace"
ENTRY_ACTIONS = (UNCHANGED, ADD, CHANGE, DESTROY, REPLACE)
COUNT_KEYS = (UNCHANGED, ADD, CHANGE, DESTROY)

# Accepted `format_version` majors: 0.x is the pre-1.0 series of the same format
# (Terraform 0.12 to 1.0 write 0.1/0.2), 1.x the current one.
SUPPORTED_FORMAT_MAJORS = ("0", "1")

REDACTED = "(sensitive value)"
KNOWN_AFTER_APPLY = "(known after apply)"


def empty_counts() -> dict[str, int]:
    """`{unchanged, add, change, destroy}` all zero (a metadata block of spec 2.4)."""
    return dict.fromkeys(COUNT_KEYS, 0)


@dataclass(frozen=True)
class ParsedPlan:
    """A parsed plan: entries keyed by address and the metadata counts derived from them."""

    resources: dict[str, dict[str, Any]]
    counts: dict[str, int]  # plannedMetadata
    drift: dict[str, int] = field(default_factory=empty_counts)  # driftMetadata
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_counts: dict[str, int] = field(default_factory=empty_counts)  # outputMetadata

    @property
    def has_changes(self) -> bool:
        """Whether applying would change anything (resources or outputs)."""
        return any(self.counts[key] for key in (ADD, CHANGE, DESTROY)) or any(
            self.output_counts[key] for key in (ADD, CHANGE, DESTROY)
        )

    def parsed(self) -> dict[str, Any]:
        """The deployment record's `parsed` object (spec 2.4) for this plan."""
        return {
            "type": "plan",
            "data": {
                "plannedMetadata": dict(self.counts),
                "driftMetadata": dict(self.drift),
                "outputMetadata": dict(self.output_counts),
                "outputs": self.outputs,
                "resources": self.resources,
            },
        }


def decode_json(raw: bytes | str, what: str) -> Any:
    """Decode an uploaded JSON document; anything else is Invalid naming `what`."""
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, ValueError) as error:
        raise Invalid(f"{what} is not valid JSON: {error}") from None


def check_format_version(document: Mapping[str, Any], what: str) -> None:
    """Refuse a document without a supported `format_version` major."""
    version = document.get("format_version")
    if not isinstance(version, str) or not version:
        raise Invalid(f"{what} has no format_version: is it `terraform show -json` output?")
    major = version.split(".", 1)[0]
    if major not in SUPPORTED_FORMAT_MAJORS:
        raise Invalid(
            f"unsupported {what} format_version {version!r}: "
            f"supported are {', '.join(m + '.x' for m in SUPPORTED_FORMAT_MAJORS)}"
        )


def list_field(document: Mapping[str, Any], key: str, what: str) -> list[Any]:
    """`document[key]` as a list (absent or null is empty); anything else is Invalid."""
    value = document.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"{what} {key} must be a list, got {json_type(value)}")
    return value


# --- sensitive and unknown values --------------------------------------------------------


def redact(value: Any, sensitive: Any) -> Any:
    """`value` with every part marked in `sensitive` (Terraform's *_sensitive) replaced."""
    if sensitive is True:
        return REDACTED if value is not None else None
    if isinstance(sensitive, dict) and isinstance(value, dict):
        return {key: redact(item, sensitive.get(key)) for key, item in value.items()}
    if isinstance(sensitive, list) and isinstance(value, list):
        marks = sensitive + [None] * (len(value) - len(sensitive))
        return [redact(item, mark) for item, mark in zip(value, marks, strict=False)]
    return value


def mark_unknown(value: Any, unknown: Any) -> Any:
    """`value` with every part in `unknown` (after_unknown) shown as known after apply."""
    if unknown is True:
        return KNOWN_AFTER_APPLY
    if isinstance(unknown, dict) and unknown:
        merged = dict(value) if isinstance(value, dict) else {}
        for key, mark in unknown.items():
            if mark is True or (mark and key in merged):
                merged[key] = mark_unknown(merged.get(key), mark)
        return merged
    if isinstance(unknown, list) and isinstance(value, list):
        marks = unknown + [None] * (len(value) - len(unknown))
        return [mark_unknown(item, mark) for item, mark in zip(value, marks, strict=False)]
    return value


def value_type(value: Any) -> str:
    """The input type name of a JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return "any"


_JSON_NAMES = {"map": "an object", "list": "a list", "string": "a string", "bool": "a boolean"}


def json_type(value: Any) -> str:
    """How an error message names the JSON type of `value`."""
    if value is None:
        return "null"
    return _JSON_NAMES.get(value_type(value), "a number")


def count(counts: dict[str, int], action: str) -> None:
    """Add one entry's action to a metadata block (a replace adds one and destroys one)."""
    if action == REPLACE:
        counts[ADD] += 1
        counts[DESTROY] += 1
    else:
        counts[action] += 1
