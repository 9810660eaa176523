"""The stage machine of deployments and tasks (DESIGN.md 7.2), as one table.

Every legal move is a row of `TRANSITIONS`; nothing else in the code decides
whether a move is allowed. `check_move` is the only gate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from appliance.errors import Conflict, Invalid


class Stage(StrEnum):
    """The specification's nine stage names (spec 3), shared by deployments and tasks."""

    PENDING = "pending"
    PLANNING = "planning"
    NO_CHANGE = "no_change"
    PLANNED = "planned"
    PLAN_APPROVED = "plan_approved"
    INSTALLING = "installing"
    CANCELED = "canceled"
    COMPLETED = "completed"
    ERROR = "error"


STAGES: tuple[Stage, ...] = tuple(Stage)

# Stages nothing moves out of, whatever the command.
FINAL_STAGES: frozenset[Stage] = frozenset(
    {Stage.COMPLETED, Stage.NO_CHANGE, Stage.CANCELED, Stage.ERROR}
)


@dataclass(frozen=True)
class Transition:
    """One legal move: `source` is None for a record being created."""

    source: Stage | None
    target: Stage
    cause: str


_NON_FINAL = (Stage.PENDING, Stage.PLANNING, Stage.PLANNED, Stage.PLAN_APPROVED, Stage.INSTALLING)
_CANCELABLE = (Stage.PENDING, Stage.PLANNING, Stage.PLANNED, Stage.PLAN_APPROVED)

TRANSITIONS: tuple[Transition, ...] = (
    Transition(
        None,
        Stage.PENDING,
        "install, uninstall, deployment/create, validate-only or drift detection",
    ),
    Transition(Stage.PENDING, Stage.PLANNING, "runtime claims the work"),
    Transition(Stage.PLANNING, Stage.PLANNED, "runtime reports a plan with changes"),
    Transition(Stage.PLANNING, Stage.NO_CHANGE, "runtime reports a plan without changes"),
    # DESIGN.md 7.3 item 3: an expired planning lease hands the work back (retry).
    Transition(Stage.PLANNING, Stage.PENDING, "runtime lease expired while planning"),
    Transition(Stage.PLANNED, Stage.PLAN_APPROVED, "approve, or at once when force is true"),
    Transition(Stage.PLAN_APPROVED, Stage.INSTALLING, "runtime claims the apply"),
    Transition(Stage.INSTALLING, Stage.COMPLETED, "runtime reports success"),
    *(
        Transition(
            stage,
            Stage.ERROR,
            "runtime reports a failure, or its lease expires while installing",
        )
        for stage in _NON_FINAL
    ),
    *(Transition(stage, Stage.CANCELED, "cancel") for stage in _CANCELABLE),
)

_ALLOWED: dict[tuple[Stage | None, Stage], Transition] = {
    (row.source, row.target): row for row in TRANSITIONS
}

# Order of advancement, least advanced first, used to aggregate children's stages.
# `no_change` is last: a child with nothing to do never holds the parent back, and a
# parent shows `no_change` only when every child has it (completed beats no_change).
ADVANCEMENT: tuple[Stage, ...] = (
    Stage.PENDING,
    Stage.PLANNING,
    Stage.PLANNED,
    Stage.PLAN_APPROVED,
    Stage.INSTALLING,
    Stage.COMPLETED,
    Stage.NO_CHANGE,
)
_RANK = {stage: rank for rank, stage in enumerate(ADVANCEMENT)}


class Command(StrEnum):
    """Task `command` values (DESIGN.md 7.2)."""

    INSTALL = "install"
    FORCE_INSTALL = "force_install"
    PLAN = "plan"
    VALIDATE = "validate"
    UNINSTALL = "uninstall"
    PLAN_UNINSTALL = "plan_uninstall"
    DRIFT_DETECTION = "drift_detection"


# Commands that never apply: they end at `planned` (kept as final) or `no_change`.
PLAN_ONLY_COMMANDS: frozenset[Command] = frozenset(
    {Command.PLAN, Command.VALIDATE, Command.PLAN_UNINSTALL, Command.DRIFT_DETECTION}
)


def _stage(value: str | Stage | None) -> Stage | None:
    if value is None or isinstance(value, Stage):
        return value
    try:
        return Stage(value)
    except ValueError:
        raise Invalid(
            f"unknown stage: {value!r} (one of {', '.join(STAGES)})",
        ) from None


def _command(value: str | Command) -> Command:
    try:
        return Command(value)
    except ValueError:
        raise Invalid(
            f"unknown command: {value!r} (one of {', '.join(Command)})",
        ) from None


def final_stages(command: str | Command | None = None) -> frozenset[Stage]:
    """The stages a record of `command` never leaves (`planned` too for plan-only ones)."""
    if command is not None and _command(command) in PLAN_ONLY_COMMANDS:
        return FINAL_STAGES | {Stage.PLANNED}
    return FINAL_STAGES


def is_final(stage: str | Stage, command: str | Command | None = None) -> bool:
    """Whether `stage` is final for a record of `command`."""
    return _stage(stage) in final_stages(command)


def find_transition(
    current: str | Stage | None, target: str | Stage, command: str | Command | None = None
) -> Transition | None:
    """The table row for the move, or None when the move is not allowed."""
    source, goal = _stage(current), _stage(target)
    if source is not None and source in final_stages(command):
        return None
    return _ALLOWED.get((source, goal))  # type: ignore[arg-type]


def check_move(
    current: str | Stage | None, target: str | Stage, command: str | Command | None = None
) -> None:
    """Refuse a move not in the table with a Conflict naming both stages.

    `current` None means the record is being created. With a plan-only `command`
    (plan, validate, plan_uninstall, drift_detection) `planned` is final.
    """
    if find_transition(current, target, command) is None:
        source = "(new)" if current is None else str(_stage(current))
        raise Conflict(f"invalid stage transition: {source} -> {_stage(target)}")


def allowed_targets(
    current: str | Stage | None, command: str | Command | None = None
) -> tuple[Stage, ...]:
    """Every stage `current` may move to, in the order of STAGES."""
    return tuple(stage for stage in STAGES if find_transition(current, stage, command))


def aggregate_stage(stages: Iterable[str | Stage]) -> Stage:
    """A task's (or blueprint activity's) stage from its children's.

    `error` if any child is in error, else `canceled` if any was canceled, else the
    least advanced stage among them (order: ADVANCEMENT).
    """
    children = [_stage(stage) for stage in stages]
    if not children:
        raise ValueError("cannot aggregate the stage of no children")
    if Stage.ERROR in children:
        return Stage.ERROR
    if Stage.CANCELED in children:
        return Stage.CANCELED
    return min(children, key=lambda stage: _RANK[stage])  # type: ignore[index]


_MODE_FLAGS = ("force", "planOnly", "validateOnly", "driftDetection")


def command_for(
    *,
    force: bool = False,
    plan_only: bool = False,
    validate_only: bool = False,
    drift_detection: bool = False,
    uninstall: bool = False,
) -> Command:
    """The task command for install/uninstall flags; contradictory flags are Invalid.

    At most one of force, planOnly, validateOnly, driftDetection; an uninstall
    accepts only planOnly.
    """
    given = dict(zip(_MODE_FLAGS, (force, plan_only, validate_only, drift_detection), strict=True))
    chosen = [name for name, on in given.items() if on]
    if uninstall:
        refused = [name for name in chosen if name != "planOnly"]
        if refused:
            raise Invalid(f"uninstall cannot be combined with {' and '.join(refused)}")
        return Command.PLAN_UNINSTALL if plan_only else Command.UNINSTALL
    if len(chosen) > 1:
        raise Invalid(f"contradictory install flags: {' and '.join(chosen)}")
    if force:
        return Command.FORCE_INSTALL
    if plan_only:
        return Command.PLAN
    if validate_only:
        return Command.VALIDATE
    if drift_detection:
        return Command.DRIFT_DETECTION
    return Command.INSTALL


def is_plan_only(command: str | Command) -> bool:
    """The task's `planOnly` field: the command never applies."""
    return _command(command) in PLAN_ONLY_COMMANDS


def auto_approves(command: str | Command) -> bool:
    """Whether `planned` moves to `plan_approved` at once (force)."""
    return _command(command) is Command.FORCE_INSTALL


def is_uninstall(command: str | Command) -> bool:
    """Whether the command removes the deployment."""
    return _command(command) in (Command.UNINSTALL, Command.PLAN_UNINSTALL)
