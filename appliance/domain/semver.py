"""Semantic versions 2.0.0 and version selectors (DESIGN.md 3): exact, `latest`, ranges."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import semver

from appliance.errors import Invalid

# Character classes, not \d: Python's \d also matches non-ASCII digits.
_NUM = r"(?:0|[1-9][0-9]*)"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD_ID = r"[0-9a-zA-Z-]+"
SEMVER_PATTERN = (
    rf"^{_NUM}\.{_NUM}\.{_NUM}"
    rf"(?:-{_PRE_ID}(?:\.{_PRE_ID})*)?"
    rf"(?:\+{_BUILD_ID}(?:\.{_BUILD_ID})*)?$"
)
_SEMVER = re.compile(SEMVER_PATTERN.replace("$", r"\Z"))
_PARTIAL = re.compile(rf"^({_NUM})(?:\.({_NUM}|[xX*]))?(?:\.({_NUM}|[xX*]))?\Z")
_COMPARATOR = re.compile(r"^(>=|<=|>|<|=)?\s*(\S+)\Z")
LATEST = "latest"


def is_valid(text: object) -> bool:
    """Is `text` a semantic version 2.0.0 (no leading zeros, no surrounding space)?"""
    return isinstance(text, str) and bool(_SEMVER.match(text))


def parse(text: str) -> semver.Version:
    """The version, or Invalid naming the text."""
    if not is_valid(text):
        raise Invalid(f"not a semantic version: {str(text)[:80]}")
    return semver.Version.parse(text)


def is_pre_release(text: str) -> bool:
    """Does the version carry a pre-release part?"""
    return parse(text).prerelease is not None


def sort_key(text: str) -> semver.Version:
    """A key ordering versions by semantic-version precedence."""
    return parse(text)


def sorted_versions(versions: Iterable[str], descending: bool = False) -> list[str]:
    """Versions ordered by precedence (ties, which differ in build only, by text)."""
    return sorted(versions, key=lambda v: (parse(v), v), reverse=descending)


def latest(versions: Iterable[str]) -> str | None:
    """The highest release, or the highest pre-release when there is no release."""
    ordered = sorted_versions(versions, descending=True)
    releases = [v for v in ordered if not is_pre_release(v)]
    if releases:
        return releases[0]
    return ordered[0] if ordered else None


@dataclass(frozen=True)
class Comparator:
    op: str
    version: semver.Version

    def matches(self, v: semver.Version) -> bool:
        c = v.compare(self.version)
        return {
            ">=": c >= 0,
            ">": c > 0,
            "<=": c <= 0,
            "<": c < 0,
            "=": c == 0,
        }[self.op]


@dataclass(frozen=True)
class Selector:
    """A parsed version selector: exact, latest, or a set of comparators (all must hold)."""

    text: str
    kind: str  # "exact" | "latest" | "range"
    comparators: tuple[Comparator, ...] = ()

    def matches(self, version: str, include_pre_release: bool = False) -> bool:
        """Does `version` satisfy this selector (ranges skip pre-releases unless asked)?"""
        if self.kind == "exact":
            return version == self.text
        v = parse(version)
        if self.kind == "latest":
            return include_pre_release or v.prerelease is None
        if v.prerelease is not None and not include_pre_release:
            return False
        return all(c.matches(v) for c in self.comparators)

    def resolve(self, versions: Iterable[str], include_pre_release: bool = False) -> str | None:
        """The version this selector picks from `versions`, or None."""
        candidates = list(versions)
        if self.kind == "exact":
            return self.text if self.text in candidates else None
        if self.kind == "latest":
            if include_pre_release:
                ordered = sorted_versions(candidates, descending=True)
                return ordered[0] if ordered else None
            return latest(candidates)
        matching = [v for v in candidates if self.matches(v, include_pre_release)]
        ordered = sorted_versions(matching, descending=True)
        return ordered[0] if ordered else None


def _partial(text: str) -> tuple[int, int | None, int | None]:
    match = _PARTIAL.match(text)
    if not match:
        raise Invalid(f"not a version or version range: {text[:80]}")
    parts = [None if p is None or p in "xX*" else int(p) for p in match.groups()]
    if parts[1] is None and parts[2] is not None:
        raise Invalid(f"not a version or version range: {text[:80]}")
    return parts[0], parts[1], parts[2]  # type: ignore[return-value]


def _v(major: int, minor: int, patch: int) -> semver.Version:
    return semver.Version(major, minor, patch)


def _caret(text: str) -> tuple[Comparator, ...]:
    if is_valid(text):
        low = parse(text)
        major, minor, patch = low.major, low.minor, low.patch
    else:
        major, minor, patch = _partial(text)
        low = _v(major, minor or 0, patch or 0)
    if major > 0 or minor is None:
        high = _v(major + 1, 0, 0)
    elif minor > 0 or patch is None:
        high = _v(0, minor + 1, 0)
    else:
        high = _v(0, 0, patch + 1)
    return Comparator(">=", low), Comparator("<", high)


def _tilde(text: str) -> tuple[Comparator, ...]:
    if is_valid(text):
        low = parse(text)
        return Comparator(">=", low), Comparator("<", _v(low.major, low.minor + 1, 0))
    major, minor, patch = _partial(text)
    low = _v(major, minor or 0, patch or 0)
    high = _v(major + 1, 0, 0) if minor is None else _v(major, minor + 1, 0)
    return Comparator(">=", low), Comparator("<", high)


def _comparators(text: str) -> tuple[Comparator, ...]:
    found: list[Comparator] = []
    tokens = re.findall(r"(?:>=|<=|>|<|=)?\s*[^\s<>=]+", text)
    if "".join(t.replace(" ", "") for t in tokens) != text.replace(" ", ""):
        raise Invalid(f"not a version or version range: {text[:80]}")
    for token in tokens:
        match = _COMPARATOR.match(token.strip())
        if not match:
            raise Invalid(f"not a version or version range: {text[:80]}")
        op, version = match.group(1) or "=", match.group(2)
        if is_valid(version):
            found.append(Comparator(op, parse(version)))
            continue
        major, minor, patch = _partial(version)
        found.extend(_partial_comparator(op, major, minor, patch))
    return tuple(found)


def _partial_comparator(op: str, major: int, minor: int | None, patch: int | None) -> list:
    low = _v(major, minor or 0, patch or 0)
    high = _v(major + 1, 0, 0) if minor is None else _v(major, minor + 1, 0)
    if patch is not None:
        high = _v(major, minor or 0, patch + 1)
    if op == "=":
        return [Comparator(">=", low), Comparator("<", high)]
    if op in (">=", "<"):
        return [Comparator(op, low)]
    return [Comparator(">=" if op == ">" else "<", high)]


def parse_selector(text: str | None) -> Selector:
    """Parse a selector; None or empty means `latest`. Invalid when it is neither."""
    if text is None or not str(text).strip():
        return Selector(LATEST, "latest")
    text = str(text).strip()
    if len(text) > 256:
        raise Invalid("version selector over 256 characters")
    if text == LATEST:
        return Selector(text, "latest")
    if is_valid(text):
        return Selector(text, "exact")
    if text.startswith("^"):
        return Selector(text, "range", _caret(text[1:].strip()))
    if text.startswith("~"):
        return Selector(text, "range", _tilde(text[1:].lstrip(">").strip()))
    return Selector(text, "range", _comparators(text))
