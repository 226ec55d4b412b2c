# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .fhir import (
    DOSE as DOSE,
    assessment as assessment,
    medication_request as medication_request,
    observation as observation,
    patient_mrn as patient_mrn,
    patient_name as patient_name,
    service_request as service_request,
    task as task,
)
from .image import (
    EHRImage as EHRImage,
    Key as Key,
    codes_of as codes_of,
    codings_of as codings_of,
    parse_time as parse_time,
    patient_of as patient_of,
    time_of as time_of,
)
from .patch import resource_key as resource_key
from .summaries import age_at as age_at, concept_text as concept_text, summarize as summarize, when as when
from .terminology import (
    TABLES as TABLES,
    lookup_key as lookup_key,
    resource_matches as resource_matches,
    search_hint as search_hint,
)
from .timeline import (
    Change as Change,
    FieldChange as FieldChange,
    ResourceDiff as ResourceDiff,
    StateAt as StateAt,
    Timeline as Timeline,
)
from .view import EHRView as EHRView
