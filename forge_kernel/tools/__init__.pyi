# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .base import (
    ANY_TYPE as ANY_TYPE,
    TOOLS as TOOLS,
    Args as Args,
    Tool as Tool,
    ToolContext as ToolContext,
    ToolError as ToolError,
    tool as tool,
)
from .knowledge import dose_code as dose_code, drug_names as drug_names, lookup_key as lookup_key, table as table
from .protocols import (
    code_label as code_label,
    criterion_codes as criterion_codes,
    criterion_leaves as criterion_leaves,
    criterion_window as criterion_window,
)
from .session import BudgetExceeded as BudgetExceeded, ToolSession as ToolSession
