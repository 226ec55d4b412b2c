"""Content hashes: SHA-256 over canonical JSON, carrying a format version."""

from __future__ import annotations

import hashlib
import json
from typing import Any

FORMAT_VERSION = 1
"""Bump when what a hash covers, or how, changes."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(kind: str, value: Any) -> str:
    """``sha256:<hex>`` of a value, tagged with its kind and the format version."""
    payload = canonical_json({"format": FORMAT_VERSION, "kind": kind, "value": value})
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()
