"""The ``forge`` command (``main``, the entry point). Thin: it parses, calls the functions of the package, prints.

Each group of commands has its module: ``_run`` (run), ``_model`` (model evaluate), ``_read`` (summary, compare,
ablation, ledger, replay), ``_grading`` (grade, regrade), ``_serve`` (mcp serve, fhir serve), ``_packages`` (validate, selftest,
catalog), ``_change`` (select, trace), ``_release`` (release, keygen, signoff, verify); ``_forge`` gathers them into the group and prints a
user's mistake as one line (exit 2).
"""

from ._forge import main

__all__ = ["main"]
