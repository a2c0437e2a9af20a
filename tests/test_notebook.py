"""examples/semantic_gap.ipynb runs from top to bottom (issue 17): executed here so that it never rots."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "semantic_gap.ipynb"


def test_semantic_gap_notebook_runs_and_shows_its_figures(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # the kernel is this interpreter (the project's venv), whatever kernels Jupyter knows of
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.kernel_manager_class.kernel_cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    client.execute(cwd=str(NOTEBOOK.parent.parent))
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 6  # steal and iowait heat maps, the breakdown, tasks per node x 2, the CDFs
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "static makespan" in printed and "drs makespan" in printed


def test_the_stored_notebook_ships_with_its_outputs_and_points_to_the_study():
    """A reader of the repository sees the figures and the finding without running anything."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs and cell.execution_count for cell in code)
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    text = "".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    assert "docs/results-flexslot.md" in text and "does not appear" in text
