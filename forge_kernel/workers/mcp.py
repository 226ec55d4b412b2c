"""Agents over MCP (the Model Context Protocol): one trial served to an MCP client, and ``mcp:COMMAND`` agents.

``TrialServer`` is the MCP server of one trial, the same for ``forge mcp serve`` and for ``McpAgent``:

- tools: exactly the package's tool manifest, each with its description and the JSON Schema of its arguments (the
  ``parameters`` of the task's OpenAI function definitions). Every call goes through the trial's
  ``ToolSession.reply`` (policy, faults, the call budget, the record) and is answered with the JSON text any agent
  gets (``isError`` where it is not ok). A call past the call budget ends the trial.
- ``submit_result`` (answer, output, confidence, status): no tool of the package and never recorded as a call; it
  hands in the result and ends the trial. The package's ``finish`` stays an ordinary, recorded tool.
- the prompt ``task`` and the resource ``forge://task``: the task as text (the instruction in its language, the
  other languages, the context, the frozen clock, the budget, how to end) and as JSON (the ``AgentTask`` without its
  tool definitions, which the tool list gives).

Once the trial has ended every tool call is refused. ``McpAgent`` runs COMMAND in the run's sandbox once per trial,
its stdin and stdout the trial's MCP connection (``converse``), its stderr shown as any agent's output is; the
trial ends on ``submit_result``, when the program closes its side, breaks the protocol or runs out of budget, and
the program is killed then.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from time import perf_counter
from typing import Any

import mcp_types as types
from anyio import create_memory_object_stream
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

from ..agents import AgentTask
from ..spec import RESULT, AgentError, BudgetExceeded, compact_json, printable
from ..tools import ToolSession
from ._output import Allowance
from ._served import ServedTrial, stop
from ._zygote_process import SandboxedProcess, WorkerError
from .attempt import AGENT_ERROR, AgentOutcome
from .sandbox import Sandbox, program, script_of
from .wire import MAX_DEPTH, MAX_FRAME_BYTES, depth_of

SUBMIT = "submit_result"
TASK_URI = "forge://task"
HELLO_SECONDS = 30.0
"""How long an MCP agent's program may take to send its first message when it is started to learn its name."""
INSTRUCTIONS = (
    f"A task on a virtual EHR of synthetic patients. Read it in the prompt 'task' (or the resource "
    f"{TASK_URI}), act with the tools (each call is recorded and checked), call the task's own 'finish' "
    f"tool when done if the task has it, then hand in your answer with '{SUBMIT}': that ends the trial."
)
SUBMIT_TOOL = types.Tool(
    name=SUBMIT,
    input_schema={k: v for k, v in RESULT.json_schema().items() if k not in ("title", "description")},
    description="Hand in your result and end the trial: answer (text), output (structured output, e.g. a criterion "
    "assessment), confidence (0 to 1), status (completed, escalated, gave_up or error). Not a tool of the "
    "task: it is not recorded as a call.",
)


class TrialServer(ServedTrial):
    """The MCP server of one trial (``server``); ``run`` serves it until the trial ends and gives its outcome."""

    HAND_IN = SUBMIT

    def __init__(self, task: AgentTask, session: ToolSession):
        super().__init__(task, session)
        self.server = Server(
            "medagent-forge",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
        )

    # --- what the client sees ------------------------------------------------------------------------------------

    def _identify(self, ctx) -> None:
        if self.client is None and ctx.session.client_params is not None:
            info = ctx.session.client_params.client_info
            self.client = printable(info.name)[:100], printable(info.version)[:100]

    async def _list_tools(self, ctx, params) -> types.ListToolsResult:
        self._identify(ctx)
        tools = [
            types.Tool(name=f["name"], description=f["description"], input_schema=f["parameters"])
            for f in (t["function"] for t in self.task.tools)
        ]
        return types.ListToolsResult(tools=[*tools, SUBMIT_TOOL])

    async def _call_tool(self, ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        self._identify(ctx)
        if self.ended.is_set():
            return answer(compact_json({"ok": False, "error": {"code": "ended", "message": "the trial has ended"}}))
        if params.name == SUBMIT:
            return self._submit(params.arguments or {})
        try:
            return answer(self.session.reply(params.name, params.arguments or {}))
        except BudgetExceeded as exc:
            self.ended.set()
            return answer(compact_json({"ok": False, "error": {"code": "budget_exceeded", "message": str(exc)}}))

    def _submit(self, arguments: dict) -> types.CallToolResult:
        failure = self.hand_in(arguments)
        reply = (
            {"ok": True, "result": {"submitted": True}}
            if failure is None
            else {"ok": False, "error": {"code": "invalid_result", "message": failure}}
        )
        return answer(compact_json(reply))

    async def _list_prompts(self, ctx, params) -> types.ListPromptsResult:
        self._identify(ctx)
        return types.ListPromptsResult(
            prompts=[types.Prompt(name="task", title=self.task.title, description="The task of this trial.")]
        )

    async def _get_prompt(self, ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        self._identify(ctx)
        text = types.TextContent(type="text", text=task_text(self.task))
        return types.GetPromptResult(
            description=self.task.title, messages=[types.PromptMessage(role="user", content=text)]
        )

    async def _list_resources(self, ctx, params) -> types.ListResourcesResult:
        self._identify(ctx)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name="task",
                    uri=TASK_URI,
                    mime_type="application/json",
                    description="The task of this trial, as JSON.",
                )
            ]
        )

    async def _read_resource(self, ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        self._identify(ctx)
        text = self.task.model_dump_json(exclude={"tool_definitions"})
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=TASK_URI, mime_type="application/json", text=text)]
        )

    # --- serving -------------------------------------------------------------------------------------------------

    async def converse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> str | None:
        """Serve the trial on a byte stream of newline-delimited JSON-RPC messages (MCP's stdio transport) until the
        client closes its side (None) or breaks the protocol (why). A message may have ``MAX_FRAME_BYTES`` and
        ``MAX_DEPTH`` levels of nesting at most, and the client may send four per call of its budget, and 64 more."""
        messages = 4 * self.task.budget.max_calls + 64
        to_server, server_reads = create_memory_object_stream[SessionMessage | Exception](0)
        server_writes, to_client = create_memory_object_stream[SessionMessage](0)

        async def read() -> str | None:
            async with to_server:
                for _ in range(messages):
                    try:
                        line = await reader.readline()
                    except ValueError:
                        return f"protocol: a message over {MAX_FRAME_BYTES} bytes"
                    if not line:
                        return None
                    try:
                        message = json.loads(line)
                        if depth_of(message) > MAX_DEPTH:
                            return f"protocol: JSON nested deeper than {MAX_DEPTH}"
                        await to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(message)))
                    except (ValueError, RecursionError) as exc:
                        return f"protocol: not a JSON-RPC message: {str(exc)[:80]}"
                return "protocol: too many messages in one trial"

        async def write() -> None:
            async for sent in to_client:
                writer.write(sent.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
                await writer.drain()

        tasks = [
            asyncio.ensure_future(
                self.server.run(server_reads, server_writes, self.server.create_initialization_options())
            ),
            asyncio.ensure_future(write()),
        ]
        try:
            return await read()
        finally:
            await stop(*tasks)


def answer(reply: str) -> types.CallToolResult:
    """A tool's reply as an MCP result: the JSON text, an error where it is not ok."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=reply)], is_error=not json.loads(reply)["ok"]
    )


def task_text(task: AgentTask) -> str:
    """The task as a prompt: the instruction in its language, the others, the context, the answer schema (where the
    task declares a typed answer), the clock and the budget."""
    others = [f"[{lang}] {text}" for lang, text in task.instructions.items() if lang != task.language]
    budget = task.budget
    return "\n\n".join(
        [
            task.instruction,
            *others,
            f"Context: {json.dumps(task.context, ensure_ascii=False, default=str)}",
            *([f"Answer schema (the structured output): {task.answer_schema_text}"] if task.answer_schema else []),
            f"Now (the EHR's frozen clock): {task.now.isoformat()}",
            f"Budget: at most {budget.max_calls} tool calls and {budget.max_seconds:g} s. Seed: {task.seed}.",
            f"The patients are synthetic. {INSTRUCTIONS}",
        ]
    )


async def streams(incoming, outgoing) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.BaseTransport]:
    """A reader of the pipe ``incoming`` (lines of ``MAX_FRAME_BYTES`` at most), a writer to the pipe ``outgoing``,
    and the reader's transport (close it, and the writer, when done)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_FRAME_BYTES)
    reading, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), incoming)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, outgoing)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop), reading


def client_info(message: dict) -> tuple[object, object] | None:
    """The name and version an MCP client's first message gives (``clientInfo`` of ``initialize``, or of a request's
    ``_meta`` in the 2026 protocol), or None."""
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    info = params.get("clientInfo") or (meta.get(types.CLIENT_INFO_META_KEY) if isinstance(meta, dict) else None)
    if not isinstance(info, dict):
        return None
    return info.get("name"), info.get("version", "")


class McpAgent:
    """An ``mcp:COMMAND`` agent, run in the run's sandbox once per trial as the MCP client of that trial's server;
    started with ``await McpAgent.start(spec, sandbox)``, which runs it once to learn its name."""

    config: dict[str, Any] | None = None

    def __init__(self, spec: str, sandbox: Sandbox, argv: list[str]):
        self.spec = spec
        self.sandbox = sandbox
        self.argv = argv
        self.isolation = sandbox.mode
        self.name = self.version = ""
        self._allowance = Allowance()
        """How much of the agent's output is left to show, across its trials."""

    @classmethod
    async def start(cls, spec: str, sandbox: Sandbox) -> McpAgent:
        """The agent, named by the ``clientInfo`` of its first message (or, without one, by its script or program);
        an AgentError when the command names no program, or the program says nothing."""
        try:
            agent = cls(spec, sandbox, program(spec))
        except ValueError as exc:
            raise AgentError("--agent", spec, str(exc)) from None
        name, version = await agent._introduce()
        if not (isinstance(name, str) and 0 < len(name) <= 100 and isinstance(version, str) and len(version) <= 100):
            raise AgentError(
                "--agent", spec, "the agent's clientInfo must have a name and a version (strings of up to 100 chars)"
            )
        agent.name, agent.version = printable(name), printable(version)  # data: shown as text wherever it goes
        return agent

    async def _introduce(self) -> tuple[object, object]:
        """Run the program once and read its first message: the name and version it gives."""
        process = SandboxedProcess(self.spec, self.sandbox, self._allowance)
        pipes: list[asyncio.StreamWriter | asyncio.BaseTransport] = []
        try:
            await process.start(self._command, stdio=True)
            assert process.process is not None  # started
            reader, writer, transport = await streams(process.process.stdout, process.process.stdin)
            pipes = [writer, transport]
            line = await asyncio.wait_for(reader.readline(), HELLO_SECONDS)
            found = client_info(json.loads(line)) if line else None
        except WorkerError as exc:
            raise AgentError("--agent", self.spec, f"cannot start: {exc}") from None
        except TimeoutError:
            raise AgentError("--agent", self.spec, f"sent no MCP message within {HELLO_SECONDS:g} s") from None
        except (ValueError, RecursionError):
            raise AgentError("--agent", self.spec, "its first message is not JSON-RPC") from None
        finally:
            close(process, *pipes)
        if not line:
            raise AgentError("--agent", self.spec, "ended before it sent an MCP message")
        return found or (Path(script_of(self.argv) or self.argv[0]).name, "")

    def _command(self, launch, egress_fd: int | None) -> list[str]:
        return self.sandbox.program_command(self.spec, self.argv, launch, egress_fd)

    async def attempt(self, task: AgentTask, seed: int, session: ToolSession, max_seconds: float) -> AgentOutcome:
        """Run the program for one trial, its time counted from its start; it is killed when the trial ends."""
        process = SandboxedProcess(self.spec, self.sandbox, self._allowance)
        pipes: list[asyncio.StreamWriter | asyncio.BaseTransport] = []
        trial = TrialServer(task.for_trial(seed), session)
        started = perf_counter()
        try:
            await process.start(self._command, stdio=True)
            assert process.process is not None  # started
            reader, writer, transport = await streams(process.process.stdout, process.process.stdin)
            pipes = [writer, transport]
            return await trial.run(trial.converse(reader, writer), max_seconds, started)
        except WorkerError as exc:
            return AgentOutcome(AGENT_ERROR, f"cannot start: {exc}")
        finally:
            close(process, *pipes)


def close(process: SandboxedProcess, *pipes) -> None:
    """Close the pipes to and from a program, then end its sandbox."""
    for pipe in pipes:
        pipe.close()
    process.close()
