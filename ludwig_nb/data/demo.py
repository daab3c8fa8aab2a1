"""Demo datasets shipped inside the package (see ``datasets/LICENSES.md``)."""

from __future__ import annotations

from pathlib import Path

from ludwig_nb.data.errors import DataError

__all__ = ["DEMO_DATASETS", "DEMO_PREFIX", "demo_config", "demo_dataset", "demo_help"]

#: a dataset given as ``"demo:churn"`` is the bundled demo of that name, wherever a
#: dataset is accepted (train, evaluate, predict, the magic and the CLI)
DEMO_PREFIX = "demo:"

_HERE = Path(__file__).resolve().parent / "datasets"

#: name -> what it is (CSV and YAML config of the same name live in ``datasets/``).
DEMO_DATASETS = {
    "churn": "telecom churn, 5000 rows: binary output from category, number, binary inputs",
    "cars": "Auto MPG, 398 rows: regression of Miles_per_Gallon",
    "reviews": "food reviews, 2500 rows: text classification of score (great / other)",
}


def _check(name: str) -> None:
    if name not in DEMO_DATASETS:
        raise DataError(f"no demo dataset {name!r}; choose one of {', '.join(DEMO_DATASETS)}")


def demo_help() -> str:
    """``"churn (telecom churn, ...), cars (...), reviews (...)"`` for help texts."""
    return "; ".join(f"{name} ({text})" for name, text in DEMO_DATASETS.items())


def demo_dataset(name: str) -> Path:
    """Path of the demo CSV ``name``; raises :class:`DataError` for an unknown name."""
    _check(name)
    return _HERE / f"{name}.csv"


def demo_config(name: str) -> Path:
    """Path of the demo's Ludwig config (YAML); raises :class:`DataError` for an unknown name."""
    _check(name)
    return _HERE / f"{name}.yaml"
