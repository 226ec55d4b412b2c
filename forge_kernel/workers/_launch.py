"""What a sandbox's command line needs besides its arguments: the files it is given as data, and, where forge runs
as root, the user the agent runs as.

Files of the sandbox's view that forge writes (``/etc/passwd``, ``/etc/hosts``, ...) reach bubblewrap as pipes,
read once when the sandbox is made, so nothing is left on disk.

Run by an ordinary user, bubblewrap maps the agent's uid (65534 inside) to that user, who owns nothing the agent
must not read. Run as root, it would map it to root, which owns every file of the machine: ``/etc/shadow`` and
anything root alone may read under a bound folder would be the agent's. So as root, forge writes the maps itself
(bubblewrap waits for them: ``--userns-block-fd``): root to root, for bubblewrap's own set-up, and ``AGENT_UID`` to
``AGENT_UID``; then ``setpriv`` turns the sandbox's first process into ``AGENT_UID`` with no supplementary group
before any Python starts. The agent is then nobody inside and outside, and bubblewrap's ``no_new_privs`` keeps a
set-uid program from making it anything else.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil

AGENT_UID = 65534
"""The agent's uid and gid, inside the sandbox and, where forge runs as root, outside too (``nobody``)."""
INFO_BYTES = 64 * 1024


class Launch:
    """The file descriptors one start of a sandbox hands to bubblewrap, and the user mapping as root."""

    def __init__(self, as_root: bool):
        self.as_root = as_root
        self.passed: list[int] = []
        """Descriptors the command line names: the child gets them, and they are closed here once it has."""
        self._info: int | None = None
        self._block: int | None = None
        if self.as_root:
            info, self._info_w = os.pipe()
            self._block_r, block = os.pipe()
            self._info, self._block = info, block
            self.passed += [self._info_w, self._block_r]

    def data(self, text: str) -> str:
        """A descriptor bubblewrap reads ``text`` from (``--ro-bind-data``)."""
        read, write = os.pipe()
        try:
            os.write(write, text.encode())
        finally:
            os.close(write)
        self.passed.append(read)
        return str(read)

    def user_args(self) -> list[str]:
        """bubblewrap's options for the user namespace."""
        if self.as_root:
            return ["--unshare-user", "--userns-block-fd", str(self._block_r), "--info-fd", str(self._info_w)]
        return ["--unshare-user", "--uid", str(AGENT_UID), "--gid", str(AGENT_UID)]

    def setup_caps(self) -> list[str]:
        """The capabilities the sandbox's first process needs to become the agent's user (``setpriv``)."""
        return ["setuid", "setgid"] if self.as_root else []

    def become_agent(self, caps: list[str]) -> list[str]:
        """The command prefix inside the sandbox that makes the process the agent's user (as root), keeping
        ``caps`` (e.g. ``net_bind_service`` for a relay at a port below 1024)."""
        if not self.as_root:
            return []
        kept = "".join(f",+{cap}" for cap in caps)
        return [
            shutil.which("setpriv") or "setpriv",
            "--reuid",
            str(AGENT_UID),
            "--regid",
            str(AGENT_UID),
            "--clear-groups",
            f"--inh-caps=-all{kept}",
            *([f"--ambient-caps={kept[1:]}"] if caps else []),
            "--",
        ]

    def started(self) -> None:
        """The child holds its descriptors now: close ours."""
        for fd in self.passed:
            os.close(fd)
        self.passed = []

    async def map_users(self, seconds: float) -> None:
        """As root: read the sandbox's first pid from bubblewrap, write its user namespace's maps, let it go on.
        OSError when bubblewrap ended first or said nothing in time."""
        if self._info is None or self._block is None:  # both or neither: as root
            return
        info = await read_all(self._info, seconds)
        try:
            pid = int(json.loads(info)["child-pid"])
        except (ValueError, KeyError, TypeError):
            raise OSError("bubblewrap ended before it made the sandbox") from None
        maps = f"0 0 1\n{AGENT_UID} {AGENT_UID} 1\n"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w") as f:
                f.write(maps)
        os.write(self._block, b"1")
        self.close()

    def close(self) -> None:
        self.started()
        for fd in (self._info, self._block):
            if fd is not None:
                os.close(fd)
        self._info = self._block = None


async def read_all(fd: int, seconds: float) -> bytes:
    """What a pipe holds until its writers close it (at most ``INFO_BYTES``); TimeoutError past ``seconds``."""
    loop, data = asyncio.get_running_loop(), bytearray()
    ended = loop.create_future()

    def readable() -> None:
        try:
            chunk = os.read(fd, INFO_BYTES)
        except BlockingIOError:
            return
        data.extend(chunk[: INFO_BYTES - len(data)])
        if not chunk and not ended.done():
            ended.set_result(None)

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        await asyncio.wait_for(ended, seconds)
    finally:
        loop.remove_reader(fd)
    return bytes(data)
