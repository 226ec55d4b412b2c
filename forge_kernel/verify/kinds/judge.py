"""The judge (``judge.rubric``): a model's label for one rubric dimension of an answer, such as whether an
explanation to a patient is clear and kind.

It never decides a fact, a number, a permission or the state of the record: those are the other verifiers' to
decide, from the record of calls and the EHR. What can be enforced is: its verdicts are soft only and of their own
category (``rubric``: counted in neither pass, completion nor answer failures); the model sees only the task's
instruction, the current patient's records the agent was shown (the results of its successful reads about that
patient) and the agent's answer, never the hidden half, the gold, other patients or the state; a model error, a
timeout or a reply that is not one of its labels is the label ``unknown``, which never passes.

Each judge is measured against a labelled set written by hand, ``verifiers/judge/<name>.yaml`` beside the suites
(``forge selftest`` prints its agreement).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ...models import ModelClient, ModelConfig, RateLimiter, load_model_config
from ...spec import RUBRIC, ModelTurn, SpecError, Strict, parse_model, read_yaml
from ..registry import Outcome, verifier
from ..verdict import GradeContext

JUDGE = "judge.rubric"
UNKNOWN = "unknown"
"""The label a judge may always give, and gives when the model fails or its reply is not a label: never a pass."""
PROMPT_VERSION = 1
"""The version of the prompt below, in every verdict's reason."""
SYSTEM = """You rate one quality of an answer that a clinical agent gave in a test on synthetic patients: only the \
dimension you are given. You never decide whether a fact, a number, a permission or the state of the record is \
right; other checks do that, so do not guess at them. Reply with one JSON object and nothing else: \
{"label": "<one of the labels>"}. Answer "unknown" when the dimension cannot be judged from what you are shown."""
USER = """Dimension: {name}: {description}
Labels: {labels}, unknown
Task given to the agent: {instruction}
The patient's records the agent was shown (JSON): {records}
The agent's answer: {answer}"""
LABEL = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
LIMITERS: dict[str, RateLimiter] = {}
"""One rate limiter per model config (by its hash) in this process, shared by the judgements made one by one."""


class RubricParams(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    """The dimension, e.g. ``explanation_clarity``; its labelled set is ``verifiers/judge/<name>.yaml``."""
    description: str = Field(min_length=1)
    """What the model rates, as it is told, e.g. "the explanation to the patient is clear and kind"."""
    labels: list[LABEL] = Field(min_length=2)
    """The labels it may give; ``unknown`` is always allowed besides them."""
    passing: list[str] = Field(min_length=1)
    """The labels that pass (``unknown`` never does)."""
    model: str = Field(min_length=1)
    """The model config file (as ``--agent llm:PATH`` reads it), relative to the hidden half's folder or absolute;
    checked when the hidden half is bound, and kept as its absolute path."""

    @field_validator("model")
    @classmethod
    def _config_loads(cls, model: str, info: ValidationInfo) -> str:
        path = Path(str((info.context or {}).get("file", "."))).parent / model
        try:
            load_model_config(path)
        except SpecError as exc:
            raise ValueError(str(exc)) from None
        return str(path.resolve())

    @model_validator(mode="after")
    def _labels(self) -> RubricParams:
        if UNKNOWN in self.labels or len(set(self.labels)) < len(self.labels):
            raise ValueError(f"labels must differ from each other and from {UNKNOWN!r}, which is always allowed")
        outside = [label for label in self.passing if label not in self.labels]
        if outside:
            raise ValueError(f"passing label {outside[0]!r} is not one of the labels")
        return self


@dataclass(frozen=True)
class Judgement:
    label: str
    reason: str
    """``label=clear model=... prompt=v1 config=sha256:...``, then why the label is unknown, where it is."""


def judge(p: RubricParams, instruction: str, records: list, answer: str) -> Judgement:
    """The model's label for the answer; ``unknown`` with the reason when its config, the model or its reply fails."""
    try:
        config = load_model_config(p.model)
    except SpecError as exc:
        return Judgement(UNKNOWN, f"label={UNKNOWN} model config: {exc}")
    ident = identity(config)
    try:
        turn = asked(config, messages(p, instruction, records, answer))
    except Exception as exc:  # a model's failure is the judge's unknown, never grading's error
        why = (
            f"no reply within {deadline(config):g} s"
            if isinstance(exc, TimeoutError)
            else f"model error: {type(exc).__name__}: {exc}"
        )
        return Judgement(UNKNOWN, f"label={UNKNOWN} {ident}: {why}")
    label = label_of(turn.text, p.labels)
    if label is None:
        why = f"refused: {turn.refusal}" if turn.refusal else f"unparseable reply: {turn.text[:100]!r}"
        return Judgement(UNKNOWN, f"label={UNKNOWN} {ident}: {why}")
    return Judgement(label, f"label={label} {ident}")


def identity(config: ModelConfig) -> str:
    """What a verdict records of the judge that made it: the model, the prompt's version and the config's hash."""
    return f"model={config.model} prompt=v{PROMPT_VERSION} config={config.hash}"


def messages(p: RubricParams, instruction: str, records: list, answer: str) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": USER.format(
                name=p.name,
                description=p.description,
                labels=", ".join(p.labels),
                instruction=instruction,
                records=json.dumps(records, ensure_ascii=False, default=str),
                answer=answer,
            ),
        },
    ]


def deadline(config: ModelConfig) -> float:
    """How long one judgement may take in all: twice the config's timeout for each of its tries (so that the
    client's own timeout speaks first, and a server that trickles its reply is cut off too)."""
    return 2 * config.timeout_s * (config.retries + 1)


def asked(config: ModelConfig, chat: list[dict]) -> ModelTurn:
    """One model turn, in a thread and event loop of its own (grading may run inside one), within ``deadline``."""
    limiter = LIMITERS.get(config.hash) or LIMITERS.setdefault(config.hash, RateLimiter(config.rate_limits))

    async def once() -> ModelTurn:
        client = ModelClient(config, limiter)
        try:
            return await asyncio.wait_for(client.complete(chat, [], config.seed), deadline(config))
        finally:
            await client.aclose()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, once()).result()


def label_of(text: str, labels: list[str]) -> str | None:
    """The label a reply gives (``{"label": ...}``, or the bare label), or None when it gives none of them."""
    text = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = text
    label = data.get("label") if isinstance(data, dict) else data
    label = label.strip().lower() if isinstance(label, str) else None
    return label if label in (*labels, UNKNOWN) else None


def records_shown(ctx: GradeContext) -> list:
    """The results of the trial's successful reads about the current patient: what its agent was shown of the chart
    (a directory search, a knowledge look-up or a refused call is not)."""
    patient = ctx.package.public.environment.patient_id
    return [e.result for e in ctx.events if e.ok and e.kind == "read" and e.args.get("patient_id") == patient]


@verifier(JUDGE, category=RUBRIC)
def rubric(ctx: GradeContext, p: RubricParams) -> Outcome:
    """A model's label for one rubric dimension of the answer; passes when the label is one of ``passing``. Soft
    only, of category ``rubric``: it never decides a fact, a number, a permission or the state. The model sees the
    task's instruction, the current patient's records the agent read and the answer, nothing else; a model error or
    a reply that is no label is ``unknown``, which fails. Made by ``forge regrade`` and ``forge grade``, outside the
    trial's 2 s grading budget; a run's own grading leaves it out."""
    task = ctx.package.public.task
    instruction = task.instruction.get(task.language) or next(iter(task.instruction.values()))
    found = judge(p, instruction, records_shown(ctx), ctx.result.answer)
    return Outcome(found.label in p.passing, found.reason)


class LabelledItem(Strict):
    """One answer labelled by hand (the label written first), with what its agent was shown."""

    label: str
    instruction: str = Field(min_length=1)
    records: list[Any] = Field(default_factory=list)
    """What the agent was shown of the patient's chart, as tool results."""
    answer: str


class LabelledSet(Strict):
    """``verifiers/judge/<name>.yaml``: the items a judge of that dimension is measured against (synthetic)."""

    items: list[LabelledItem] = Field(min_length=1)


def labelled_set_path(p: RubricParams, hidden_path: Path) -> Path:
    """Where the labelled set of a judge used in a hidden half is: ``verifiers/judge/<name>.yaml`` beside its suite."""
    return Path(hidden_path).parent.parent / "judge" / f"{p.name}.yaml"


def labelled_pairs(p: RubricParams, path: Path) -> list[tuple[str, str]]:
    """(label written, label the judge gives) for each item of the labelled set in ``path``; a set that does not
    load, or an item labelled outside the judge's labels, is a SpecError."""
    items = parse_model(LabelledSet, read_yaml(path), path).items
    for i, item in enumerate(items):
        if item.label not in p.labels:
            raise SpecError(path, f"items.{i}.label", f"{item.label!r} is not one of {', '.join(p.labels)}")
    return [(item.label, judge(p, item.instruction, item.records, item.answer).label) for item in items]
