"""compare() on damaged or wrongly shaped run files: a located error naming the file, or a
comparison; never an AttributeError, a UnicodeDecodeError or a parser's traceback.

Every file of a real run directory and of a Ludwig output directory is replaced in turn by
each damage below, and compared through the API, the magic and the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ludwig_nb.cli import main
from ludwig_nb.runs import train
from ludwig_nb.runs.compare import compare
from ludwig_nb.runs.source_files import SourceFileError
from tests.runs.conftest import ab_config, ab_frame

#: what a hand-copied, half-synced or edited file may hold
DAMAGE = {
    "a list": b"[1, 2]",
    "a string": b'"text"',
    "a number": b"5",
    "null": b"null",
    "nothing": b"",
    "binary": bytes(range(256)),
    "cut JSON": b'{"training": {"y"',
    "training: 5": b'{"training": 5}',
    "a metric that is not a list": b'{"training": {"y": {"loss": 5}}}',
    "a feature that is a list": b'{"validation": {"y": [1, 2]}}',
    "metric values that are not numbers": b'{"training": {"y": {"loss": ["a", {}]}}}',
    "a bad evaluation_frequency": b'{"evaluation_frequency": {"frequency": "x", "period": 5}}',
    "a config that is a list": b'{"config": [1], "compute": {"devices": [1]}}',
    "a summary that is a list": b'{"summary": [1], "samples": 5}',
    "gpus that are a list": b'{"summary": {"gpus": [1], "phase_s": 5}}',
    "odd status fields": b'{"status": 5, "best_metrics": [1], "finished_at": "x", "name": 3}',
    "an evaluation with odd metrics": (
        b'{"type": "evaluation_finished", "time": 1.0, "step": 1, "epoch": 0, '
        b'"metrics": {"validation": {"y": 5}, "test": 3}}\n'
    ),
    "bad YAML": b"a: [1\n",
    "a YAML list": b"- 1\n- 2\n",
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """A real ludwig_nb run directory and a Ludwig output directory."""
    tmp = tmp_path_factory.mktemp("sources")
    run = train(
        ab_config("{epochs: 2, batch_size: 32}") + "gpu_watch: {simulate: true, interval: 0.25}\n",
        ab_frame(300),
        name="base",
        results_dir=tmp / "r",
        registry_dir=tmp / "reg",
        threads=1,
        wait=True,
    )
    assert run.status == "completed"
    ludwig = tmp / "experiment_run"
    ludwig.mkdir()
    description = {"config": {"output_features": [{"name": "y", "type": "binary"}]}}
    (ludwig / "description.json").write_text(json.dumps({**description, "dataset": "d.csv"}))
    stats = {
        "training": {"y": {"loss": [0.6, 0.5]}},
        "validation": {"y": {"loss": [0.7, None], "roc_auc": [0.8, 0.85]}},
        "evaluation_frequency": {"frequency": 1, "period": "epoch"},
    }
    (ludwig / "training_statistics.json").write_text(json.dumps(stats))
    (ludwig / "test_statistics.json").write_text(json.dumps({"y": {"loss": 0.5}}))
    return run.directory, ludwig


def _files(directory: Path) -> list[Path]:
    return sorted(
        p.relative_to(directory)
        for p in directory.rglob("*")
        if p.is_file() and p.suffix in (".json", ".ndjson", ".yaml")
    )


def _damaged(source: Path, file: Path, data: bytes, tmp_path: Path) -> Path:
    copy = tmp_path / source.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(source, copy)
    (copy / file).write_bytes(data)
    return copy


def test_every_damaged_file_is_named_in_a_value_error_or_still_compares(sources, tmp_path):
    named = compared = 0
    for source, other in (sources, sources[::-1]):
        copy = _damaged(source, Path("unused"), b"", tmp_path)
        for file in _files(source):
            whole = (source / file).read_bytes()
            for damage, data in DAMAGE.items():
                (copy / file).write_bytes(data)
                try:
                    comparison = compare(other, copy)
                    comparison.to_frame()
                    for key in comparison.headline_curves():
                        comparison.curves(*key, x="epoch")
                    compared += 1
                except (ValueError, FileNotFoundError) as exc:
                    assert file.name in str(exc), (file, damage, str(exc))
                    named += 1
            (copy / file).write_bytes(whole)
    assert named > 40 and compared > 10  # both outcomes occur: the matrix exercised both


@pytest.mark.parametrize(
    ("file", "damage", "words"),
    [
        ("training_statistics.json", "a list", "a list, where a JSON object belongs"),
        ("training_statistics.json", "training: 5", "training is a number, not an object"),
        (
            "training_statistics.json",
            "a metric that is not a list",
            "training.y.loss is a number, where a list of numbers belongs",
        ),
        ("training_statistics.json", "binary", "not text (byte 128 is not UTF-8)"),
        ("description.json", "a config that is a list", "its config is a list, not an object"),
    ],
)
def test_ludwig_files_of_the_wrong_shape_are_located(sources, tmp_path, file, damage, words):
    run_dir, ludwig = sources
    damaged = _damaged(ludwig, Path(file), DAMAGE[damage], tmp_path)
    with pytest.raises(SourceFileError) as info:
        compare(run_dir, damaged)
    assert str(info.value).startswith(f"{damaged / file}: ") and words in str(info.value)


@pytest.mark.parametrize(
    ("file", "damage", "words"),
    [
        ("events.ndjson", "binary", "holds no event"),
        ("events.ndjson", "a list", "holds no event"),
        ("status.json", "a string", "a string, where a JSON object belongs"),
        ("config.yaml", "bad YAML", "not valid YAML (line 2)"),
        ("config.yaml", "a YAML list", "a list, where a config (a mapping) belongs"),
        ("system_resource_usage.json", "a summary that is a list", "its summary is a list"),
    ],
)
def test_run_files_of_the_wrong_shape_are_located(sources, tmp_path, file, damage, words):
    run_dir, ludwig = sources
    damaged = _damaged(run_dir, Path(file), DAMAGE[damage], tmp_path)
    with pytest.raises(SourceFileError) as info:
        compare(ludwig, damaged)
    assert str(info.value).startswith(f"{damaged / file}: ") and words in str(info.value)


def test_a_torn_last_event_line_still_compares(sources, tmp_path):
    run_dir, ludwig = sources
    damaged = _damaged(run_dir, Path("events.ndjson"), b"", tmp_path)
    text = (run_dir / "events.ndjson").read_bytes()
    (damaged / "events.ndjson").write_bytes(text + b'{"type": "step_fin')
    assert compare(damaged, ludwig).records[0].curves  # the evaluations before it are there


def test_the_cli_says_a_damaged_file_in_one_line_and_exits_2(sources, tmp_path, capsys):
    run_dir, ludwig = sources
    damaged = _damaged(run_dir, Path("events.ndjson"), DAMAGE["binary"], tmp_path)
    assert main(["compare", str(ludwig), str(damaged)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"ludwig-nb: {damaged}/events.ndjson: holds no event")
    assert len(captured.err.splitlines()) == 1 and "Traceback" not in captured.err


@pytest.mark.parametrize("as_json", [False, True])
def test_the_cli_on_a_full_disk_ends_with_one_line(sources, as_json):
    run_dir, ludwig = sources
    args = ["compare", str(run_dir), str(ludwig), *(["--json"] if as_json else [])]
    with open("/dev/full", "w") as full:  # every write: no space left on the device
        done = subprocess.run(
            [sys.executable, "-m", "ludwig_nb.cli", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr == "ludwig-nb: cannot write the output: No space left on device\n"


def test_the_clis_json_is_strict_even_with_an_infinite_delta(sources, tmp_path, capsys):
    _, ludwig = sources
    zero = _damaged(ludwig, Path("test_statistics.json"), b'{"y": {"loss": 0.0}}', tmp_path)
    other = tmp_path / "other"
    shutil.copytree(ludwig, other)
    assert main(["compare", "--json", str(zero), str(other)]) == 0
    text = capsys.readouterr().out
    assert "Infinity" not in text and "NaN" not in text
    document = json.loads(text)
    index, row = next(
        (i, r) for i, r in enumerate(document["rows"]) if r["metric"] == "test.y.loss"
    )
    assert row["delta"] == 0.5 and row["delta_pct"] is None  # 0.0 -> 0.5: infinitely worse
    assert f"rows.{index}.delta_pct" in document["nonfinite"]
