"""The size cap of tool replies: lists paged with their total and a cursor, a text too long for one reply cut with a
marker that says how to read on. The session applies it to every reply (``fit_reply``); a tool with its own page size
(``fhir_search``) pages with ``take`` and the same cursors."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..spec import compact_json
from .base import Tool, ToolError

REPLY_CAP = 32 * 1024
"""The most bytes of compact JSON a tool's result may take (about 8k tokens): the one place the cap is set."""

PAGE_TOKEN = "page_token"
"""The argument that reads on from a cursor; every read and compute tool takes it (the session does, for the tools
that do not page themselves)."""

RESERVE = 512
"""Bytes of a page kept for what paging adds: the page's counts, its cursor, a cut text's marker."""

TOKEN = re.compile(r"(\d{1,9})\.(\d{1,12})")


@dataclass(frozen=True)
class Cursor:
    """Where a page starts: the index of its first item, and how many characters of that item's cut text were read."""

    item: int = 0
    offset: int = 0

    @property
    def token(self) -> str:
        """The cursor as an opaque token: deterministic, so a page read twice gives the same next token."""
        return base64.urlsafe_b64encode(f"{self.item}.{self.offset}".encode()).decode().rstrip("=")

    @classmethod
    def parse(cls, token: str) -> Cursor:
        """The cursor of a token a reply gave; a ToolError for anything else."""
        try:
            text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            text = ""
        found = TOKEN.fullmatch(text)
        if found is None:
            raise ToolError("invalid_args", f"{PAGE_TOKEN}: not a cursor a reply gave")
        return cls(int(found[1]), int(found[2]))


def size(value: Any) -> int:
    """Bytes of a value as the reply carries it (compact JSON, UTF-8)."""
    return len(compact_json(value).encode())


def take_cursor(tool: Tool, args: dict[str, Any]) -> tuple[dict[str, Any], Cursor | None]:
    """Split the session's ``page_token`` off a call's arguments (a tool that pages itself keeps its own). A write
    is never run again to read on: a cursor given to a write tool is refused."""
    if PAGE_TOKEN not in args or PAGE_TOKEN in tool.args_model.model_fields:
        return args, None
    if tool.kind == "write":
        raise ToolError("invalid_args", f"{PAGE_TOKEN}: a write's reply is not paged")
    rest = {k: v for k, v in args.items() if k != PAGE_TOKEN}
    token = args[PAGE_TOKEN]
    if not isinstance(token, str):
        raise ToolError("invalid_args", f"{PAGE_TOKEN}: not a cursor a reply gave")
    return rest, Cursor.parse(token)


def take(items: list[Any], cursor: Cursor, room: int, count: int | None = None) -> tuple[list[Any], Cursor | None]:
    """The items of one page from ``cursor``: at most ``count``, as many whole ones as fit ``room`` bytes; an item too
    big alone (or one read partly before) is cut to fit. Returns the page and the cursor of the next one (None at the
    end). A page holds at least one item or part of one, so reading on always advances."""
    if cursor.item >= len(items):
        return [], None
    first = items[cursor.item]
    if cursor.offset or size(first) > room:
        part, read = cut(first, cursor, room)
        nxt = Cursor(cursor.item + 1) if read is None else Cursor(cursor.item, read)
        return [part], nxt if nxt.item < len(items) else None
    page: list[Any] = []
    used = 2
    for item in items[cursor.item : cursor.item + (count or len(items))]:
        used += size(item) + 1
        if used > room and page:
            break
        page.append(item)
    end = cursor.item + len(page)
    return page, Cursor(end) if end < len(items) else None


def cut(item: Any, cursor: Cursor, room: int) -> tuple[Any, int | None]:
    """Part of one item that fits ``room``: its longest text cut from ``cursor.offset`` with a marker; when the rest of
    the item alone is too big, its JSON text cut instead. Returns the part and the offset to read on from (None when
    the text is read to its end)."""
    path, text = longest_text(item)
    if text is None or size(replace(item, path, "")) > room // 2:
        path, text, item = (), compact_json(item), None
    begin = cursor.offset
    room -= size(replace(item, path, "")) if item is not None else size({"json": ""})
    piece = fitting(text, begin, room)
    end = begin + len(piece)
    marker = (
        f" [cut: characters {begin}-{end} of {len(text)}; call again with the reply's next as {PAGE_TOKEN} to read on]"
    )
    if end >= len(text):
        marker = f" [cut: characters {begin}-{end} of {len(text)}, the end]" if begin else ""
    piece += marker
    part = {"json": piece} if item is None else replace(item, path, piece)
    return part, None if end >= len(text) else end


def fitting(text: str, begin: int, room: int) -> str:
    """The longest piece of ``text`` from ``begin`` whose JSON takes at most ``room`` bytes (at least one character)."""
    length = min(len(text) - begin, max(room, 1))
    while length > 1 and (taken := size(text[begin : begin + length])) > room:
        length = max(1, min(length - 1, length * room // taken))
    return text[begin : begin + length]


def longest_text(value: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], str | None]:
    """The path to the longest string inside a value (dict keys, list indexes), and that string."""
    best: tuple[tuple[Any, ...], str | None] = (path, value) if isinstance(value, str) else (path, None)
    for key, child in children(value):
        found = longest_text(child, (*path, key))
        if found[1] is not None and (best[1] is None or len(found[1]) > len(best[1])):
            best = found
    return best


def children(value: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, list):
        yield from enumerate(value)


def replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with the part at ``path`` replaced (the original is untouched)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: replace(v, rest, new) if k == head else v for k, v in value.items()}
    return [replace(v, rest, new) if i == head else v for i, v in enumerate(value)]


def fitted(tool: Tool, result: Any, cursor: Cursor | None) -> Any:
    """What a call's reply carries of its result: a tool that pages itself (it takes ``page_token``) keeps the cap
    itself; any other's result is fitted to the cap here."""
    return result if PAGE_TOKEN in tool.args_model.model_fields else fit_reply(result, cursor, tool.name)


def fit_reply(result: Any, cursor: Cursor | None, tool: str) -> Any:
    """A tool's result within ``REPLY_CAP``: unchanged when it fits and no cursor was given; else one page of it. The
    items of its lists (in the order of its fields; a result without lists is one item) are paged: each list holds
    its items of the page, and ``page`` says ``{"total", "offset", "count", "next"}`` of the items of all lists."""
    if cursor is None and size(result) <= REPLY_CAP:
        return result
    fields = list_fields(result)
    skeleton = {k: v for k, v in result.items() if k not in fields} if fields else {}
    items = [(k, item) for k in fields for item in result[k]] if fields else [(None, result)]
    room = REPLY_CAP - size(skeleton) - RESERVE - sum(len(k) + 6 for k in fields)
    start = cursor or Cursor()
    page, nxt = take([item for _, item in items], start, room)
    if not fields:
        body: dict[str, Any] = (
            dict(page[0]) if page and isinstance(page[0], dict) else {"result": page[0] if page else None}
        )
    else:
        body = {k: [] if k in fields else v for k, v in result.items()}
        for (field, _), item in zip(items[start.item :], page):
            body[str(field)].append(item)
    body["page"] = {
        "total": len(items),
        "offset": start.item,
        "count": len(page),
        "next": nxt.token if nxt else None,
        **({"read_on": f"call {tool} again with the same arguments and {PAGE_TOKEN}"} if nxt else {}),
    }
    return body


def list_fields(result: Any) -> list[str]:
    """The fields of a dict result whose values are lists, in order, when the rest is small enough to repeat on every
    page; else none (the result is paged as one item)."""
    if not isinstance(result, dict):
        return []
    fields = [k for k, v in result.items() if isinstance(v, list)]
    rest = size({k: v for k, v in result.items() if k not in fields})
    return fields if rest <= REPLY_CAP // 4 else []
