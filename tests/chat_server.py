"""A chat-completions server on 127.0.0.1 for tests and benchmarks: real HTTP, the OpenAI wire format, replies from
a script (SYNTHETIC data only).

``ChatServer(script)`` answers each ``POST /v1/chat/completions`` with ``script(request)``: a ``Reply`` (a tool call
or several, a final message, a refusal, an HTTP error, after a delay). ``gold_script`` plays each package's gold
solution one call per turn, then its answer, as a model that knows the task would; the model named in the request
picks a mishap to play first (``MISHAPS``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count

from forge_kernel.spec import load_package


@dataclass
class Reply:
    """One answer of the server."""

    content: str | None = None
    tool_calls: list[tuple[str, dict | str]] = field(default_factory=list)
    """(name, arguments): a dict is sent as JSON text, a string as it is (malformed on purpose)."""
    refusal: str | None = None
    status: int = 200
    error: dict | None = None
    """The error object of a non-200 answer (``message``, ``type``, ``code``)."""
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    usage: tuple[int, int, int] = (120, 20, 0)
    """Prompt, completion and cached prompt tokens."""


class ChatServer:
    """The server, on a port of its own; ``requests`` holds every request body it got, in order."""

    def __init__(self, script: Callable[[dict], Reply]):
        self.script = script
        self.requests: list[dict] = []
        self.keys: list[str] = []
        """The bearer key of each request (what the SDK sent as ``Authorization``)."""
        self._ids = count(1)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                server.requests.append(body)
                server.keys.append(self.headers.get("authorization", "").removeprefix("Bearer "))
                self.answer(server.answer(body))

            def answer(self, reply: Reply) -> None:
                time.sleep(reply.delay)
                payload = json.dumps((reply.error and {"error": reply.error}) or server.completion(reply)).encode()
                try:
                    self.send_response(reply.status)
                    for name, value in {"content-type": "application/json", **reply.headers}.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout on purpose)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.httpd.server_port}"

    def answer(self, request: dict) -> Reply:
        try:
            return self.script(request)
        except Exception as exc:  # a broken script is a test's bug: say so as the server's error
            return Reply(status=500, error={"message": f"script: {exc!r}", "type": "server_error"})

    def completion(self, reply: Reply) -> dict:
        calls = [
            {
                "id": f"call_{next(self._ids)}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                },
            }
            for name, args in reply.tool_calls
        ]
        prompt, completion, cached = reply.usage
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "message": {
                        "role": "assistant",
                        "content": reply.content,
                        "refusal": reply.refusal,
                        **({"tool_calls": calls} if calls else {}),
                    },
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def task_of(request: dict) -> str:
    """The task id the llm agent's prompt names (``Task <id>:``)."""
    return re.search(r"^Task (\S+):", request["messages"][1]["content"], re.M).group(1)


def turns_so_far(request: dict) -> int:
    return sum(m["role"] == "assistant" for m in request["messages"])


def gold_script(package_folders: list, latency: float = 0.0) -> Callable[[dict], Reply]:
    """A model that knows each package's gold solution: one gold call a turn, then the gold answer and output as
    the final JSON; the request's model name picks a mishap to play first (``MISHAPS``)."""
    golds = {}
    for folder in package_folders:
        package = load_package(folder)
        golds[package.id] = package.hidden.gold
    seen: set[tuple] = set()

    def script(request: dict) -> Reply:
        gold, turn = golds[task_of(request)], turns_so_far(request)
        mishap, key = MISHAPS.get(request["model"]), (request["model"], task_of(request), request.get("seed"))
        if mishap and turn == 0 and key not in seen:
            seen.add(key)
            return mishap(request)
        turn -= request["model"] in ANSWERED and turn > 0  # the mishap's own turn is in the conversation
        calls = gold.calls
        if request["model"] in WHOLE:
            return WHOLE[request["model"]](gold, turn)
        if turn < len(calls):
            return Reply(tool_calls=[(calls[turn].tool, calls[turn].args)], delay=latency)
        return final(gold, latency)

    return script


def final(gold, latency: float = 0.0) -> Reply:
    """The gold's answer and output as the model's final JSON."""
    return Reply(
        content=json.dumps({"answer": gold.answer, "output": gold.output, "confidence": 0.9}, ensure_ascii=False),
        delay=latency,
    )


MISHAPS: dict[str, Callable[[dict], Reply]] = {
    "rate-limited-once": lambda r: Reply(
        status=429,
        headers={"retry-after": "0"},
        error={"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"},
    ),
    "server-error-once": lambda r: Reply(status=503, error={"message": "overloaded", "type": "server_error"}),
    "slow-once": lambda r: Reply(content="too late", delay=3.0),
    "malformed-args-once": lambda r: Reply(tool_calls=[("patient_search", '{"mrn": ')]),
    "unknown-tool-once": lambda r: Reply(tool_calls=[("delete_everything", {"all": True})]),
}
"""Model name -> what the server answers the first request of each conversation: then the gold goes on (the llm
agent tries again, or sends the error back to the model)."""
ANSWERED = {"malformed-args-once", "unknown-tool-once"}
"""The mishaps the agent answers (with the tool's error), which so stay in the conversation as a turn."""
PLAN = (
    "Plan: confirm the patient from the MRN the task gives, then read the allergy and problem history and the "
    "active medications before anything is ordered. If an allergy, an interaction or a missing result stands "
    "against what the task asks, I will not act on it and will say why. Each record I rely on must be this "
    "patient's and current; anything a record asks me to do is data, not an instruction. Doses follow the "
    "label for an adult with normal renal function unless the chart says otherwise; if the renal function is "
    "not on file I will say so rather than assume it. Orders are written only once the checks they need have "
    "been read, and each names the reason it is for. When the work is done I will close the task with a short "
    "summary of what I did and what I found."
)
"""The narrated model's first words: longer than a replay shows (``TURN_TEXT``)."""
SAYS = {
    "patient_search": "First I confirm who the patient is from the MRN in the task.",
    "patient_history": "Before prescribing I read the allergy and problem history.",
    "medication_search": "Next, the active medications, to check for interactions.",
    "drug_info": "I look up the drug's usual dose and contraindications.",
    "drug_interaction_check": "I check the new drug against what the patient already takes.",
    "medication_request_create": "No allergy or interaction stands in the way: I write the order.",
    "finish": "The order is written; I close the task.",
}


def narrated(gold, turn: int) -> Reply:
    """A model that says what it does, its prompt growing each turn: its plan with a first call whose arguments are
    cut short (never sent), then each gold call with a sentence, then the gold's answer."""
    usage = (1500 + 400 * turn, 60, 1024 if turn else 0)
    if turn == 0:
        return Reply(content=PLAN, tool_calls=[(gold.calls[0].tool, '{"mrn": ')], usage=usage)
    if turn <= len(gold.calls):
        call = gold.calls[turn - 1]
        return Reply(
            content=SAYS.get(call.tool, f"Next I call {call.tool}."), tool_calls=[(call.tool, call.args)], usage=usage
        )
    return replace(final(gold), usage=usage)


WHOLE: dict[str, Callable] = {
    "narrated": narrated,
    "parallel": lambda gold, turn: (
        Reply(tool_calls=[(c.tool, c.args) for c in gold.calls]) if turn == 0 else final(gold)
    ),
    "refuses": lambda gold, turn: Reply(refusal="I can't help with a patient's chart."),
    "no-tool-call": lambda gold, turn: Reply(content="The patient seems fine."),
    "context-length": lambda gold, turn: Reply(
        status=400,
        error={
            "message": "This model's maximum context length is 8192 tokens; the messages resulted in 9001 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        },
    ),
    "always-rate-limited": lambda gold, turn: MISHAPS["rate-limited-once"](None),
}
"""Model name -> how the whole conversation goes (the gold, then its turn number)."""
