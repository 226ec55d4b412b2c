"""The engine: trial runner, run orchestration with resume, seeds, manifests and package checks."""
from .run import RunOutcome, RunSpec, execute, load_suite
from .seeds import trial_seed
from .trial import Images, run_trial

__all__ = ["Images", "RunOutcome", "RunSpec", "execute", "load_suite", "run_trial", "trial_seed"]
