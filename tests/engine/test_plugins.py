"""Custom verifier kinds from verifiers/plugins/ are loaded by name and grade like built-in ones."""

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml

from forge_kernel.engine.grading import grade_trajectory
from forge_kernel.spec import SpecError, load_package
from tests.helpers import copy_suite_files

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "SC-OPS-ADMISSION"
PLUGIN = '''
from forge_kernel.spec.package import Strict
from forge_kernel.verify import Outcome, verifier


class Params(Strict):
    max_words: int


@verifier("answer.max_chars_test")
def max_chars(ctx, p: Params) -> Outcome:
    """The answer has at most ``max_words`` characters."""
    n = len(ctx.result.answer)
    return Outcome(n <= p.max_words, f"{n} characters")
'''


def copy_package(tmp_path: Path, extra_verifier: dict) -> Path:
    shutil.copytree(ROOT / "task_packages/superclue" / PACKAGE, tmp_path / "task_packages/superclue" / PACKAGE)
    copy_suite_files(tmp_path)
    hidden_file = tmp_path / "verifiers/superclue" / f"{PACKAGE}.yaml"
    hidden_file.parent.mkdir(parents=True, exist_ok=True)
    hidden = yaml.safe_load((ROOT / "verifiers/superclue" / f"{PACKAGE}.yaml").read_text())
    hidden["verifiers"].append(extra_verifier)
    hidden_file.write_text(yaml.safe_dump(hidden, allow_unicode=True))
    return tmp_path / "task_packages/superclue" / PACKAGE


@pytest.mark.parametrize("limit, passed", [(500, True), (5, False)])
def test_plugin_kind_is_loaded_and_grades(tmp_path, limit, passed):
    plugins = tmp_path / "verifiers/plugins"
    plugins.mkdir(parents=True)
    (plugins / "answer.max_chars_test.py").write_text(PLUGIN)
    use = {"id": "short", "kind": "answer.max_chars_test", "category": "answer", "params": {"max_words": limit}}
    package = load_package(copy_package(tmp_path, use))
    record = asyncio.run(grade_trajectory(package, package.hidden.gold))
    verdict = {v.verifier_id: v for v in record.grading.verdicts}["short"]
    assert verdict.passed is passed
    assert record.grading.scores.completion == int(passed)


def test_unknown_kind_without_plugin_is_a_one_line_error(tmp_path):
    use = {"id": "nope", "kind": "answer.no_such_kind", "category": "answer"}
    package = load_package(copy_package(tmp_path, use))
    with pytest.raises(SpecError) as err:
        asyncio.run(grade_trajectory(package, package.hidden.gold))
    assert str(err.value).endswith("verifiers.nope.kind: unknown verifier kind 'answer.no_such_kind'")
