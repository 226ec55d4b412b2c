"""The one catalog: every tool, verifier kind, agent and gate check by name, each name taken once."""

import json

import pytest

from forge_kernel.agents import AGENTS
from forge_kernel.built_in import load
from forge_kernel.catalog import CATALOG, KINDS, Catalog
from forge_kernel.spec import CatalogError
from forge_kernel.tools import TOOLS, tool
from forge_kernel.verify import VERIFIERS, Outcome, verifier
from forge_kernel.verify.kinds._safety import NoParams


def test_the_sections_are_views_of_the_one_catalog():
    catalog = load()
    assert list(TOOLS) == [e.name for e in catalog.of("tool")]
    assert list(VERIFIERS) == [e.name for e in catalog.of("verifier kind")]
    assert list(AGENTS) == [e.name for e in catalog.of("agent")]
    assert all(catalog.of(kind) for kind in KINDS)
    assert TOOLS["drug_info"] is CATALOG.entries[("tool", "drug_info")].value


def test_an_entry_records_version_and_the_arguments_it_was_built_with():
    ablation = CATALOG.entries[("agent", "candidate-v2-no-conflict")]
    assert (ablation.version, ablation.args) == ("2.0-abl1", {"conflict_retention": False})
    assert AGENTS["candidate-v2-no-conflict"]().features.conflict_retention is False
    assert CATALOG.entries[("tool", "medication_request_create")].args == {
        "kind": "write",
        "writes": "MedicationRequest",
    }
    assert CATALOG.entries[("verifier kind", "safety.patient_scope")].args == {"params": "NoParams"}
    assert CATALOG.entries[("gate check", "no_safety_regression")].args == {"level": "hard", "waivable": False}


def test_a_second_tool_of_a_taken_name_is_refused_and_the_first_stays():
    first = TOOLS["drug_info"]
    with pytest.raises(CatalogError) as err:

        @tool("drug_info", kind="read")
        def impostor(ctx, args: NoParams):
            """Not the real one."""

    assert err.value.field == "tool drug_info"
    assert "already registered by forge_kernel.tools.knowledge" in err.value.message
    assert TOOLS["drug_info"] is first


def test_a_second_verifier_kind_of_a_taken_name_is_refused():
    with pytest.raises(CatalogError, match=r"verifier kind answer\.text: already registered"):

        @verifier("answer.text")
        def impostor(ctx, p: NoParams) -> Outcome:
            return Outcome(True, "")


def test_names_are_per_kind_and_a_duplicate_is_refused_in_any_catalog():
    catalog = Catalog()
    catalog.add("agent", "x", object)
    catalog.add("tool", "x", object)
    with pytest.raises(CatalogError):
        catalog.add("agent", "x", object, where="mine.py")
    assert len(catalog.section("agent")) == 1 and len(catalog.section("tool")) == 1


def test_a_gate_check_is_one_registered_function_run_by_the_gate_and_waivable_by_name(reference_run, monkeypatch):
    from forge_kernel.analysis import compare, evaluate, gate_check, load_policy
    from forge_kernel.spec import DEFAULT_GATE, GatePolicy, PolicyError
    from forge_kernel.store import open_run

    monkeypatch.setattr(CATALOG, "entries", dict(load().entries))  # the registration below is undone
    gate_check("always_fails", "soft")(lambda cmp, policy, declared: ("FAIL", "on purpose"))
    with open_run(reference_run) as run:
        cmp = compare(run, run, "baseline-v1", "candidate-v2")
    policy = load_policy(DEFAULT_GATE)
    red = evaluate(cmp, policy)
    assert [c.name for c in red.red_because] == ["always_fails"] and not red.green
    waived = GatePolicy.model_validate({**policy.model_dump(), "waive": ["always_fails"]})
    assert evaluate(cmp, waived).green
    with pytest.raises(PolicyError, match="only soft checks can be waived"):
        evaluate(cmp, GatePolicy.model_validate({**policy.model_dump(), "waive": ["max_unauthorized_writes"]}))


def test_forge_catalog_lists_every_registered_entry_with_verifier_params():
    from click.testing import CliRunner

    from forge_kernel.cli import main

    text = CliRunner().invoke(main, ["catalog"])
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    catalog = load()
    for kind in KINDS:
        header = lines.index(f"{kind}s ({len(catalog.of(kind))})")
        names = [line.split()[0] for line in lines[header + 1 : header + 1 + len(catalog.of(kind))]]
        assert names == [e.name for e in catalog.of(kind)]
    chain = next(line for line in lines if line.startswith("  trace.tool_chain "))
    assert "params: tools: list[str] | None = None, ordered: bool = False" in chain
    doc = json.loads(CliRunner().invoke(main, ["catalog", "--json"]).output)
    assert {kind: [e["name"] for e in doc[kind]] for kind in KINDS} == {
        kind: [e.name for e in catalog.of(kind)] for kind in KINDS
    }
    chain_json = next(e for e in doc["verifier kind"] if e["name"] == "trace.tool_chain")
    assert set(chain_json["schema"]["properties"]) == {"tools", "ordered", "exact", "compliance"}
