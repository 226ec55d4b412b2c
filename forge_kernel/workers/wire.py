"""The wire between the harness and an agent worker: length-prefixed JSON frames, size- and depth-capped.

A frame is a 4-byte big-endian length, then that many bytes of UTF-8 JSON holding one object with an ``op``.
Everything a worker sends is untrusted: the harness splits it with ``Frames``, which refuses an oversized frame
before its body has arrived, JSON nested deeper than ``MAX_DEPTH``, and anything that is not a JSON object.
"""

from __future__ import annotations

import asyncio
import json
import math
import struct
from collections.abc import Callable
from typing import Any, TypeGuard

MAX_FRAME_BYTES = 4 * 1024 * 1024
"""The largest frame a worker may send (an answer, a tool call's arguments)."""
MAX_DEPTH = 64
"""The deepest nesting of lists and objects a worker may send."""
HEADER = struct.Struct(">I")


class WireError(Exception):
    """A frame that breaks the protocol: the worker that sent it is a fault, never the run."""


def encode(message: dict) -> bytes:
    """One frame; raises TypeError / ValueError / RecursionError for what JSON cannot carry."""
    return frame(_ENCODER.encode(message).encode())


def json_args(args: dict) -> tuple[str, str | None]:
    """A call's arguments as JSON text, and None; or, when they hold what JSON cannot carry as it is (bytes, an
    object, a set, NaN, ...), a stand-in with each such value as its type's name, and what is wrong (``args.mrn:
    bytes is not a JSON value``), for the harness to refuse the call. They are walked only when encoding fails."""
    try:
        return _ENCODER.encode(args), None
    except (TypeError, ValueError, RecursionError):
        problems: list[str] = []
        stand_in = _plain(args, "args", problems)
        return _ENCODER.encode(stand_in), next(iter(problems), None)


def _plain(value: Any, path: str, problems: list[str], depth: int = 0) -> Any:
    """A copy of ``value`` that JSON carries as it is; each thing it cannot is noted in ``problems``."""
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_DEPTH - 1:  # the arguments sit one level down in a frame
            problems.append(f"{path}: nested deeper than {MAX_DEPTH}")
            return None
        if isinstance(value, (list, tuple)):
            return [_plain(item, f"{path}.{i}", problems, depth + 1) for i, item in enumerate(value)]
        copy = {}
        for key, item in value.items():
            if not isinstance(key, str):  # JSON writes a number, bool or null key as a string; nothing else
                key = _ENCODER.encode(key) if _scalar(key) else _not_json(key, path, problems, " key")
            copy[key] = _plain(item, f"{path}.{key}", problems, depth + 1)
        return copy
    return value if _scalar(value) else _not_json(value, path, problems)


def _scalar(value: Any) -> bool:
    """A string, number (finite), bool or null."""
    return value is None or isinstance(value, (str, int)) or (isinstance(value, float) and math.isfinite(value))


def _not_json(value: Any, path: str, problems: list[str], role: str = "") -> str:
    what = f"float {value}" if isinstance(value, float) else type(value).__name__
    problems.append(f"{path}: {what}{role} is not a JSON value")
    return f"<{what}>"


def frame(body: bytes) -> bytes:
    """A frame around JSON text already encoded."""
    return HEADER.pack(len(body)) + body


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a JSON value, counted without recursion; stops counting past ``limit``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def decode(body: bytes) -> dict:
    """A frame's body as a JSON object, or WireError."""
    try:
        message = _DECODER.decode(body.decode())
    except RecursionError:
        raise WireError("JSON nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"not JSON: {str(exc)[:80]}") from None
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise WireError("a frame must be a JSON object with an op")
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH and depth_of(message) > MAX_DEPTH:
        raise WireError(f"JSON nested deeper than {MAX_DEPTH}")
    return message


READ_BYTES = 64 * 1024
"""What one read of a socket takes at most: a larger frame arrives over several reads."""


class FramedProtocol(asyncio.BufferedProtocol):
    """A protocol whose socket is read into one buffer, reused: asyncio's plain protocols get a new 256 KiB bytes
    object for every read, which here costs more than a small frame's whole trip. ``data_received`` gets a view
    of what arrived, valid during the call."""

    def __init__(self):
        self._read_into = memoryview(bytearray(READ_BYTES))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read_into

    def data_received(self, data: memoryview) -> None:
        """What arrived, a view valid during the call: each subclass reads it."""
        raise NotImplementedError

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._read_into[:nbytes])


class Frames:
    """Splits a byte stream into messages as bytes arrive; WireError for an oversized or broken frame. Each body
    is read with ``parse`` (by default ``decode``: the checked JSON of the wire)."""

    def __init__(self, max_bytes: int = MAX_FRAME_BYTES, parse: Callable[[bytes], Any] = decode):
        self.max_bytes = max_bytes
        self.parse = parse
        self._buffer = bytearray()

    def feed(self, data: bytes | memoryview) -> list:
        self._buffer += data
        messages = []
        while len(self._buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buffer)
            if size > self.max_bytes:
                raise WireError(f"frame of {size} bytes exceeds the {self.max_bytes}-byte cap")
            end = HEADER.size + size
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[HEADER.size : end])
            del self._buffer[:end]
            messages.append(self.parse(body))
        return messages


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def finite_number(value: Any) -> TypeGuard[int | float]:
    """A real JSON number (not a bool, not NaN or infinite)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
