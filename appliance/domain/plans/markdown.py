"""Markdown rendering of parsed plans (DESIGN.md 7.4, POST /deployments/plans)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from appliance.domain.plans.common import ADD, CHANGE, DESTROY, UNCHANGED, ParsedPlan


@dataclass(frozen=True)
class PlanSection:
    """One deployment in the Markdown rendering: its heading and its parsed plan."""

    title: str
    plan: ParsedPlan | None


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_plans_markdown(sections: Sequence[PlanSection], title: str = "Deployment plans") -> str:
    """Markdown: per deployment a heading, the add/change/destroy counts, and a table."""
    lines = [f"# {_cell(title)}", ""]
    for section in sections:
        lines += [f"## {_cell(section.title)}", ""]
        if section.plan is None:
            lines += ["No plan has been reported yet.", ""]
            continue
        counts = section.plan.counts
        lines += [
            f"**{counts[ADD]}** to add, **{counts[CHANGE]}** to change, "
            f"**{counts[DESTROY]}** to destroy ({counts[UNCHANGED]} unchanged).",
            "",
        ]
        if not section.plan.resources:
            lines += ["No resources in this plan.", ""]
            continue
        lines += ["| Resource | Action |", "|---|---|"]
        for address, entry in section.plan.resources.items():
            lines.append(f"| {_cell(address)} | {entry['action']} |")
        lines.append("")
    return "\n".join(lines)
