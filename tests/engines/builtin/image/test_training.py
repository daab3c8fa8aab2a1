"""Image inputs trained end to end on the built-in engine: alone, beside tabular features, from
files, bytes and arrays, in memory or from the disk cache, saved, loaded, predicting, resumed."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.core.control import RunControl
from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin import BuiltinEngine, load_model
from ludwig_nb.engines.builtin.image.disk import DiskImages
from tests.engines.builtin.conftest import make_config, render

IMAGE = {"name": "image", "type": "image"}
LABEL = {"name": "label", "type": "category"}
FAST = {"epochs": 2, "batch_size": 32, "eval_batch_size": 512, "learning_rate": 0.003}


def _config(*inputs, **trainer):
    return make_config(list(inputs) or [IMAGE], [LABEL], **{**FAST, **trainer})


def _prepared(config, source):
    return BuiltinEngine().prepare_data(config, source)


def _accuracy(result):
    return result.of("run_finished")[-1].best_metrics["test"]["label"]["accuracy"]


@pytest.fixture(scope="module")
def digits(digits_csv):
    """600 digits: enough to learn, quick on two cores."""
    frame = pd.read_csv(digits_csv).head(600)
    path = digits_csv.parent / "digits600.csv"
    frame.to_csv(path, index=False)
    return path


def test_digits_learn_alone_and_the_run_reports_images(run_engine, digits):
    config = _config()
    result = run_engine(config, _prepared(config, str(digits)))
    assert _accuracy(result) > 0.5  # chance is 0.1
    assert result.of("run_started")[0].sample_unit == "images"
    steps = result.of("step_finished")
    assert all(s.data_wait is not None and 0 <= s.data_wait <= s.time - s.start_time for s in steps)
    meta = result.model.metadata["features"]["image"]
    assert (meta["height"], meta["width"], meta["num_channels"]) == (16, 16, 1)


@pytest.mark.parametrize("combiner", ["concat", "transformer", "tabtransformer"])
def test_an_image_beside_tabular_features_through_each_combiner(run_engine, digits, combiner):
    config = render(
        {
            "input_features": [IMAGE, {"name": "ink", "type": "number"}],
            "output_features": [LABEL],
            "combiner": {"type": combiner},
            "trainer": {**FAST, "epochs": 1},
        }
    )
    result = run_engine(config, _prepared(config, str(digits)))
    assert result.of("run_finished")[-1].status == "completed"
    assert result.model.predict(_prepared(config, str(digits))).shape[0] == 600


def test_in_memory_false_and_worker_processes_train_the_same_model(run_engine, digits):
    plain = _config()
    base = run_engine(plain, _prepared(plain, str(digits)), seed=3)
    image = {**IMAGE, "preprocessing": {"in_memory": False, "num_processes": 2}}
    cached = _config(image)
    other = run_engine(cached, _prepared(cached, str(digits)), seed=3)
    losses = [s.loss for s in base.of("step_finished")]
    assert losses == [s.loss for s in other.of("step_finished")]  # the same batches, bit for bit


def test_the_disk_cache_is_read_lazily_and_removed(digits):
    from ludwig_nb.engines.builtin.splits import prepare_arrays

    config = _config({**IMAGE, "preprocessing": {"in_memory": False}})
    _, arrays = prepare_arrays(config, _prepared(config, str(digits)), 42)
    cache = arrays["training"]["image"][0]
    assert isinstance(cache, DiskImages) and os.path.exists(cache.path)
    path = cache.path
    del cache, arrays
    assert not os.path.exists(path)


def test_relative_paths_start_at_the_dataset_file_not_the_working_directory(
    digits, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    config = _config()
    frame = _prepared(config, str(digits))
    assert Path(frame["image"].iloc[0]).is_absolute()
    assert Path(frame["image"].iloc[0]).is_file()


def test_unreadable_images_fail_before_training_naming_row_and_file(digits, tmp_path):
    frame = pd.read_csv(digits).head(50)
    frame["image"] = [str(digits.parent / p) for p in frame["image"]]
    broken = tmp_path / "broken.png"
    broken.write_bytes(Path(frame["image"].iloc[3]).read_bytes()[:40])
    frame.loc[3, "image"] = str(broken)
    frame.loc[7, "image"] = str(tmp_path / "missing.png")
    with pytest.raises(DataError) as caught:
        _prepared(_config(), frame)
    message = str(caught.value)
    assert "row 3: " in message and "broken.png" in message
    assert "row 7: " in message and "missing.png: no such file" in message


def test_the_callers_dataframe_is_not_changed(digits):
    frame = pd.read_csv(digits).head(30)
    before = frame.copy()
    _prepared(_config(), frame.assign(image=[str(digits.parent / p) for p in frame["image"]]))
    pd.testing.assert_frame_equal(frame, before)


def _pixels(digits, rows):
    from PIL import Image

    frame = pd.read_csv(digits).head(rows)
    return frame, [np.asarray(Image.open(digits.parent / p)) for p in frame["image"]]


def test_arrays_and_bytes_in_a_dataframe_train_like_files(run_engine, digits):
    frame, arrays = _pixels(digits, 200)
    encoded = []
    for array in arrays:
        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(array).save(buffer, format="PNG")
        encoded.append(buffer.getvalue())
    config = _config(epochs=1)
    files = run_engine(config, _prepared(config, str(digits.parent / "digits200.csv")))
    in_arrays = run_engine(config, _prepared(config, frame.assign(image=arrays)))
    in_bytes = run_engine(config, _prepared(config, frame.assign(image=encoded)))
    first = [s.loss for s in files.of("step_finished")]
    assert first == [s.loss for s in in_arrays.of("step_finished")]
    assert first == [s.loss for s in in_bytes.of("step_finished")]


@pytest.fixture(scope="module", autouse=True)
def _digits200(digits):
    pd.read_csv(digits).head(200).to_csv(digits.parent / "digits200.csv", index=False)


def test_missing_images_are_filled_as_the_strategy_says(run_engine, digits):
    frame = pd.read_csv(digits).head(120)
    frame["image"] = [str(digits.parent / p) for p in frame["image"]]
    frame.loc[[0, 5, 119], "image"] = None
    for strategy, rows in (("bfill", 120), ("fill_with_const", 120), ("drop_row", 117)):
        image = {**IMAGE, "preprocessing": {"missing_value_strategy": strategy}}
        config = _config(image, epochs=1)
        result = run_engine(config, _prepared(config, frame))
        total = sum(s.batch_size for s in result.of("step_finished"))
        assert total == pytest.approx(rows * 0.7, abs=2), strategy


def test_saved_models_predict_new_paths_relative_to_their_file(run_engine, digits, tmp_path):
    config = _config()
    result = run_engine(config, _prepared(config, str(digits)))
    model = load_model(result.run_dir / "model")
    meta = model.metadata["features"]["image"]
    assert meta["height"] == 16 and meta["mean"] is None
    elsewhere = tmp_path / "new"
    (elsewhere / "pics").mkdir(parents=True)
    frame = pd.read_csv(digits).head(25)
    for name in frame["image"]:
        (elsewhere / "pics" / Path(name).name).write_bytes((digits.parent / name).read_bytes())
    frame["image"] = ["pics/" + Path(p).name for p in frame["image"]]
    frame.to_csv(elsewhere / "new.csv", index=False)
    predicted = model.predict(str(elsewhere / "new.csv"))
    original = result.model.predict(
        frame.assign(image=[str(elsewhere / p) for p in frame["image"]])
    )
    assert (predicted["label_predictions"] == original["label_predictions"]).all()
    assert "accuracy" in model.evaluate(str(elsewhere / "new.csv"))["label"]


def test_predicting_a_missing_file_is_a_data_error(run_engine, digits, tmp_path):
    config = _config(epochs=1)
    result = run_engine(config, _prepared(config, str(digits.parent / "digits200.csv")))
    with pytest.raises(DataError, match=r"gone\.png: no such file"):
        result.model.predict(pd.DataFrame({"image": [str(tmp_path / "gone.png")], "ink": [0.1]}))


def test_augmentation_trains_and_leaves_prediction_deterministic(run_engine, digits):
    image = {**IMAGE, "augmentation": True}
    config = _config(image, epochs=1)
    result = run_engine(config, _prepared(config, str(digits.parent / "digits200.csv")))
    assert result.of("run_finished")[-1].status == "completed"
    frame = _prepared(config, str(digits.parent / "digits200.csv"))
    first, second = result.model.predict(frame), result.model.predict(frame)
    assert (first["label_probability"] == second["label_probability"]).all()


def test_a_stopped_run_resumes_with_its_image_metadata(run_engine, digits, tmp_path):
    config = _config(epochs=3)
    data = _prepared(config, str(digits.parent / "digits200.csv"))
    control = RunControl()

    def stop_after_a_few(event):
        if event.type == "step_finished" and event.step == 6:
            control.stop()

    stopped = run_engine(config, data, control=control, on_event=stop_after_a_few)
    assert stopped.of("run_finished")[-1].status == "stopped"
    resumed = run_engine(config, data, resume_from=stopped.run_dir, run_dir=tmp_path / "again")
    assert resumed.of("run_started")[0].start_step == 7
    assert resumed.of("run_finished")[-1].status == "completed"
    assert (
        resumed.model.metadata["features"]["image"] == stopped.model.metadata["features"]["image"]
    )


def test_automatic_batch_sizes_probe_images_read_from_the_disk_cache(run_engine, digits):
    image = {**IMAGE, "preprocessing": {"in_memory": False}, "augmentation": True}
    config = _config(image, epochs=1, batch_size="auto", eval_batch_size="auto")
    result = run_engine(config, _prepared(config, str(digits.parent / "digits200.csv")))
    started = result.of("run_started")[0]
    assert result.of("run_finished")[-1].status == "completed"
    assert started.schedule.batch_size >= 1


def test_estimate_prices_an_image_run_from_a_pilot(digits):
    import ludwig_nb

    config = {"input_features": [IMAGE], "output_features": [LABEL], "trainer": FAST}
    prediction = ludwig_nb.estimate(config, str(digits), pilot_steps=6)
    assert prediction.schedule.epochs == 2 and prediction.pilot_steps == 6
    assert prediction.step_s > 0 and prediction.total_s > prediction.breakdown["steps"] > 0
    assert prediction.breakdown["preprocessing"] > 0  # the check and decode of 600 images


def test_hyperopt_trials_of_an_image_config_each_train_their_images(digits, tmp_path):
    from ludwig_nb.search import hyperopt

    config = {
        "input_features": [IMAGE],
        "output_features": [LABEL],
        "trainer": {**FAST, "epochs": 1},
        "hyperopt": {
            "goal": "maximize",
            "metric": "accuracy",
            "output_feature": "label",
            "parameters": {
                "trainer.learning_rate": {"space": "choice", "categories": [3e-3, 1e-2]}
            },
            "search_alg": {"type": "random", "random_state_seed": 1},
            "executor": {"num_samples": 2},
        },
    }
    search = hyperopt(
        config,
        str(digits),
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        wait=True,
    )
    assert search.error is None
    assert list(search.trials["state"]) == ["completed"] * 2
    assert set(search.trials["trainer.learning_rate"]) <= {3e-3, 1e-2}


def test_an_out_of_memory_step_of_images_from_the_disk_cache_is_split_and_completes(
    run_engine, digits, monkeypatch
):
    from ludwig_nb.engines.builtin import memory
    from tests.engines.builtin.test_memory import oom_at

    image = {**IMAGE, "preprocessing": {"in_memory": False}}
    config = _config(image, epochs=1)
    config["gpu_watch"]["oom_recovery"] = True
    source = str(digits.parent / "digits200.csv")
    whole = run_engine(config, _prepared(config, source), seed=5)
    hook, calls = oom_at(step=2, above_rows=16)
    monkeypatch.setattr(memory, "fault_hook", hook)
    recovered = run_engine(config, _prepared(config, source), seed=5)
    assert recovered.of("run_finished")[-1].status == "completed"
    event = recovered.of("oom_recovered")[0]
    assert (event.step, event.batch_size, event.micro_batch_size) == (2, 32, 16)
    assert calls.count((2, 16)) == 2
    # the same rows, the same mean gradient: the losses follow the whole-batch run
    np.testing.assert_allclose(
        [s.loss for s in recovered.of("step_finished")],
        [s.loss for s in whole.of("step_finished")],
        rtol=1e-4,
        atol=1e-6,
    )
