"""Rate limits that every trial of an agent shares, across the worker processes forked from its zygote.

Two token buckets (requests and tokens per minute) live in a small shared memory map made before the workers are
forked; a POSIX record lock on the map's file keeps one process at a time in them (the trials of one process are
coroutines of one thread, which never wait while holding it). A request takes its estimated tokens before it is
sent, and the difference once the reply says what it used.
"""

from __future__ import annotations

import asyncio
import fcntl
import mmap
import struct
import tempfile
import time
from collections.abc import Callable

from .config import RateLimits

STATE = struct.Struct("ddd")
"""Requests left, tokens left, when they were last refilled (CLOCK_MONOTONIC: the same in every process)."""


class RateLimiter:
    """Requests and tokens per minute for all trials of one agent; no limit is a no-op."""

    def __init__(self, limits: RateLimits):
        self.rates = (limits.requests_per_minute / 60, limits.tokens_per_minute / 60)
        self.capacity = (float(limits.requests_per_minute), float(limits.tokens_per_minute))
        self._file = self._state = None
        if any(self.capacity):
            self._file = tempfile.TemporaryFile()  # noqa: SIM115  (the mmap's file, open for the limiter's life)
            self._file.truncate(STATE.size)
            self._state = mmap.mmap(self._file.fileno(), STATE.size)
            STATE.pack_into(self._state, 0, *self.capacity, time.monotonic())

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return self._state is not None

    async def acquire(self, tokens: int) -> None:
        """Wait until a request of about ``tokens`` tokens may be sent, and take them."""
        while self._state is not None and (wait := self._take(tokens)) > 0:
            await asyncio.sleep(wait)

    def spent(self, more_tokens: int) -> None:
        """Correct the tokens taken by what the reply said it used (negative: fewer)."""
        if self._state is not None and self.capacity[1]:
            self._update(lambda requests, tokens: (requests, tokens - more_tokens))

    def _take(self, tokens: int) -> float:
        """Take one request and ``tokens`` if both buckets hold them, else nothing: 0, or how long to wait."""
        wait = 0.0

        def take(requests: float, held: float) -> tuple[float, float]:
            nonlocal wait
            need = [
                (1 - requests) / self.rates[0] if self.capacity[0] else 0.0,
                (min(tokens, self.capacity[1]) - held) / self.rates[1] if self.capacity[1] else 0.0,
            ]
            wait = max(need)
            if wait > 0:
                return requests, held
            return requests - bool(self.capacity[0]), held - tokens * bool(self.capacity[1])

        self._update(take)
        return wait

    def _update(self, change: Callable[[float, float], tuple[float, float]]) -> None:
        file, state = self._file, self._state
        assert file is not None and state is not None  # called only where a limit is set
        fcntl.lockf(file, fcntl.LOCK_EX)
        try:
            requests, tokens, then = STATE.unpack_from(state, 0)
            now = time.monotonic()
            requests = min(self.capacity[0], requests + (now - then) * self.rates[0])
            tokens = min(self.capacity[1], tokens + (now - then) * self.rates[1])
            STATE.pack_into(state, 0, *change(requests, tokens), now)
        finally:
            fcntl.lockf(file, fcntl.LOCK_UN)
