"""Generic FHIR tools: search, read and create any resource type, as a FHIR REST client would, with the policy and the
record of every tool. Resources are handed out as they are, whole; searches are paged (``_count``, ``page_token``)
within the reply cap."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Annotated, Any
from weakref import WeakKeyDictionary

from pydantic import Field, ValidationError, field_validator, model_validator

from ..ehr import EHRImage, Key, parse_time, patient_of, resource_matches, time_of
from ._paging import REPLY_CAP, RESERVE, Cursor, size, take
from ._reads import require_patient
from .base import ANY_TYPE, ID_MAX, Args, Refers, ToolContext, ToolError, tool

RESOURCE_TYPE = Field(pattern=r"^[A-Z][A-Za-z]{1,63}$", description="A FHIR R4 resource type, e.g. Observation.")
FHIR_DATE = r"^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$"
PAGE_SIZE = 20
"""Resources on a page of ``fhir_search`` unless ``_count`` says otherwise (at most ``MAX_PAGE``)."""
MAX_PAGE = 100


class FhirSearchArgs(Args):
    type: str = RESOURCE_TYPE
    patient: Annotated[str | None, Refers("Patient")] = Field(
        None,
        max_length=ID_MAX,
        description="The patient's id; omitted: the current patient's records and those of no patient "
        "(Practitioner, Organization, Medication, ...).",
    )
    code: str | None = Field(None, max_length=200, description="A code, display or name, e.g. 4548-4 or HbA1c.")
    date_ge: str | None = Field(None, pattern=FHIR_DATE, description="Only records of this date or later.")
    date_le: str | None = Field(None, pattern=FHIR_DATE, description="Only records of this date or earlier.")
    name: str | None = Field(None, max_length=200, description="Patient only: part of a given or family name.")
    birthdate: str | None = Field(None, pattern=FHIR_DATE, description="Patient only: the birth date, e.g. 1962-04-29.")
    identifier: str | None = Field(
        None, max_length=200, description="Patient only: an identifier's value, or system|value (an MRN)."
    )
    count: int = Field(PAGE_SIZE, ge=1, le=MAX_PAGE, alias="_count", description="Resources on a page.")
    page_token: str | None = Field(None, max_length=ID_MAX, description="The `next` of the previous page.")

    @model_validator(mode="after")
    def _patient_parameters(self) -> FhirSearchArgs:
        if self.type != "Patient" and (self.name or self.birthdate or self.identifier):
            raise ValueError("name, birthdate and identifier search Patients only")
        return self

    def resource_type(self) -> str:
        return self.type


@tool("fhir_search", kind="read")
def fhir_search(ctx: ToolContext, args: FhirSearchArgs) -> dict:
    """Search FHIR resources of any type by patient, code and date (the record's clinical time), newest first
    (records without a date last); Patients also by name, birth date and identifier (only the current patient can
    be found). Returns {total, entry: [resources, whole], next}: pass `next` as page_token for the following
    page."""
    found = [r for r in matches(ctx, args) if is_the_patient_asked(r, args)]
    cursor = Cursor.parse(args.page_token) if args.page_token else Cursor()
    room = REPLY_CAP - RESERVE - size({"total": len(found), "entry": [], "next": None})
    page, nxt = take(found, cursor, room, args.count)
    return {"total": len(found), "entry": page, "next": nxt.token if nxt else None}


def matches(ctx: ToolContext, args: FhirSearchArgs) -> list[dict[str, Any]]:
    """The resources a search finds, newest first (by clinical time; undated ones last, in their stored order)."""
    since = None if args.date_ge is None else parse_time(args.date_ge, ctx.view.image.tz)
    until = None if args.date_le is None else end_of(args.date_le, ctx)
    if args.patient is not None:
        require_patient(ctx, args.patient)
        found = ctx.view.search(args.patient, args.type, since, until, args.code)
    else:
        found = ctx.view.search(ctx.patient_id, args.type, since, until, args.code)
        found += [r for r in shared(ctx, args.type) if fits(r, ctx, since, until, args.code)]
    return sorted(found, key=lambda r: -t if (t := time_of(r, ctx.view.image.tz)) is not None else float("inf"))


def is_the_patient_asked(resource: dict[str, Any], args: FhirSearchArgs) -> bool:
    """A Patient found has the name, birth date and identifier asked for (any resource else is kept)."""
    if resource.get("resourceType") != "Patient":
        return True
    names = [
        " ".join([*n.get("given", []), n.get("family", ""), n.get("text", "")]).lower()
        for n in resource.get("name", [])
        if isinstance(n, dict)
    ]
    system, _, value = (args.identifier or "").rpartition("|")
    identifiers = [i for i in resource.get("identifier", []) if isinstance(i, dict)]
    return (
        (args.name is None or any(args.name.lower() in n for n in names))
        and (args.birthdate is None or resource.get("birthDate") == args.birthdate)
        and (
            args.identifier is None
            or any(i.get("value") == value and (not system or i.get("system") == system) for i in identifiers)
        )
    )


def end_of(value: str, ctx: ToolContext) -> float:
    """The last moment of a FHIR date (a year, a month or a day) or the moment of a dateTime."""
    if "T" in value:
        return parse_time(value, ctx.view.image.tz)
    year, month, day = (int(part) for part in [*value.split("-"), "1", "1"][:3])
    start = date(year, month, day)
    after = (
        date(year + 1, 1, 1)
        if len(value) == 4
        else date(year + month // 12, month % 12 + 1, 1)
        if len(value) == 7
        else start + timedelta(days=1)
    )
    return parse_time(after.isoformat(), ctx.view.image.tz) - 0.001


SHARED: WeakKeyDictionary[EHRImage, dict[str, list[Key]]] = WeakKeyDictionary()
"""Per image, the keys of its resources that belong to no patient, by type (found once per image)."""


def shared(ctx: ToolContext, rtype: str) -> Iterator[dict[str, Any]]:
    """The resources of a type that belong to no patient, as the view has them."""
    image = ctx.view.image
    if image not in SHARED:
        by_type: dict[str, list[Key]] = {}
        for key, stored in image.resources.items():
            if patient_of(stored) is None:
                by_type.setdefault(key[0], []).append(key)
        SHARED[image] = by_type
    for key in SHARED[image].get(rtype, []):
        if (resource := ctx.view.get(*key)) is not None:
            yield resource


def fits(
    resource: dict[str, Any], ctx: ToolContext, since: float | None, until: float | None, code: str | None
) -> bool:
    """A shared resource in the search's window (an undated one only when no window is given) and of its code, and
    not after the clock."""
    when = time_of(resource, ctx.view.image.tz)
    if when is None:
        in_window = since is None and until is None
    else:
        in_window = when <= ctx.view.now.timestamp() and (since is None or since <= when)
        in_window = in_window and (until is None or when <= until)
    return in_window and (code is None or resource_matches(resource, code))


class FhirReadArgs(Args):
    type: str = RESOURCE_TYPE
    id: str = Field(max_length=ID_MAX, description="The resource's id.")

    def resource_type(self) -> str:
        return self.type

    def records(self) -> Iterator[tuple[str, str]]:
        yield self.type, self.id


@tool("fhir_read", kind="read")
def fhir_read(ctx: ToolContext, args: FhirReadArgs) -> dict:
    """Read one FHIR resource of any type by type and id, as it is, whole."""
    resource = ctx.view.get(args.type, args.id)
    when = None if resource is None else time_of(resource, ctx.view.image.tz)
    if resource is None or (when is not None and when > ctx.view.now.timestamp()):
        raise ToolError("not_found", f"no {args.type}/{args.id}")
    found: dict = json.loads(json.dumps(resource))
    return found


class FhirCreateArgs(Args):
    resource: dict[str, Any] = Field(
        description="A FHIR R4 resource as JSON, its subject (or patient) the current patient; the id is assigned."
    )
    idempotency_key: str | None = Field(
        None, max_length=ID_MAX, description="Repeat a write with the same key and nothing new is created."
    )

    @field_validator("resource")
    @classmethod
    def bounded(cls, resource: dict[str, Any]) -> dict[str, Any]:
        if size(resource) > REPLY_CAP:
            raise ValueError(f"larger than {REPLY_CAP // 1024} KiB")
        return resource

    def resource_type(self) -> str | None:
        rtype = self.resource.get("resourceType")
        return rtype if isinstance(rtype, str) else None


@tool("fhir_create", kind="write", writes=ANY_TYPE)
def fhir_create(ctx: ToolContext, args: FhirCreateArgs) -> dict:
    """Create one FHIR R4 resource of a type the task may write (e.g. an Observation with valueString "118/77 mmHg",
    a ServiceRequest with a code, a note and a scheduled time) for the current patient; returns its type and id."""
    resource = {k: v for k, v in args.resource.items() if k != "id"}
    validate(resource)
    if patient_of(resource) != ctx.patient_id:
        raise ToolError("invalid_args", f"resource.subject: must be Patient/{ctx.patient_id}, the current patient")
    created = ctx.view.create(resource)
    return {"resourceType": created["resourceType"], "id": created["id"]}


def validate(resource: dict[str, Any]) -> None:
    """Check a resource with fhir.resources R4B; a ToolError naming the first invalid field."""
    from fhir.resources.R4B import get_fhir_model_class  # slow import: only when a resource is created

    rtype = resource.get("resourceType")
    try:
        model = get_fhir_model_class(str(rtype))
    except (KeyError, ValueError):
        raise ToolError("invalid_args", f"resource.resourceType: {rtype!r} is no FHIR R4 resource type") from None
    try:
        model.model_validate(resource)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in ("resource", *err["loc"]))
        raise ToolError("invalid_args", f"{where}: {' '.join(str(err['msg']).split())}") from None
