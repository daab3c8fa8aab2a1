"""How a Ray run's data reaches the workers: paths by header in the kernel and read by each
worker, frames checked in the kernel (they travel through the object store)."""

from __future__ import annotations

import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.engines.ray.data import PathsOnWorkers, prepare, read_on_worker

CONFIG = {
    "input_features": [{"name": "x", "type": "number"}],
    "output_features": [{"name": "y", "type": "binary"}],
}


def frame(rows: int = 40) -> pd.DataFrame:
    return pd.DataFrame({"x": [float(i) for i in range(rows)], "y": [i % 2 for i in range(rows)]})


def test_a_path_is_checked_by_its_header_and_read_by_the_worker(tmp_path, monkeypatch):
    path = tmp_path / "train.csv"
    frame().to_csv(path, index=False)
    loads: list[object] = []
    from ludwig_nb.data import loading

    real = loading.load_table
    monkeypatch.setattr(loading, "load_table", lambda src: loads.append(src) or real(src))
    prepared = prepare(CONFIG, str(path))
    assert prepared == PathsOnWorkers(str(path.resolve()))
    assert loads == []  # the kernel read the header only, not the rows
    table = read_on_worker(prepared, CONFIG)
    assert list(table.columns) == ["x", "y"] and len(table) == 40


def test_a_missing_column_is_refused_in_the_kernel_before_any_worker_starts(tmp_path):
    path = tmp_path / "train.csv"
    frame().rename(columns={"x": "z"}).to_csv(path, index=False)
    with pytest.raises(DataError, match="x"):
        prepare(CONFIG, path)


def test_a_bad_value_is_found_by_the_worker_that_reads_the_file(tmp_path):
    path = tmp_path / "train.csv"
    frame().assign(y=1).to_csv(path, index=False)  # one class only
    prepared = prepare(CONFIG, path)
    with pytest.raises(DataError, match="y"):
        read_on_worker(prepared, CONFIG)


def test_split_paths_travel_as_paths_and_frames_are_checked_here(tmp_path):
    for name in ("train", "valid"):
        frame().to_csv(tmp_path / f"{name}.csv", index=False)
    splits = {"training": tmp_path / "train.csv", "validation": tmp_path / "valid.csv"}
    prepared = prepare(CONFIG, splits)
    assert isinstance(prepared, PathsOnWorkers)
    assert set(prepared.source) == {"training", "validation"}
    assert set(read_on_worker(prepared, CONFIG)) == {"training", "validation"}
    table = frame()
    assert prepare(CONFIG, table).equals(table)
    assert read_on_worker(table, CONFIG) is table
