"""Printing results: JSON for scripts, short text for people."""

from __future__ import annotations

import json
from typing import Any

import click


def emit(value: Any, as_json: bool, text: str | None = None) -> None:
    """Print `value` as JSON when asked, else `text` (or JSON when no text is given)."""
    if as_json or text is None:
        click.echo(json.dumps(value, indent=2, sort_keys=True))
    else:
        click.echo(text)
