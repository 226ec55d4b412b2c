"""Analysis of stored runs: summaries, comparisons, the release gate, ablation cards, the failure ledger, and the
statistics behind them. Every function takes Run handles (``open_run``) and returns pandas DataFrames or results
that show themselves in a notebook (HTML) and as text, for notebooks and the CLI alike.

The names below are imported on first use: the failure ledger, say, loads neither comparisons nor the gate.
"""
from .. import _lazy

_HOMES = {
    "ablation": ("AblationCard", "ablation_card", "ablation_cards", "card"),
    "browse": ("SEVERITIES", "failure_rows", "latency_percentiles", "pass_rate_cells", "safety_findings"),
    "comparison": ("AgentSide", "Comparison", "SideSummary", "agent_side", "compare", "compare_sides"),
    "criteria": ("COLUMNS", "CitationChecks", "CriterionConfusion", "STATES", "citation_checks",
                 "criterion_confusion"),
    "display": ("markdown_lines", "seconds"),
    "gate": ("GatePolicy", "GateResult", "counts_against", "declared_policy", "evaluate", "load_policy"),
    "gate_checks": ("GATE_CHECKS", "gate_check", "soft_checks"),
    "ledger": ("Ledger", "failure_ledger", "read_ledger", "write_ledger"),
    "stats": ("Kappa", "Rate", "brier", "cohens_kappa", "ece", "mcnemar_exact", "pass_at_k", "pass_hat_k",
              "percentile", "reliability", "wilson"),
    "summary": ("Table", "markdown_table", "pass_rates", "run_summary", "usage"),
    "triage": ("TriageFile", "load_triage"),
}

__all__ = [
    "AblationCard", "AgentSide", "COLUMNS", "CitationChecks", "Comparison", "CriterionConfusion", "GATE_CHECKS",
    "GatePolicy", "GateResult", "Kappa", "Ledger", "Rate", "SEVERITIES", "STATES", "SideSummary", "Table",
    "TriageFile", "ablation_card", "ablation_cards", "agent_side", "brier", "card", "citation_checks", "cohens_kappa",
    "compare", "compare_sides", "counts_against", "criterion_confusion", "declared_policy", "ece", "evaluate",
    "failure_ledger", "failure_rows", "gate_check", "latency_percentiles", "load_policy", "load_triage",
    "markdown_lines", "markdown_table", "mcnemar_exact", "pass_at_k", "pass_hat_k", "pass_rate_cells", "pass_rates",
    "percentile", "read_ledger", "reliability", "run_summary", "safety_findings", "seconds", "soft_checks", "usage",
    "wilson", "write_ledger",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
