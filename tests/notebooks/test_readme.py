"""The README's walkthrough runs as written: its cells, in order, in a real kernel.

The cells between ``<!-- walkthrough`` and ``<!-- /walkthrough -->`` (```python and
```yaml fences) become a notebook that nbclient executes; nbclient fails on any error,
a magic's UsageError included (nbval would not notice one).
"""

import re
from pathlib import Path

import nbformat
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
_FENCE = re.compile(r"```(?:python|yaml)\n(.*?)```", re.S)


def walkthrough_cells(text: str) -> list[str]:
    start = text.index("<!-- walkthrough")
    end = text.index("<!-- /walkthrough -->")
    return [cell.strip() for cell in _FENCE.findall(text[start:end])]


def test_the_walkthrough_is_what_the_readme_shows():
    cells = walkthrough_cells(README.read_text(encoding="utf-8"))
    assert cells[0] == "%load_ext ludwig_nb"
    assert cells[1].startswith("%%ludwig_config --dataset demo:churn --name churn")
    assert any("evaluate(" in c for c in cells)


@pytest.mark.slow
def test_the_readme_walkthrough_runs_as_written(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    cells = walkthrough_cells(README.read_text(encoding="utf-8"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.outputs)
    accuracy, baseline = printed.split(maxsplit=1)
    assert float(accuracy) > 0.9 and "'accuracy': 0.86" in baseline
    summary = [o for o in nb.cells[1].outputs if "text/html" in o.get("data", {})]
    assert summary and "always &#x27;no&#x27;" in summary[-1]["data"]["text/html"]
    head = nb.cells[-1].outputs[-1]["data"]["text/plain"]
    assert "churn_predictions" in head
    assert (tmp_path / "results").is_dir()
