"""Manifest validation (spec 2.1): one accepted and one rejected case per rule."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from appliance.domain import manifest as m
from appliance.errors import Invalid

ARTIFACT = {"name": "vpc", "version": "1.0.0", "native": {"type": "terraform"}}
BLUEPRINT = {
    "name": "@acme/stack",
    "version": "1.0.0",
    "inputs": {"region": {"default": "eu-west-1"}},
    "packages": [
        {
            "name": "@acme/vpc",
            "id": "net",
            "version": "1.0.0",
            "props": {"region": "inputs.region"},
        },
        {"name": "@acme/app", "id": "app", "version": "2.0.0", "props": {"vpc": "data.net.vpc_id"}},
    ],
    "outputs": {"vpc_id": {"value": "data.net.vpc_id"}},
}


def with_(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `base` with `value` at the dotted `path` (`-` deletes; ints index lists)."""
    doc = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    key: Any = int(last) if last.isdigit() else last
    if value == "-":
        del node[key]
    else:
        node[key] = value
    return doc


# (rule, accepted manifest, rejected manifest, expected fragment of the violation)
RULES = [
    ("name required", ARTIFACT, with_(ARTIFACT, "name", "-"), "name: is required"),
    ("version required", ARTIFACT, with_(ARTIFACT, "version", "-"), "version: is required"),
    (
        "name scope",
        with_(ARTIFACT, "name", "@acme/vpc"),
        with_(ARTIFACT, "name", "acme/vpc"),
        "name:",
    ),
    (
        "name scope form",
        with_(ARTIFACT, "name", "@a-b/c"),
        with_(ARTIFACT, "name", "@/vpc"),
        "name:",
    ),
    ("name lowercase", with_(ARTIFACT, "name", "vpc-2"), with_(ARTIFACT, "name", "Vpc"), "name:"),
    (
        "name allowed chars",
        with_(ARTIFACT, "name", "a.b_c-d"),
        with_(ARTIFACT, "name", "a+b"),
        "name:",
    ),
    ("no dot first", with_(ARTIFACT, "name", "a.b"), with_(ARTIFACT, "name", ".ab"), "name:"),
    (
        "no underscore first",
        with_(ARTIFACT, "name", "a_b"),
        with_(ARTIFACT, "name", "_ab"),
        "name:",
    ),
    ("hyphen first", with_(ARTIFACT, "name", "-ab"), with_(ARTIFACT, "name", "a b"), "name:"),
    ("single wildcard", with_(ARTIFACT, "name", "vpc*"), with_(ARTIFACT, "name", "vpc**"), "name:"),
    (
        "wildcards apart",
        with_(ARTIFACT, "name", "*a*"),
        with_(ARTIFACT, "name", "@acme/**a"),
        "name:",
    ),
    (
        "name length",
        with_(ARTIFACT, "name", "a" * 256),
        with_(ARTIFACT, "name", "a" * 257),
        "name: must be 1 to 256",
    ),
    ("name not empty", with_(ARTIFACT, "name", "a"), with_(ARTIFACT, "name", ""), "name:"),
    ("name a string", ARTIFACT, with_(ARTIFACT, "name", 5), "name: must be a string"),
    ("semver", with_(ARTIFACT, "version", "0.10.3"), with_(ARTIFACT, "version", "1.0"), "version:"),
    (
        "no leading zero",
        with_(ARTIFACT, "version", "10.0.0"),
        with_(ARTIFACT, "version", "1.02.0"),
        "version:",
    ),
    (
        "prerelease",
        with_(ARTIFACT, "version", "1.0.0-rc.1"),
        with_(ARTIFACT, "version", "1.0.0-01"),
        "version:",
    ),
    (
        "build",
        with_(ARTIFACT, "version", "1.0.0+b.7"),
        with_(ARTIFACT, "version", "1.0.0+"),
        "version:",
    ),
    ("no v prefix", ARTIFACT, with_(ARTIFACT, "version", "v1.0.0"), "version:"),
    (
        "description string",
        with_(ARTIFACT, "description", "x"),
        with_(ARTIFACT, "description", 1),
        "description:",
    ),
    ("tags strings", with_(ARTIFACT, "tags", ["a"]), with_(ARTIFACT, "tags", [1]), "tags[0]:"),
    ("unknown top field", ARTIFACT, with_(ARTIFACT, "author", "me"), "author: unknown field"),
    # the three variants
    (
        "blueprint",
        BLUEPRINT,
        with_(BLUEPRINT, "native", {"type": "helm"}),
        "native: is not allowed in a blueprint",
    ),
    (
        "blueprint without source",
        BLUEPRINT,
        with_(BLUEPRINT, "source", "https://x.example/r"),
        "source: is not allowed",
    ),
    (
        "remote artifact",
        with_(ARTIFACT, "source", "git::https://github.com/o/r//modules/vpc?ref=v1.2.0"),
        with_(with_(ARTIFACT, "source", "https://x.example/r.zip"), "native", "-"),
        "native: is required in a remote artifact",
    ),
    (
        "registered artifact",
        ARTIFACT,
        with_(ARTIFACT, "packages", []),
        "native: is not allowed in a blueprint",
    ),
    ("some variant", ARTIFACT, {"name": "x", "version": "1.0.0"}, "needs packages"),
    (
        "source protocol",
        with_(ARTIFACT, "source", "https://x.example/m"),
        with_(ARTIFACT, "source", "ftp://x/m"),
        "source:",
    ),
    # native
    (
        "native type",
        with_(ARTIFACT, "native.type", "bicep"),
        with_(ARTIFACT, "native.type", "pulumi"),
        "native.type:",
    ),
    (
        "native type required",
        ARTIFACT,
        with_(ARTIFACT, "native.type", "-"),
        "native.type: is required",
    ),
    (
        "native unknown field",
        with_(ARTIFACT, "native.path", "src"),
        with_(ARTIFACT, "native.paths", "src"),
        "native.paths: unknown field",
    ),
    (
        "native command",
        with_(ARTIFACT, "native.command", ["a"]),
        with_(ARTIFACT, "native.command", "a"),
        "native.command:",
    ),
    (
        "native env_vars",
        with_(ARTIFACT, "native.env_vars", {"A": "1"}),
        with_(ARTIFACT, "native.env_vars", {"A": 1}),
        "native.env_vars.A:",
    ),
    (
        "lifecycle phases",
        with_(ARTIFACT, "native.lifecycle", {"plan": {"skip": True}}),
        with_(ARTIFACT, "native.lifecycle", {"deploy": {}}),
        "native.lifecycle.deploy: unknown field",
    ),
    (
        "phase fields",
        with_(ARTIFACT, "native.lifecycle", {"apply": {"image": "i", "args": ["x"]}}),
        with_(ARTIFACT, "native.lifecycle", {"apply": {"timeout": 3}}),
        "native.lifecycle.apply.timeout: unknown field",
    ),
    (
        "phase skip bool",
        with_(ARTIFACT, "native.lifecycle", {"destroy": {"skip": False}}),
        with_(ARTIFACT, "native.lifecycle", {"destroy": {"skip": "yes"}}),
        "native.lifecycle.destroy.skip:",
    ),
    # inputs
    (
        "input name",
        with_(ARTIFACT, "inputs", {"vpc_id2": {}}),
        with_(ARTIFACT, "inputs", {"vpc-id": {}}),
        "inputs.vpc-id: invalid key",
    ),
    (
        "input never null",
        with_(ARTIFACT, "inputs", {"x": {}}),
        with_(ARTIFACT, "inputs", {"x": None}),
        "inputs.x: must be an object, got null",
    ),
    (
        "input type",
        with_(ARTIFACT, "inputs", {"x": {"type": "map"}}),
        with_(ARTIFACT, "inputs", {"x": {"type": "object"}}),
        "inputs.x.type:",
    ),
    (
        "input unknown field",
        with_(ARTIFACT, "inputs", {"x": {"description": "d"}}),
        with_(ARTIFACT, "inputs", {"x": {"required": True}}),
        "inputs.x.required: unknown field",
    ),
    (
        "allowed_values array",
        with_(ARTIFACT, "inputs", {"x": {"allowed_values": [1, "a"]}}),
        with_(ARTIFACT, "inputs", {"x": {"allowed_values": 1}}),
        "inputs.x.allowed_values:",
    ),
    (
        "default in allowed",
        with_(ARTIFACT, "inputs", {"x": {"default": "a", "allowed_values": ["a"]}}),
        with_(ARTIFACT, "inputs", {"x": {"default": "b", "allowed_values": ["a"]}}),
        "inputs.x.default:",
    ),
    (
        "default matches type",
        with_(ARTIFACT, "inputs", {"x": {"type": "number", "default": 2}}),
        with_(ARTIFACT, "inputs", {"x": {"type": "number", "default": "2"}}),
        "inputs.x.default:",
    ),
    # outputs
    (
        "output name",
        with_(ARTIFACT, "outputs", {"o_1": {"value": "x"}}),
        with_(ARTIFACT, "outputs", {"o.1": {"value": "x"}}),
        "outputs.o.1: invalid key",
    ),
    (
        "output value required",
        with_(ARTIFACT, "outputs", {"o": {"value": "x", "description": "d"}}),
        with_(ARTIFACT, "outputs", {"o": {"description": "d"}}),
        "outputs.o.value: is required",
    ),
    (
        "output unknown field",
        with_(ARTIFACT, "outputs", {"o": {"value": "x"}}),
        with_(ARTIFACT, "outputs", {"o": {"value": "x", "sensitive": True}}),
        "outputs.o.sensitive: unknown field",
    ),
    (
        "blueprint output reference",
        BLUEPRINT,
        with_(BLUEPRINT, "outputs.vpc_id.value", "data.nope.vpc_id"),
        "outputs.vpc_id.value:",
    ),
    # child packages
    ("child name", BLUEPRINT, with_(BLUEPRINT, "packages.0.name", "Bad"), "packages[0].name:"),
    (
        "child name required",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.0.name", "-"),
        "packages[0].name: is required",
    ),
    (
        "child id",
        with_(BLUEPRINT, "packages.1.id", "app_2"),
        with_(BLUEPRINT, "packages.1.id", "2app"),
        "packages[1].id:",
    ),
    ("child ids unique", BLUEPRINT, with_(BLUEPRINT, "packages.1.id", "net"), "duplicate id"),
    (
        "child version semver",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.0.version", "1.0"),
        "packages[0].version:",
    ),
    (
        "registry child needs version",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.0.version", "-"),
        "packages[0].version: is required in a registry package",
    ),
    (
        "source child",
        with_(
            BLUEPRINT,
            "packages.0",
            {"name": "x", "id": "net", "source": "https://x.example/m", "native": {"type": "helm"}},
        ),
        with_(BLUEPRINT, "packages.0", {"name": "x", "id": "net", "source": "https://x.example/m"}),
        "packages[0].native: is required in a source-based package",
    ),
    (
        "child unknown field",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.0.alias", "n"),
        "packages[0].alias: unknown field",
    ),
    (
        "prop key",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.1.props", {"vpc-id": "x"}),
        "packages[1].props.vpc-id: invalid key",
    ),
    (
        "inputs alias",
        with_(with_(BLUEPRINT, "packages.0.props", "-"), "packages.0.inputs", {"region": "eu"}),
        with_(BLUEPRINT, "packages.0.inputs", {"a": 1}),
        "not both",
    ),
    (
        "input reference",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.0.props.region", "inputs.nope"),
        "input that is not declared",
    ),
    (
        "data reference",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.1.props.vpc", "data.nope.vpc_id"),
        "package id that is not in packages",
    ),
    (
        "no self reference",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.0.props.x", "data.net.y"),
        "its own package",
    ),
    (
        "no cycles",
        BLUEPRINT,
        with_(BLUEPRINT, "packages.0.props.x", "data.app.y"),
        "dependency cycle",
    ),
]


@pytest.mark.parametrize(
    ("rule", "accepted", "rejected", "fragment"), RULES, ids=[r[0] for r in RULES]
)
def test_rule_accepts_and_rejects(rule: str, accepted: dict, rejected: dict, fragment: str) -> None:
    assert m.violations(accepted) == []
    found = m.violations(rejected)
    assert any(fragment in v for v in found), found


def test_all_violations_reported_at_once_with_paths() -> None:
    bad = with_(with_(BLUEPRINT, "packages.1.props", {"vpc-id": 1}), "name", "Bad")
    bad["extra"] = 1
    with pytest.raises(Invalid) as caught:
        m.validate(bad)
    paths = [d["path"] for d in caught.value.details]
    assert {"name", "extra", "packages[1].props.vpc-id"} <= set(paths)
    assert all(d["statusCode"] == 400 for d in caught.value.details)


def test_yaml_manifest_loads_and_validates() -> None:
    text = (
        b"name: '@acme/vpc'\nversion: 1.2.3\nnative:\n  type: terraform\ndescription: 2024-01-01\n"
    )
    doc = m.parse_manifest(text, "manifest.yaml")
    assert doc["version"] == "1.2.3" and doc["description"] == "2024-01-01"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"a: &x [1]\nb: *x\n", "anchors and aliases"),
        (b"name: a\nname: b\n", "duplicate key"),
        (b"? [1]\n: x\n", "keys must be strings"),
        (b"a: !!binary aGk=\n", "not allowed"),
        (b"- 1\n", "must be an object"),
    ],
)
def test_yaml_refusals(content: bytes, fragment: str) -> None:
    with pytest.raises(Invalid, match=fragment):
        m.load_manifest(content, "manifest.yaml")


def test_billion_laughs_refused_without_expanding() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [*a{i - 1},*a{i - 1},*a{i - 1},*a{i - 1}]" for i in range(1, 9)]
    with pytest.raises(Invalid, match="anchors and aliases"):
        m.load_manifest("\n".join(lines).encode(), "manifest.yaml")


def test_json_duplicate_keys_and_non_json_refused() -> None:
    with pytest.raises(Invalid, match="duplicate key"):
        m.load_manifest(b'{"name": "a", "name": "b"}', "manifest.json")
    with pytest.raises(Invalid, match="not valid JSON"):
        m.load_manifest(b"{name: a}", "manifest.json")
    with pytest.raises(Invalid, match="finite"):
        m.load_manifest(b'{"a": NaN}', "manifest.json")


def test_schema_document_is_valid_and_closed_at_every_level() -> None:
    schema = m.schema()
    for name in ("native", "phase", "input", "output"):
        assert schema["$defs"][name]["additionalProperties"] is False
    assert schema["additionalProperties"] is False
    assert len(schema["oneOf"]) == 3 and len(schema["$defs"]["child"]["oneOf"]) == 2


def test_config_derivation() -> None:
    config = m.package_config(BLUEPRINT, "https://git.example/r.git")
    net, app = config["packages"]
    assert net["props"]["region"]["value"] == 'Props.region ?? "eu-west-1"'
    assert app["props"]["vpc"]["value"] == "Data.net.vpc_id"
    assert config["props"]["region"]["default"] == "eu-west-1"
    assert config["outs"]["vpc_id"]["value"] == "data.net.vpc_id"
    assert config["manifest_version"] == 1 and config["repository"]["type"] == "git"
    assert m.expression(5, {}) == "5" and m.expression("eu", {}) == '"eu"'


# ------------------------------------------------------------- properties

_first = st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789-")
_rest = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._", max_size=40)
_segment = st.builds(lambda a, b: a + b, _first, _rest)
names = st.builds(
    lambda scope, name: f"@{scope}/{name}" if scope else name,
    st.one_of(st.none(), _segment),
    _segment,
)
_num = st.integers(min_value=0, max_value=10**6).map(str)
_ident = st.from_regex(r"[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*", fullmatch=True)
versions = st.builds(
    lambda a, b, c, pre, build: (
        f"{a}.{b}.{c}" + (f"-{pre}" if pre else "") + (f"+{build}" if build else "")
    ),
    _num,
    _num,
    _num,
    st.one_of(st.none(), _ident, _num),
    st.one_of(st.none(), _ident),
)


@given(names, versions)
def test_random_valid_names_and_versions_accepted(name: str, version: str) -> None:
    assert m.violations({**ARTIFACT, "name": name, "version": version}) == []


@given(names, st.sampled_from(["A", " ", "**", "/", "+", "\n", "é", "@"]))
def test_names_with_a_bad_character_rejected(name: str, bad: str) -> None:
    near_miss = name + bad + "x" if bad != "**" else name + "**"
    found = m.violations({**ARTIFACT, "name": near_miss})
    assert any(v.startswith("name:") for v in found), (near_miss, found)


@given(versions, st.sampled_from(["leading-zero", "two-parts", "v-prefix", "newline", "space"]))
def test_version_near_misses_rejected(version: str, how: str) -> None:
    major, rest = version.split(".", 1)
    near_miss = {
        "leading-zero": f"0{major}.{rest}",
        "two-parts": version.split("-")[0].split("+")[0].rsplit(".", 1)[0],
        "v-prefix": f"v{version}",
        "newline": f"{version}\n",
        "space": f" {version}",
    }[how]
    found = m.violations({**ARTIFACT, "version": near_miss})
    assert any(v.startswith("version:") for v in found), (near_miss, found)


def test_violation_messages_are_json_safe() -> None:
    found = m.violations(with_(ARTIFACT, "name", "\x00" * 3))
    json.dumps(found)
    assert found
