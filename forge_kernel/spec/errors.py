"""The one error type for a user's mistake: it names the file, the field and what is wrong."""
from __future__ import annotations


class SpecError(Exception):
    """Bad input from a user; printed as one line ``file: field: message``."""

    def __init__(self, file: object, field: str, message: str):
        super().__init__(f"{file}: {field}: {message}")
        self.file = str(file)
        self.field = field
        self.message = message

    @classmethod
    def from_validation(cls, file: object, exc) -> "SpecError":
        """First error of a pydantic ValidationError, as a SpecError."""
        return cls.from_error(file, exc.errors()[0])

    @classmethod
    def from_error(cls, file: object, err: dict) -> "SpecError":
        """One item of a pydantic ValidationError's ``errors()``, as a SpecError."""
        field = ".".join(str(p) for p in err["loc"]) or "(root)"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        return cls(file, field, message)


class BudgetExceeded(Exception):
    """A trial used up a budget (calls or cost): it ends the trial, never the run. Agents may catch it."""
