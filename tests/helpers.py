"""Small helpers shared by several test files."""
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKED_EXAMPLES = ["SC-DDX-CHEST-PAIN", "SC-MED-GASTRIC-ULCER", "SC-OPS-ADMISSION"]


def copy_worked_examples(root: Path) -> Path:
    """Both halves of the three worked examples under root (to edit without touching the repository); the suite."""
    (root / "verifiers" / "superclue").mkdir(parents=True)
    for task in WORKED_EXAMPLES:
        shutil.copytree(ROOT / "task_packages/superclue" / task, root / "task_packages/superclue" / task)
        shutil.copy(ROOT / "verifiers/superclue" / f"{task}.yaml", root / "verifiers/superclue")
    return root / "task_packages/superclue"
