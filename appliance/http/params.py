"""Request input at the edge: JSON bodies with size and depth limits, list parameters."""

from __future__ import annotations

import json
from typing import Any

import falcon

from appliance.domain.listing import ListQuery, ListSpec, parse_list_query, parse_switch
from appliance.errors import Invalid, PayloadTooLarge, UnsupportedMediaType

_JSON_TYPES = ("application/json",)


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def read_json(req: falcon.Request, required: bool = True, max_bytes: int | None = None) -> Any:
    """The JSON body: 413 over the limit before parsing, 400 when malformed or too deep."""
    limits = req.context.services.ctx.settings.limits
    body_limit = max_bytes or limits.json_body
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if media_type and media_type not in _JSON_TYPES and not media_type.endswith("+json"):
        raise UnsupportedMediaType(f"expected application/json, got {media_type[:80]}")
    if req.content_length is not None and req.content_length > body_limit:
        raise PayloadTooLarge(f"JSON body over the limit of {body_limit} bytes")
    raw = req.bounded_stream.read(body_limit + 1)
    if len(raw) > body_limit:
        raise PayloadTooLarge(f"JSON body over the limit of {body_limit} bytes")
    if not raw.strip():
        if required:
            raise Invalid("a JSON body is required")
        return None
    try:
        value = json.loads(raw)
    except RecursionError:
        raise Invalid(f"JSON nested deeper than {limits.json_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise Invalid(f"malformed JSON body: {str(exc)[:200]}") from None
    if _depth_exceeds(value, limits.json_depth):
        raise Invalid(f"JSON nested deeper than {limits.json_depth} levels")
    return value


def read_object(
    req: falcon.Request, required: bool = True, max_bytes: int | None = None
) -> dict[str, Any]:
    """A JSON body that must be an object (empty object when optional and absent)."""
    value = read_json(req, required=required, max_bytes=max_bytes)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid("the JSON body must be an object")
    return value


def list_query(req: falcon.Request, spec: ListSpec) -> ListQuery:
    return parse_list_query(req.params, spec)


def switch(req: falcon.Request, name: str, default: bool) -> bool:
    return parse_switch(req.params, name, default)
