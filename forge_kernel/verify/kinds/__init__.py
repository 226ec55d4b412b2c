"""The built-in verifier kinds; importing this package registers them."""
from . import answer, audit, budget, checks, evidence, grounding, safety, state, trace  # noqa: F401
