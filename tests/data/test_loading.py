"""Dataset sources and the one-line DataError for each kind of bad input."""

from __future__ import annotations

import pandas as pd
import pytest

from ludwig_nb.data import DataError, check_dataset, load_dataset, load_table
from ludwig_nb.data.loading import check_columns


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".jsonl", ".parquet", ".csv.gz"])
def test_every_file_format_loads(tmp_path, frame, suffix):
    path = tmp_path / f"data{suffix}"
    if suffix in (".csv", ".csv.gz"):
        frame.to_csv(path, index=False)
    elif suffix == ".tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif suffix == ".json":
        frame.to_json(path)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    loaded = load_table(path)
    assert list(loaded.columns) == list(frame.columns) and len(loaded) == len(frame)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(DataError, match=r"nope\.csv: no such file"):
        load_table(tmp_path / "nope.csv")
    with pytest.raises(DataError, match=r"unknown file type '\.xlsx'"):
        load_table(tmp_path / "data.xlsx")


def test_unreadable_file_is_one_line(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"this is not parquet")
    with pytest.raises(DataError, match=r"bad\.parquet: unreadable as PARQUET") as info:
        load_table(path)
    assert "\n" not in str(info.value)


def test_missing_column_lists_columns_and_the_closest(frame, config):
    config["input_features"][0]["name"] = "agee"
    with pytest.raises(DataError, match="'agee' not found; did you mean 'age'") as info:
        check_dataset(config, frame)
    assert "columns: age, city, member, label" in str(info.value)


def test_non_numeric_number_names_rows_but_missing_tokens_are_fine(frame, config):
    frame["age"] = frame["age"].astype(object)
    frame.loc[4, "age"] = "?"  # a missing-value token: filled per strategy
    check_dataset(config, frame)
    frame.loc[6, "age"] = "twenty"
    with pytest.raises(DataError, match=r"'age' has non-numeric values \(row 6: 'twenty'\)"):
        check_dataset(config, frame)


def test_empty_dataset_and_single_class_target(frame, config):
    with pytest.raises(DataError, match="empty"):
        check_dataset(config, frame.iloc[:0])
    frame["label"] = 1
    with pytest.raises(DataError, match="'label' has a single class"):
        check_dataset(config, frame)


def test_dict_of_splits(frame, config):
    loaded = check_dataset(config, {"training": frame, "test": frame.iloc[:3]})
    assert set(loaded) == {"training", "test"}
    with pytest.raises(DataError, match="unknown split name"):
        load_dataset({"train": frame})
    with pytest.raises(DataError, match="the test split is empty"):
        load_dataset({"training": frame, "test": frame.iloc[:0]})


def test_wrong_type_of_dataset():
    with pytest.raises(DataError, match="not int"):
        load_table(3)
    assert isinstance(load_table(pd.DataFrame({"a": [1]})), pd.DataFrame)


def test_a_split_left_empty_is_caught_before_training(frame, config):
    with pytest.raises(DataError, match="the validation split is empty"):
        check_dataset(config, frame.iloc[:4])


def test_check_columns_reads_a_files_header_only(tmp_path, config):
    path = tmp_path / "big.csv"
    path.write_text("x,y\n1.0,a\n" + 'this row is "broken, unterminated\n')  # never parsed
    check_columns({"input_features": [{"name": "x"}], "output_features": [{"name": "y"}]}, path)
    with pytest.raises(DataError, match="output column 'z' not found"):
        check_columns({"input_features": [{"name": "x"}], "output_features": [{"name": "z"}]}, path)
    check_columns(
        {"input_features": [{"name": "x"}], "output_features": [{"name": "z"}]}, path, outputs=False
    )
    with pytest.raises(DataError, match="no such file"):
        check_columns(config, tmp_path / "absent.csv")
