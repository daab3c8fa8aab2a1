"""The mutation audit (scripts/checks/mutate.py) still fits the code: each mutation's line
occurs exactly once in its module and its guarding tests exist. A restructuring that moves
the code moves the mutation with it (a mutation that no longer fits is audited as "n/a")."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.checks.mutate import MUTATIONS

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.id)
def test_the_mutation_fits_the_code_and_names_tests_that_exist(mutation) -> None:
    module = ROOT / mutation.path
    assert module.is_file(), (
        f"{mutation.id}: {mutation.path} is gone; point it at the code's new home"
    )
    count = module.read_text(encoding="utf-8").count(mutation.old)
    assert count == 1, f"{mutation.id}: its line occurs {count} times in {mutation.path}"
    assert mutation.new != mutation.old
    for test in (t for t in mutation.tests if t.startswith("tests/")):
        assert (ROOT / test.split("::")[0]).exists(), f"{mutation.id}: no {test}"


def test_the_ids_are_unique() -> None:
    ids = [m.id for m in MUTATIONS]
    assert len(ids) == len(set(ids))
