"""A model, as a config file names it: where it is served, how it is sampled, what it costs and how fast it may be
called. The same file serves the ``llm`` agent (``--agent llm:PATH``) and the judge verifier kind.

The key is never in the file: ``api_key_env`` names the environment variable that holds it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..spec import content_hash, parse_model, read_yaml

CONFIG_VERSION = 1
"""The format of a model config, part of its hash."""


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", strict=True)

    input: float = Field(0.0, ge=0)
    output: float = Field(0.0, ge=0)
    cached_input: float | None = Field(None, ge=0)
    """For prompt tokens the server had cached; ``input`` when not given."""

    def cost(self, prompt: int, completion: int, cached: int = 0) -> float:
        """The price of one call's tokens, in US dollars."""
        cached = min(cached, prompt)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((prompt - cached) * self.input + cached * cached_price + completion * self.output) / 1e6


class RateLimits(BaseModel):
    """How fast the model may be called, by all trials of the agent together (0: no limit)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    requests_per_minute: int = Field(0, ge=0)
    tokens_per_minute: int = Field(0, ge=0)


class ModelConfig(BaseModel):
    """One model behind an OpenAI-compatible ``/chat/completions`` endpoint, and how to call it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    """The agent's name in runs and reports; the config file's name (without ``.yaml``) when not given."""
    base_url: str = Field(pattern=r"^https?://")
    model: str = Field(min_length=1)
    api_key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The NAME of the environment variable that holds the key (none: a local server that wants no key)."""
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int | None = None
    """Sent to the server when given; a trial adds its own seed to it."""
    max_tokens: int = Field(1024, ge=1)
    """Per model turn."""
    max_turns: int = Field(20, ge=1, le=200)
    """Model turns per trial; the trial's call, time and cost budgets end it sooner."""
    price: Price = Field(default_factory=Price)
    timeout_s: float = Field(60.0, gt=0)
    """Per request."""
    retries: int = Field(4, ge=0, le=10)
    """Requests tried again after a rate limit (429), a server error (5xx), a timeout or a lost connection, with
    exponential backoff and jitter."""
    rate_limits: RateLimits = Field(default_factory=RateLimits)

    def agent_name(self, path: Path) -> str:
        return self.name or path.name.removesuffix(".yaml").removesuffix(".yml")

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical config with its format version (what a run's manifest records)."""
        return content_hash("model-config", {"config_version": CONFIG_VERSION, **self.model_dump(mode="json")})

    @property
    def version(self) -> str:
        """The agent's version: the model and the config's hash."""
        return f"{self.model}+{self.hash.removeprefix('sha256:')[:12]}"


def load_model_config(path: Path | str) -> ModelConfig:
    """The config in ``path``; a missing file or a bad field is one SpecError naming the file and the field."""
    return parse_model(ModelConfig, read_yaml(Path(path)), Path(path))
