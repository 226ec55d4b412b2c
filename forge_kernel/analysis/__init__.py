"""Analysis of stored runs: summaries, comparisons, the release gate, ablation cards, the failure ledger, and the
statistics behind them. Every function returns pandas DataFrames or plain pydantic results, for notebooks and
the CLI alike.
"""
from .ablation import AblationCard, ablation_card
from .comparison import Comparison, compare
from .criteria import CitationChecks, CriterionConfusion, citation_checks, criterion_confusion
from .gate import GatePolicy, GateResult, declared_policy, evaluate, load_policy
from .ledger import failure_ledger, ledger_text, read_ledger, write_ledger
from .repro import ReproBundle, write_bundles
from .stats import Rate, brier, ece, mcnemar_exact, pass_at_k, pass_hat_k, percentile, reliability, wilson
from .summary import markdown_table, pass_rates, run_summary
from .triage import TriageFile, load_triage
from .trials import trial_table

__all__ = [
    "AblationCard", "CitationChecks", "Comparison", "CriterionConfusion", "GatePolicy", "GateResult", "Rate",
    "ReproBundle", "TriageFile", "ablation_card", "brier", "citation_checks", "compare", "criterion_confusion",
    "declared_policy", "ece", "evaluate", "failure_ledger", "ledger_text", "load_policy", "load_triage",
    "markdown_table", "mcnemar_exact", "pass_at_k", "pass_hat_k", "pass_rates", "percentile", "read_ledger",
    "reliability", "run_summary", "trial_table", "wilson", "write_bundles", "write_ledger",
]
