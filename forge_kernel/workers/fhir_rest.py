"""A FHIR R4 REST face on one trial: ``FhirTrial.app`` is an ASGI app whose every read, search and create is a call of
the generic FHIR tools (``fhir_read``, ``fhir_search``, ``fhir_create``) through the trial's ``ToolSession``, so the
policy, the faults, the budgets and the record apply to each request as to any tool call.

Under the base ``/fhir``:

- ``GET metadata``: a CapabilityStatement (the types and interactions served; not a call);
- ``GET $task``: the task as JSON (the ``AgentTask`` without its tool definitions; not a call);
- ``GET {type}/{id}``: ``fhir_read`` (a resource over the reply cap comes in parts: its ``page`` and a ``Link`` header
  say where the next part is); ``GET {type}?patient=|subject=|code=|date=|name=|birthdate=|identifier=|_count=|_page_token=``:
  ``fhir_search``, answered as a ``searchset`` Bundle whose ``next`` link carries the cursor;
- ``POST {type}`` (a resource as JSON): ``fhir_create``, answered 201 with ``Location`` and the resource;
- ``POST $finish`` (``{"answer", "output", "confidence", "status"}``): calls the task's ``finish`` tool when the
  task has one (recorded, its summary the answer), hands in the result and ends the trial.

Only a client on this machine is served: a request whose Host or Origin names another is refused (403; against DNS
rebinding). Errors are OperationOutcomes: 400 invalid, 403 refused by the policy, 404 not found, 405 an interaction
this task has no tool for, 410 after the trial has ended, 429 a budget used up (the trial ends), 500 a tool's own
crash, 503 an injected fault. A request the tools cannot take (an unknown search parameter, a body that is not JSON or
is over ``MAX_BODY``) is still recorded, as a call refused with ``invalid_args``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from time import perf_counter
from typing import Any
from urllib.parse import urlencode, urlsplit

from ..agents import AgentTask
from ..spec import BudgetExceeded, printable
from ..tools import ToolSession
from ._served import ServedTrial, result_of

BASE = "/fhir"
FINISH = "$finish"
TASK = "$task"
MAX_BODY = 256 * 1024
"""The largest request body read (a resource to create has 32 KiB at most: the tools' reply cap)."""
FHIR_JSON = "application/fhir+json"
LOCAL_HOSTS = ("127.0.0.1", "localhost")
SEARCH_PARAMETERS = {
    "patient": "reference",
    "subject": "reference",
    "code": "token",
    "date": "date",
    "name": "string",
    "birthdate": "date",
    "identifier": "token",
    "_count": "number",
    "_page_token": "string",
}
"""The search parameters served (those of ``fhir_search``) and their FHIR types."""
STATUS = {
    "invalid_args": (400, "invalid"),
    "denied": (403, "forbidden"),
    "not_found": (404, "not-found"),
    "unknown_tool": (405, "not-supported"),
    "ended": (410, "processing"),
    "budget_exceeded": (429, "throttled"),
    "tool_crash": (500, "exception"),
    "timeout": (503, "timeout"),
    "error": (503, "transient"),
}
"""A tool's error code (or the server's own) -> the HTTP status and the OperationOutcome's issue code."""


@dataclass(frozen=True)
class Reply:
    """What a request is answered with: an HTTP status, a JSON body and headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def response(self):
        """As a Starlette response."""
        from starlette.responses import Response

        return Response(json.dumps(self.body, ensure_ascii=False), self.status, self.headers, FHIR_JSON)


def outcome(code: str, message: str) -> Reply:
    """An error as an OperationOutcome with the HTTP status of its code."""
    status, issue = STATUS.get(code, (500, "exception"))
    severity = "fatal" if status >= 500 else "error"
    body = {
        "resourceType": "OperationOutcome",
        "issue": [{"severity": severity, "code": issue, "diagnostics": message, "details": {"text": code}}],
    }
    return Reply(status, body)


class FhirTrial(ServedTrial):
    """One trial served as a FHIR R4 REST endpoint (``app``), one request at a time."""

    HAND_IN = f"a POST to {BASE}/{FINISH}"

    def __init__(self, task: AgentTask, session: ToolSession):
        super().__init__(task, session)
        self.last_request: float | None = None
        """When a request last began or ended (``perf_counter``), None before the first."""

    def app(self):
        """The ASGI app of the endpoint."""
        from starlette.applications import Starlette
        from starlette.routing import Route

        methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]
        return Starlette(routes=[Route("/{path:path}", self._handle, methods=methods)])

    async def _handle(self, request):
        self.last_request = perf_counter()
        self._identify(request.headers.get("user-agent", ""))
        try:
            return (await self._route(request)).response()
        except Exception as exc:  # the server's own bug: an OperationOutcome, never a traceback
            return outcome("tool_crash", f"the server failed: {type(exc).__name__}").response()
        finally:
            self.last_request = perf_counter()

    def _identify(self, agent: str) -> None:
        """Name the client by its User-Agent (``product/version ...``), once."""
        if self.client is None and agent.strip():
            name, _, version = agent.split()[0].partition("/")
            self.client = printable(name)[:100], printable(version)[:100]

    async def _route(self, request) -> Reply:
        path, method = request.url.path, request.method
        if not local(request.headers.get("host", "")) or not local(request.headers.get("origin", "//127.0.0.1")):
            return outcome("denied", "only a client on this machine is served (the Host and Origin headers)")
        if path != BASE and not path.startswith(BASE + "/"):
            return outcome("not_found", f"no such endpoint: {path} (the FHIR base is {BASE})")
        parts = [p for p in path[len(BASE) :].split("/") if p]
        base = str(request.base_url).rstrip("/") + BASE
        if method == "GET" and parts == ["metadata"]:
            return Reply(200, capability(self.session))
        if method == "GET" and parts == [TASK]:
            return Reply(200, self.task.model_dump(mode="json", exclude={"tool_definitions"}))
        if self.ended.is_set():
            return outcome("ended", "the trial has ended")
        if method == "POST" and parts == [FINISH]:
            return self._finish(await body_of(request))
        if method == "GET" and len(parts) == 2:
            return self._read(parts[0], parts[1], list(request.query_params.multi_items()), base)
        if method == "GET" and len(parts) == 1:
            return self._search(parts[0], list(request.query_params.multi_items()), base)
        if method == "POST" and len(parts) == 1:
            return self._create(parts[0], await body_of(request), base)
        return outcome("unknown_tool", f"{method} {path}: not an interaction of this server (see {BASE}/metadata)")

    def _call(self, tool: str, args: dict[str, Any], refused: str | None = None) -> Any:
        """Run one call through the session: its result, or the Reply of its error."""
        try:
            reply = json.loads(self.session.reply(tool, args, refused))
        except BudgetExceeded as exc:
            self.ended.set()
            return outcome("budget_exceeded", f"{exc}: the trial has ended")
        if reply["ok"]:
            return reply["result"]
        return outcome(reply["error"]["code"], reply["error"]["message"])

    def _read(self, rtype: str, rid: str, query: list[tuple[str, str]], base: str) -> Reply:
        args: dict[str, Any] = {"type": rtype, "id": rid}
        refused = None
        for name, value in query:
            if name == "_page_token":
                args["page_token"] = value
            elif name != "_format":
                refused = f"{name}: a read takes no parameter but _page_token"
        found = self._call("fhir_read", args, refused)
        if isinstance(found, Reply):
            return found
        following = (found.get("page") or {}).get("next")
        if not isinstance(following, str):
            return Reply(200, found)
        return Reply(
            200, found, {"Link": f'<{url_of(base, f"{rtype}/{rid}", [("_page_token", following)])}>; rel="next"'}
        )

    def _search(self, rtype: str, query: list[tuple[str, str]], base: str) -> Reply:
        args, refused = search_args(rtype, query)
        found = self._call("fhir_search", args, refused)
        if isinstance(found, Reply):
            return found
        return Reply(200, searchset(rtype, query, found, base))

    def _create(self, rtype: str, body: Any, base: str) -> Reply:
        refused = body if isinstance(body, str) else None
        resource = body if isinstance(body, dict) else {}
        if refused is None and resource.get("resourceType") != rtype:
            refused = f"resource.resourceType: {resource.get('resourceType')!r} is not {rtype!r}, the type posted to"
        made = self._call("fhir_create", {"resource": resource}, refused)
        if isinstance(made, Reply):
            return made
        created = self.session.view.get(made["resourceType"], made["id"]) or made
        return Reply(201, created, {"Location": f"{base}/{made['resourceType']}/{made['id']}"})

    def _finish(self, body: Any) -> Reply:
        result = body if isinstance(body, str) else result_of(body)
        if isinstance(result, str):
            self.end(result)
            return outcome("invalid_args", result)
        if "finish" in self.task.tool_names:
            finished = self._call("finish", {"summary": result.answer})
            if isinstance(finished, Reply):  # a fault (try again) or the budget (the trial has ended)
                return finished
        self.end(result)
        note = {"severity": "information", "code": "informational", "diagnostics": "result handed in; trial ended"}
        return Reply(200, {"resourceType": "OperationOutcome", "issue": [note]})


def local(address: str) -> bool:
    """Whether a Host header or an Origin names this machine (against DNS rebinding: a web page may not call)."""
    host = urlsplit(address if "//" in address else f"//{address}").hostname
    return host in LOCAL_HOSTS


async def body_of(request) -> Any:
    """The request's JSON body, or why it is none (a string)."""
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            return f"body: over {MAX_BODY // 1024} KiB"
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        return f"body: not JSON ({str(exc)[:80]})"


def search_args(rtype: str, query: list[tuple[str, str]]) -> tuple[dict[str, Any], str | None]:
    """The ``fhir_search`` arguments of a FHIR search, and why the query cannot be taken (or None). A token's
    system (``system|code``) and a reference's type (``Patient/id``) are dropped, a ``_count`` over the tool's
    largest page asks for that page; ``date`` takes the prefixes
    ge, gt (both: from), le, lt (both: until) and eq (or none: that day)."""
    args: dict[str, Any] = {"type": rtype}
    for name, value in query:
        if name in ("patient", "subject"):
            args["patient"] = value.removeprefix("Patient/")
        elif name == "code":
            args["code"] = value.rsplit("|", 1)[-1]
        elif name == "date":
            args.update(date_bounds(value))
        elif name == "_count":
            args["_count"] = str(min(int(value), most_per_page())) if value.isdigit() else value
        elif name in ("name", "birthdate", "identifier"):
            args[name] = value
        elif name == "_page_token":
            args["page_token"] = value
        elif name != "_format":
            return args, f"{name}: not a search parameter of this server ({', '.join(SEARCH_PARAMETERS)})"
    return args, None


@cache
def most_per_page() -> int:
    """The largest ``_count`` of ``fhir_search``: a larger one asks for that many (a server may return fewer)."""
    from ..tools import TOOLS

    schema = TOOLS["fhir_search"].args_model.model_json_schema(by_alias=True)
    return int(schema["properties"]["_count"]["maximum"])


def date_bounds(value: str) -> dict[str, str]:
    prefix, rest = (value[:2], value[2:]) if value[:2].isalpha() else ("eq", value)
    bounds = {"ge": ["date_ge"], "gt": ["date_ge"], "le": ["date_le"], "lt": ["date_le"]}.get(
        prefix, ["date_ge", "date_le"]
    )
    return dict.fromkeys(bounds, rest)


def searchset(rtype: str, query: list[tuple[str, str]], found: dict[str, Any], base: str) -> dict[str, Any]:
    """A ``fhir_search`` page as a FHIR searchset Bundle: ``total``, ``entry`` (``fullUrl``, ``resource``) and the
    ``self`` and ``next`` links."""
    kept = [(k, v) for k, v in query if k != "_page_token"]
    links = [{"relation": "self", "url": url_of(base, rtype, query)}]
    if found.get("next"):
        links.append({"relation": "next", "url": url_of(base, rtype, [*kept, ("_page_token", found["next"])])})
    entries = [
        {"fullUrl": f"{base}/{r.get('resourceType', rtype)}/{r.get('id', '')}", "resource": r, "search": MATCH}
        for r in found["entry"]
    ]
    return {"resourceType": "Bundle", "type": "searchset", "total": found["total"], "link": links, "entry": entries}


MATCH = {"mode": "match"}


def url_of(base: str, rtype: str, query: list[tuple[str, str]]) -> str:
    return f"{base}/{rtype}" + (f"?{urlencode(query)}" if query else "")


def capability(session: ToolSession) -> dict[str, Any]:
    """A minimal CapabilityStatement: the types this trial's EHR holds or may write, with the interactions its
    tools serve."""
    package, tools = session.package, set(session.package.tools)
    readable = package.policy.readable_types
    held = {key[0] for key in session.view.image.resources}
    types = sorted((held if readable is None else held & set(readable)) | set(package.policy.writable_types))
    return {
        "resourceType": "CapabilityStatement",
        "status": "active",
        "date": package.environment.now.isoformat(),
        "kind": "instance",
        "fhirVersion": "4.0.1",
        "format": ["json"],
        "rest": [
            {
                "mode": "server",
                "resource": [{"type": t, **interactions(t, tools, package.policy.writable_types)} for t in types],
                "operation": [{"name": FINISH[1:], "definition": f"{BASE}/{FINISH}"}],
            }
        ],
    }


def interactions(rtype: str, tools: set[str], writable: list[str]) -> dict[str, Any]:
    return {
        "interaction": [{"code": code} for code in interaction_codes(rtype, tools, writable)],
        "searchParam": [{"name": n, "type": t} for n, t in SEARCH_PARAMETERS.items() if "fhir_search" in tools],
    }


def interaction_codes(rtype: str, tools: set[str], writable: list[str]) -> Iterator[str]:
    if "fhir_read" in tools:
        yield "read"
    if "fhir_search" in tools:
        yield "search-type"
    if "fhir_create" in tools and rtype in writable:
        yield "create"
