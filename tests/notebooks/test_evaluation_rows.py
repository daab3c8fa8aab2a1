"""No example notebook scores or shows predictions on rows its model trained on.

Every ``.evaluate(...)`` and ``.predict(...)`` in a notebook's code takes rows drawn from a
run's validation or test split (``run.splits["test"]``, or a name assigned from it), and a
notebook that evaluates checks, in a cell that runs, that those rows are not among the
training split's (by the dataset's row labels).
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
HELD_OUT = {"validation", "test"}


def _code(path: Path) -> str:
    """The notebook's code as Python (magics turned into calls, as IPython runs them)."""
    from IPython.core.inputtransformer2 import TransformerManager

    cells = nbformat.read(path, as_version=4).cells
    python = TransformerManager().transform_cell
    return "\n".join(python(cell.source) for cell in cells if cell.cell_type == "code")


def _held_out_split(node: ast.AST) -> bool:
    """Whether ``node`` is ``<x>.splits["validation" | "test"]``."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "splits"
        and isinstance(node.slice, ast.Constant)
        and node.slice.value in HELD_OUT
    )


def _from_held_out(node: ast.AST, names: set[str]) -> bool:
    return any(
        _held_out_split(n) or (isinstance(n, ast.Name) and n.id in names) for n in ast.walk(node)
    )


def _scored_rows(tree: ast.Module) -> tuple[list[ast.Call], set[str]]:
    """The evaluate/predict calls, and the names bound to held-out rows (in order)."""
    held: set[str] = set()
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _from_held_out(node.value, held):
            held |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("evaluate", "predict")
        ):
            calls.append(node)
    return calls, held


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_scored_rows_come_from_a_held_out_split(path: Path) -> None:
    source = _code(path)
    calls, held = _scored_rows(ast.parse(source))
    for call in calls:
        assert call.args and _from_held_out(call.args[0], held), (
            f"{path.name}: {ast.unparse(call)} scores rows that are not from a run's "
            "validation or test split"
        )
    if any(c.func.attr == "evaluate" for c in calls if isinstance(c.func, ast.Attribute)):
        assert '.splits["training"].index.intersection(' in source, (
            f"{path.name} evaluates but does not check its rows against the training split"
        )


def test_the_check_catches_an_evaluation_on_sampled_rows() -> None:
    bad = "m = run.model.evaluate(df.sample(100))\nt = run.splits['training']\nrun.model.predict(t)"
    calls, held = _scored_rows(ast.parse(bad))
    assert [_from_held_out(c.args[0], held) for c in calls] == [False, False]
    good = "t = run.splits['test']\nshown = t.sample(3)\nrun.model.predict(shown)"
    calls, held = _scored_rows(ast.parse(good))
    assert [_from_held_out(c.args[0], held) for c in calls] == [True]
