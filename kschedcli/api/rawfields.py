"""Reading the raw API objects' fields leniently: a value of the wrong type reads as absent (the
places that must refuse it have already done so in validation)."""

from __future__ import annotations

from typing import Any


def as_dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def as_list(v: Any) -> list:
    return v if isinstance(v, list) else []
