"""Terraform plans and states (`terraform show -json`) to the specification's records.

Pure functions over already-decoded JSON (or raw bytes, decoded here): plan entries
keyed by resource address (spec 2.4), the metadata counts, state counts and outputs,
and the Markdown rendering of DESIGN.md 7.4. Unknown keys are ignored throughout.
"""

from appliance.domain.plans.common import (
    ADD,
    CHANGE,
    COUNT_KEYS,
    DESTROY,
    ENTRY_ACTIONS,
    KNOWN_AFTER_APPLY,
    REDACTED,
    REPLACE,
    SUPPORTED_FORMAT_MAJORS,
    UNCHANGED,
    ParsedPlan,
    decode_json,
    empty_counts,
    mark_unknown,
    redact,
    value_type,
)
from appliance.domain.plans.markdown import PlanSection, render_plans_markdown
from appliance.domain.plans.state import ParsedState, output_type, parse_state
from appliance.domain.plans.terraform_plan import parse_plan, parse_plan_entries

__all__ = [
    "ADD",
    "CHANGE",
    "COUNT_KEYS",
    "DESTROY",
    "ENTRY_ACTIONS",
    "KNOWN_AFTER_APPLY",
    "REDACTED",
    "REPLACE",
    "SUPPORTED_FORMAT_MAJORS",
    "UNCHANGED",
    "ParsedPlan",
    "ParsedState",
    "PlanSection",
    "decode_json",
    "empty_counts",
    "mark_unknown",
    "output_type",
    "parse_plan",
    "parse_plan_entries",
    "parse_state",
    "redact",
    "render_plans_markdown",
    "value_type",
]
