"""What several commands share: a file option checked while parsing, run stores opened once, how a run's agents
ran."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..store import Run


def isolation_line(run: Run) -> str:
    """How each agent of a run (a Run handle) ran: in process (trusted) or in which sandbox."""
    ways: dict[str, list[str]] = {}
    for name, how in run.isolation.items():
        ways.setdefault(how, []).append(name)
    return "agents " + " · ".join(f"{how}: {', '.join(names)}" for how, names in ways.items())


@contextmanager
def opened(*paths: Path) -> Iterator[list[Run]]:
    """A Run handle per path, each run opened once (a path given twice gives the same handle)."""
    from ..store import open_run

    runs: dict[Path, Run] = {}
    try:
        for path in paths:
            if path.resolve() not in runs:
                runs[path.resolve()] = open_run(path)
        yield [runs[path.resolve()] for path in paths]
    finally:
        for run in runs.values():
            run.close()


class OutputFile(click.Path):
    """A file to write, whose folder must exist: checked while parsing, before any work."""

    def __init__(self):
        super().__init__(dir_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        if not path.parent.is_dir():
            self.fail(f"folder {path.parent} does not exist", param, ctx)
        return path
