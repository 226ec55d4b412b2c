"""The errors a user can cause: one family, each naming the file (or option), the field and what is wrong.

``ForgeError`` is the root; the ``forge`` command prints any of them as one line ``file: field: message`` and exits
2. The subclasses say which input was wrong: a package or format file (``SpecError``), a run store
(``StoreError``), a release-gate policy (``PolicyError``), an agent (``AgentError``), the command's options
(``UsageError``), or a registration (``CatalogError``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # this module is imported where pydantic is not
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails


class ForgeError(Exception):
    """Bad input from a user; printed as one line ``file: field: message``."""

    def __init__(self, file: object, field: str, message: str):
        super().__init__(f"{file}: {field}: {message}")
        self.file = str(file)
        self.field = field
        self.message = message


class SpecError(ForgeError):
    """A package, hidden half, trajectory or other format file that is missing, malformed or inconsistent."""

    @classmethod
    def from_validation(cls, file: object, exc: ValidationError) -> SpecError:
        """First error of a pydantic ValidationError, as a SpecError."""
        return cls.from_error(file, exc.errors()[0])

    @classmethod
    def from_error(cls, file: object, err: ErrorDetails) -> SpecError:
        """One item of a pydantic ValidationError's ``errors()``, as a SpecError."""
        field = ".".join(str(p) for p in err["loc"]) or "(root)"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        return cls(file, field, message)


class StoreError(ForgeError):
    """A run store that is missing, damaged, foreign, busy, or does not hold what was asked for."""


class PolicyError(ForgeError):
    """A release-gate policy that cannot be applied to a run (e.g. not the one declared before it)."""


class AgentError(ForgeError):
    """An ``--agent`` entry that names no agent, cannot be imported, built or started."""


class UsageError(ForgeError):
    """Options that do not go together, or that this machine cannot honour."""


class CatalogError(ForgeError):
    """A tool, verifier kind, agent or gate check registered under a name already taken."""


class BudgetExceeded(Exception):
    """A trial used up a budget (calls or cost): it ends the trial, never the run. Agents may catch it.
    Not a ``ForgeError``: it is the agent's outcome, not the user's mistake."""
