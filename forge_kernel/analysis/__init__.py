"""Analysis of stored runs: summaries, comparisons, the release gate, ablation cards, the failure ledger, and the
statistics behind them. Every function takes Run handles (``open_run``) and returns pandas DataFrames or results
that show themselves in a notebook (HTML) and as text, for notebooks and the CLI alike.
"""
from .ablation import AblationCard, ablation_card, ablation_cards
from .comparison import AgentSide, Comparison, agent_side, compare, compare_sides
from .criteria import CitationChecks, CriterionConfusion, citation_checks, criterion_confusion
from .gate import GatePolicy, GateResult, declared_policy, evaluate, load_policy
from .ledger import Ledger, failure_ledger, read_ledger, write_ledger
from .stats import Rate, brier, ece, mcnemar_exact, pass_at_k, pass_hat_k, percentile, reliability, wilson
from .summary import Table, markdown_table, pass_rates, run_summary
from .triage import TriageFile, load_triage

__all__ = [
    "AblationCard", "AgentSide", "CitationChecks", "Comparison", "CriterionConfusion", "GatePolicy", "GateResult",
    "Ledger", "Rate", "Table", "TriageFile", "ablation_card", "ablation_cards", "agent_side", "brier",
    "citation_checks", "compare", "compare_sides", "criterion_confusion", "declared_policy", "ece", "evaluate",
    "failure_ledger", "load_policy", "load_triage", "markdown_table", "mcnemar_exact", "pass_at_k", "pass_hat_k",
    "pass_rates", "percentile", "read_ledger", "reliability", "run_summary", "wilson", "write_ledger",
]
