"""``train()`` end to end with the built-in engine: what a user and the sidebar rely on."""

import json

import pytest

from ludwig_nb.config import ConfigError
from ludwig_nb.data import DataError
from ludwig_nb.runs import train
from ludwig_nb.store import rundir
from ludwig_nb.store.registry import iter_registry
from tests.runs.conftest import ab_config, ab_frame

CONFIG = ab_config("{epochs: 3, batch_size: 16, eval_batch_size: 256}")


@pytest.fixture
def df():
    return ab_frame(200)


def _train(df, tmp_path, **kwargs):
    return train(
        CONFIG,
        df,
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        **kwargs,
    )


def test_a_run_registers_writes_its_directory_and_completes(df, tmp_path):
    run = _train(df, tmp_path, name="demo").wait(120)
    assert run.status == "completed" and run.step == run.total_steps == 27
    (entry,) = iter_registry(tmp_path / "registry")
    assert (
        entry["run_id"] == run.id
        and entry["name"] == "demo"
        and entry["directory"] == str(run.directory)
    )
    for name in (
        "config.yaml",
        "events.ndjson",
        "status.json",
        "model",
        "checkpoints",
        "training_statistics.json",
    ):
        assert (run.directory / name).exists(), name
    lines = (run.directory / rundir.EVENTS_FILE).read_text().splitlines()
    assert len(lines) == len(run.events)
    assert len(run.history) == 3 and "validation.y.roc_auc" in run.history.columns
    assert set(run.model.predict(df.head(3)).columns) >= {"y_predictions", "y_probability"}


def test_seeded_runs_are_reproducible(df, tmp_path):
    def losses(seed):
        run = _train(df, tmp_path, random_seed=seed).wait(120)
        return [e.loss for e in run.events if e.type == "step_finished"]

    assert losses(7) == losses(7)
    assert losses(7) != losses(8)


def test_mistakes_are_raised_before_any_thread_or_directory(df, tmp_path):
    with pytest.raises(ConfigError, match=r"trainer\.epoch"):
        train(CONFIG.replace("epochs", "epoch"), df, results_dir=tmp_path / "results")
    with pytest.raises(DataError):
        train(CONFIG, df.drop(columns=["b"]), results_dir=tmp_path / "results")
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        train(CONFIG, df, results_dir=tmp_path / "results", resume_from=tmp_path)
    assert not (tmp_path / "results").exists()


def test_resume_continues_a_stopped_run_at_its_step(df, tmp_path):
    first = _train(df, tmp_path, name="first")
    sub = first.subscribe()
    while not first.is_done:
        if any(e.type == "checkpoint_saved" for e in sub.drain()):
            first.stop()
        first.wait(0.01)
    assert first.status == "stopped"
    resumed = _train(df, tmp_path, name="second", resume_from=first.directory).wait(120)
    started = next(e for e in resumed.events if e.type == "run_started")
    assert resumed.status == "completed" and 0 < started.start_step < 27
    assert resumed.step == 27


def test_auto_runs_the_builtin_engine_whose_model_names_itself(df, tmp_path):
    from ludwig_nb.engines.manifest import MANIFEST_FILE, read_manifest
    from ludwig_nb.runs import load_model

    run = _train(df, tmp_path).wait(120)
    started = next(e for e in run.events if e.type == "run_started")
    assert (run.status, run.engine_name, started.engine) == ("completed", "builtin", "builtin")
    assert started.host and started.device_index is None  # CPU: no GPU index
    assert started.schedule.evaluation_batches == 2  # validation and test: one batch of 256 each
    assert read_manifest(run.directory / "model")["engine"] == "builtin"
    (run.directory / "model" / MANIFEST_FILE).unlink()  # a folder saved before manifests
    again = load_model(run.directory)
    assert list(again.predict(df.head(4))["y_predictions"]) == list(
        run.model.predict(df.head(4))["y_predictions"]
    )


def test_a_model_of_an_unknown_engine_is_refused_by_name(df, tmp_path):
    from ludwig_nb.engines.manifest import write_manifest
    from ludwig_nb.runs import load_model

    write_manifest(tmp_path / "m", "tensorflow")
    with pytest.raises(ValueError, match="unknown engine 'tensorflow'"):
        load_model(tmp_path / "m")


def test_an_engine_refusal_is_located_and_starts_nothing(df, tmp_path, monkeypatch):
    from ludwig_nb.config import UnsupportedByEngine
    from ludwig_nb.engines.ludwig import engine as ludwig_engine

    monkeypatch.setattr(ludwig_engine, "ludwig_missing", lambda: "no Ludwig here")
    audio = CONFIG.replace("{name: b, type: category}", "{name: b, type: audio}")
    with pytest.raises(UnsupportedByEngine) as info:
        train(audio, df, results_dir=tmp_path / "r2", registry_dir=tmp_path / "registry")
    assert (info.value.line, info.value.path) == (3, "input_features[1].type")
    assert not (tmp_path / "r2").exists()


def test_prepare_run_checks_without_reading_and_the_runs_thread_reads(df, tmp_path, monkeypatch):
    import threading

    from ludwig_nb.engines.builtin.engine import BuiltinEngine
    from ludwig_nb.runs.api import prepare_run

    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    readers: list[str] = []
    read = BuiltinEngine.prepare_data

    def recording(self, config, dataset):
        readers.append(threading.current_thread().name)
        return read(self, config, dataset)

    monkeypatch.setattr(BuiltinEngine, "prepare_data", recording)
    pending = prepare_run(
        CONFIG,
        str(path),
        name="split",
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
    )
    assert readers == [] and not pending.run.started and pending.run.directory.is_dir()
    assert list(iter_registry(tmp_path / "registry"))  # listed before it reads
    pending.start()
    assert pending.data_checked(timeout=120)
    assert len(readers) == 1 and readers[0].startswith("ludwig_nb-run-split")
    run = pending.run.wait(120)
    read_event = next(e for e in run.events if e.type == "data_progress" and e.stage == "read")
    assert (read_event.source, read_event.rows, read_event.columns) == ("data.csv", 200, 3)


def test_a_pending_run_discarded_before_it_starts_leaves_nothing(df, tmp_path):
    from ludwig_nb.runs import live
    from ludwig_nb.runs.api import prepare_run

    pending = prepare_run(
        CONFIG, df, results_dir=tmp_path / "results", registry_dir=tmp_path / "registry"
    )
    pending.discard()
    assert not (tmp_path / "results").exists()
    assert not list(iter_registry(tmp_path / "registry"))
    assert pending.run not in live.all_runs()


def test_an_underfit_regression_is_named_in_every_record_of_the_run(tmp_path):
    """Ludwig's default number model on an unscaled target: the run says it underfit."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    frame = pd.DataFrame({"x": x, "price": 100.0 + 20.0 * x + rng.normal(size=300)})
    config = (
        "input_features: [{name: x, type: number}]\n"
        "output_features: [{name: price, type: number}]\n"
        "trainer: {epochs: 4, batch_size: 32, eval_batch_size: 256, learning_rate: 0.05}\n"
    )
    run = train(
        config,
        frame,
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        random_seed=1,
    ).wait(120)
    assert run.status == "completed", run.traceback_text
    (warning,) = run.state.warnings
    assert warning.startswith("price: the model ends worse than always predicting")
    assert "it underfit" in warning and "trainer.epochs above 4" in warning
    status = rundir.read_json(run.directory / rundir.STATUS_FILE)
    assert status["warnings"] == [warning]
    lines = (run.directory / rundir.EVENTS_FILE).read_text().splitlines()
    finished = json.loads(lines[-1])
    assert finished["type"] == "run_finished" and finished["warnings"] == [warning]


def test_a_kept_model_that_predicts_one_class_is_named_at_the_end_of_the_run(tmp_path):
    """Binary output, Ludwig's default roc_auc: the ranking is right (or exactly wrong) from the
    first evaluation, so roc_auc never improves and the kept model is the first one, whose
    untrained bias puts every row on one side of the threshold (the inputs are all positive
    and not normalised, so the sign of the one weight decides the side for every row)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    positive = rng.random(300) < 0.2
    x = np.where(positive, rng.uniform(3.0, 4.0, 300), rng.uniform(1.0, 2.0, 300))
    frame = pd.DataFrame({"x": x, "fraud": positive})
    config = (
        "input_features: [{name: x, type: number, preprocessing: {normalization: null}}]\n"
        "output_features: [{name: fraud, type: binary}]\n"
        "trainer: {epochs: 12, batch_size: 32, eval_batch_size: 256}\n"
    )
    run = train(
        config,
        frame,
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        random_seed=3,
    ).wait(120)
    assert run.status == "completed", run.traceback_text
    one_class = [w for w in run.state.warnings if "for every validation row" in w]
    assert len(one_class) == 1, run.state.warnings
    assert one_class[0].startswith("fraud: the model kept (epoch 1) predicts")
    assert "trainer.validation_metric: loss" in one_class[0]
    status = rundir.read_json(run.directory / rundir.STATUS_FILE)
    assert one_class[0] in status["warnings"]
