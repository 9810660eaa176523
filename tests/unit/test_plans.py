"""Terraform plans and states against the real fixtures, malformed input, and Markdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from appliance.domain.plans import (
    KNOWN_AFTER_APPLY,
    REDACTED,
    ParsedPlan,
    PlanSection,
    parse_plan,
    parse_state,
    render_plans_markdown,
)
from appliance.errors import Invalid
from tests.conftest import SHARED

FIXTURES = SHARED / "fixtures"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())["files"]
PLAN_FILES = [entry for entry in MANIFEST if entry["kind"] == "terraform-plan-json"]
STATE_JSON_FILES = [entry for entry in MANIFEST if entry["kind"] == "terraform-state-json"]
RAW_STATE_FILES = [entry for entry in MANIFEST if entry["kind"] == "terraform-tfstate-v4"]


def _read(entry: dict[str, Any]) -> bytes:
    return (FIXTURES / entry["file"]).read_bytes()


def _short(entry: dict[str, Any]) -> str:
    return Path(entry["file"]).name


def test_the_fixture_lists_are_not_empty() -> None:
    # The README lists 13 plans, 3 state JSON files and 3 raw states.
    assert (len(PLAN_FILES), len(STATE_JSON_FILES), len(RAW_STATE_FILES)) == (13, 3, 3)


@pytest.mark.parametrize("entry", PLAN_FILES, ids=_short)
def test_every_fixture_plan_parses_to_the_documented_counts(entry: dict[str, Any]) -> None:
    documented = entry["plan_counts"]
    plan = parse_plan(_read(entry))
    assert plan.counts == {
        "unchanged": documented["no-op"],
        "add": documented["create"] + documented["replace"],
        "change": documented["update"],
        "destroy": documented["delete"] + documented["replace"],
    }
    # Data-source reads are skipped; every other change is one entry.
    assert len(plan.resources) == documented["resource_changes_total"] - documented["read"]
    replaced = [a for a, e in plan.resources.items() if e["force_replace"]]
    assert len(replaced) == documented["replace"]
    assert all(plan.resources[a]["action"] == "replace" for a in replaced)
    assert plan.drift["change"] == documented["resource_drift"]
    assert sum(plan.output_counts.values()) == documented["output_changes"]
    assert plan.output_counts["add"] == documented["output_changes_by_action"].get("create", 0)


# Hand-checked against the files: address, type and action of each entry.
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ovsds__tf-plan-format/update.plan.json", {"terraform_data.foo-bar": "change"}),
        ("ovsds__tf-plan-format/delete.plan.json", {"terraform_data.foo-bar": "destroy"}),
        ("ovsds__tf-plan-format/no_resources.plan.json", {}),
        (
            "opentofu__opentofu/basic_delete.golden.plan.json",
            {"test_instance.test": "change", "test_instance.test-delete": "destroy"},
        ),
        ("hashicorp__terraform-json/moved_block.plan.json", {"random_id.test2": "unchanged"}),
    ],
)
def test_entries_of_small_plans(name: str, expected: dict[str, str]) -> None:
    plan = parse_plan((FIXTURES / "terraform/plans" / name).read_bytes())
    assert {address: e["action"] for address, e in plan.resources.items()} == expected


def test_a_plan_entry_has_every_field_of_the_specification() -> None:
    plan = parse_plan(
        (FIXTURES / "terraform/plans/ovsds__tf-plan-format/sensitive.plan.json").read_bytes()
    )
    assert plan.resources == {
        "random_bytes.test": {
            "type": "random_bytes",
            "action": "replace",
            "state": {"base64": REDACTED, "hex": REDACTED, "keepers": None, "length": 4},
            "desired": {"keepers": None, "length": 8},
            "planned": {
                "keepers": None,
                "length": 8,
                "base64": KNOWN_AFTER_APPLY,
                "hex": KNOWN_AFTER_APPLY,
            },
            "actual": {"base64": REDACTED, "hex": REDACTED, "keepers": None, "length": 4},
            "force_replace": True,
        }
    }
    assert plan.has_changes


def test_sensitive_values_never_survive_parsing() -> None:
    raw = (FIXTURES / "terraform/plans/ovsds__tf-plan-format/sensitive.plan.json").read_text()
    secret = json.loads(raw)["resource_changes"][0]["change"]["before"]["hex"]
    plan = parse_plan(raw)
    assert secret not in json.dumps(plan.resources)


def test_drift_gives_the_actual_values() -> None:
    plan = parse_plan(
        (FIXTURES / "terraform/plans/infracost__infracost/plan_with_target.plan.json").read_bytes()
    )
    raw = json.loads(
        (FIXTURES / "terraform/plans/infracost__infracost/plan_with_target.plan.json").read_text()
    )
    drift_after = raw["resource_drift"][0]["change"]["after"]
    entry = plan.resources["aws_instance.web_app_1"]
    assert entry["action"] == "change"
    assert entry["actual"]["ami"] == drift_after["ami"]
    assert plan.drift == {"unchanged": 0, "add": 0, "change": 1, "destroy": 0}


def test_a_plan_with_only_output_changes_has_changes() -> None:
    plan = parse_plan(
        (FIXTURES / "terraform/plans/hashicorp__terraform-json/has_changes.plan.json").read_bytes()
    )
    assert plan.counts["unchanged"] == 6 and plan.counts["add"] == 0
    assert plan.has_changes
    assert plan.outputs["string"] == {"action": "add", "value": "foo", "is_sensitive": False}
    assert plan.outputs["interpolated"]["value"] == "424881806176056736"


def test_unknown_output_values_are_known_after_apply() -> None:
    plan = parse_plan(
        (FIXTURES / "terraform/plans/hashicorp__terraform-json/basic.plan.json").read_bytes()
    )
    assert plan.outputs["interpolated"] == {
        "action": "add",
        "value": KNOWN_AFTER_APPLY,
        "is_sensitive": False,
    }
    assert plan.outputs["string"]["value"] == "foo"
    # Terraform 0.12 marks the sensitive output only in planned_values.
    assert plan.outputs["foo"] == {"action": "add", "value": REDACTED, "is_sensitive": True}


def test_sensitive_output_changes_are_redacted() -> None:
    plan = parse_plan(
        _plan(
            output_changes={
                "pw": {"actions": ["update"], "before": "a", "after": "b", "after_sensitive": True}
            }
        )
    )
    assert plan.outputs == {"pw": {"action": "change", "value": REDACTED, "is_sensitive": True}}
    assert plan.output_counts == {"unchanged": 0, "add": 0, "change": 1, "destroy": 0}


def test_the_parsed_object_of_the_deployment_record() -> None:
    plan = parse_plan([{"address": "a.b", "action": "change", "type": "a"}])
    assert plan.parsed() == {
        "type": "plan",
        "data": {
            "plannedMetadata": {"unchanged": 0, "add": 0, "change": 1, "destroy": 0},
            "driftMetadata": {"unchanged": 0, "add": 0, "change": 0, "destroy": 0},
            "outputMetadata": {"unchanged": 0, "add": 0, "change": 0, "destroy": 0},
            "outputs": {},
            "resources": {"a.b": plan.resources["a.b"]},
        },
    }
    assert plan.resources["a.b"]["type"] == "a"


def test_an_unchanged_plan_has_no_changes() -> None:
    plan = parse_plan(
        (FIXTURES / "terraform/plans/hashicorp__terraform-json/moved_block.plan.json").read_bytes()
    )
    assert not plan.has_changes


def _plan(**extra: Any) -> dict[str, Any]:
    return {"format_version": "1.2", **extra}


def _change(address: str, actions: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "address": address,
        "mode": "managed",
        "type": address.split(".")[0],
        "change": {"actions": actions, "before": None, "after": None},
        **extra,
    }


def test_both_replace_orders_and_unknown_keys() -> None:
    plan = parse_plan(
        _plan(
            future_key={"anything": 1},
            resource_changes=[
                _change("a.x", ["delete", "create"]),
                _change("a.y", ["create", "delete"], new_field=True),
                _change("d.z", ["read"], mode="data"),
                _change("a.w", ["no-op"]),
            ],
        )
    )
    assert plan.counts == {"unchanged": 1, "add": 2, "change": 0, "destroy": 2}
    assert [e["force_replace"] for e in plan.resources.values()] == [True, True, False]


@pytest.mark.parametrize("version", ["0.1", "0.2", "1.0", "1.2", "1.99"])
def test_accepted_format_versions(version: str) -> None:
    assert parse_plan({"format_version": version}).counts["add"] == 0


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"{not json", "plan is not valid JSON"),
        (b"\xff\xfe", "plan is not valid JSON"),
        ("42", "plan must be a JSON object (terraform show -json) or a list of plan entries"),
        ("null", "got null"),
        ('"text"', "got a string"),
        ({}, "plan has no format_version"),
        ({"format_version": 1.2}, "plan has no format_version"),
        (
            {"format_version": "2.0"},
            "unsupported plan format_version '2.0': supported are 0.x, 1.x",
        ),
        ({"format_version": "10.1"}, "unsupported plan format_version '10.1'"),
        (_plan(resource_changes={"a": {}}), "plan resource_changes must be a list, got an object"),
        (_plan(resource_changes="x"), "plan resource_changes must be a list"),
        (_plan(resource_drift=3), "plan resource_drift must be a list"),
        (_plan(resource_changes=["x"]), "plan resource_changes[0] must be an object"),
        (_plan(resource_changes=[{"change": {}}]), "plan resource_changes[0] has no address"),
        (
            _plan(resource_changes=[{"address": "a.x", "change": {"actions": "create"}}]),
            "resource_changes[0] (a.x): change.actions must be a list of strings",
        ),
        (
            _plan(resource_changes=[{"address": "a.x"}]),
            "change.actions must be a list of strings",
        ),
        (
            _plan(resource_changes=[_change("a.x", ["create", "update"])]),
            "plan resource_changes[0] (a.x): unsupported actions ['create', 'update']",
        ),
        (_plan(output_changes=[]), "plan output_changes must be an object"),
        (
            {"format_version": "1.0", "values": {"root_module": {}}},
            "plan is a state (values, no planned_values)",
        ),
        (
            _plan(output_changes={"o": {"actions": ["explode"]}}),
            "plan output_changes.o: unsupported actions",
        ),
    ],
)
def test_malformed_plans_are_invalid(document: Any, message: str) -> None:
    with pytest.raises(Invalid) as caught:
        parse_plan(document)
    assert message in caught.value.message


# --- plan entry lists (DESIGN.md 7.3 item 4) ------------------------------------------------


def test_a_list_of_plan_entries() -> None:
    plan = parse_plan(
        [
            {"address": "aws_s3_bucket.a", "type": "aws_s3_bucket", "action": "add"},
            {"address": "aws_s3_bucket.b", "action": "replace", "state": {"x": 1}},
            {"address": "aws_s3_bucket.c", "action": "unchanged", "force_replace": False},
            {"address": "aws_s3_bucket.d", "action": "destroy", "extra": "ignored"},
            {"address": "aws_s3_bucket.e", "action": "change", "planned": {"y": 2}},
        ]
    )
    assert plan.counts == {"unchanged": 1, "add": 2, "change": 1, "destroy": 2}
    assert plan.resources["aws_s3_bucket.b"] == {
        "type": None,
        "action": "replace",
        "state": {"x": 1},
        "desired": None,
        "planned": None,
        "actual": None,
        "force_replace": True,
    }
    assert "extra" not in plan.resources["aws_s3_bucket.d"]
    assert parse_plan("[]") == ParsedPlan({}, plan.counts.fromkeys(plan.counts, 0))


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([1], "plan entry [0] must be an object, got a number"),
        ([{"action": "add"}], "plan entry [0] has no address"),
        ([{"address": "a.b", "action": "create"}], "plan entry [0] (a.b): action must be one of"),
        ([{"address": "a.b"}], "got None"),
        (
            [{"address": "a.b", "action": "add"}, {"address": "a.b", "action": "add"}],
            "plan entry [1]: duplicate address a.b",
        ),
        ([{"address": "a.b", "action": "add", "type": 3}], "type must be a string"),
    ],
)
def test_malformed_plan_entries(entries: list[Any], message: str) -> None:
    with pytest.raises(Invalid) as caught:
        parse_plan(entries)
    assert message in caught.value.message


# --- states ----------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", STATE_JSON_FILES, ids=_short)
def test_every_fixture_state_json_parses(entry: dict[str, Any]) -> None:
    documented = entry["state_counts"]
    state = parse_state(_read(entry))
    assert state.managed + state.unmanaged == documented["total_resources"]
    assert len(state.outputs) == documented["outputs"]
    assert sum(o["is_sensitive"] for o in state.outputs.values()) == documented["sensitive_outputs"]


@pytest.mark.parametrize("entry", RAW_STATE_FILES, ids=_short)
def test_every_fixture_raw_state_parses(entry: dict[str, Any]) -> None:
    documented = entry["state_counts"]
    state = parse_state(_read(entry))
    # Counted per instance, like `terraform show -json`; these fixtures have no data sources.
    assert documented["data"] == 0
    assert state.metadata == {"managed": documented["instances"], "unmanaged": 0}
    assert len(state.outputs) == documented["outputs"]
    assert sum(o["is_sensitive"] for o in state.outputs.values()) == documented["sensitive_outputs"]


def test_data_sources_are_unmanaged() -> None:
    # The file holds 14 managed resources and 4 data sources across root and child modules.
    state = parse_state(
        (
            FIXTURES / "terraform/state-json/infracost__infracost/terraform_v0.14.state.json"
        ).read_text()
    )
    assert state.metadata == {"managed": 14, "unmanaged": 4}


def test_state_outputs_and_their_types() -> None:
    name = "hashicorp__terraform-json/110_sensitive_values"
    shown = parse_state((FIXTURES / f"terraform/state-json/{name}.state.json").read_bytes())
    raw = parse_state((FIXTURES / f"terraform/tfstate/{name}.tfstate").read_bytes())
    assert shown.metadata == raw.metadata == {"managed": 7, "unmanaged": 0}
    assert shown.outputs == raw.outputs
    assert raw.outputs["foo"] == {"value": "bar", "type": "string", "is_sensitive": True}
    assert {k: o["type"] for k, o in raw.outputs.items()} == {
        "foo": "string",
        "interpolated": "string",
        "interpolated_deep": "map",
        "list": "list",
        "map": "map",
        "referenced": "string",
        "referenced_deep": "map",
        "string": "string",
    }


def test_raw_state_data_sources_count_per_instance() -> None:
    state = parse_state(
        {
            "version": 4,
            "resources": [
                {"mode": "managed", "type": "a", "name": "x", "instances": [{}, {}]},
                {"mode": "data", "type": "b", "name": "y", "instances": [{}]},
            ],
            "outputs": {"n": {"value": 3, "type": "number"}, "d": {"value": None}},
        }
    )
    assert state.metadata == {"managed": 2, "unmanaged": 1}
    assert state.outputs["n"] == {"value": 3, "type": "number", "is_sensitive": False}
    assert state.outputs["d"]["type"] == "any"


def test_an_empty_state() -> None:
    assert parse_state({"format_version": "1.0"}).metadata == {"managed": 0, "unmanaged": 0}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"nope", "state is not valid JSON"),
        ([], "state must be a JSON object, got a list"),
        ({"format_version": "3.0"}, "unsupported state format_version '3.0'"),
        ({"values": {}}, "state has no format_version"),
        ({"version": 3}, "unsupported state version 3: supported is 4"),
        ({"version": 4, "resources": {}}, "state resources must be a list"),
        ({"version": 4, "resources": [1]}, "state resources[0] must be an object"),
        ({"format_version": "1.0", "values": []}, "state values must be an object"),
        (
            {"format_version": "1.0", "values": {"root_module": {"resources": 1}}},
            "state values.root_module resources must be a list",
        ),
        (
            {"format_version": "1.0", "values": {"root_module": {"child_modules": [[]]}}},
            "state values.root_module.child_modules[0] must be an object",
        ),
        (
            {"format_version": "1.0", "values": {"outputs": {"o": 1}}},
            "state output o must be an object with a value",
        ),
        ({"version": 4, "outputs": []}, "state outputs must be an object"),
    ],
)
def test_malformed_states_are_invalid(document: Any, message: str) -> None:
    with pytest.raises(Invalid) as caught:
        parse_state(document)
    assert message in caught.value.message


# --- Markdown ------------------------------------------------------------------------------


def test_markdown_rendering() -> None:
    plan = parse_plan(
        [
            {"address": 'module.m["a|b"].x.y', "action": "add"},
            {"address": "x.z", "action": "replace"},
        ]
    )
    empty = parse_plan([])
    text = render_plans_markdown(
        [
            PlanSection("web (@acme/web 1.2.0)", plan),
            PlanSection("db", empty),
            PlanSection("q", None),
        ]
    )
    assert text.splitlines() == [
        "# Deployment plans",
        "",
        "## web (@acme/web 1.2.0)",
        "",
        "**2** to add, **0** to change, **1** to destroy (0 unchanged).",
        "",
        "| Resource | Action |",
        "|---|---|",
        '| module.m["a\\|b"].x.y | add |',
        "| x.z | replace |",
        "",
        "## db",
        "",
        "**0** to add, **0** to change, **0** to destroy (0 unchanged).",
        "",
        "No resources in this plan.",
        "",
        "## q",
        "",
        "No plan has been reported yet.",
    ]
    assert text.endswith("\n")


def test_markdown_of_a_real_plan_lists_every_resource() -> None:
    raw = (FIXTURES / "terraform/plans/bridgecrewio__checkov/nested_modules.plan.json").read_bytes()
    text = render_plans_markdown([PlanSection("s3", parse_plan(raw))])
    rows = [line for line in text.splitlines() if line.startswith("| ") and "add |" in line]
    assert len(rows) == 9
    assert "**9** to add, **0** to change, **0** to destroy" in text
