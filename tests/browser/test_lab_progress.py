"""A run started in a notebook shows its progress as a bar (a widget), not as red text on stderr that reads like an
error; the bar ends at every trial."""

from __future__ import annotations

import nbformat


def test_a_run_in_a_notebook_shows_a_progress_bar_not_red_text(lab_server, browser, tmp_path):
    run_dir = tmp_path / "run"
    notebook = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    notebook.cells = [
        nbformat.v4.new_code_cell(
            f"from forge_kernel.widgets import sample_run\n\nrun = sample_run({str(run_dir)!r}, trials=1)"
        )
    ]
    nbformat.write(notebook, lab_server.root / "progress.ipynb")
    page = browser.page()
    lab_server.run_all(page, "progress.ipynb", ".jp-OutputArea-output .progress-bar", workspace="progress")
    output = page.locator(".jp-OutputArea-output").first
    assert output.locator(".widget-html").last.inner_text().split()[0] == "108/108"  # 18 packages x 6 agents
    assert page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
    browser.shot(page, "lab-progress-bar", locator=output)
