"""A trial's run folder on the storage, pointed to from and copied into its run directory."""

from __future__ import annotations

import json

from ludwig_nb.engines.ray.tune.storage import bring_home, point_home, trial_folder


def test_without_storage_the_trial_writes_its_run_directory_and_nothing_is_copied(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert trial_folder(None, run_dir, "r1") == run_dir
    point_home(run_dir, run_dir)
    bring_home(run_dir, run_dir)
    assert list(run_dir.iterdir()) == []


def test_with_storage_the_model_statistics_and_log_come_home_and_the_checkpoints_are_named(
    tmp_path,
):
    run_dir, storage = tmp_path / "results" / "run", tmp_path / "shared"
    run_dir.mkdir(parents=True)
    folder = trial_folder(storage, run_dir, "r1")
    assert folder == storage.resolve() / "r1"
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "weights.pt").write_bytes(b"w")
    (folder / "checkpoints").mkdir()
    (folder / "training_statistics.json").write_text("{}")
    (folder / "worker.log").write_text("trained\n")
    point_home(run_dir, folder)
    bring_home(folder, run_dir)
    assert (run_dir / "model" / "weights.pt").read_bytes() == b"w"
    assert (run_dir / "worker.log").read_text() == "trained\n"
    assert (run_dir / "training_statistics.json").is_file()
    pointer = json.loads((run_dir / "checkpoints" / "stored_at.json").read_text())
    assert pointer == {"run_dir": str(folder), "checkpoints": str(folder / "checkpoints")}
    assert not (run_dir / "checkpoints" / "latest").exists()  # checkpoints stay on the storage
