"""What an isolated agent prints: its lines on forge's stderr, each after the agent's name, up to a cap per agent,
with the characters that would move the terminal's cursor written out.

An agent's stdout and stderr are one pipe that the harness reads. Past ``OUTPUT_BYTES`` forge says so once and
reads on without showing more, so an agent that floods its output fills neither a terminal nor a CI log, and is
never left blocked on a full pipe (its writes wait only for the harness to read).
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field

from ..spec import printable

OUTPUT_BYTES = 64 * 1024
"""The most an agent's output forge shows in one run."""


def shown(line: bytes) -> str:
    """A line of an agent's output as forge shows it: text, its control characters written out (``\\x1b``), tabs
    kept."""
    return printable(line.decode(errors="replace"), keep="\t")


@dataclass
class Allowance:
    """How much of one agent's output forge shows in a run, and how much of it is left."""

    total: int = OUTPUT_BYTES
    left: int = field(init=False)

    def __post_init__(self):
        self.left = self.total


class AgentOutput(asyncio.Protocol):
    """Reads one agent's output pipe (one pipe per start of its zygote, one allowance for them all)."""

    def __init__(self, label: str, allowance: Allowance):
        self.label = label
        self.allowance = allowance
        self.partial = b""

    def data_received(self, data: bytes) -> None:
        if self.allowance.left <= 0:
            return
        *lines, self.partial = (self.partial + data).split(b"\n")
        if len(self.partial) >= self.allowance.left:  # a flood without line breaks is shown as one line, cut
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
        if self.partial and self.allowance.left > 0:
            self.show([self.partial])
        self.partial = b""

    def show(self, lines: list[bytes]) -> None:
        for line in lines:
            if self.allowance.left <= 0:
                return
            kept = line[: self.allowance.left]
            self.allowance.left -= len(kept) + 1
            print(f"{self.label}: {shown(kept)}", file=sys.stderr)
            if self.allowance.left <= 0:
                print(
                    f"forge: {self.label} has printed {self.allowance.total // 1024} KiB; the rest of its output is "
                    "not shown",
                    file=sys.stderr,
                )
