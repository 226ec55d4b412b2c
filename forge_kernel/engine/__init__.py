"""The engine: trial runner, run orchestration with resume, seeds, manifests, package checks, selftest,
repro bundles and regrading. The names below are imported on first use."""
from .. import _lazy

_HOMES = {
    "grading": ("grade_trajectory", "regrade", "trajectory_json"),
    "local_model": ("SMALL_SUITE", "config_path", "evaluate_local_model"),
    "mcp_serve": ("serve_mcp",),
    "repro": ("COMMAND", "write_bundles"),
    "run": ("RunOutcome", "RunSpec", "execute", "load_suite"),
    "seeds": ("trial_seed",),
    "selftest": ("CaseResult", "JudgeAgreement", "MutationReport", "PROBLEMS", "failing_hard", "judge_agreements",
                 "judges_of", "mutation_test", "operator_totals", "operators_line", "selftest_package", "totals_line"),
    "trial": ("Images", "run_trial"),
    "validate": ("check_halves", "check_package"),
}

__all__ = [
    "COMMAND", "CaseResult", "Images", "JudgeAgreement", "MutationReport", "PROBLEMS", "RunOutcome", "RunSpec",
    "SMALL_SUITE", "check_halves", "check_package", "config_path", "evaluate_local_model", "execute", "failing_hard",
    "grade_trajectory", "judge_agreements", "judges_of", "load_suite", "mutation_test", "operator_totals",
    "operators_line", "regrade", "run_trial", "selftest_package", "serve_mcp", "totals_line", "trajectory_json",
    "trial_seed", "write_bundles",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
