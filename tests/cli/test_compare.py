"""``ludwig-nb compare``: the config diff and the metrics, as text and JSON."""

import json
import re

from ludwig_nb.cli import main
from tests.cli.conftest import CONFIG


def test_compare_two_runs_prints_the_diff_and_json(files, capsys):
    tmp, config, data = files
    second = tmp / "c2.yaml"
    second.write_text(CONFIG.replace("learning_rate: 0.01", "learning_rate: 0.02"))
    for path in (config, second):
        assert (
            main(
                [
                    "train",
                    "-c",
                    str(path),
                    "-d",
                    str(data),
                    "-o",
                    str(tmp / "r"),
                    "--no-progress",
                    "--threads",
                    "1",
                ]
            )
            == 0
        )
    runs = sorted(p for p in (tmp / "r").iterdir() if p.is_dir())
    capsys.readouterr()
    assert main(["compare", *map(str, runs)]) == 0
    text = capsys.readouterr().out
    assert "config (1 change(s)):" in text and "trainer.learning_rate 0.01 -> 0.02" in text
    assert "validation.combined.loss" in text
    # values in their units, no raw frame: bytes in binary units (the test process's peak RSS
    # may pass 1 GiB in a long session), for both runs (a sub-second run ends before the
    # sampler's first tick and is read as it ends), seconds, no NaN or e+08
    (rss,) = [line for line in text.splitlines() if "peak RSS" in line]
    assert len(re.findall(r"\d[\d.,]* [KMGT]iB", rss)) == 3, text  # both runs and the change
    assert "NaN" not in text and "e+" not in text
    assert "peak RSS (bytes)" not in text and "peak RSS" in text
    assert main(["compare", "--json", *map(str, runs)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"] == {"trainer.learning_rate": [0.01, 0.02]}
    assert any(row["metric"] == "throughput: steps/s" for row in out["rows"])


def test_compare_a_missing_directory_exits_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a"), str(tmp_path)]) == 2
    assert "no such run directory" in capsys.readouterr().err
