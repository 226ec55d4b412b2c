"""Valid variants (trajectories that must pass every hard verifier), on small copies of bundled packages whose
hidden halves each test edits. All patients are synthetic."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner

from forge_kernel.cli import main
from forge_kernel.spec import load_package
from forge_kernel.spec.loading import read_yaml

ROOT = Path(__file__).resolve().parents[1]


def copy_package(root: Path, suite: str, task: str) -> Path:
    """Both halves of one bundled package under root; the package folder."""
    folder = root / "task_packages" / suite / task
    shutil.copytree(ROOT / "task_packages" / suite / task, folder)
    (root / "verifiers" / suite).mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "verifiers" / suite / f"{task}.yaml", root / "verifiers" / suite)
    return folder


def edit_hidden(folder: Path, **fields) -> None:
    """Replace fields of the package's hidden half on disk."""
    path = load_package(folder).hidden_path
    hidden = json.loads(json.dumps(read_yaml(path) | fields))  # no shared objects, so no YAML aliases
    path.write_text(yaml.safe_dump(hidden, allow_unicode=True, sort_keys=False), encoding="utf-8")


GOUT = ("superclue", "SC-MED-GOUT-FLARE")
"""Do not act: an NSAID allergy forbids the ibuprofen asked for; two drug_info reads; no output."""


def selftest(*argv):
    return CliRunner().invoke(main, ["selftest", *argv])


def test_valid_variants_must_pass_every_hard_verifier(tmp_path):
    folder = copy_package(tmp_path, *GOUT)
    gold = read_yaml(load_package(folder).hidden_path)["gold"]
    reordered = gold | {"calls": [gold["calls"][0], gold["calls"][2], gold["calls"][1], *gold["calls"][3:]]}
    edit_hidden(folder, valid_variants=[{"name": "medication-first", "reason": "reads in another order",
                                         "trajectory": reordered}])
    good = selftest(str(folder))
    assert good.exit_code == 0, good.output
    assert "gold + 4 counterexample(s) + 1 valid variant(s)" in good.output

    skipped = gold | {"calls": [c for c in gold["calls"] if c["tool"] != "patient_history"]}
    edit_hidden(folder, valid_variants=[{"name": "medication-first", "reason": "reads in another order",
                                         "trajectory": reordered},
                                        {"name": "no-history", "reason": "not valid at all", "trajectory": skipped}])
    bad = selftest(str(folder))
    assert bad.exit_code == 1, bad.output
    assert "      valid variant no-history: fails chain" in bad.output
    assert "medication-first" not in bad.output


def test_validate_names_a_valid_variant_calling_a_tool_outside_the_manifest(tmp_path):
    folder = copy_package(tmp_path, *GOUT)
    gold = read_yaml(load_package(folder).hidden_path)["gold"]
    variant = gold | {"calls": [*gold["calls"][:-1], {"tool": "protocol_get", "args": {"protocol_id": "x"}}]}
    edit_hidden(folder, valid_variants=[{"name": "extra", "reason": "an extra read", "trajectory": variant}])
    result = CliRunner().invoke(main, ["validate", str(folder)])
    assert result.exit_code == 2
    assert "valid_variants.extra.calls.6.tool: 'protocol_get' is not in the tool manifest" in result.output
