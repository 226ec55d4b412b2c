"""Analysis of stored runs: summaries, comparisons, the release gate and the statistics behind them.

Every function returns pandas DataFrames or plain pydantic results, for notebooks and the CLI alike.
"""
from .comparison import Comparison, compare
from .gate import GatePolicy, GateResult, evaluate, load_policy
from .stats import Rate, brier, ece, mcnemar_exact, pass_at_k, pass_hat_k, percentile, reliability, wilson
from .summary import markdown_table, pass_rates, run_summary
from .trials import trial_table

__all__ = [
    "Comparison", "GatePolicy", "GateResult", "Rate", "brier", "compare", "ece", "evaluate", "load_policy",
    "markdown_table", "mcnemar_exact", "pass_at_k", "pass_hat_k", "pass_rates", "percentile", "reliability",
    "run_summary", "trial_table", "wilson",
]
