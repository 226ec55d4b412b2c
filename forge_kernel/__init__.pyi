# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from collections.abc import Callable

from .agents import (
    AGENTS as AGENTS,
    Agent as Agent,
    AgentTask as AgentTask,
    ReplayAgent as ReplayAgent,
    ToolClient as ToolClient,
    agent_factory as agent_factory,
)
from .analysis import (
    AblationCard as AblationCard,
    Comparison as Comparison,
    GatePolicy as GatePolicy,
    GateResult as GateResult,
    ablation_card as ablation_card,
    ablation_cards as ablation_cards,
    compare as compare,
    evaluate as evaluate,
    failure_ledger as failure_ledger,
    load_policy as load_policy,
    load_triage as load_triage,
    pass_rates as pass_rates,
    run_summary as run_summary,
)
from .ehr import EHRImage as EHRImage, EHRView as EHRView, Timeline as Timeline
from .engine import (
    RunSpec as RunSpec,
    execute as execute,
    grade_trajectory as grade_trajectory,
    load_suite as load_suite,
    regrade as regrade,
    run_trial as run_trial,
    write_bundles as write_bundles,
)
from .spec import (
    AgentError as AgentError,
    AgentResult as AgentResult,
    CatalogError as CatalogError,
    Event as Event,
    ForgeError as ForgeError,
    HiddenHalf as HiddenHalf,
    Package as Package,
    PolicyError as PolicyError,
    SpecError as SpecError,
    StoreError as StoreError,
    TaskPackage as TaskPackage,
    ToolCall as ToolCall,
    TrajectoryFile as TrajectoryFile,
    UsageError as UsageError,
    find_packages as find_packages,
    load_package as load_package,
    load_trajectory as load_trajectory,
)
from .store import (
    Run as Run,
    RunStore as RunStore,
    Trial as Trial,
    load_events as load_events,
    load_trials as load_trials,
    load_verdicts as load_verdicts,
    open_run as open_run,
    read_trial as read_trial,
)
from .tools import TOOLS as TOOLS, ToolSession as ToolSession
from .verify import VERIFIERS as VERIFIERS, Verdict as Verdict, grade as grade
from .workers import InProcess as InProcess, IsolatedAgent as IsolatedAgent, Sandbox as Sandbox

def _lazy(package: str, homes: dict[str, tuple[str, ...]], listed: list[str]) -> tuple[Callable, Callable]:
    ...
