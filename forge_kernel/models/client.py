"""One model turn over the OpenAI-compatible chat-completions protocol, through the official ``openai`` SDK (async
client): the request, bounded retries with backoff and jitter, the rate limits all trials of an agent share, the
price of the tokens and the time it took.

What a model answers is data from outside: it is parsed into plain values (a ``ModelTurn``, which the agent reports
as it is and the harness numbers), never trusted, and an error is a ``ModelError`` with a kind a caller can act on.
"""

from __future__ import annotations

import asyncio
import os
import random
from time import perf_counter

from ..spec import ModelTurn, compact_json as dumps
from .config import ModelConfig
from .limits import RateLimiter

JSON_HEADERS = {"content-type": "application/json"}
NO_KEY = "no-key"
"""What the SDK is given as the key of a server that wants none (it requires one)."""
PER_CLIENT = 8
"""Requests in flight on one SDK client before another is made (``ModelClient.client``)."""
BACKOFF_SECONDS = 0.5
"""The first retry's wait (doubled each time, with full jitter), unless the server says how long (Retry-After)."""
MAX_WAIT_SECONDS = 30.0
TOOL_CHOICE = "auto"
"""Sent with the tools: OpenAI's default, which llama-cpp-python's server needs said (without it, it ignores them)."""


class ModelError(Exception):
    """A request that failed for good: ``kind`` is context_length, rate_limited, server_error, timeout, connection,
    auth, bad_request or bad_reply."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class ModelClient:
    """Calls one configured model; shared by the trials of an agent (its limiter by all their processes)."""

    def __init__(self, config: ModelConfig, limiter: RateLimiter | None = None):
        self.config = config
        self.limiter = limiter or RateLimiter(config.rate_limits)
        self._clients: list = []
        self._busy: list[int] = []
        """Requests in flight on each of ``_clients``."""

    def client(self) -> int:
        """The SDK client a request goes out on, by its index: the least busy, or a new one when every one has
        ``PER_CLIENT`` requests in flight (the SDK's connection pool looks at each of its connections for every
        request: at 200 at once that was most of a turn's time). The first is made where the agent's factory is
        (before its workers are forked: it holds no connection until its first request, which each worker makes
        on its own). The key is read from its variable here, and kept nowhere else."""
        index = min(range(len(self._clients)), key=self._busy.__getitem__, default=None)
        if index is None or self._busy[index] >= PER_CLIENT:
            from openai import AsyncOpenAI

            key = os.environ.get(self.config.api_key_env, "") if self.config.api_key_env else NO_KEY
            self._clients.append(
                AsyncOpenAI(
                    base_url=self.config.base_url, api_key=key or NO_KEY, max_retries=0, timeout=self.config.timeout_s
                )
            )
            self._busy.append(0)
            index = len(self._clients) - 1
        return index

    async def aclose(self) -> None:
        """Close every SDK client (their connections)."""
        for client in self._clients:
            await client.close()

    async def complete(self, messages: list[dict], tools: list[dict], seed: int | None = None) -> ModelTurn:
        """One turn: the model's reply to ``messages`` with ``tools`` offered (``send``)."""
        return await self.send([dumps(m) for m in messages], dumps(tools) if tools else None, seed)

    async def send(self, messages: list[str], tools: str | None, seed: int | None = None) -> ModelTurn:
        """One turn, its messages and tools given as JSON text (a conversation encodes each message once, a
        package's tools are encoded already); tried again after a rate limit, a server error, a timeout or a lost
        connection, at most ``config.retries`` times; ModelError when it fails.

        The body is sent with the SDK's own ``post`` (its auth, errors and reply model): ``chat.completions.create``
        would walk every tool's schema to transform it, then encode the whole conversation again, which cost
        20 ms a turn with a package's tools (benchmarks/RESULTS.md, benchmark 11)."""
        import httpx2
        import openai

        config = self.config
        retries: list[str] = []
        fields = {
            "model": dumps(config.model),
            "temperature": dumps(config.temperature),
            "max_tokens": str(config.max_tokens),
            "seed": None if seed is None else str(seed),
            "tools": tools,
            "tool_choice": dumps(TOOL_CHOICE) if tools else None,
            "messages": f"[{','.join(messages)}]",
        }
        body = ("{" + ",".join(f'"{k}":{v}' for k, v in fields.items() if v) + "}").encode()
        estimate = len(body) // 4 + config.max_tokens if self.limiter.active else 0
        started = perf_counter()
        while True:
            await self.limiter.acquire(estimate)
            index = self.client()
            self._busy[index] += 1
            try:
                reply = await self._clients[index].post(
                    "/chat/completions", content=body, cast_to=httpx2.Response, options={"headers": JSON_HEADERS}
                )
                data = reply.json()
            except ValueError as exc:
                raise ModelError("bad_reply", f"the reply is not JSON ({exc})") from None
            except openai.APIError as exc:
                kind, wait = classify(exc)
                if kind not in RETRIED or len(retries) >= config.retries:
                    raise ModelError(kind, describe(exc)) from None
                retries.append(f"{kind}: {describe(exc)}"[:200])
                await asyncio.sleep(wait if wait is not None else backoff(len(retries)))
                continue
            finally:
                self._busy[index] -= 1
            completion = parsed(data, (perf_counter() - started) * 1000, retries)
            completion.cost = config.price.cost(
                completion.prompt_tokens, completion.completion_tokens, completion.cached_tokens
            )
            self.limiter.spent(completion.prompt_tokens + completion.completion_tokens - estimate)
            return completion


RETRIED = {"rate_limited", "server_error", "timeout", "connection"}


def classify(exc) -> tuple[str, float | None]:
    """An SDK error's kind, and how long the server asked to wait before trying again (Retry-After), if it did."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout", None
    if isinstance(exc, openai.APIConnectionError):
        return "connection", None
    status, code = getattr(exc, "status_code", None), getattr(exc, "code", None)
    if status == 429:
        after = exc.response.headers.get("retry-after")
        try:
            return "rate_limited", min(float(after), MAX_WAIT_SECONDS) if after is not None else None
        except ValueError:
            return "rate_limited", None
    if status is not None and status >= 500:
        return "server_error", None
    if status in (401, 403):
        return "auth", None
    if code == "context_length_exceeded" or "context length" in str(exc).lower():
        return "context_length", None
    return "bad_request" if status else "bad_reply", None


def describe(exc) -> str:
    """``STATUS the server's message`` (its error object's, where it sent one)."""
    status, body = getattr(exc, "status_code", None), getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) and isinstance(body.get("message"), str) else None
    message = message or getattr(exc, "message", None) or str(exc)
    return f"{status} {message}"[:300] if status else message[:300]


def backoff(tries: int) -> float:
    """Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s, ... (at most ``MAX_WAIT_SECONDS``)."""
    return random.uniform(0, min(MAX_WAIT_SECONDS, BACKOFF_SECONDS * 2 ** (tries - 1)))


def parsed(data, latency_ms: float, retries: list[str]) -> ModelTurn:
    """A chat completion's JSON as plain data, read field by field (it is the server's: a reply that is not one is
    a ModelError, bad_reply). Read as JSON, not as the SDK's reply model: building that model cost 0.4 ms a turn."""
    try:
        choice = data["choices"][0]
        message = choice["message"] or {}
        calls = [
            {
                "id": str(c.get("id", "")),
                "name": str(c["function"]["name"]),
                "arguments": str(c["function"].get("arguments") or ""),
            }
            for c in message.get("tool_calls") or []
        ]
        usage = data.get("usage") or {}
        return ModelTurn(
            text=str(message.get("content") or ""),
            tool_calls=calls,
            finish_reason=str(choice.get("finish_reason") or ""),
            refusal=str(message["refusal"]) if message.get("refusal") else None,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cached_tokens=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
            latency_ms=latency_ms,
            retries=list(retries),
        )
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ModelError("bad_reply", f"the reply is not a chat completion ({type(exc).__name__}: {exc})") from None
