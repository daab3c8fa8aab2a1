"""The cheap check of a dataset source: no rows read, no pandas, the full check's messages."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from ludwig_nb.data import DataError
from ludwig_nb.data.sources import check_source, source_label

CONFIG = {
    "input_features": [{"name": "total_day_minutes", "type": "number"}],
    "output_features": [{"name": "churn", "type": "binary"}],
}


def test_a_demo_and_its_header_are_checked_without_importing_pandas():
    code = (
        "import sys; from ludwig_nb.data.sources import check_source; "
        f"check_source({CONFIG!r}, 'demo:churn'); print('pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_header_typo_is_named_with_the_closest_column():
    config = {**CONFIG, "input_features": [{"name": "total_day_minute", "type": "number"}]}
    with pytest.raises(DataError, match=r"input column 'total_day_minute' not found; did you mean"):
        check_source(config, "demo:churn")


def test_unknown_demo_missing_file_unknown_type(tmp_path):
    with pytest.raises(DataError, match="no demo dataset 'nope'"):
        check_source(CONFIG, "demo:nope")
    with pytest.raises(DataError, match="no such file"):
        check_source(CONFIG, tmp_path / "missing.csv")
    (tmp_path / "data.txt").write_text("a\n1\n")
    with pytest.raises(DataError, match=r"unknown file type '\.txt'"):
        check_source(CONFIG, tmp_path / "data.txt")


def test_a_dataframe_and_a_dict_of_splits(tmp_path):
    frame = pd.DataFrame({"total_day_minutes": [1.0], "churned": [0]})
    with pytest.raises(DataError, match=r"output column 'churn' not found; did you mean 'churned'"):
        check_source(CONFIG, frame)
    with pytest.raises(DataError, match="unknown split name"):
        check_source(CONFIG, {"training": frame, "holdout": frame})
    good = pd.DataFrame({"total_day_minutes": [1.0], "churn": [0]})
    check_source(CONFIG, {"training": good, "test": good})  # raises nothing


def test_repeated_header_names_are_left_to_the_full_read(tmp_path):
    path = tmp_path / "twice.csv"
    path.write_text("a,a,churn\n1,2,0\n")  # pandas reads these as a, a.1
    check_source({**CONFIG, "input_features": [{"name": "a.1", "type": "number"}]}, path)


def test_labels_name_demos_files_and_frames(tmp_path):
    from ludwig_nb.data import demo_dataset

    assert source_label(demo_dataset("churn")) == "demo:churn"
    assert source_label("demo:cars") == "demo:cars"
    assert source_label(tmp_path / "sales.csv") == "sales.csv"
    assert source_label(pd.DataFrame()) == "the DataFrame"
    assert source_label({"training": tmp_path / "t.csv"}) == "t.csv"
