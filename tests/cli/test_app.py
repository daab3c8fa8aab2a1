"""The console script: the engine warmed up early, a quick exit with everything written."""

import json

import pytest

from ludwig_nb.cli import main
from tests.cli.conftest import CONFIG


def test_the_console_script_exits_quickly_with_its_output_and_files_whole(files):
    import os
    import subprocess
    import sys
    from pathlib import Path

    tmp, config, data = files
    out = tmp / "results"
    root = str(Path(__file__).resolve().parents[2])
    cmd = [
        sys.executable,
        "-m",
        "ludwig_nb.cli",
        "train",
        "-c",
        str(config),
        "-d",
        str(data),
        "-o",
        str(out),
        "--no-progress",
        "--json",
    ]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert done.returncode == 0, done.stderr
    assert "completed: 56/56 steps" in done.stderr  # --json: the report beside the progress
    document = json.loads(done.stdout)  # alone on stdout, whole
    assert set(document) == {
        "status",
        "metrics",
        "baseline",
        "warnings",
        "batch_size",
        "batch_note",
    }
    assert set(document["metrics"]) == {"training", "validation", "test"}
    assert document["status"] == "completed" and document["batch_size"] > 0
    (run_dir,) = out.iterdir()
    events = (run_dir / "events.ndjson").read_text().splitlines()
    assert json.loads(events[-1])["type"] == "run_finished"  # the log is whole
    assert json.loads((run_dir / "training_statistics.json").read_text())["training"]
    bad = subprocess.run(
        [*cmd[:5], str(tmp / "missing.yaml"), *cmd[6:]],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert bad.returncode == 2 and "config file not found" in bad.stderr


@pytest.mark.parametrize(
    ("argv", "starts"),
    [
        (["train", "-c", "c.yaml"], True),
        (["train", "--engine", "builtin"], True),
        (["train", "--engine=auto"], True),
        (["train", "--engine", "ludwig"], False),
        (["train", "--engine=ray"], False),
        (["evaluate", "-m", "x"], False),
        ([], False),
    ],
)
def test_torch_is_warmed_up_early_only_for_a_builtin_train(monkeypatch, argv, starts):
    from ludwig_nb.cli import app
    from ludwig_nb.engines.builtin import warmup

    started: list[bool] = []
    monkeypatch.setattr(warmup, "start", lambda: started.append(True))
    app.start_engine_warm_up(argv)
    assert started == ([True] if starts else [])


@pytest.mark.filterwarnings("default::ludwig_nb.config.ConfigWarning")  # shown, as for a user
def test_a_config_warning_is_the_clis_own_line_without_a_source_path(files, capsys):
    tmp, config, data = files
    config.write_text(CONFIG.replace("{name: a, type: number}", "{name: a, type: number, foo: 1}"))
    args = ["train", "-c", str(config), "-d", str(data), "-o", str(tmp / "r"), "--no-progress"]
    assert main([*args, "--threads", "1"]) == 0
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if "foo" in x]
    assert line == (
        "ludwig-nb: warning: line 2, input_features[0].foo: 'foo' is not a feature key: "
        "Ludwig ignores it, and so does ludwig_nb (remove it)"
    )
    assert ".py:" not in err and "ConfigWarning" not in err


def test_a_config_path_that_is_a_directory_or_binary_is_one_line(files, capsys):
    tmp, config, data = files
    assert main(["train", "-c", str(tmp), "-d", str(data)]) == 2
    assert capsys.readouterr().err == (
        f"ludwig-nb: config file {tmp} is a directory: pass the YAML file in it\n"
    )
    config.write_bytes(b"\xff\xfe\x00")
    assert main(["hyperopt", "-c", str(config), "-d", str(data)]) == 2
    assert capsys.readouterr().err == f"ludwig-nb: config file {config} is not text (byte 0)\n"
