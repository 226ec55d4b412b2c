"""Analysis of stored runs (summaries now; comparison, gate and ledger follow)."""
from .summary import run_summary

__all__ = ["run_summary"]
