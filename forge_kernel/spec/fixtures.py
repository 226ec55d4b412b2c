"""FHIR R4 validation of fixture bundles with fhir.resources.R4B, cached by file hash."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import ValidationError

from .errors import SpecError
from .loading import read_json


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "medagent-forge" / "fhir-r4b-valid"


def validate_fixture(path: Path) -> None:
    """Raise a SpecError naming the first invalid field; a file once found valid is not checked again."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    marker = cache_dir() / digest
    if marker.exists():
        return
    from fhir.resources.R4B.bundle import (
        Bundle,  # slow import: only when a check is needed
    )

    try:
        Bundle.model_validate(read_json(path))
    except ValidationError as exc:
        raise SpecError.from_validation(path, exc) from None
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
