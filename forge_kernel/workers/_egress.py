"""A sandboxed agent's only way out: connections the harness opens for it, to what the run allows.

The sandbox has a network namespace of its own with nothing but loopback. Inside it a relay process, forked before
the agent is imported, listens

- at each ``--allow-endpoint HOST:PORT``: on 127.0.0.1 (or ``::1``) when HOST names this machine, else on a
  loopback address of its own that the sandbox's ``/etc/hosts`` gives HOST, at the endpoint's own port (any
  TCP client reaches it by its name: a local model server, say);
- as an HTTP proxy at ``PROXY`` (the agent's ``HTTPS_PROXY``, ``HTTP_PROXY`` and ``ALL_PROXY``): ``CONNECT`` for
  TLS, and plain HTTP one request per connection.

For every connection the relay asks the harness over its control socket, sending a socket of its own for the
answer; the harness dials the destination itself, only where the run allows it, and passes the connected socket
back (SCM_RIGHTS), or a refusal with its reason. In ``strict`` mode the named endpoints are all it dials; in the
default ``namespace`` mode it dials the network too, but never an address of this machine (loopback, any address
of its interfaces, where a Jupyter server or a database may listen), nor a link-local one (a cloud's metadata
service), a multicast or an unspecified one: a service of this machine is reached only when named. TLS runs end
to end: the harness never sees what an agent says to its model over HTTPS.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import threading
from collections.abc import Callable
from functools import partial

from .wire import HEADER, decode, encode

CONNECT_SECONDS = 10.0
PROXY = ("127.0.0.1", 3128)
"""Where the relay's proxy listens inside the sandbox (another port when an endpoint takes this one)."""
LOCAL_NAMES = {"localhost": "127.0.0.1", "127.0.0.1": "127.0.0.1", "::1": "::1"}
MAX_DIALS = 32
"""Connections the harness opens for one sandbox at a time; more requests wait their turn."""
HEAD_BYTES = 16 * 1024
"""The longest request head (request line and headers) the proxy reads."""


def parse_endpoint(text: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); ValueError names what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not HOST:PORT")
    return host.strip("[]").lower(), int(port)


def listen_addresses(endpoints: tuple[str, ...]) -> list[tuple[str, int] | None]:
    """Where the relay listens for each endpoint, in order: an IP address other than loopback cannot be taken
    inside the sandbox, so such an endpoint is reached through the proxy only (None)."""
    found: list[tuple[str, int] | None] = []
    names: dict[str, str] = {}
    for host, port in map(parse_endpoint, endpoints):
        if host in LOCAL_NAMES:
            found.append((LOCAL_NAMES[host], port))
        elif is_address(host):
            found.append(None)
        else:
            found.append((names.setdefault(host, f"127.0.1.{len(names) + 1}"), port))
    return found


def is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def hosts_file(endpoints: tuple[str, ...]) -> str:
    """/etc/hosts of the sandbox: localhost, and each endpoint host at the loopback address its relay listens on."""
    lines = ["127.0.0.1 localhost"]
    for (host, _), where in zip(map(parse_endpoint, endpoints), listen_addresses(endpoints)):
        if where and host not in LOCAL_NAMES:
            lines.append(f"{where[0]} {host}")
    return "\n".join(dict.fromkeys(lines)) + "\n"


def proxy_port(endpoints: tuple[str, ...]) -> int:
    """The proxy's port: ``PROXY``'s unless an endpoint listens there."""
    taken = {where for where in listen_addresses(endpoints) if where}
    port = PROXY[1]
    while (PROXY[0], port) in taken:
        port += 1
    return port


def proxy_environment(endpoints: tuple[str, ...]) -> dict[str, str]:
    """The proxy variables of the agent's environment; named endpoints the relay listens for go direct."""
    url = f"http://{PROXY[0]}:{proxy_port(endpoints)}"
    direct = [
        "localhost",
        "127.0.0.1",
        "::1",
        *(h for (h, _), where in zip(map(parse_endpoint, endpoints), listen_addresses(endpoints)) if where),
    ]
    values = {"HTTPS_PROXY": url, "HTTP_PROXY": url, "ALL_PROXY": url, "NO_PROXY": ",".join(dict.fromkeys(direct))}
    return values | {name.lower(): value for name, value in values.items()}


# --- the harness side ----------------------------------------------------------------------------------------------


def not_outward(address: str) -> str | None:
    """Why the harness does not dial ``address`` for an agent's open network, or None when it may."""
    ip = ipaddress.ip_address(address.split("%")[0])
    ip = getattr(ip, "ipv4_mapped", None) or ip
    for kind in ("a loopback", "a link-local", "a multicast", "an unspecified", "a reserved"):
        if getattr(ip, f"is_{kind.split()[1].replace('-', '_')}"):
            return f"{address} is {kind} address"
    with socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:  # no packet is sent: the kernel picks the route, and to itself it goes from the address itself
            probe.connect((str(ip), 9))
            own = probe.getsockname()[0] == str(ip)
        except OSError:
            own = False
    return f"{address} is an address of this machine" if own else None


class Gate:
    """What the harness dials for one sandbox: the named endpoints, and in ``open`` mode the network beyond this
    machine."""

    def __init__(self, endpoints: tuple[str, ...], open_network: bool):
        self.endpoints = set(map(parse_endpoint, endpoints))
        self.open_network = open_network
        self.dials = asyncio.Semaphore(MAX_DIALS)

    async def dial(self, host: str, port: int) -> socket.socket:
        """A connected socket to ``host:port``, or PermissionError / OSError saying why not."""
        loop = asyncio.get_running_loop()
        named = (host.lower(), port) in self.endpoints
        if not (named or self.open_network):
            raise PermissionError(f"{host}:{port} is not an allowed endpoint (--allow-endpoint)")
        found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        refusals = [] if named else [not_outward(str(info[4][0])) for info in found]
        allowed = [info for info, why in zip(found, refusals or [None] * len(found)) if why is None]
        if not allowed:
            raise PermissionError(f"{host}:{port}: {refusals[0]}; name it with --allow-endpoint to reach it")
        family, kind, proto, _, address = allowed[0]
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, address)
        except BaseException:
            sock.close()
            raise
        return sock

    async def answer(self, reply: socket.socket, request: dict) -> None:
        """Dial what one request asks for and answer on its own socket."""
        with reply:
            host, port = request.get("host"), request.get("port")
            if not (isinstance(host, str) and 0 < len(host) <= 255 and type(port) is int and 0 < port < 65536):
                return send(reply, {"op": "refused", "reason": "a connect request needs a host and a port"})
            try:
                async with self.dials:
                    outward = await asyncio.wait_for(self.dial(host, port), CONNECT_SECONDS)
            except PermissionError as exc:
                return send(reply, {"op": "refused", "reason": str(exc)})
            except (OSError, TimeoutError) as exc:
                return send(
                    reply,
                    {
                        "op": "unreachable",
                        "reason": f"{host}:{port} cannot be reached "
                        f"({getattr(exc, 'strerror', None) or type(exc).__name__})",
                    },
                )
            with outward:  # the sandbox holds the connection now; our copy of the socket goes
                send(reply, {"op": "connected"}, outward.fileno())


def send(sock: socket.socket, message: dict, fd: int | None = None) -> None:
    try:
        socket.send_fds(sock, [encode(message)], [] if fd is None else [fd])
    except OSError:
        pass  # the relay gave up on it


async def serve_harness(control: socket.socket, endpoints: tuple[str, ...], open_network: bool) -> None:
    """Answer the relay's connect requests until it closes its control socket."""
    loop, gate, requests = asyncio.get_running_loop(), Gate(endpoints, open_network), set()
    closed = loop.create_future()

    def readable() -> None:
        try:
            data, fds, _, _ = socket.recv_fds(control, 4096, 1)
        except BlockingIOError:
            return
        except OSError:
            data, fds = b"", []
        if not data:
            for fd in fds:
                socket.close(fd)
            if not closed.done():
                closed.set_result(None)
            return
        try:
            reply = socket.socket(fileno=fds[0]) if fds else None
        except OSError:  # not a socket
            socket.close(fds[0])
            return
        if reply is None:
            return
        reply.setblocking(False)
        try:
            request = decode(data[HEADER.size :])
        except Exception:
            request = {}
        task = loop.create_task(gate.answer(reply, request))
        requests.add(task)
        task.add_done_callback(requests.discard)

    loop.add_reader(control.fileno(), readable)
    try:
        await closed
    finally:
        loop.remove_reader(control.fileno())
        for task in requests:
            task.cancel()


# --- the sandbox side ----------------------------------------------------------------------------------------------

RELAY_STACK = 256 * 1024
"""The stack of each of the relay's threads (two a connection): at the default 8 MiB, a few hundred connections
would take the agent's whole memory allowance (thread stacks count against it)."""


def run_relay(control: socket.socket, endpoints: tuple[str, ...]) -> None:
    """Listen at every endpoint and at the proxy port, and relay what each connection asks for (never returns)."""
    threading.stack_size(RELAY_STACK)
    for (host, port), where in zip(map(parse_endpoint, endpoints), listen_addresses(endpoints)):
        if where:
            listen(where, partial(relay, control, host=host, port=port))
    listen((PROXY[0], proxy_port(endpoints)), lambda inner: proxy(control, inner))
    threading.Event().wait()


def listen(where: tuple[str, int], serve: Callable[[socket.socket], None]) -> None:
    listener = socket.create_server(where, family=socket.AF_INET6 if ":" in where[0] else socket.AF_INET)

    def accept_loop() -> None:
        while True:
            inner, _ = listener.accept()
            threading.Thread(target=serve_safely, args=(serve, inner), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()


def serve_safely(serve: Callable[[socket.socket], None], inner: socket.socket) -> None:
    try:
        serve(inner)
    except OSError:
        inner.close()


def ask(control: socket.socket, host: str, port: int) -> tuple[socket.socket | None, str]:
    """Ask the harness for a connection to ``host:port``: the connected socket, or None and the HTTP status and
    reason to answer with."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with mine:
        with theirs:
            socket.send_fds(control, [encode({"op": "connect", "host": host, "port": port})], [theirs.fileno()])
        data, fds, _, _ = socket.recv_fds(mine, 4096, 1)
    try:
        reply = decode(data[HEADER.size :])
    except Exception:
        reply = {}
    if not fds:
        status = "502 Bad Gateway" if reply.get("op") == "unreachable" else "403 Forbidden"
        return None, f"{status}: {reply.get('reason', 'refused')}"
    outer = socket.socket(fileno=fds[0])
    outer.setblocking(True)  # the harness dialled it non-blocking, and the flag travels with the socket
    return outer, ""


def relay(control: socket.socket, inner: socket.socket, host: str, port: int) -> None:
    """Connect ``inner`` to the endpoint ``host:port`` through the harness."""
    outer, _ = ask(control, host, port)
    if outer is None:
        inner.close()
        return
    pipe(inner, outer)


def pipe(inner: socket.socket, outer: socket.socket) -> None:
    """Copy bytes both ways until either side closes (each write sent at once: a request's head and body would
    otherwise wait for each other's acknowledgement, 40 ms a request)."""
    for side in (inner, outer):
        if side.family in (socket.AF_INET, socket.AF_INET6):
            side.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=pump, args=(outer, inner), daemon=True).start()
    pump(inner, outer)


def pump(source: socket.socket, target: socket.socket) -> None:
    """Move bytes one way until either side closes, through a pipe with ``splice``: the kernel moves them, and the
    thread waits outside Python's lock (a relay serves hundreds of connections at once)."""
    read, write = os.pipe()
    try:
        while moved := os.splice(source.fileno(), write, 1 << 16):
            while moved:
                moved -= os.splice(read, target.fileno(), moved)
    except OSError:
        pass
    finally:
        os.close(read)
        os.close(write)
        for side in (source, target):
            try:
                side.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def proxy(control: socket.socket, inner: socket.socket) -> None:
    """One proxy connection: ``CONNECT host:port`` opens a tunnel; a plain-HTTP request (absolute URL) is sent on
    to its server with ``Connection: close``, so no second request reuses a connection dialled for the first."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < HEAD_BYTES:
        chunk = inner.recv(HEAD_BYTES)
        if not chunk:
            inner.close()
            return
        head += chunk
    head, _, rest = head.partition(b"\r\n\r\n")
    line, *headers = head.decode("latin-1").split("\r\n")
    method, _, target = line.partition(" ")
    target = target.rpartition(" ")[0]
    if method == "CONNECT":
        host, port = split_host(target, 443)
        outer, why = ask(control, host, port) if host else (None, "400 Bad Request: CONNECT needs host:port")
        if outer is None:
            return refuse(inner, why)
        inner.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            outer.sendall(rest)
        return pipe(inner, outer)
    scheme, _, after = target.partition("://")
    host, port = split_host(after.partition("/")[0], 80) if scheme.lower() == "http" else ("", 0)
    if not host:
        return refuse(
            inner, "400 Bad Request: forge's proxy relays CONNECT, and plain HTTP with an absolute http:// URL"
        )
    outer, why = ask(control, host, port)
    if outer is None:
        return refuse(inner, why)
    kept = [
        h for h in headers if h.split(":")[0].strip().lower() not in ("connection", "proxy-connection", "keep-alive")
    ]
    outer.sendall("\r\n".join([line, *kept, "Connection: close", "", ""]).encode("latin-1") + rest)
    pipe(inner, outer)


def split_host(authority: str, default_port: int) -> tuple[str, int]:
    """``host:port`` (``[v6]:port``) of a request target, or ("", 0) when it is not one."""
    host, sep, port = authority.rpartition(":")
    if not sep or "]" in port:
        host, port = authority, str(default_port)
    host = host.strip("[]")
    return (host, int(port)) if host and port.isdigit() and 0 < int(port) < 65536 else ("", 0)


def refuse(inner: socket.socket, why: str) -> None:
    """Answer the proxy's client with ``why``: ``STATUS: reason``."""
    status, _, reason = why.partition(": ")
    body = f"forge: {reason}\n".encode()
    inner.sendall(
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nConnection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    inner.close()
