"""Strict mode's only way out: the model endpoints a run allows, relayed through the harness.

Inside the sandbox (its own network namespace, loopback only) a relay process listens on 127.0.0.1 at each
allowed endpoint's port, and ``/etc/hosts`` names each endpoint's host as 127.0.0.1. For every connection it
accepts, it asks the harness over its control socket; the harness itself opens a TCP connection to that endpoint,
and only to an allowed one, and passes the connected socket back (SCM_RIGHTS). The relay then copies bytes both
ways. TLS runs end to end between the agent and the endpoint: the host name and certificate are the real ones.
"""
from __future__ import annotations

import asyncio
import socket
import threading

from ._wire import HEADER, decode, encode

CONNECT_SECONDS = 10.0


def parse_endpoint(text: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); ValueError names what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def hosts_file(endpoints: tuple[str, ...]) -> str:
    """/etc/hosts for the sandbox: localhost and every endpoint host on the loopback, where the relay listens."""
    names = sorted({host for host, _ in map(parse_endpoint, endpoints)} - {"127.0.0.1", "localhost"})
    return "127.0.0.1 localhost\n::1 localhost\n" + "".join(f"127.0.0.1 {name}\n" for name in names)


# --- the harness side ----------------------------------------------------------------------------------------------

async def serve_harness(control: socket.socket, endpoints: tuple[str, ...]) -> None:
    """Answer the relay's connect requests until it closes the socket; only the allowed endpoints are dialled."""
    loop = asyncio.get_running_loop()
    allowed = [parse_endpoint(e) for e in endpoints]
    while data := await loop.sock_recv(control, 4096):
        try:
            index = decode(data[HEADER.size:]).get("endpoint")
            host, port = allowed[index] if isinstance(index, int) and 0 <= index < len(allowed) else (None, None)
        except Exception:
            host = None
        if host is None:
            await loop.sock_sendall(control, encode({"op": "refused"}))
            continue
        try:
            outward = await asyncio.wait_for(dial(host, port), CONNECT_SECONDS)
        except (OSError, TimeoutError):
            await loop.sock_sendall(control, encode({"op": "refused"}))
            continue
        with outward:  # the sandbox holds the connection now; our copy of the socket goes
            socket.send_fds(control, [encode({"op": "connected"})], [outward.fileno()])


async def dial(host: str, port: int) -> socket.socket:
    """A TCP connection from the harness's own network to an allowed endpoint."""
    loop = asyncio.get_running_loop()
    family, kind, proto, _, address = (await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM))[0]
    sock = socket.socket(family, kind, proto)
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, address)
    except BaseException:
        sock.close()
        raise
    return sock


# --- the sandbox side ----------------------------------------------------------------------------------------------

def run_relay(control: socket.socket, endpoints: tuple[str, ...]) -> None:
    """Listen at every endpoint's port on the loopback and relay each accepted connection (never returns)."""
    lock = threading.Lock()
    listeners = []
    for index, (_, port) in enumerate(map(parse_endpoint, endpoints)):
        listener = socket.create_server(("127.0.0.1", port))
        listeners.append(listener)
        threading.Thread(target=accept_loop, args=(listener, index, control, lock), daemon=True).start()
    threading.Event().wait()


def accept_loop(listener: socket.socket, index: int, control: socket.socket, lock: threading.Lock) -> None:
    while True:
        inner, _ = listener.accept()
        with lock:
            control.send(encode({"op": "connect", "endpoint": index}))
            _, fds, _, _ = socket.recv_fds(control, 4096, 1)
        if not fds:
            inner.close()
            continue
        outer = socket.socket(fileno=fds[0])
        outer.setblocking(True)  # the harness dialled it non-blocking, and the flag travels with the socket
        for source, target in ((inner, outer), (outer, inner)):
            threading.Thread(target=pump, args=(source, target), daemon=True).start()


def pump(source: socket.socket, target: socket.socket) -> None:
    """Copy bytes one way until either side closes."""
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for side in (source, target):
            try:
                side.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
