"""Every benchmark script imports: one whose import broke (a name moved) fails here, not
the next time someone measures with it."""

import importlib
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
OPTIONAL = {"ray", "ludwig"}  # packages of their own venvs (the scripts guard their use)


@pytest.mark.parametrize(
    "name", sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem != "__init__")
)
def test_the_benchmark_script_imports(name):
    try:
        importlib.import_module(f"benchmarks.{name}")
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in OPTIONAL:
            raise
        pytest.skip(f"needs {err.name}")
