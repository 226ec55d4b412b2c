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

Once it has the unit registry, the grader forks a helper with pipes of its own, which grades and stores the same
way. The helper is handed trials only once every trial of the run has started: the last wave ends in a burst,
and what is left to grade then (the run's last 54-77 ms on 2 cores) is shared between two processes, while before,
one grader keeps up and a second would only take CPU from the agents' calls.
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
from ..verify import unit_registry
from ..workers import Frames, frame
from .trial import Images, graded, replayed

MOST_AT_ONCE = 256
"""About the most trials graded, sent back and stored together."""
PIPE_READ = 1 << 20


def _framed(message) -> bytes:
    return frame(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _unpickler() -> Frames:
    return Frames(max_bytes=1 << 31, parse=pickle.loads)  # the harness's own messages: trusted


class _Replies(asyncio.Protocol):
    """The harness's end of a grading process's replies: that it is there (the helper says so once it is forked),
    how many trials it stored, or why it stopped."""

    def __init__(self, on_stored, ready: bool):
        self.on_stored = on_stored
        self.ready = ready
        self.frames = _unpickler()
        self.stored = 0
        self.failure: tuple[str, str] | None = None
        """(field, why) once the grader or the store has failed."""
        self.ended = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        for kind, *value in self.frames.feed(data):
            if kind == "failed":
                self.failure = tuple(value)
            elif kind == "ready":
                self.ready = True
            else:
                self.stored += value[0]
                self.on_stored(value[0])

    def connection_lost(self, exc) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


class _Channel:
    """The pipes to one grading process: its inbox and its replies, and how many trials it was handed."""

    def __init__(self, inbox: asyncio.WriteTransport, replies: _Replies):
        self.inbox, self.replies = inbox, replies
        self.handed = 0

    @property
    def waiting(self) -> int:
        """Trials handed over and not yet reported stored."""
        return self.handed - self.replies.stored

    @property
    def open(self) -> bool:
        """It can be handed trials: its process is there (the grader's are queued while it starts) and going."""
        return self.replies.ready and not (self.replies.ended.done() or self.inbox.is_closing())


class Grader:
    """The harness's side of the grader and its helper: ``hand`` it each finished trial, then ``await finish()``."""

    def __init__(self, pid: int, channels: list[_Channel], run_dir: Path):
        self.pid, self.channels, self.run_dir = pid, channels, run_dir
        self.exited = False

    @property
    def stored(self) -> int:
        return sum(c.replies.stored for c in self.channels)

    @classmethod
    async def start(cls, store: RunStore, packages: list[Package], images: Images, on_stored=lambda n: None):
        """Fork the grader of the run in ``store`` (which forks its helper); ``on_stored(n)`` is called as ``n``
        more trials are stored."""
        loop = asyncio.get_running_loop()
        pairs = [(os.pipe(), os.pipe()) for _ in range(2)]  # (inbox, replies): the grader's, then its helper's
        theirs = [fd for inbox, replies in pairs for fd in (inbox[0], replies[1])]  # it reads, it writes
        ours = [fd for inbox, replies in pairs for fd in (inbox[1], replies[0])]
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
            for fd in ours:  # else its inbox would never end
                os.close(fd)
            os._exit(_serve({p.id: p for p in packages}, images, run_dir, theirs, harness))
        for fd in theirs:
            os.close(fd)
        files = [open(fd, mode, buffering=0) for fd, mode in zip(ours, ("wb", "rb") * 2)]  # noqa: SIM115  (the pipes' transports own them)
        transports: list[asyncio.BaseTransport] = []
        channels: list[_Channel] = []
        try:
            for inbox, replies in zip(files[0::2], files[1::2]):
                protocol = _Replies(on_stored, ready=not channels)
                write = (await loop.connect_write_pipe(asyncio.Protocol, inbox))[0]
                transports.append(write)
                transports.append((await loop.connect_read_pipe(lambda: protocol, replies))[0])  # noqa: B023  (called here)
                channels.append(_Channel(write, protocol))
        except BaseException:  # cancelled (a lane failed, Ctrl-C) before anything was handed over: no grader
            os.kill(pid, signal.SIGKILL)
            _reap(pid)
            for transport in transports:  # a file closed twice is closed once
                transport.close()
            for file in files:
                file.close()
            raise
        return cls(pid, channels, run_dir)

    def hand(self, trial: Ungraded, last_wave: bool = False) -> None:
        """Pass a finished trial on (it is queued, never waited for): to the grader, or, once every trial of the
        run has started (``last_wave``), to whichever of it and its helper has fewer waiting. StoreError once the
        grader has stopped."""
        channel = self.channels[0]
        if last_wave:
            channel = min((c for c in self.channels if c.open), key=lambda c: c.waiting, default=channel)
        if not channel.open:
            raise self._stopped(channel)
        channel.inbox.write(_framed(trial))
        channel.handed += 1

    async def finish(self) -> int:
        """Close the inboxes and wait for the rows of every trial handed over; how many trials were stored."""
        for channel in self.channels:
            if not channel.inbox.is_closing():
                channel.inbox.close()
        await asyncio.gather(*(asyncio.shield(c.replies.ended) for c in self.channels))
        if not self.exited:  # its replies end as it exits, after its helper's
            _reap(self.pid)
            self.exited = True
        return self.stored

    async def watch(self) -> None:
        """Return when the grader's and its helper's replies end; StoreError as soon as one stopped before it sent
        every trial's rows (the helper may end early, having been handed none: it could not be forked)."""
        await asyncio.gather(*map(self._watch, self.channels))

    async def _watch(self, channel: _Channel) -> None:
        await asyncio.shield(channel.replies.ended)
        early = not channel.inbox.is_closing() and (channel is self.channels[0] or channel.handed)
        if channel.replies.failure or early or channel.replies.stored < channel.handed:
            raise self._stopped(channel)

    def _stopped(self, channel: _Channel) -> StoreError:
        field, why = channel.replies.failure or ("(grader)", "the grading process ended")
        return StoreError(self.run_dir, field, f"{why}; run again with --resume")


def _reap(pid: int) -> None:
    """Wait for the grader's exit; the harness's collector is no longer frozen."""
    os.waitpid(pid, 0)
    gc.unfreeze()


def _serve(packages: dict[str, Package], images: Images, run_dir: Path, pipes: list[int], harness: int) -> int:
    """The grader process (its inbox and replies, then its helper's, in ``pipes``): it builds the unit registry,
    forks its helper, grades and stores until its inbox ends, then waits for its helper."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the harness, which then closes the inboxes
    signal.set_wakeup_fd(-1)
    _close_all_but(*pipes)
    inbox, replies, helper_inbox, helper_replies = pipes
    try:
        unit_registry()  # unless the harness had it: built while the first trials run (theirs wait in the pipe)
    except BaseException as exc:  # reported in one line; the harness ends the run
        return _failed(replies, exc)
    grader = os.getpid()
    try:
        helper = os.fork()
    except OSError:
        helper = -1  # no helper: its pipes close here unused, and the grader is handed every trial
    if helper == 0:  # pragma: no cover - the helper (its work is seen in the store)
        os.close(inbox)
        os.close(replies)
        _send(helper_replies, _framed(("ready",)))
        return _grade_and_store(packages, images, run_dir, helper_inbox, helper_replies, grader)
    os.close(helper_inbox)
    os.close(helper_replies)
    ended = _grade_and_store(packages, images, run_dir, inbox, replies, harness)
    if ended == 0 and helper > 0:  # a grader that failed exits at once: the harness then ends its helper's inbox
        os.waitpid(helper, 0)
    return ended


def _grade_and_store(
    packages: dict[str, Package], images: Images, run_dir: Path, inbox: int, replies: int, parent: int
) -> int:
    """Grade and store each batch of trials handed over, until the inbox ends. With its parent gone (the harness,
    or the helper's grader), it exits at once: what it did not store, a resume runs."""
    try:
        with RunStore.open(run_dir) as store:
            frames = _unpickler()
            while batch := _next_batch(inbox, frames):
                rows = [
                    trial_rows(graded(t, packages[t.task_id], replayed(images[packages[t.task_id]], t.events)))
                    for t in batch
                ]
                if os.getppid() != parent:
                    return 1
                try:
                    store.write_rows(rows)
                except sqlite3.Error as exc:  # a full disk, say: nothing more can be stored
                    _send(replies, _framed(("failed", "(run store)", f"cannot be written ({exc})")))
                    return 1
                _send(replies, _framed(("stored", len(rows))))
    except BrokenPipeError:
        return 1
    except BaseException as exc:  # reported in one line; the harness ends the run
        return _failed(replies, exc)
    return 0


def _failed(replies: int, exc: BaseException) -> int:
    """Tell the harness in one line why grading stopped."""
    try:
        _send(replies, _framed(("failed", "(grader)", f"grading stopped: {type(exc).__name__}: {exc}")))
    except BrokenPipeError:
        pass
    return 1


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
