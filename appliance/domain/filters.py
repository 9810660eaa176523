"""The list `filter` syntax: `[key1=value1,key2=value2&value3]` (spec 4.0)."""

from __future__ import annotations

from appliance.errors import Invalid


def parse_filter(
    raw: str | None, allowed: tuple[str, ...] | frozenset[str]
) -> dict[str, list[str]]:
    """key1 = value1 AND key2 IN (value2, value3); unknown keys are refused."""
    if raw is None or raw.strip() in ("", "[]"):
        return {}
    text = raw.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise Invalid("filter must look like [key1=value1,key2=value2&value3]")
    result: dict[str, list[str]] = {}
    for clause in text[1:-1].split(","):
        if not clause.strip():
            continue
        key, sep, values = clause.partition("=")
        key = key.strip()
        if not sep or not key:
            raise Invalid(f"filter clause is not key=value: {clause.strip()[:80]}")
        if key not in allowed:
            known = ", ".join(sorted(allowed)) or "none"
            raise Invalid(f"unknown filter key: {key[:80]} (allowed: {known})")
        items = [v.strip() for v in values.split("&") if v.strip()]
        if not items:
            raise Invalid(f"filter key {key} has no value")
        result.setdefault(key, []).extend(items)
    return result
