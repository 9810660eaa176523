"""Version selectors (DESIGN.md 3): exact, latest, caret, tilde, comparator ranges."""

from __future__ import annotations

import pytest

from appliance.domain import semver
from appliance.errors import Invalid

VERSIONS = ["0.9.0", "1.0.0", "1.2.0", "1.2.5", "1.3.0-rc.1", "1.10.0", "2.0.0", "2.1.0-beta"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (None, "2.0.0"),
        ("latest", "2.0.0"),
        ("1.2.0", "1.2.0"),
        ("1.3.0-rc.1", "1.3.0-rc.1"),
        ("^1.2.0", "1.10.0"),
        ("~1.2", "1.2.5"),
        ("~1.2.0", "1.2.5"),
        (">=1.0.0 <2.0.0", "1.10.0"),
        (">1.2.0 <=1.2.5", "1.2.5"),
        ("1.2", "1.2.5"),
        ("^0.9.0", "0.9.0"),
        ("^3.0.0", None),
        ("9.9.9", None),
    ],
)
def test_selector_resolution(selector: str | None, expected: str | None) -> None:
    assert semver.parse_selector(selector).resolve(VERSIONS) == expected


def test_latest_falls_back_to_pre_release_and_ranges_skip_them() -> None:
    assert semver.latest(["1.0.0-rc.1", "1.0.0-rc.2"]) == "1.0.0-rc.2"
    assert semver.parse_selector("^1.0.0").resolve(["1.1.0-rc.1"]) is None
    assert semver.parse_selector("^1.0.0").resolve(["1.1.0-rc.1"], True) == "1.1.0-rc.1"


def test_precedence_is_semantic_not_textual() -> None:
    assert semver.sorted_versions(["1.10.0", "1.9.0", "1.0.0-rc.10", "1.0.0-rc.9", "1.0.0"]) == [
        "1.0.0-rc.9",
        "1.0.0-rc.10",
        "1.0.0",
        "1.9.0",
        "1.10.0",
    ]


@pytest.mark.parametrize("bad", ["^x", ">=", "1.2.3.4", "~", ">=1.0.0 <", "01.2.3"])
def test_bad_selectors_are_invalid(bad: str) -> None:
    with pytest.raises(Invalid):
        semver.parse_selector(bad)
