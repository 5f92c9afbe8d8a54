"""Every notebook under notebooks/ executes top to bottom without error, and is committed clean."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NB_DIR = REPO / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))


def test_there_are_notebooks():
    assert any(p.name == "index.ipynb" for p in NOTEBOOKS)
    assert any(p.name == "00-quickstart.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_committed_without_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert "widgets" not in nb.metadata, "saved widget state: run tools/strip_notebooks.py"
    # JupyterLab's autosave rewrites language_info (version, codemirror_mode, …) on every
    # save: a committed notebook keeps only the language's name, so that churn shows here
    assert nb.metadata.get("language_info", {"name": "python"}) == {"name": "python"}, \
        f"{path.name}: language_info churn (an autosave?): reset it to {{'name': 'python'}}"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [], f"cell {i} has outputs: run tools/strip_notebooks.py"
        assert cell.execution_count is None, f"cell {i} has an execution_count"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path: Path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NB_DIR)}},
    )
    # Raises CellExecutionError (with the traceback of the failing cell) on any error.
    client.execute()
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"cell {i}: {errors[0].ename}: {errors[0].evalue}"
