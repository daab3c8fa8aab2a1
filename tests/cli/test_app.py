"""The console script: the engine warmed up early, a quick exit with everything written."""

import json

import pytest


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
    assert set(json.loads(done.stdout)) == {"training", "validation", "test"}  # alone, whole
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
