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


SECRET = "root:$6$Zq9p2Lx0$hash.that.must.never.be.echoed:20228:0:99999:7:::"


@pytest.mark.parametrize("full_read", [False, True])
def test_a_file_that_is_not_the_table_is_said_without_echoing_its_first_line(tmp_path, full_read):
    from ludwig_nb.data.loading import check_dataset

    secret = tmp_path / "shadow"
    secret.write_text(SECRET + "\ndaemon:*:20228:0:99999:7:::\n")
    link = tmp_path / "data.csv"
    link.symlink_to(secret)  # a dataset that is a link to a file the user should not echo
    with pytest.raises(DataError) as info:
        (check_dataset if full_read else check_source)(CONFIG, str(link))
    text = str(info.value)
    assert "Zq9p2Lx0" not in text and "hash.that" not in text and "20228" not in text
    assert text.startswith(f"{link}: none of the config's columns ('total_day_minutes', ")
    assert "is it the table you meant?" in text


def test_column_names_in_an_error_are_printable_and_cut(tmp_path):
    data = tmp_path / "d.csv"
    long_name = "x" * 200
    data.write_text(f"churn,{long_name},bell\x07name\n1,2,3\n")
    with pytest.raises(DataError) as info:
        check_source(CONFIG, str(data))
    text = str(info.value)
    assert "input column 'total_day_minutes' not found" in text  # churn was found: a table
    assert "x" * 39 + "…" in text and "x" * 41 not in text
    assert "bell?name" in text and "\x07" not in text


def test_a_directory_an_empty_file_and_a_binary_file_say_what_they_are(tmp_path):
    from ludwig_nb.data.loading import check_dataset

    folder = tmp_path / "tables.csv"
    folder.mkdir()
    (folder / "train.csv").write_text("a\n1\n")
    with pytest.raises(DataError, match=r"tables\.csv: is a directory, not a table file: pass one"):
        check_source(CONFIG, str(folder))
    with pytest.raises(DataError, match=r"\(it holds train\.csv\)$"):
        check_dataset(CONFIG, str(folder))
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(DataError, match=r"plain: is a directory, not a table file"):
        check_source(CONFIG, str(plain))  # no suffix: not "unknown file type"
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match=r"empty\.csv: is empty \(no header line"):
        check_source(CONFIG, str(empty))
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"churn\n\xd0\xff\x00\x01")
    with pytest.raises(DataError, match=r"binary\.csv: not a CSV table \(byte \d+ is not UTF-8"):
        check_dataset(CONFIG, str(binary))
