# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .fhir_serve import serve_fhir as serve_fhir
from .grading import grade_trajectory as grade_trajectory, regrade as regrade, trajectory_json as trajectory_json
from .impact import (
    IMPACT_FILE as IMPACT_FILE,
    ImpactMap as ImpactMap,
    Selection as Selection,
    changed_since as changed_since,
    read_impact as read_impact,
    run_commands as run_commands,
    select_for_change as select_for_change,
)
from .local_model import (
    SMALL_SUITE as SMALL_SUITE,
    config_path as config_path,
    evaluate_local_model as evaluate_local_model,
)
from .mcp_serve import serve_mcp as serve_mcp
from .repro import COMMAND as COMMAND, write_bundles as write_bundles
from .run import RunOutcome as RunOutcome, RunSpec as RunSpec, execute as execute, load_suite as load_suite
from .seeds import trial_seed as trial_seed
from .selftest import (
    PROBLEMS as PROBLEMS,
    CaseResult as CaseResult,
    JudgeAgreement as JudgeAgreement,
    MutationReport as MutationReport,
    failing_hard as failing_hard,
    judge_agreements as judge_agreements,
    judges_of as judges_of,
    mutation_test as mutation_test,
    operator_totals as operator_totals,
    operators_line as operators_line,
    selftest_package as selftest_package,
    totals_line as totals_line,
)
from .trial import Images as Images, run_trial as run_trial
from .validate import check_halves as check_halves, check_package as check_package, package_problems as package_problems
