"""Recording a gold solution by calling tools against the draft's fixture EHR, as an agent would."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..ehr import EHRImage, EHRView, ResourceDiff, Timeline
from ..spec import Event, ToolCall, TrajectoryFile, bundle_resources, image_above, overlay_bundles
from ..tools import ToolSession
from ._draft import Draft


@dataclass(frozen=True)
class RecordedCall:
    """One call of the gold as it ran: the event (result, policy decision, fault) and the record it changed."""

    event: Event
    changes: list[ResourceDiff]
    """Resources added / changed / removed by this call, field by field."""

    @property
    def reply(self) -> dict:
        """What an agent would have got back: ``{"ok": true, "result": ...}`` or the error."""
        return {"ok": True, "result": self.event.result} if self.event.ok else {"ok": False, "error": self.event.error}


class Recorder:
    """Tool calls against a fresh copy of the draft's EHR, under its policy, faults and budget; ``finish`` makes
    them the draft's gold solution."""

    def __init__(self, draft: Draft):
        self.draft = draft
        env = draft.public.environment
        shared = image_above(draft.folder, env.ehr_image, env.ehr_version)
        if shared is None:
            resources = [
                r for name, bundle in draft.fixtures.items() for r in bundle_resources(bundle, draft.folder / name)
            ]
        else:
            resources = overlay_bundles(shared, {draft.folder / name: b for name, b in draft.fixtures.items()})
        self.image = EHRImage(resources, env.now, shared)
        self.session = ToolSession(draft.public, EHRView(self.image))
        self.calls: list[RecordedCall] = []

    def call(self, tool: str, /, **args) -> RecordedCall:
        """Run one call; its result and the state change it made."""
        self.session.reply(tool, json.loads(json.dumps(args)))
        event = self.session.events[-1]
        line = Timeline.of([(event.step, op) for op in event.changes], self.image.resources.get)
        recorded = RecordedCall(event, line.diff(event.step - 1, event.step))
        self.calls.append(recorded)
        return recorded

    def rerun(self, keep: int | None = None) -> None:
        """Run the first ``keep`` calls (all by default) again on a fresh EHR, under the draft's public half as it
        is now (its tools, policy, faults or budget may have changed)."""
        kept = [ToolCall(tool=c.event.tool, args=c.event.args) for c in self.calls[:keep]]
        self.session = ToolSession(self.draft.public, EHRView(self.image))
        self.calls = []
        for call in kept:
            self.call(call.tool, **call.args)

    def undo(self) -> None:
        """Take back the last call: the others run again on a fresh EHR."""
        self.rerun(len(self.calls) - 1)

    def finish(self, answer: str, output: dict | None = None, status: str = "completed") -> TrajectoryFile:
        """The calls so far, with the final answer, as the draft's gold solution."""
        gold = TrajectoryFile(
            calls=[ToolCall(tool=c.event.tool, args=c.event.args) for c in self.calls],
            answer=answer,
            output=output or {},
            status=status,
        )
        self.draft.gold = gold
        return gold
