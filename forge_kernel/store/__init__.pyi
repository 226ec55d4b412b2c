# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .loaders import (
    iter_trials as iter_trials,
    load_events as load_events,
    load_trials as load_trials,
    load_verdicts as load_verdicts,
    read_trial as read_trial,
)
from .matching import (
    STATES as STATES,
    Gold as Gold,
    Key as Key,
    evidence_of as evidence_of,
    gold_criteria as gold_criteria,
    reported_criteria as reported_criteria,
    status_of as status_of,
)
from .packages import run_packages as run_packages
from .records import TrialRecord as TrialRecord, Ungraded as Ungraded
from .run import Run as Run, Trial as Trial, open_run as open_run
from .run_store import (
    DB_NAME as DB_NAME,
    OUTSIDE as OUTSIDE,
    SCHEMA_VERSION as SCHEMA_VERSION,
    RunLock as RunLock,
    RunStore as RunStore,
    trial_rows as trial_rows,
    utc_now as utc_now,
)
from .snapshots import stored_files as stored_files
