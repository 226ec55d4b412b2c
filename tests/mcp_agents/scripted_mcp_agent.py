"""An MCP agent for the tests, written with the MCP SDK's ClientSession: it reads its task from the server, makes the
calls its plan gives for that task, then hands in the plan's answer with submit_result.

    python scripted_mcp_agent.py PLAN [--name NAME] [--then crash|hang] [--peek PATH]... [--url URL | --server CMD...]

PLAN is JSON, ``{task_id: {"calls": [{"tool": ..., "args": {...}}], "answer": "...", "output": {...}}}``: the test
hands it the calls (the gold's, or others) on the command line; the agent reads nothing else. Without ``--url`` or
``--server`` it speaks MCP on its own stdin and stdout, as ``forge run --agent mcp:...`` starts it; ``--url`` connects
to ``forge mcp serve --transport http``, ``--server`` starts ``forge mcp serve`` (or any stdio server) itself.
``--then crash`` exits (status 3) before handing in, ``--then hang`` never hands in; ``--peek PATH`` tries to read PATH and
says in its answer what it found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import asynccontextmanager

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.types import Implementation


def peek(path: str) -> str:
    """What reading ``path`` gives: its entries or its size, or the error."""
    try:
        if os.path.isdir(path):
            return f"{path}: {len(os.listdir(path))} entries"
        with open(path, "rb") as f:
            return f"{path}: {len(f.read())} bytes"
    except OSError as exc:
        return f"{path}: {type(exc).__name__}"


@asynccontextmanager
async def connection(args):
    """The streams to the server: over HTTP, to a server it starts, or on this process's stdin and stdout."""
    if args.url:
        async with streamable_http_client(args.url) as streams:
            yield streams
    elif args.server:
        async with stdio_client(
            StdioServerParameters(command=args.server[0], args=args.server[1:], env=dict(os.environ))
        ) as streams:
            yield streams
    else:
        async with stdio_server() as streams:
            yield streams


async def act(args) -> None:
    plan = json.loads(args.plan)
    async with (
        connection(args) as (read, write),
        ClientSession(read, write, client_info=Implementation(name=args.name, version="1.0")) as session,
    ):
        await session.initialize()
        await session.get_prompt("task")
        task = json.loads((await session.read_resource("forge://task")).contents[0].text)
        await session.list_tools()
        steps = plan.get(task["task_id"], {})
        for call in steps.get("calls", []):
            await session.call_tool(call["tool"], call["args"])
        if args.then == "crash":  # at once: a Python exception would wait for the SDK's stdin reader thread
            print("the scripted agent crashes before it hands in", file=sys.stderr, flush=True)
            os._exit(3)
        if args.then == "hang":
            time.sleep(3600)
        answer = "; ".join([steps.get("answer", ""), *map(peek, args.peek)]).strip("; ")
        await session.call_tool("submit_result", {"answer": answer, "output": steps.get("output", {})})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("--name", default="scripted-mcp")
    parser.add_argument("--then", choices=["crash", "hang"])
    parser.add_argument("--peek", action="append", default=[])
    parser.add_argument("--url")
    parser.add_argument("--server", nargs=argparse.REMAINDER)
    anyio.run(act, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
