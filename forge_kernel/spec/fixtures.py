"""FHIR R4 validation of fixture bundles with fhir.resources.R4B, cached by file hash."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import ValidationError

from .errors import SpecError
from .images import SharedImage, gunzip
from .loading import parse_json, read_file


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "medagent-forge" / "fhir-r4b-valid"


def validate_fixture(path: Path) -> None:
    """Raise a SpecError naming the first invalid field; a file once found valid is not checked again. A ``.gz``
    file is read unzipped."""
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    marker = cache_dir() / digest
    if marker.exists():
        return
    from fhir.resources.R4B.bundle import (
        Bundle,  # slow import: only when a check is needed
    )

    data = gunzip(raw, path) if path.name.endswith(".gz") else raw
    try:
        Bundle.model_validate(parse_json(read_file(lambda _: data, path, path.name), path))
    except ValidationError as exc:
        raise SpecError.from_validation(path, exc) from None
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()


def validate_image(image: SharedImage) -> None:
    """Validate every bundle of a shared image (``validate_fixture``), once per process for all its packages."""
    if image.validated:
        return
    for path in image.bundles:
        validate_fixture(path)
    image.validated = True
