"""Analysis of stored runs (summaries now; comparison, gate and ledger follow)."""
from .summary import markdown_table, pass_rates, run_summary

__all__ = ["markdown_table", "pass_rates", "run_summary"]
