# The face's names for editors and type checkers, written from _HOMES by scripts/face_stubs.py: do not edit.
from .ablation import (
    AblationCard as AblationCard,
    ablation_card as ablation_card,
    ablation_cards as ablation_cards,
    card as card,
)
from .browse import (
    SEVERITIES as SEVERITIES,
    failure_rows as failure_rows,
    latency_percentiles as latency_percentiles,
    pass_rate_cells as pass_rate_cells,
    safety_findings as safety_findings,
    task_passes as task_passes,
)
from .comparison import (
    AgentSide as AgentSide,
    Comparison as Comparison,
    SideSummary as SideSummary,
    agent_side as agent_side,
    compare as compare,
    compare_sides as compare_sides,
)
from .components import (
    COVERAGE_NOTE as COVERAGE_NOTE,
    Components as Components,
    CoverageSlices as CoverageSlices,
    components as components,
    coverage_slices as coverage_slices,
)
from .criteria import (
    COLUMNS as COLUMNS,
    STATES as STATES,
    CitationChecks as CitationChecks,
    CriterionConfusion as CriterionConfusion,
    citation_checks as citation_checks,
    criterion_confusion as criterion_confusion,
)
from .display import markdown_lines as markdown_lines, seconds as seconds
from .extraction import ExtractionFigures as ExtractionFigures, extraction_figures as extraction_figures
from .gate import (
    GatePolicy as GatePolicy,
    GateResult as GateResult,
    counts_against as counts_against,
    declared_policy as declared_policy,
    evaluate as evaluate,
    load_policy as load_policy,
)
from .gate_checks import GATE_CHECKS as GATE_CHECKS, gate_check as gate_check, soft_checks as soft_checks
from .ledger import (
    Ledger as Ledger,
    collection_paused as collection_paused,
    failure_ledger as failure_ledger,
    ledger_table as ledger_table,
    read_ledger as read_ledger,
    rows_of as rows_of,
    write_ledger as write_ledger,
)
from .retrieval import (
    RetrievalFigures as RetrievalFigures,
    TrialRetrieval as TrialRetrieval,
    ndcg_at as ndcg_at,
    precision as precision,
    recall_at as recall_at,
    retrieval_by_slice as retrieval_by_slice,
    retrieval_figures as retrieval_figures,
    trial_retrievals as trial_retrievals,
)
from .stats import (
    Kappa as Kappa,
    Mean as Mean,
    Rate as Rate,
    bootstrap as bootstrap,
    brier as brier,
    cohens_kappa as cohens_kappa,
    ece as ece,
    mcnemar_exact as mcnemar_exact,
    pass_at_k as pass_at_k,
    pass_hat_k as pass_hat_k,
    percentile as percentile,
    reliability as reliability,
    wilson as wilson,
)
from .summary import (
    Table as Table,
    markdown_table as markdown_table,
    pass_rates as pass_rates,
    run_summary as run_summary,
    usage as usage,
)
from .triage import TriageFile as TriageFile, load_triage as load_triage
