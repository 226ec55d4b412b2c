# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .client import ModelClient as ModelClient, ModelError as ModelError
from .config import (
    ModelConfig as ModelConfig,
    Price as Price,
    RateLimits as RateLimits,
    load_model_config as load_model_config,
)
from .limits import RateLimiter as RateLimiter
from .local import LocalModel as LocalModel, local_model_problem as local_model_problem
