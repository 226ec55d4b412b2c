"""Models behind OpenAI-compatible endpoints: their config files, and one turn of a chat through the official SDK
with retries, shared rate limits and the price of the tokens. Used by the ``llm`` agent and the judge verifier
kind; a small model served on this machine (``LocalModel``). The names below are imported on first use."""

from .. import _lazy

_HOMES = {
    "client": ("ModelClient", "ModelError"),
    "config": ("ModelConfig", "Price", "RateLimits", "load_model_config"),
    "limits": ("RateLimiter",),
    "local": ("LocalModel", "local_model_problem"),
}

__all__ = [
    "LocalModel",
    "ModelClient",
    "ModelConfig",
    "ModelError",
    "Price",
    "RateLimiter",
    "RateLimits",
    "load_model_config",
    "local_model_problem",
]
__getattr__, __dir__ = _lazy(__name__, _HOMES, __all__)
