"""The grader: a process of the harness, forked as a run's first trials get under way, that grades every trial an
agent has finished and writes it to the store.

The harness's event loop is left to serve the agents: grading, the JSON of the rows and the store's writes (about
a millisecond a trial) no longer hold up the agents' calls, and run on another core. The grader is forked, not
started afresh, so it has the packages, their images and the verifiers loaded already; the unit registry (most of
a second to build) too when the harness has graded before, else the grader builds it while the first trials run,
so that a run never waits for it. It keeps none of the harness's open files but its two pipes, and it is out of
every agent's reach like the harness itself.
SQLite's state must not cross a fork: the harness closes its connection to the store while it forks, and the
grader opens one of its own. Trials reach it pickled, one frame each; it writes each batch of them in one
transaction and tells the harness how many it stored. When its inbox closes (the run is over, or the harness
stopped) it stores what it was handed, then exits; with the harness gone, it exits at once.
"""
from __future__ import annotations

import asyncio
import gc
import os
import pickle
import select
import signal
import sqlite3
from pathlib import Path

from ..spec import Package, StoreError
from ..store import RunStore, Ungraded, trial_rows
from ..verify._quantities import registry as unit_registry
from ..workers._wire import Frames, frame
from .trial import Images, graded, replayed

MOST_AT_ONCE = 256
"""About the most trials graded, sent back and stored together."""
PIPE_READ = 1 << 20


def _framed(message) -> bytes:
    return frame(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _unpickler() -> Frames:
    return Frames(max_bytes=1 << 31, parse=pickle.loads)  # the harness's own messages: trusted


class _Replies(asyncio.Protocol):
    """The harness's end of the grader's replies: how many trials it stored, or why it stopped."""

    def __init__(self, on_stored):
        self.on_stored = on_stored
        self.frames = _unpickler()
        self.stored = 0
        self.failure: tuple[str, str] | None = None
        """(field, why) once the grader or the store has failed."""
        self.ended = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        for kind, *value in self.frames.feed(data):
            if kind == "failed":
                self.failure = tuple(value)
            else:
                self.stored += value[0]
                self.on_stored(value[0])

    def connection_lost(self, exc) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


class Grader:
    """The harness's side of the grader: ``hand`` it each finished trial, then ``await finish()``."""

    def __init__(self, pid: int, inbox: asyncio.WriteTransport, replies: _Replies, run_dir: Path):
        self.pid, self.inbox, self.replies, self.run_dir = pid, inbox, replies, run_dir
        self.handed = 0
        self.exited = False

    @classmethod
    async def start(cls, store: RunStore, packages: list[Package], images: Images, on_stored=lambda n: None):
        """Fork the grader of the run in ``store``; ``on_stored(n)`` is called as ``n`` more trials are stored."""
        loop = asyncio.get_running_loop()
        inbox_r, inbox_w = os.pipe()
        replies_r, replies_w = os.pipe()
        gc.freeze()  # until the run ends, no collection touches (and so copies) the pages the two processes share
        run_dir, harness = store.path.parent, os.getpid()
        store.close()
        try:
            pid = os.fork()
        except OSError:
            gc.unfreeze()
            raise
        finally:
            if os.getpid() == harness:
                store.reopen()
        if pid == 0:  # pragma: no cover - the grader process (its work is seen in the store)
            os.close(inbox_w)  # else its inbox would never end
            os.close(replies_r)
            os._exit(_serve({p.id: p for p in packages}, images, run_dir, inbox_r, replies_w, harness))
        os.close(inbox_r)
        os.close(replies_w)
        pipes, replies = (open(inbox_w, "wb", buffering=0), open(replies_r, "rb", buffering=0)), _Replies(on_stored)
        transports = []
        try:
            transports.append((await loop.connect_write_pipe(asyncio.Protocol, pipes[0]))[0])
            transports.append((await loop.connect_read_pipe(lambda: replies, pipes[1]))[0])
        except BaseException:  # cancelled (a lane failed, Ctrl-C) before anything was handed over: no grader
            os.kill(pid, signal.SIGKILL)
            _reap(pid)
            for closable in (*transports, *pipes):  # a file closed twice is closed once
                closable.close()
            raise
        return cls(pid, transports[0], replies, run_dir)

    def hand(self, trial: Ungraded) -> None:
        """Pass a finished trial on (it is queued, never waited for); StoreError once the grader has stopped."""
        if self.replies.ended.done() or self.inbox.is_closing():
            raise self._stopped()
        self.inbox.write(_framed(trial))
        self.handed += 1

    async def finish(self) -> int:
        """Close the inbox and wait for the rows of every trial handed over; how many trials were stored."""
        if not self.inbox.is_closing():
            self.inbox.close()
        await asyncio.shield(self.replies.ended)
        if not self.exited:  # its replies end as it exits
            _reap(self.pid)
            self.exited = True
        return self.replies.stored

    async def watch(self) -> None:
        """Return when the grader's replies end; StoreError if it stopped before it sent every trial's rows."""
        await asyncio.shield(self.replies.ended)
        if self.replies.failure or not self.inbox.is_closing() or self.replies.stored < self.handed:
            raise self._stopped()

    def _stopped(self) -> StoreError:
        field, why = self.replies.failure or ("(grader)", "the grading process ended")
        return StoreError(self.run_dir, field, f"{why}; run again with --resume")


def _reap(pid: int) -> None:
    """Wait for the grader's exit; the harness's collector is no longer frozen."""
    os.waitpid(pid, 0)
    gc.unfreeze()


def _serve(packages: dict[str, Package], images: Images, run_dir: Path, inbox: int, replies: int,
           harness: int) -> int:
    """The grader process: grade and store each batch of trials handed over, until the inbox ends. With the
    harness gone (``harness`` is no longer its parent), it exits at once: what it did not store, a resume runs."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the harness, which then closes the inbox
    signal.set_wakeup_fd(-1)
    _close_all_but(inbox, replies)
    try:
        unit_registry()  # unless the harness had it: built while the first trials run (theirs wait in the pipe)
        with RunStore.open(run_dir) as store:
            frames = _unpickler()
            while batch := _next_batch(inbox, frames):
                rows = [trial_rows(graded(t, packages[t.task_id], replayed(images[packages[t.task_id]], t.events)))
                        for t in batch]
                if os.getppid() != harness:
                    return 1
                try:
                    store.write_rows(rows)
                except sqlite3.Error as exc:  # a full disk, say: nothing more can be stored
                    _send(replies, _framed(("failed", "(run store)", f"cannot be written ({exc})")))
                    return 1
                _send(replies, _framed(("stored", len(rows))))
    except BrokenPipeError:
        return 1
    except BaseException as exc:  # noqa: BLE001 - reported in one line; the harness ends the run
        try:
            _send(replies, _framed(("failed", "(grader)", f"grading stopped: {type(exc).__name__}: {exc}")))
        except BrokenPipeError:
            pass
        return 1
    return 0


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _close_all_but(*keep: int) -> None:
    """Close every file the harness had open (its workers' sockets, its store) but stdio and ``keep``."""
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


def _next_batch(inbox: int, frames: Frames) -> list[Ungraded]:
    """The trials handed over so far (waiting for the first), about ``MOST_AT_ONCE`` at most; [] once the inbox
    has ended."""
    batch: list[Ungraded] = []
    while not batch:
        data = os.read(inbox, PIPE_READ)
        if not data:
            return []
        batch += frames.feed(data)
    while len(batch) < MOST_AT_ONCE and select.select([inbox], [], [], 0)[0]:
        data = os.read(inbox, PIPE_READ)
        if not data:
            break
        batch += frames.feed(data)
    return batch
