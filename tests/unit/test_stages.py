"""The stage machine of DESIGN.md 7.2: every row, every refused pair, aggregation, commands."""

from __future__ import annotations

import itertools

import pytest

from appliance.domain import stages
from appliance.domain.stages import Command, Stage, aggregate_stage, check_move, command_for
from appliance.errors import Conflict, Invalid

NAMES = [
    "pending",
    "planning",
    "no_change",
    "planned",
    "plan_approved",
    "installing",
    "canceled",
    "completed",
    "error",
]

# Written out from DESIGN.md 7.2 (and 7.3 item 3 for the planning lease expiry),
# independently of the module's table, so a change to the table shows up here.
EXPECTED_MOVES = {
    ("pending", "planning"),
    ("planning", "planned"),
    ("planning", "no_change"),
    ("planning", "pending"),
    ("planned", "plan_approved"),
    ("plan_approved", "installing"),
    ("installing", "completed"),
    ("pending", "error"),
    ("planning", "error"),
    ("planned", "error"),
    ("plan_approved", "error"),
    ("installing", "error"),
    ("pending", "canceled"),
    ("planning", "canceled"),
    ("planned", "canceled"),
    ("plan_approved", "canceled"),
}


def test_the_nine_stage_names_of_the_specification() -> None:
    assert [str(stage) for stage in stages.STAGES] == NAMES
    assert {str(s) for s in stages.FINAL_STAGES} == {"completed", "no_change", "canceled", "error"}


def test_the_table_holds_exactly_the_designed_moves() -> None:
    table = {(str(r.source), str(r.target)) for r in stages.TRANSITIONS if r.source is not None}
    assert table == EXPECTED_MOVES
    assert all(row.cause for row in stages.TRANSITIONS)


@pytest.mark.parametrize("row", stages.TRANSITIONS, ids=lambda r: f"{r.source}->{r.target}")
def test_every_row_of_the_table_is_allowed(row: stages.Transition) -> None:
    check_move(row.source, row.target)
    assert stages.find_transition(row.source, row.target) is row


@pytest.mark.parametrize(("current", "target"), list(itertools.product(NAMES, NAMES)))
def test_all_81_pairs(current: str, target: str) -> None:
    if (current, target) in EXPECTED_MOVES:
        check_move(current, target)
        return
    with pytest.raises(Conflict) as caught:
        check_move(current, target)
    assert caught.value.message == f"invalid stage transition: {current} -> {target}"


def test_a_new_record_starts_pending_only() -> None:
    check_move(None, "pending")
    for target in NAMES[1:]:
        with pytest.raises(Conflict, match=rf"invalid stage transition: \(new\) -> {target}"):
            check_move(None, target)


@pytest.mark.parametrize("command", ["plan", "validate", "plan_uninstall", "drift_detection"])
def test_plan_only_commands_end_at_planned(command: str) -> None:
    assert stages.is_final("planned", command)
    for target in NAMES:
        with pytest.raises(Conflict, match=f"planned -> {target}"):
            check_move("planned", target, command)
    # The rest of their path is the ordinary one.
    check_move("pending", "planning", command)
    check_move("planning", "planned", command)
    check_move("planning", "no_change", command)
    assert stages.allowed_targets("planned", command) == ()


@pytest.mark.parametrize("command", ["install", "force_install", "uninstall"])
def test_applying_commands_move_on_from_planned(command: str) -> None:
    assert not stages.is_final("planned", command)
    check_move("planned", "plan_approved", command)


def test_allowed_targets_in_stage_order() -> None:
    assert stages.allowed_targets("planning") == (
        Stage.PENDING,
        Stage.NO_CHANGE,
        Stage.PLANNED,
        Stage.CANCELED,
        Stage.ERROR,
    )
    assert stages.allowed_targets(None) == (Stage.PENDING,)
    for final in ("completed", "no_change", "canceled", "error"):
        assert stages.allowed_targets(final) == ()


def test_unknown_stage_or_command_is_invalid() -> None:
    with pytest.raises(Invalid, match="unknown stage: 'done'"):
        check_move("pending", "done")
    with pytest.raises(Invalid, match="unknown stage"):
        check_move("started", "pending")
    with pytest.raises(Invalid, match="unknown command: 'apply'"):
        check_move("planned", "plan_approved", "apply")


# --- aggregation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("children", "expected"),
    [
        (["completed"], "completed"),
        (["pending", "completed"], "pending"),
        (["planning", "planned", "installing"], "planning"),
        (["planned", "no_change"], "planned"),
        (["plan_approved", "installing"], "plan_approved"),
        (["installing", "completed", "no_change"], "installing"),
        (["completed", "no_change"], "completed"),
        (["no_change", "no_change"], "no_change"),
        (["completed", "error", "pending"], "error"),
        (["canceled", "error"], "error"),
        (["canceled", "completed", "planning"], "canceled"),
        (["canceled"], "canceled"),
    ],
)
def test_aggregate_stage(children: list[str], expected: str) -> None:
    assert aggregate_stage(children) == expected
    assert aggregate_stage(reversed(children)) == expected


def test_advancement_order_is_explicit_and_covers_every_other_stage() -> None:
    assert [str(s) for s in stages.ADVANCEMENT] == [
        "pending",
        "planning",
        "planned",
        "plan_approved",
        "installing",
        "completed",
        "no_change",
    ]
    assert set(stages.ADVANCEMENT) | {Stage.ERROR, Stage.CANCELED} == set(Stage)


def test_aggregating_nothing_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no children"):
        aggregate_stage([])


# --- commands ----------------------------------------------------------------------------


def test_command_values() -> None:
    assert [str(c) for c in Command] == [
        "install",
        "force_install",
        "plan",
        "validate",
        "uninstall",
        "plan_uninstall",
        "drift_detection",
    ]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({}, "install"),
        ({"force": True}, "force_install"),
        ({"plan_only": True}, "plan"),
        ({"validate_only": True}, "validate"),
        ({"drift_detection": True}, "drift_detection"),
        ({"uninstall": True}, "uninstall"),
        ({"uninstall": True, "plan_only": True}, "plan_uninstall"),
        ({"force": False, "plan_only": False, "uninstall": False}, "install"),
    ],
)
def test_command_for_flags(flags: dict[str, bool], expected: str) -> None:
    assert command_for(**flags) == expected


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"force": True, "plan_only": True}, "contradictory install flags: force and planOnly"),
        ({"force": True, "validate_only": True}, "force and validateOnly"),
        ({"force": True, "drift_detection": True}, "force and driftDetection"),
        ({"plan_only": True, "validate_only": True}, "planOnly and validateOnly"),
        ({"plan_only": True, "drift_detection": True}, "planOnly and driftDetection"),
        ({"validate_only": True, "drift_detection": True}, "validateOnly and driftDetection"),
        (
            {"force": True, "plan_only": True, "validate_only": True},
            "force and planOnly and validateOnly",
        ),
        ({"uninstall": True, "force": True}, "uninstall cannot be combined with force"),
        ({"uninstall": True, "validate_only": True}, "with validateOnly"),
        (
            {"uninstall": True, "plan_only": True, "drift_detection": True},
            "uninstall cannot be combined with driftDetection",
        ),
    ],
)
def test_contradictory_flags_are_invalid(flags: dict[str, bool], message: str) -> None:
    with pytest.raises(Invalid) as caught:
        command_for(**flags)
    assert message in caught.value.message


@pytest.mark.parametrize(
    ("command", "plan_only", "force", "uninstall"),
    [
        ("install", False, False, False),
        ("force_install", False, True, False),
        ("plan", True, False, False),
        ("validate", True, False, False),
        ("uninstall", False, False, True),
        ("plan_uninstall", True, False, True),
        ("drift_detection", True, False, False),
    ],
)
def test_command_properties(command: str, plan_only: bool, force: bool, uninstall: bool) -> None:
    assert stages.is_plan_only(command) is plan_only
    assert stages.auto_approves(command) is force
    assert stages.is_uninstall(command) is uninstall
