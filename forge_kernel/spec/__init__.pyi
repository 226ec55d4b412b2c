# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .answer import answer_schema as answer_schema
from .catalog_schema import hidden_schema as hidden_schema, tool_names as tool_names
from .compact import (
    SYNTHETIC_BANNER as SYNTHETIC_BANNER,
    CompactResource as CompactResource,
    CompactTrajectory as CompactTrajectory,
    CompactVerdict as CompactVerdict,
    compact_turns as compact_turns,
)
from .console import echo as echo, printable as printable
from .edits import (
    Edit as Edit,
    EditError as EditError,
    apply_edits as apply_edits,
    call_labels as call_labels,
    edits_between as edits_between,
)
from .errors import (
    AgentError as AgentError,
    BudgetExceeded as BudgetExceeded,
    CatalogError as CatalogError,
    ForgeError as ForgeError,
    PolicyError as PolicyError,
    SpecError as SpecError,
    StoreError as StoreError,
    UsageError as UsageError,
)
from .fixtures import validate_fixture as validate_fixture, validate_image as validate_image
from .gate_policy import DEFAULT_GATE as DEFAULT_GATE, GatePolicy as GatePolicy, read_policy as read_policy
from .grading import ERROR_PREFIX as ERROR_PREFIX, Grading as Grading, Scores as Scores, Verdict as Verdict
from .hashing import FORMAT_VERSION as FORMAT_VERSION, canonical_json as canonical_json, content_hash as content_hash
from .hidden import (
    RUBRIC as RUBRIC,
    Counterexample as Counterexample,
    HiddenHalf as HiddenHalf,
    MutantOperator as MutantOperator,
    ValidMutant as ValidMutant,
    ValidVariant as ValidVariant,
    VerifierUse as VerifierUse,
)
from .images import IMAGES_DIR as IMAGES_DIR, ImageManifest as ImageManifest, SharedImage as SharedImage
from .loading import (
    PACKAGE_FILE as PACKAGE_FILE,
    SUITE_DEFAULTS as SUITE_DEFAULTS,
    Package as Package,
    bundle_resources as bundle_resources,
    find_packages as find_packages,
    image_above as image_above,
    load_package as load_package,
    load_trajectory as load_trajectory,
    overlay_bundles as overlay_bundles,
    package_from_files as package_from_files,
    parse_model as parse_model,
    read_json as read_json,
    read_yaml as read_yaml,
)
from .package import (
    AnswerField as AnswerField,
    Budget as Budget,
    Environment as Environment,
    Fault as Fault,
    Policy as Policy,
    Precedence as Precedence,
    Strict as Strict,
    TaskPackage as TaskPackage,
    TaskText as TaskText,
)
from .requirements import (
    REQUIREMENTS_FILE as REQUIREMENTS_FILE,
    Coverage as Coverage,
    Requirement as Requirement,
    Requirements as Requirements,
    TraceMatrix as TraceMatrix,
    read_requirements as read_requirements,
    trace_matrix as trace_matrix,
)
from .suites import SUITE_FILE as SUITE_FILE, HiddenDefaults as HiddenDefaults, SuiteDefaults as SuiteDefaults
from .synthea import ImportReport as ImportReport, import_synthea as import_synthea
from .trajectory import (
    CROSS_PATIENT as CROSS_PATIENT,
    PRECEDENCE as PRECEDENCE,
    TURN_TEXT as TURN_TEXT,
    UNAUTHORIZED_READ as UNAUTHORIZED_READ,
    UNAUTHORIZED_WRITE as UNAUTHORIZED_WRITE,
    AgentResult as AgentResult,
    AgentStatus as AgentStatus,
    Event as Event,
    ModelTurn as ModelTurn,
    asked_steps as asked_steps,
    compact_json as compact_json,
)
from .trajectory_file import RESULT as RESULT, ToolCall as ToolCall, TrajectoryFile as TrajectoryFile
