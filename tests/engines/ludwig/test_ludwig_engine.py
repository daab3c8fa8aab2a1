"""engine: ludwig with real Ludwig 0.11 (run by scripts/ci/test_ludwig.sh in the Ludwig venv).

One module, one process: Ludwig's import costs 10-15 s. The churn demo runs through both
engines on the same fixed splits; an image config (scikit-learn's digits as PNG files,
``stacked_cnn``) trains through the Ludwig engine with the text dashboard pumping; an LLM whose
weights cannot be fetched fails within seconds.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.ludwig
pytest.importorskip("ludwig")

from ludwig_nb.config import load_config  # noqa: E402
from ludwig_nb.core import events as ev  # noqa: E402
from ludwig_nb.core.control import RunControl  # noqa: E402
from ludwig_nb.data import demo_config, demo_dataset  # noqa: E402
from ludwig_nb.engines.base import TrainJob  # noqa: E402
from ludwig_nb.engines.registry import get_engine, select_engine  # noqa: E402
from ludwig_nb.runs import load_model, train  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def churn() -> dict[str, pd.DataFrame]:
    """The churn demo in fixed 70/10/20 splits, the same rows for both engines."""
    frame = pd.read_csv(demo_dataset("churn"))
    order = np.random.default_rng(0).permutation(len(frame))
    cut = [int(0.7 * len(frame)), int(0.8 * len(frame))]
    parts = np.split(order, cut)
    return {
        n: frame.iloc[p] for n, p in zip(("training", "validation", "test"), parts, strict=True)
    }


def _churn_config(epochs: int) -> dict[str, Any]:
    text = demo_config("churn").read_text().replace("epochs: 200", f"epochs: {epochs}")
    return load_config(text).to_dict()


def _fit(engine: str, config: dict[str, Any], data: Any, run_dir: Path, on_event: Any = None):
    """``engine.fit`` in this thread; ``on_event(event, control)`` sees every event as it is
    emitted, in the training thread (a stop asked for there lands at that step boundary)."""
    events: list[ev.Event] = []
    control = RunControl()

    def emit(event: ev.Event) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event, control)

    impl = get_engine(engine)
    job = TrainJob(
        config=config,
        dataset=impl.prepare_data(config, data),
        run_dir=run_dir,
        run_id=f"{engine}-1",
        name=engine,
        seed=42,
        threads=1,
    )
    model = impl.fit(job, emit, control)
    return model, events


def _stop_after(step: int):
    def on_event(event: ev.Event, control: RunControl) -> None:
        if isinstance(event, ev.StepFinished) and event.step == step - 1:
            control.stop("user")

    return on_event


def _shape(events: list[ev.Event]) -> list[str]:
    """Event types in order, repeats collapsed (steps, phases) and the phase texts left out.

    ``data_progress`` is left out too: how far the data is before the first step is what each
    engine can see (the built-in engine words each feature; Ludwig preprocesses inside itself).
    """
    kinds = (e.type for e in events if not isinstance(e, ev.DataProgress))
    return [kind for kind, _ in itertools.groupby(kinds)]


def test_churn_events_have_the_same_shape_and_both_stop_within_a_step(churn, tmp_path):
    config = _churn_config(epochs=3)
    stop_at = 70  # after the first evaluation (end of epoch 1, step 55), inside epoch 2
    runs = {
        engine: _fit(engine, config, churn, tmp_path / engine, _stop_after(stop_at))[1]
        for engine in ("builtin", "ludwig")
    }
    assert _shape(runs["builtin"]) == _shape(runs["ludwig"])
    assert any(isinstance(e, ev.DataProgress) for e in runs["builtin"])  # ... words its features
    for engine, events in runs.items():
        finished = events[-1]
        assert isinstance(finished, ev.RunFinished), engine
        assert finished.status == "stopped" and finished.reason == "stopped by user", engine
        assert abs(finished.step - stop_at) <= 1, (engine, finished.step)
        started = next(e for e in events if isinstance(e, ev.RunStarted))
        assert started.engine == engine and started.schedule.steps_per_epoch == 55
        steps = [e for e in events if isinstance(e, ev.StepFinished)]
        assert [e.step for e in steps] == list(range(len(steps)))
        assert all(e.loss is not None and e.loss > 0 for e in steps), engine
    ludwig_eval = next(e for e in runs["ludwig"] if isinstance(e, ev.EvaluationFinished))
    builtin_eval = next(e for e in runs["builtin"] if isinstance(e, ev.EvaluationFinished))
    assert ludwig_eval.step == builtin_eval.step == 54
    assert set(ludwig_eval.metrics) == {"training", "validation", "test"}
    assert {"accuracy", "loss", "roc_auc"} <= set(ludwig_eval.metrics["validation"]["churn"])
    started = next(e for e in runs["ludwig"] if isinstance(e, ev.RunStarted))
    assert started.schedule.evaluation_batches == 2  # 500 + 1000 rows, eval batches of 1024
    phases = [e.detail for e in runs["ludwig"] if isinstance(e, ev.PhaseChanged)]
    assert "importing Ludwig" in phases  # engine.fit shows Ludwig's import as a phase


@pytest.fixture(scope="module")
def trained(churn, tmp_path_factory):
    """Both engines trained on churn for 8 epochs, through ``train()`` (the user's path)."""
    root = tmp_path_factory.mktemp("churn")
    config = demo_config("churn").read_text().replace("epochs: 200", "epochs: 8")
    return {
        engine: train(
            config,
            churn,
            name=engine,
            engine=engine,
            results_dir=root / "results",
            registry_dir=root / "registry",
            random_seed=42,
            threads=1,
            wait=True,
        )
        for engine in ("builtin", "ludwig")
    }


def test_churn_test_accuracy_of_both_engines_is_within_two_points(trained, churn):
    accuracy = {}
    for engine, run in trained.items():
        assert run.status == "completed", (engine, run.state.error)
        accuracy[engine] = run.model.evaluate(churn["test"])["churn"]["accuracy"]
    assert accuracy["ludwig"] > 0.86  # better than always answering "no" (86 % of the rows)
    assert abs(accuracy["ludwig"] - accuracy["builtin"]) <= 0.02, accuracy


def test_the_run_directory_holds_ludwigs_layout(trained):
    from ludwig.api import LudwigModel

    run = trained["ludwig"]
    experiment = run.directory / "ludwig" / "experiment_run"
    assert (experiment / "training_statistics.json").is_file()
    assert (experiment / "description.json").is_file()
    assert (run.directory / "training_statistics.json").is_file()
    manifest = json.loads((run.directory / "model" / "ludwig_nb_model.json").read_text())
    assert manifest["engine"] == "ludwig"
    assert (run.directory / "model" / manifest["path"]).resolve() == (experiment / "model")
    reloaded = LudwigModel.load(str(experiment / "model"))  # Ludwig itself reads it
    assert reloaded.config["output_features"][0]["name"] == "churn"


def test_a_saved_ludwig_model_reloads_in_a_fresh_process_and_predicts_the_same(
    trained, churn, tmp_path
):
    run = trained["ludwig"]
    rows = churn["test"].head(50)
    rows.to_csv(tmp_path / "rows.csv", index=False)
    expected = run.model.predict(rows)
    saved = run.model.save(tmp_path / "saved")  # the handle's save, then load in a new process
    script = (
        "import sys; from ludwig_nb.runs import load_model; import pandas as pd\n"
        "m = load_model(sys.argv[1]); p = m.predict(pd.read_csv(sys.argv[2]))\n"
        "p[['churn_predictions', 'churn_probability']].to_json(sys.argv[3], orient='records')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for source in (saved, run.directory):
        out = tmp_path / f"{source.name}.json"
        subprocess.run(
            [sys.executable, "-c", script, str(source), str(tmp_path / "rows.csv"), str(out)],
            check=True,
            env=env,
            timeout=240,
        )
        got = pd.read_json(out)
        assert list(got["churn_predictions"]) == list(expected["churn_predictions"])
        np.testing.assert_allclose(
            got["churn_probability"], expected["churn_probability"], rtol=1e-5
        )
    assert type(load_model(saved)).__name__ == "LudwigTrainedModel"


def test_a_stop_before_the_first_evaluation_keeps_a_loadable_model(churn, tmp_path):
    model, events = _fit("ludwig", _churn_config(epochs=3), churn, tmp_path / "r", _stop_after(5))
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished) and finished.status == "stopped"
    assert finished.step == 5
    assert not any(isinstance(e, ev.EvaluationFinished) for e in events)
    again = load_model(tmp_path / "r")
    rows = churn["test"].head(20)
    assert list(again.predict(rows)["churn_predictions"]) == list(
        model.predict(rows)["churn_predictions"]
    )


def test_pause_and_resume_at_a_batch_boundary(churn, tmp_path):
    config = _churn_config(epochs=1)
    config["trainer"]["train_steps"] = 20

    def on_event(event: ev.Event, control: RunControl) -> None:
        if isinstance(event, ev.StepFinished) and event.step == 9:
            control.pause("user")
        if isinstance(event, ev.Paused):  # the thread now waits: release it from another one
            threading.Thread(target=control.resume).start()

    _, events = _fit("ludwig", config, churn, tmp_path / "r", on_event)
    kinds = [(e.type, getattr(e, "step", None)) for e in events]
    paused = kinds.index(("paused", 10))
    assert kinds[paused + 1] == ("resumed", 10) and kinds[paused + 2][0] == "step_finished"
    assert events[-1].status == "completed" and events[-1].step == 20  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> pd.DataFrame:
    """300 of scikit-learn's bundled 8x8 digits as 32x32 PNG files, with their labels."""
    from PIL import Image
    from sklearn.datasets import load_digits

    folder = tmp_path_factory.mktemp("digits")
    data = load_digits()
    rows = []
    for i in range(300):
        path = folder / f"{i}.png"
        pixels = (data.images[i] * 16).clip(0, 255).astype("uint8")
        Image.fromarray(pixels).resize((32, 32)).save(path)  # 8x8 is too small to pool twice
        rows.append({"image": str(path), "label": str(data.target[i])})
    return pd.DataFrame(rows)


IMAGE_CONFIG = """\
input_features:
  - name: image
    type: image
    encoder: {type: stacked_cnn}
output_features:
  - {name: label, type: category}
trainer: {epochs: 3, batch_size: 32, eval_batch_size: 128}
"""


def test_an_image_config_trains_through_ludwig_with_the_dashboard_pumping(digits, tmp_path):
    from ludwig_nb.ui.pump import Pump
    from ludwig_nb.ui.text_view import TextView

    assert select_engine("auto", load_config(IMAGE_CONFIG)).name == "builtin"
    unet = IMAGE_CONFIG.replace("type: stacked_cnn", "type: unet")  # not run by the built-in one
    assert select_engine("auto", load_config(unet)).name == "ludwig"
    frames: list[dict[str, str]] = []
    run = train(
        IMAGE_CONFIG,
        digits,
        name="digits",
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        engine="ludwig",
    )
    view = TextView(run, frames.append, min_interval=0.0)
    pump = Pump(fps=20)
    pump.add(view)
    pump.start()
    try:
        run.wait(300)
        assert view.wait_closed(30)
    finally:
        pump.stop()
    assert run.engine_name == "ludwig" and run.status == "completed", run.state.error
    assert run.step == run.total_steps > 0
    texts = [f["text/plain"] for f in frames]
    assert any("[training]" in t and "ETA" in t for t in texts), texts[-3:]
    assert run.state.best_metrics["validation"]["label"]["accuracy"] > 0
    assert "completed" in frames[-1]["text/plain"]  # the final summary
    assert list(run.model.predict(digits.head(5)).columns)[:1] == ["label_predictions"]


LLM_CONFIG = """\
model_type: llm
base_model: ludwig-nb-tests/no-such-model
input_features: [{name: question, type: text}]
output_features: [{name: answer, type: text}]
"""


def test_an_llm_whose_weights_cannot_be_fetched_fails_fast_and_says_so(tmp_path, monkeypatch):
    import socket

    from ludwig_nb.engines.hub import BaseModelUnavailable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed after the block: the "hub" refuses at once
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    data = pd.DataFrame({"question": ["a?", "b?"], "answer": ["a", "b"]})
    # reported while train() waits for the data check, before Ludwig is imported or trains
    with pytest.raises(BaseModelUnavailable) as info:
        train(
            LLM_CONFIG,
            data,
            name="llm",
            engine="ludwig",
            results_dir=tmp_path / "results",
            registry_dir=tmp_path / "registry",
        )
    assert "'ludwig-nb-tests/no-such-model' cannot be fetched" in str(info.value)
    assert not list((tmp_path / "results").glob("*"))  # the run is discarded


def test_cli_trains_with_the_ludwig_engine(tmp_path, churn, capsys, monkeypatch):
    from ludwig_nb.cli import main

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    config = tmp_path / "churn.yaml"
    config.write_text(demo_config("churn").read_text().replace("epochs: 200", "train_steps: 30"))
    data = tmp_path / "churn.csv"
    churn["training"].to_csv(data, index=False)
    code = main(
        [
            "train",
            "--config",
            str(config),
            "--dataset",
            str(data),
            "--engine",
            "ludwig",
            "--output-directory",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("completed: 30/30 steps"), out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "churn.csv",
        "churn.yaml",
        "cwd",
        "out",
        "runtime",
    ]
    assert list((tmp_path / "cwd").iterdir()) == []  # nothing in the working directory either


def test_the_cell_magic_trains_with_the_ludwig_engine(churn, tmp_path, monkeypatch):
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    shell = start_ipython()
    shell.run_line_magic("load_ext", "ludwig_nb")
    shell.run_line_magic("config", f"LudwigMagics.results_dir = {str(tmp_path / 'r')!r}")
    shell.user_ns["df"] = churn["training"]
    cell = demo_config("churn").read_text().replace("epochs: 200", "train_steps: 12")
    with capture_output():
        shell.run_cell_magic(
            "ludwig_config", "--dataset df --engine ludwig --name lw --wait --threads 1", cell
        )
    run = shell.user_ns["lw"]
    assert (run.engine_name, run.status, run.step) == ("ludwig", "completed", 12)


def test_preflight_plans_a_ludwig_run_through_the_engine(churn):
    from ludwig_nb.runs import estimate

    config = demo_config("churn").read_text().replace("epochs: 200", "epochs: 4")
    prediction = estimate(config, churn, engine="ludwig", pilot_steps=20)
    assert prediction.schedule.total_steps == 4 * 55 and prediction.schedule.epochs == 4
    assert prediction.schedule.evaluations_after == (54, 109, 164, 219)
    assert prediction.total_s > 0 and prediction.pilot_steps == 20
