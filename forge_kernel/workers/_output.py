"""What an isolated agent prints: its lines on forge's stderr, each after the agent's name, up to a cap per agent.

An agent's stdout and stderr are one pipe that the harness reads. Past ``OUTPUT_BYTES`` forge says so once and
reads on without showing more, so an agent that floods its output fills neither a terminal nor a CI log, and never
blocks on a full pipe.
"""
from __future__ import annotations

import asyncio
import os
import sys

OUTPUT_BYTES = 64 * 1024
"""The most an agent's output forge shows in one run."""


class AgentOutput(asyncio.Protocol):
    """Reads one agent's output pipe (across restarts of its zygote, with one allowance)."""

    def __init__(self, label: str, allowance: list[int]):
        self.label = label
        self.allowance = allowance
        """Bytes still to show, shared by every pipe of the agent."""
        self.partial = b""

    def data_received(self, data: bytes) -> None:
        if self.allowance[0] <= 0:
            return
        *lines, self.partial = (self.partial + data).split(b"\n")
        if len(self.partial) >= self.allowance[0]:  # a flood without line breaks is shown as one line, cut
            lines.append(self.partial)
            self.partial = b""
        self.show(lines)

    def drain(self, pipe) -> None:
        """Read what is left in the pipe now (its writers are gone), then the last unfinished line."""
        for _ in range(64):
            try:
                data = os.read(pipe.fileno(), 65536)
            except (BlockingIOError, OSError, ValueError):
                break
            if not data:
                break
            self.data_received(data)
        self.connection_lost(None)

    def connection_lost(self, exc) -> None:
        if self.partial and self.allowance[0] > 0:
            self.show([self.partial])
        self.partial = b""

    def show(self, lines: list[bytes]) -> None:
        for line in lines:
            if self.allowance[0] <= 0:
                return
            kept = line[:self.allowance[0]]
            self.allowance[0] -= len(kept) + 1
            print(f"{self.label}: {kept.decode(errors='replace')}", file=sys.stderr)
            if self.allowance[0] <= 0:
                print(f"forge: {self.label} has printed {OUTPUT_BYTES // 1024} KiB; the rest of its output is not shown",
                      file=sys.stderr)
