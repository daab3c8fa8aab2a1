"""compare() warns of different datasets only when the data differs, however it was named.

Real runs (built-in engine, CPU, a few rows) trained on one CSV named in every way a user
names it, on a copy, on the same content written anew and on the DataFrame it reads into,
compared through ``compare()`` and ``ludwig-nb compare``; and runs on truly different data,
which must warn. The facts-level rules (no fingerprint on one side: old runs, Ludwig output
directories) are checked on ``datasets_differ`` directly.
"""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.cli import main
from ludwig_nb.runs import train
from ludwig_nb.runs.compare import compare
from ludwig_nb.runs.compare_data import dataset_label, datasets_differ

CONFIG = """\
input_features: [{name: a, type: number}, {name: b, type: category}]
output_features: [{name: y, type: binary}]
trainer: {epochs: 1, batch_size: 32}
"""


def _differs(warnings: list[str]) -> bool:
    return any(w.startswith("different datasets") for w in warnings)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{how the data was named: run} over one table, and "other" over a changed one."""
    tmp = tmp_path_factory.mktemp("same-data")
    data, elsewhere, other_cwd = tmp / "data", tmp / "elsewhere", tmp / "notebooks"
    for folder in (data, elsewhere, other_cwd):
        folder.mkdir()
    rng = np.random.default_rng(3)
    a = rng.normal(size=120)
    df = pd.DataFrame({"a": a, "b": rng.choice(["p", "q"], 120), "y": a > 0})
    df.to_csv(data / "x.csv", index=False)
    shutil.copy(data / "x.csv", elsewhere / "x.csv")
    df.to_csv(elsewhere / "rewritten.csv", index=False, float_format="%.17g")  # other bytes
    (tmp / "link.csv").symlink_to(data / "x.csv")
    changed = df.copy()
    changed.loc[0, "y"] = not changed.loc[0, "y"]
    changed.to_csv(elsewhere / "other.csv", index=False)
    common = {"results_dir": tmp / "r", "registry_dir": tmp / "reg", "threads": 1, "wait": True}
    named = {
        "plain": (data, "x.csv"),
        "dot": (data, "./x.csv"),
        "relative": (other_cwd, "../data/x.csv"),
        "symlink": (other_cwd, str(tmp / "link.csv")),
        "frame": (other_cwd, pd.read_csv(data / "x.csv")),
        "copy": (other_cwd, str(elsewhere / "x.csv")),
        "rewritten": (other_cwd, str(elsewhere / "rewritten.csv")),
        "other": (other_cwd, str(elsewhere / "other.csv")),
        "other_frame": (other_cwd, changed),
    }
    out = {}
    with pytest.MonkeyPatch.context() as patch:
        for name, (cwd, dataset) in named.items():
            patch.chdir(cwd)
            out[name] = train(CONFIG, dataset, name=name, **common)
            assert out[name].status == "completed", out[name].error
    return out


SAME = ("plain", "dot", "relative", "symlink", "frame", "copy", "rewritten")


def test_the_same_data_however_named_never_warns(runs):
    assert not _differs(compare(*(runs[n] for n in SAME)).warnings)
    for a, b in itertools.combinations(SAME, 2):
        assert not _differs(compare(runs[a], runs[b]).warnings), (a, b)


def test_different_data_warns_naming_each_runs_data(runs):
    for same in SAME:
        for other in ("other", "other_frame"):
            assert _differs(compare(runs[same], runs[other]).warnings), (same, other)
    [warning] = [w for w in compare(runs["plain"], runs["other_frame"]).warnings if "data" in w]
    data = runs["plain"].directory.parents[1] / "data" / "x.csv"
    assert warning.startswith(f"different datasets: plain={data} (content ")
    assert ", other_frame=a table in memory (content " in warning


def test_the_cli_warns_only_for_different_data(runs, capsys):
    capsys.readouterr()
    assert main(["compare", str(runs["relative"].directory), str(runs["copy"].directory)]) == 0
    assert "different datasets" not in capsys.readouterr().out
    assert main(["compare", str(runs["frame"].directory), str(runs["other"].directory)]) == 0
    assert "warning: different datasets" in capsys.readouterr().out


def test_without_fingerprints_names_decide_and_relative_names_match_their_ends(tmp_path):
    def facts(dataset, fingerprint=None):
        return {"dataset": dataset, "fingerprint": fingerprint}

    # a Ludwig output directory names the file as given; a ludwig_nb run, absolute
    assert not datasets_differ([facts("x.csv"), facts("/data/x.csv", "f1")])
    assert not datasets_differ([facts("./x.csv"), facts("x.csv")])
    assert datasets_differ([facts("x.csv"), facts("/data/y.csv")])
    assert datasets_differ([facts("/data/x.csv"), facts("/other/x.csv")])  # not on disk
    # fingerprints decide when both have one, whatever the names
    assert not datasets_differ([facts("/a/x.csv", "f1"), facts(None, "f1")])
    assert datasets_differ([facts("/a/x.csv", "f1"), facts("/a/x.csv", "f2")])
    # a table in memory with no fingerprint is compared with no one
    assert not datasets_differ([facts(None), facts("/a/x.csv"), facts(None, "f9")])
    # two files on disk with the same bytes are the same data
    (tmp_path / "one.csv").write_text("a,y\n1,0\n")
    (tmp_path / "two.csv").write_text("a,y\n1,0\n")
    (tmp_path / "three.csv").write_text("a,y\n1,1\n")
    same = [facts(str(tmp_path / "one.csv")), facts(str(tmp_path / "two.csv"))]
    assert not datasets_differ(same)
    assert datasets_differ([same[0], facts(str(tmp_path / "three.csv"))])
    assert dataset_label(facts(None, "0123456789abcdef")) == "a table in memory (content 01234567)"
