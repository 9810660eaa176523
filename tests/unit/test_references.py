"""Prop references, dependency order, resolution, the install-time merge and validation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from appliance.domain import references as refs
from appliance.domain.references import (
    Reference,
    check_props,
    child_order,
    data_dependencies,
    merge_install_props,
    parse_reference,
    resolve_props,
    topological_order,
    validate_props,
)
from appliance.errors import Invalid

# --- parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("inputs.region", Reference("input", "region", None, "inputs.region")),
        ("inputs.9_lives", Reference("input", "9_lives", None, "inputs.9_lives")),
        ("data.vpc.vpc_id", Reference("data", "vpc", "vpc_id", "data.vpc.vpc_id")),
        (
            "data._db.endpoint-url",
            Reference("data", "_db", "endpoint-url", "data._db.endpoint-url"),
        ),
        (
            "$network.subnet_ids",
            Reference("deployment", "network", "subnet_ids", "$network.subnet_ids"),
        ),
        ("$my-app-2.url", Reference("deployment", "my-app-2", "url", "$my-app-2.url")),
        ("  data.vpc.id  ", Reference("data", "vpc", "id", "data.vpc.id")),
    ],
)
def test_references(value: str, expected: Reference) -> None:
    assert parse_reference(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "us-east-1",
        "inputs.",
        "inputs.a.b",
        "inputs.a-b",
        "data.vpc",
        "data.9vpc.id",
        "data.vpc.id.extra",
        "prefix-data.vpc.id",
        "$network",
        "$-x.y",
        "$net work.id",
        "${inputs.region}",
        "Inputs.region",
        42,
        None,
        True,
        ["inputs.region"],
    ],
)
def test_literals(value: Any) -> None:
    assert parse_reference(value) is None


def test_kinds_restrict_what_counts_as_a_reference() -> None:
    assert parse_reference("$db.url", refs.MANIFEST_KINDS) is None
    assert parse_reference("inputs.x", refs.INSTALL_KINDS) is None
    assert parse_reference("data.a.b", refs.INSTALL_KINDS) is None
    assert parse_reference("$db.url", refs.INSTALL_KINDS) is not None


def test_data_dependencies_look_inside_lists_and_maps_once_each_in_order() -> None:
    props = {
        "subnets": ["data.net.a", "data.net.b", "literal"],
        "config": {"db": "data.db.url", "nested": {"again": "data.net.c"}},
        "region": "inputs.region",
        "other": "$shared.x",
        "n": 3,
    }
    assert data_dependencies(props) == ["net", "db"]
    assert data_dependencies({}) == []


# --- order -----------------------------------------------------------------------------------


def test_topological_order_is_stable_in_the_given_order() -> None:
    assert topological_order({"a": [], "b": [], "c": []}) == ["a", "b", "c"]
    assert topological_order({"app": ["db", "net"], "db": ["net"], "net": [], "dns": []}) == [
        "net",
        "db",
        "app",
        "dns",
    ]


def test_child_order_from_props() -> None:
    children = {
        "app": {"db_url": "data.db.url", "subnet": "data.net.subnet"},
        "db": {"subnet": "data.net.subnet", "size": "inputs.size"},
        "net": {"cidr": "10.0.0.0/16"},
    }
    assert child_order(children) == ["net", "db", "app"]


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        ({"a": ["a"]}, "dependency cycle: a -> a"),
        ({"a": ["b"], "b": ["a"]}, "dependency cycle: a -> b -> a"),
        ({"x": [], "a": ["c"], "b": ["a"], "c": ["b"]}, "dependency cycle: a -> c -> b -> a"),
        # `d` waits on the cycle but is not part of it.
        ({"d": ["a"], "a": ["b"], "b": ["a"]}, "dependency cycle: a -> b -> a"),
    ],
)
def test_cycles_are_invalid_and_named(graph: dict[str, list[str]], message: str) -> None:
    with pytest.raises(Invalid) as caught:
        topological_order(graph)
    assert caught.value.message == message


def test_a_reference_to_an_unknown_child_is_invalid() -> None:
    with pytest.raises(Invalid, match="unknown child package id: app -> cache"):
        child_order({"app": {"x": "data.cache.host"}})


@st.composite
def dags(draw: st.DrawFn) -> dict[str, list[str]]:
    """A random acyclic graph: each node depends only on nodes earlier in a hidden order."""
    names = draw(st.lists(st.from_regex(r"[a-z]{1,4}", fullmatch=True), unique=True, max_size=12))
    hidden = draw(st.permutations(names))
    graph = {}
    for index, name in enumerate(hidden):
        earlier = hidden[:index]
        graph[name] = draw(st.lists(st.sampled_from(earlier), max_size=4)) if earlier else []
    shown = draw(st.permutations(names))
    return {name: graph[name] for name in shown}


@settings(max_examples=200, deadline=None)
@given(dags())
def test_order_respects_every_dependency(graph: dict[str, list[str]]) -> None:
    order = topological_order(graph)
    assert sorted(order) == sorted(graph)
    position = {name: index for index, name in enumerate(order)}
    for node, deps in graph.items():
        for dep in deps:
            assert position[dep] < position[node], (dep, node, order)


@settings(max_examples=100, deadline=None)
@given(dags(), st.data())
def test_adding_a_back_edge_makes_a_cycle_that_is_named(
    graph: dict[str, list[str]], data: st.DataObject
) -> None:
    order = topological_order(graph)
    if len(order) < 2:
        return
    # A dependency from an early node on a later one that (transitively) needs it.
    late = data.draw(st.sampled_from(order[1:]))
    reachable = _ancestors(graph, late)
    if not reachable:
        return
    early = data.draw(st.sampled_from(sorted(reachable)))
    graph[early] = [*graph[early], late]
    with pytest.raises(Invalid) as caught:
        topological_order(graph)
    cycle = caught.value.message.removeprefix("dependency cycle: ").split(" -> ")
    assert cycle[0] == cycle[-1]
    for node, dep in zip(cycle, cycle[1:], strict=False):
        assert dep in graph[node]


def _ancestors(graph: dict[str, list[str]], node: str) -> set[str]:
    """Every node `node` depends on, directly or not."""
    seen: set[str] = set()
    todo = list(graph[node])
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(graph[current])
    return seen


# --- resolution ----------------------------------------------------------------------------


def test_resolution_with_what_is_known() -> None:
    props = {
        "region": "inputs.region",
        "missing_input": "inputs.zone",
        "vpc": "data.net.vpc_id",
        "not_yet": "data.db.url",
        "no_such_output": "data.net.nope",
        "shared": "$core.bucket",
        "unknown_slug": "$other.bucket",
        "list": ["data.net.vpc_id", "x", 1],
        "map": {"deep": {"v": "$core.bucket"}},
        "literal": "plain",
        "number": 5,
        "null_output": "data.net.empty",
    }
    resolved = resolve_props(
        props,
        inputs={"region": "eu-west-1"},
        outputs={"net": {"vpc_id": "vpc-123", "empty": None}},
        deployments={"core": {"bucket": {"name": "b1"}}},
    )
    assert resolved == {
        "region": "eu-west-1",
        "missing_input": "inputs.zone",
        "vpc": "vpc-123",
        "not_yet": "data.db.url",
        "no_such_output": "data.net.nope",
        "shared": {"name": "b1"},
        "unknown_slug": "$other.bucket",
        "list": ["vpc-123", "x", 1],
        "map": {"deep": {"v": {"name": "b1"}}},
        "literal": "plain",
        "number": 5,
        "null_output": None,
    }
    assert refs.unresolved(resolved) == [
        "inputs.zone",
        "data.db.url",
        "data.net.nope",
        "$other.bucket",
    ]


def test_nothing_known_leaves_every_expression() -> None:
    props = {"a": "inputs.x", "b": "data.y.z", "c": "$s.k"}
    assert resolve_props(props) == props


def test_an_input_given_as_a_deployment_reference_resolves_through() -> None:
    props = {"db": "inputs.db_url"}
    assert resolve_props(props, inputs={"db_url": "$core.url"}) == {"db": "$core.url"}
    assert resolve_props(
        props, inputs={"db_url": "$core.url"}, deployments={"core": {"url": "pg://x"}}
    ) == {"db": "pg://x"}
    # Only deployment references are followed from an input's value, never data or inputs.
    assert resolve_props(props, inputs={"db_url": "inputs.db_url"}, outputs={"x": {"y": 1}}) == {
        "db": "inputs.db_url"
    }


def test_install_references() -> None:
    found = refs.install_references({"a": "$net.id", "b": ["$db.url"], "c": "data.x.y"})
    assert [(r.source, r.key) for r in found] == [("net", "id"), ("db", "url")]


# --- merge ---------------------------------------------------------------------------------

INPUTS: dict[str, dict[str, Any]] = {
    "region": {"type": "string", "default": "us-east-1"},
    "size": {"type": "number", "default": 1},
    "tags": {"type": "map"},
    "debug": {"type": "bool", "default": False},
    "zones": {"type": "list"},
    "name": {},
}


def _prop(name: str, content: str, enforced: bool = False) -> dict[str, Any]:
    return {"name": name, "content": content, "is_enforced": enforced}


def test_merge_precedence() -> None:
    environment = [
        _prop("region", "eu-west-1"),
        _prop("size", "3"),
        _prop("debug", "true", enforced=True),
        _prop("name", "from-env", enforced=True),
        _prop("not_an_input", "ignored"),
    ]
    merged = merge_install_props(
        INPUTS, environment, {"region": "ap-south-1", "debug": False, "name": "mine"}
    )
    assert merged == {
        "region": "ap-south-1",  # install props beat environment properties
        "size": 3,  # environment property beats the default, read as a number
        "debug": True,  # enforced beats install props
        "name": "from-env",
    }


def test_merge_defaults_only() -> None:
    assert merge_install_props(INPUTS, [], {}) == {
        "region": "us-east-1",
        "size": 1,
        "debug": False,
    }


def test_merge_keeps_unknown_install_props_for_validation() -> None:
    merged = merge_install_props(INPUTS, [], {"colour": "red"})
    assert merged["colour"] == "red"
    assert validate_props(INPUTS, merged)[-1]["prop"] == "colour"


@pytest.mark.parametrize(
    ("spec", "content", "expected"),
    [
        ({"type": "number"}, "3.5", 3.5),
        ({"type": "number"}, "true", "true"),
        ({"type": "number"}, "three", "three"),
        ({"type": "bool"}, "false", False),
        ({"type": "bool"}, "1", "1"),
        ({"type": "list"}, '["a", "b"]', ["a", "b"]),
        ({"type": "list"}, '{"a": 1}', '{"a": 1}'),
        ({"type": "map"}, '{"a": 1}', {"a": 1}),
        ({"type": "string"}, "42", "42"),
        ({}, "42", "42"),
        ({"type": "any"}, "[1]", "[1]"),
    ],
)
def test_environment_content_is_read_as_the_input_type(
    spec: dict[str, Any], content: str, expected: Any
) -> None:
    assert refs.coerce_content(content, spec) == expected


# --- validation ----------------------------------------------------------------------------


def test_valid_props_have_no_problems() -> None:
    values = {"tags": {"a": "b"}, "zones": ["a"], "name": [1, {"x": None}], "size": 2.5}
    assert validate_props(INPUTS, merge_install_props(INPUTS, [], values)) == []
    check_props(INPUTS, merge_install_props(INPUTS, [], values))


def test_every_problem_is_reported_at_once() -> None:
    inputs = {
        "region": {"type": "string", "allowed_values": ["us-east-1", "eu-west-1"]},
        "size": {"type": "number"},
        "debug": {"type": "bool", "default": False},
        "tags": {"type": "map", "default": {}},
        "zones": {"type": "list"},
        "tier": {"allowed_values": [1, 2]},
        "name": {"type": "string"},
    }
    values = {
        "region": "mars-1",
        "size": "3",
        "debug": 1,
        "tags": ["a"],
        "zones": None,
        "tier": True,
        "colour": "red",
    }
    with pytest.raises(Invalid) as caught:
        check_props(inputs, values)
    assert caught.value.message == "invalid props: 8 problems"
    details = caught.value.details
    assert details is not None
    assert all(d["statusCode"] == 400 and d["error"] == "BAD_REQUEST" for d in details)
    assert [(d["prop"], d["message"]) for d in details] == [
        ("region", 'prop region must be one of "us-east-1", "eu-west-1", got "mars-1"'),
        ("size", 'prop size must be of type number, got "3"'),
        ("debug", "prop debug must be of type bool, got 1"),
        ("tags", 'prop tags must be of type map, got ["a"]'),
        ("zones", "missing value for required input zones"),
        ("tier", "prop tier must be one of 1, 2, got true"),
        ("name", "missing value for required input name"),
        ("colour", "unknown prop colour (inputs: region, size, debug, tags, zones, tier, name)"),
    ]


def test_one_problem_is_singular() -> None:
    with pytest.raises(Invalid, match=r"^invalid props: 1 problem$"):
        check_props({}, {"x": 1})
    assert validate_props({}, {"x": 1})[0]["message"] == "unknown prop x (inputs: none)"


@pytest.mark.parametrize(
    ("type_name", "good", "bad"),
    [
        ("string", ["", "x"], [1, True, [], {}]),
        ("number", [0, -1, 2.5, 10**20], ["1", True, False, float("nan"), float("inf"), []]),
        ("bool", [True, False], [0, 1, "true"]),
        ("list", [[], [1, "a"]], [{}, "[]", ()]),
        ("map", [{}, {"a": 1}], [[], "{}"]),
        ("any", [1, "x", [], {}, True], []),
    ],
)
def test_types(type_name: str, good: list[Any], bad: list[Any]) -> None:
    assert all(refs.matches_type(value, type_name) for value in good)
    assert not any(refs.matches_type(value, type_name) for value in bad)


def test_allowed_values_compare_as_json() -> None:
    spec = {"allowed_values": [1, "a", [1, 2], {"k": False}]}
    for value in (1, 1.0, "a", [1, 2], {"k": False}):
        assert validate_props({"p": spec}, {"p": value}) == [], value
    for value in (True, "1", [1, True], {"k": 0}, [2, 1]):
        assert validate_props({"p": spec}, {"p": value}) != [], value


def test_null_for_an_input_with_a_default_is_accepted() -> None:
    assert validate_props({"p": {"type": "string", "default": "x"}}, {"p": None}) == []


def test_a_deployment_reference_is_checked_when_resolved_not_at_install() -> None:
    inputs = {"port": {"type": "number", "allowed_values": [80, 443]}}
    assert validate_props(inputs, {"port": "$lb.port"}) == []
    assert validate_props(inputs, {"port": "$lb"})[0]["message"].startswith(
        "prop port must be of type number"
    )
    # A manifest-only reference is no install reference.
    assert validate_props(inputs, {"port": "data.lb.port"}) != []
