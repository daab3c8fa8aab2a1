"""Bad input and faults through ``train()`` (issue 11): every failure is one located
error before any thread or directory, and what trains by surprise is a warning."""

import json
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

from ludwig_nb.data import DataError, DataWarning
from ludwig_nb.engines.base import Engine
from ludwig_nb.runs import train
from ludwig_nb.store import rundir
from tests.runs.conftest import ab_config, ab_frame

CONFIG = ab_config("{epochs: 2, batch_size: 16, eval_batch_size: 256}")


@pytest.fixture
def df():
    return ab_frame(120)


def _train(config, data, tmp_path, **kwargs):
    return train(
        config,
        data,
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        **kwargs,
    )


def _new_threads(before):
    """ludwig_nb threads started since ``before`` (a set of threads) that still run.

    The process's one shared GPU sampler (``kernel_sampler()``, started by the first run that
    watches the GPU and kept for every later one, as %gpu_watch keeps it) is not a run's.
    """
    return [
        t
        for t in threading.enumerate()
        if t not in before and t.name.startswith("ludwig_nb") and t.name != "ludwig_nb-gpu-sampler"
    ]


def _refused(config, data, tmp_path, match, **kwargs):
    """``train`` raises ``DataError`` matching ``match``; no thread, no run directory."""
    threads = set(threading.enumerate())
    with pytest.raises(DataError, match=match) as caught:
        _train(config, data, tmp_path, **kwargs)
    assert not (tmp_path / "results").exists() and not _new_threads(threads)
    return str(caught.value)


# -- 1. non-finite numbers --------------------------------------------------------------
@pytest.mark.parametrize("column", ["a", "target"])
def test_infinite_numbers_are_refused_by_column_and_row_count(df, tmp_path, column):
    config = CONFIG
    if column == "target":
        config = CONFIG.replace("{name: y, type: binary}", "{name: t, type: number}")
        df = df.assign(t=df["a"] * 2)
    name = "a" if column == "a" else "t"
    df.loc[[3, 7], name] = [np.inf, -np.inf]
    message = _refused(config, df, tmp_path, rf"number column '{name}' has 2 infinite values")
    assert "row 3: inf" in message and "row 7: -inf" in message


def test_an_infinite_number_in_a_csv_is_refused(df, tmp_path):
    path = tmp_path / "data.csv"
    df.assign(a=df["a"].astype(str).where(df.index != 5, "1e999")).to_csv(path, index=False)
    _refused(CONFIG, str(path), tmp_path, r"number column 'a' has 1 infinite value \(row 5")


class _OverflowingEngine(Engine):
    """Evaluates to an infinite loss, as a diverging validation metric does."""

    name = "overflowing"

    def fit(self, job, emit, control):
        from ludwig_nb.core import events as ev

        schedule = ev.ScheduleInfo(total_steps=1, steps_per_epoch=1, epochs=1)
        emit(
            ev.RunStarted(
                time=1.0,
                run_id=job.run_id,
                name=job.name,
                engine=self.name,
                device="cpu",
                schedule=schedule,
            )
        )
        emit(
            ev.StepFinished(
                time=2.0, step=0, epoch=0, start_time=1.5, batch_size=4, loss=float("nan")
            )
        )
        metrics = {"validation": {"y": {"loss": float("inf"), "accuracy": 0.5}}}
        emit(ev.EvaluationFinished(time=3.0, step=0, epoch=0, start_time=2.0, metrics=metrics))
        emit(ev.RunFinished(time=4.0, status="completed", step=1))


def test_an_overflowing_metric_is_written_as_strict_json_with_a_flag(tmp_path):
    from tests.runs.conftest import make_run

    run = make_run(tmp_path, _OverflowingEngine()).start().wait(30)

    def refuse(token):
        raise AssertionError(f"non-JSON token {token}")

    status = json.loads((run.directory / rundir.STATUS_FILE).read_text(), parse_constant=refuse)
    assert status["status"] == "completed"
    assert status["latest_metrics"]["validation"]["y"] == {"loss": None, "accuracy": 0.5}
    assert set(status["nonfinite"]) >= {"latest_metrics.validation.y.loss", "last_loss"}
    events = [
        json.loads(line, parse_constant=refuse)
        for line in (run.directory / rundir.EVENTS_FILE).read_text().splitlines()
    ]
    step = next(e for e in events if e["type"] == "step_finished")
    assert step["loss"] is None and step["nonfinite"] == ["loss"]


# -- 2. internal exceptions become located errors --------------------------------------
def test_duplicate_column_names_are_refused_by_name(df, tmp_path):
    dup = pd.concat([df, df[["a"]]], axis=1)
    message = _refused(CONFIG, dup, tmp_path, r"duplicate column names 'a' \(2 times\)")
    assert "rename" in message


def test_integer_column_names_match_the_config(df, tmp_path):
    config = CONFIG.replace("name: a,", "name: '0',")
    frame = df.rename(columns={"a": 0})
    run = _train(config, frame, tmp_path).wait(120)
    assert run.status == "completed", run.error


# -- 9. silent surprises ----------------------------------------------------------------
def test_an_all_missing_input_warns_by_name(df, tmp_path):
    df["a"] = np.nan
    with pytest.warns(DataWarning, match=r"input column 'a' has no values \(all 120 rows"):
        _train(CONFIG, df, tmp_path).wait(120)


def test_an_input_that_reads_the_target_warns_of_a_leak(df, tmp_path):
    config = CONFIG.replace("{name: b, type: category}", "{name: b, type: binary, column: y}")
    with pytest.warns(DataWarning, match=r"input 'b' reads column 'y'.*leak"):
        _train(config, df, tmp_path).wait(120)


def test_a_binary_target_with_three_values_is_refused_before_the_thread(df, tmp_path):
    df["y"] = np.resize(["yes", "no", "maybe"], len(df))
    _refused(CONFIG, df, tmp_path, r"binary column 'y' has more than two values")


def test_category_classes_beyond_the_vocabulary_train_as_unk_with_a_warning(df, tmp_path):
    config = CONFIG.replace(
        "{name: y, type: binary}", "{name: c, type: category, preprocessing: {most_common: 2}}"
    )
    df["c"] = np.resize(["u", "u", "v", "v", "w", "x", "z"], len(df))
    with pytest.warns(
        DataWarning, match=r"output 'c' has 5 classes but preprocessing\.most_common is 2"
    ):
        run = _train(config, df, tmp_path).wait(120)
    assert run.status == "completed", run.error
    assert run.model.metadata["features"]["c"]["idx2str"][0] == "<UNK>"
    predicted = set(run.model.predict(df)["c_predictions"])
    assert predicted <= {"<UNK>", "u", "v"}


# -- 2. configs the schema accepts: the engine trains them or refuses them by name -------
_TEXT_CONFIG = """\
input_features:
  - name: t
    type: text
    encoder: {{type: {encoder}, reduce_output: {reduce}, embedding_size: 16{extra}}}
  - {{name: a, type: number}}
output_features:
  - {{name: y, type: binary}}
combiner: {combiner}
trainer: {{epochs: 2, batch_size: 16, learning_rate: 0.01}}
"""


_SIZES = {
    "embed": "",
    "parallel_cnn": ", num_filters: 8",
    "rnn": ", state_size: 16",
    "transformer": ", hidden_size: 16, num_heads: 2",
}


@pytest.fixture
def text_df(df):
    words = np.where(df["y"], "good fine great", "bad awful poor")
    return df.assign(t=[f"{w} {i % 7}" for i, w in enumerate(words)])


@pytest.mark.parametrize("encoder", ["embed", "parallel_cnn", "rnn", "transformer"])
@pytest.mark.parametrize("reduce", ["attention", "concat", "none"])
def test_every_sequence_reducer_trains(text_df, tmp_path, encoder, reduce):
    config = _TEXT_CONFIG.format(
        encoder=encoder, reduce=reduce, combiner="{type: concat}", extra=_SIZES[encoder]
    )
    run = _train(config, text_df, tmp_path).wait(120)
    assert run.status == "completed", run.traceback_text
    assert run.model.predict(text_df.head(5))["y_predictions"].shape == (5,)


def test_attention_pooling_learns_in_the_transformer_combiner(text_df, tmp_path):
    combiner = "{type: transformer, reduce_output: attention, hidden_size: 16, num_heads: 2}"
    config = _TEXT_CONFIG.format(encoder="embed", reduce="sum", combiner=combiner, extra="")
    run = _train(config, text_df, tmp_path).wait(120)
    assert run.status == "completed", run.traceback_text
    attention = [
        n for n, _ in run.model.module.named_parameters() if "reduce_sequence.attention" in n
    ]
    assert attention, "the attention reducer has learned weights"
    evals = [e for e in run.events if e.type == "evaluation_finished"]
    assert evals[-1].metrics["validation"]["y"]["accuracy"] > 0.9, evals[-1].metrics


def test_heads_that_do_not_divide_hidden_size_are_refused_before_the_thread(text_df, tmp_path):
    from ludwig_nb.config import ConfigError

    config = _TEXT_CONFIG.format(
        encoder="transformer", reduce="last", combiner="{type: concat}", extra=_SIZES["transformer"]
    )
    config = config.replace("num_heads: 2", "num_heads: 3")
    threads = set(threading.enumerate())
    with pytest.raises(ConfigError, match=r"line 4.*num_heads 3 does not divide hidden_size 16"):
        _train(config, text_df, tmp_path)
    assert not (tmp_path / "results").exists() and not _new_threads(threads)


# -- 4. resume: the checkpoint is checked before the thread, and named ------------------
@pytest.fixture
def stopped(df, tmp_path_factory):
    """A run stopped after its first checkpoint (shared: it is only read)."""
    base = tmp_path_factory.mktemp("stopped")
    run = _train(CONFIG.replace("epochs: 2", "epochs: 200, early_stop: -1"), df, base)
    sub = run.subscribe()
    while not run.is_done:
        if any(e.type == "checkpoint_saved" for e in sub.drain()):
            run.stop()
        run.wait(0.01)
    assert run.status == "stopped"
    return run.directory


def _copy_run(source, tmp_path):
    import shutil

    target = tmp_path / "copy"
    shutil.copytree(source, target)
    return target


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        ("truncate", r"latest\.ckpt: not a readable checkpoint \(truncated: 4000 bytes"),
        ("garbage", r"latest\.ckpt: not a readable checkpoint \(not a file torch wrote"),
        ("remove", r"no checkpoint at .*latest\.ckpt"),
    ],
)
def test_a_damaged_checkpoint_is_refused_before_the_thread_naming_the_file(
    df, tmp_path, stopped, damage, match
):
    from ludwig_nb.runs import CheckpointError

    source = _copy_run(stopped, tmp_path)
    latest = source / "checkpoints" / "latest.ckpt"
    if damage == "truncate":
        latest.write_bytes(latest.read_bytes()[:4000])
    elif damage == "garbage":
        latest.write_bytes(b"not a checkpoint at all" * 10)
    else:
        latest.unlink()
    threads = set(threading.enumerate())
    with pytest.raises((CheckpointError, FileNotFoundError), match=match):
        _train(CONFIG, df, tmp_path, resume_from=source)
    assert not (tmp_path / "results").exists() and not _new_threads(threads)


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        ("truncate", r"best\.ckpt: not a readable checkpoint \(truncated"),
        ("garbage", r"best\.ckpt: not a readable checkpoint \(not a file torch wrote"),
        ("latest", r"best\.ckpt: its weights do not fit this config"),
    ],
)
def test_a_damaged_best_checkpoint_is_refused_before_the_thread_too(
    df, tmp_path, stopped, damage, match
):
    from ludwig_nb.runs import CheckpointError

    source = _copy_run(stopped, tmp_path)
    best = source / "checkpoints" / "best.ckpt"
    assert best.is_file()  # the stopped run evaluated: it has a best
    if damage == "truncate":
        best.write_bytes(best.read_bytes()[:4000])
    elif damage == "garbage":
        best.write_bytes(b"not a checkpoint at all" * 10)
    else:  # a best of another model: another run's checkpoint copied over
        import torch

        state = torch.load(best, weights_only=True)
        state["model"] = {k: v[..., :1] if v.dim() else v for k, v in state["model"].items()}
        torch.save(state, best)
    threads = set(threading.enumerate())
    with pytest.raises(CheckpointError, match=match):
        _train(CONFIG, df, tmp_path, resume_from=source)
    assert not (tmp_path / "results").exists() and not _new_threads(threads)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (("{name: b, type: category}", "{name: c, type: category}"), r"new 'c'; missing 'b'"),
        (("{name: b, type: category}", "{name: b, type: number}"), r"changed type 'b'"),
        (
            (
                "{name: b, type: category}",
                "{name: b, type: category, encoder: {embedding_size: 1}}",
            ),
            r"weights do not fit",
        ),
    ],
)
def test_resume_with_a_config_that_does_not_fit_is_refused_by_name(
    df, tmp_path, stopped, change, match
):
    from ludwig_nb.runs import CheckpointError

    config = CONFIG.replace(*change)
    data = df.assign(c=df["b"], b=np.arange(len(df)) if "number" in change[1] else df["b"])
    with pytest.raises(CheckpointError, match=rf"latest\.ckpt.*{match}.*config\.yaml"):
        _train(config, data, tmp_path, resume_from=stopped)
    assert not (tmp_path / "results").exists()


def test_resume_still_works_from_a_good_checkpoint(df, tmp_path, stopped):
    run = _train(CONFIG, df, tmp_path, resume_from=_copy_run(stopped, tmp_path)).wait(120)
    assert run.status == "completed", run.traceback_text


# -- 5. model files: a ModelLoadError naming the file --------------------------------------
@pytest.fixture
def saved(df, tmp_path_factory):
    base = tmp_path_factory.mktemp("saved")
    run = _train(CONFIG, df, base).wait(120)
    assert run.status == "completed"
    return run.directory / "model"


def _damaged_model(saved, tmp_path, name, content):
    import shutil

    target = tmp_path / "model"
    shutil.copytree(saved, target)
    path = target / name
    path.write_bytes(content(path.read_bytes()) if callable(content) else content)
    return target


def _tamper_vocab(raw):
    meta = json.loads(raw)
    meta["features"]["b"]["idx2str"].append("s")
    return json.dumps(meta).encode()


def _drop_feature(raw):
    meta = json.loads(raw)
    del meta["features"]["b"]
    return json.dumps(meta).encode()


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        (
            "model_weights.pt",
            b"\x00garbage",
            r"model_weights\.pt: not readable as weights \(not a file torch wrote",
        ),
        (
            "model_weights.pt",
            lambda raw: raw[: len(raw) // 2],
            r"model_weights\.pt: not readable as weights \(truncated",
        ),
        (
            "model_hyperparameters.json",
            b"{bad json",
            r"model_hyperparameters\.json: not valid JSON \(line 1",
        ),
        ("model_hyperparameters.json", b"[1, 2]", r"model_hyperparameters\.json: holds a list"),
        (
            "training_set_metadata.json",
            _tamper_vocab,
            r"model_weights\.pt: weights do not fit.*vocabulary",
        ),
        (
            "training_set_metadata.json",
            _drop_feature,
            r"training_set_metadata\.json: no metadata for feature 'b'",
        ),
    ],
)
def test_a_damaged_model_file_is_a_model_load_error_naming_it(
    saved, tmp_path, name, content, match
):
    from ludwig_nb.runs import ModelLoadError, load_model

    with pytest.raises(ModelLoadError, match=match):
        load_model(_damaged_model(saved, tmp_path, name, content))


def test_predict_and_evaluate_on_an_empty_frame_say_so(saved, df):
    from ludwig_nb.runs import load_model

    model = load_model(saved)
    with pytest.raises(DataError, match="nothing to predict: the data has no rows"):
        model.predict(df.iloc[:0])
    with pytest.raises(DataError, match="nothing to evaluate"):
        model.evaluate(df.iloc[:0])
    assert len(model.predict(df.head(2))) == 2


# -- 6. disk full mid-run ------------------------------------------------------------------
class _DiskFullUnder:
    """ENOSPC for every write under ``root`` once ``full`` is set, at the write seams the
    run uses: the recorder's line writes (half a buffer lands first, as on a real disk),
    atomic JSON writes and checkpoint temporary files."""

    def __init__(self, monkeypatch, root):
        import errno
        import tempfile

        from ludwig_nb.store import recorder

        self.full = False
        enospc = lambda where: OSError(errno.ENOSPC, "No space left on device", str(where))  # noqa: E731
        real_write, real_atomic, real_mkstemp = (
            recorder._write_all,
            rundir.write_json_atomic,
            tempfile.mkstemp,
        )

        def write(fd, data):
            if self.full:
                real_write(fd, data[: len(data) // 2])
                raise enospc("events.ndjson")
            real_write(fd, data)

        def atomic(path, data):
            if self.full and str(path).startswith(str(root)):
                raise enospc(path)
            real_atomic(path, data)

        def mkstemp(*args, dir=None, **kwargs):
            if self.full and str(dir).startswith(str(root)):
                raise enospc(dir)
            return real_mkstemp(*args, dir=dir, **kwargs)

        monkeypatch.setattr(recorder, "_write_all", write)
        monkeypatch.setattr(rundir, "write_json_atomic", atomic)
        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def test_a_full_disk_fails_the_run_on_disk_keeps_the_checkpoint_and_resume_works(
    df, tmp_path, monkeypatch
):
    from ludwig_nb.engines.builtin.checkpoint import check_resume
    from tests.runs.conftest import until

    disk = _DiskFullUnder(monkeypatch, tmp_path / "results")
    config = CONFIG.replace("epochs: 2", "epochs: 100")
    run = _train(config, df, tmp_path)
    sub = run.subscribe()
    while not disk.full:
        if any(e.type == "checkpoint_saved" for e in sub.drain()):
            disk.full = True
        run.wait(0.001)
    run.wait(120)
    assert run.status == "failed"
    assert run.state.error.startswith("OSError: no space left on the device writing")
    assert f"resume_from={str(run.directory)!r}" in run.state.error
    status = json.loads((run.directory / rundir.STATUS_FILE).read_text())
    assert status["status"] == "failed" and "no space left" in status["error"]
    text = (run.directory / rundir.EVENTS_FILE).read_text()
    assert text.endswith("\n")
    for line in text.splitlines():
        json.loads(line)
    check_resume(run.directory, run._job.config)  # the last checkpoint loads and fits
    disk.full = False  # space freed: the log completes, then resume
    until(lambda: '"run_failed"' in (run.directory / rundir.EVENTS_FILE).read_text())
    resumed = _train(
        config.replace("epochs: 100", "epochs: 3"), df, tmp_path, resume_from=run.directory
    ).wait(120)
    assert resumed.status == "completed", resumed.traceback_text


# -- 10. reproducibility: each run owns its generators ----------------------------------
_DROPOUT_CONFIG = """\
input_features:
  - {name: a, type: number, encoder: {type: dense, dropout: 0.3}}
  - {name: b, type: category, encoder: {dropout: 0.2}}
output_features:
  - {name: y, type: binary}
combiner: {type: concat, num_fc_layers: 2, output_size: 16, dropout: 0.3}
trainer: {epochs: 3, batch_size: 16}
"""


def _losses(run):
    return [e.loss for e in run.events if e.type == "step_finished"]


def test_two_seeded_runs_at_once_reproduce_their_solo_results(df, tmp_path):
    import torch

    solo = _losses(_train(_DROPOUT_CONFIG, df, tmp_path, random_seed=5).wait(120))
    before = torch.random.get_rng_state()
    together = [_train(_DROPOUT_CONFIG, df, tmp_path, random_seed=5) for _ in range(2)]
    for run in together:
        run.wait(120)
        assert run.status == "completed", run.traceback_text
    assert _losses(together[0]) == solo and _losses(together[1]) == solo
    assert torch.equal(torch.random.get_rng_state(), before)  # the user's RNG untouched
    other = _losses(_train(_DROPOUT_CONFIG, df, tmp_path, random_seed=6).wait(120))
    assert other != solo


def test_runs_leave_torch_threads_as_the_user_set_them(df, tmp_path):
    import torch

    def run_without_threads():
        return train(
            CONFIG, df, results_dir=tmp_path / "results", registry_dir=tmp_path / "registry"
        ).wait(120)

    run_without_threads()  # the first run of the process may apply the default once
    mine = torch.get_num_threads() + 1
    torch.set_num_threads(mine)
    try:
        run_without_threads()
        assert torch.get_num_threads() == mine
    finally:
        torch.set_num_threads(1)


# -- 8. stop during preprocessing ---------------------------------------------------------
@pytest.mark.parametrize("how", ["stop()", "control file"])
def test_stop_lands_during_a_long_preprocessing(df, tmp_path, monkeypatch, how):
    from ludwig_nb.engines.builtin import setup as setup_module
    from tests.runs.conftest import until

    gate = threading.Event()  # preprocessing that would take minutes on big data
    real = setup_module.prepare_splits

    def slow_prepare(*args, **kwargs):
        gate.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(setup_module, "prepare_splits", slow_prepare)
    run = _train(CONFIG, df, tmp_path)
    try:
        until(lambda: run.status == "preprocessing")
        if how == "stop()":
            run.stop()
        else:  # the sidebar's way
            rundir.request_control(run.directory, "stop")
        until(lambda: run.is_done, timeout=10)
        assert not gate.is_set()  # it did not wait for the preprocessing to end
        assert run.status == "stopped" and run.model is None
        phases = [e.phase for e in run.events if e.type == "phase_changed"]
        assert phases[-1] == "stopping"
        status = json.loads((run.directory / rundir.STATUS_FILE).read_text())
        assert status["status"] == "stopped"
    finally:
        gate.set()


def test_a_number_beyond_float32_is_refused_as_it_would_train_as_inf(df, tmp_path):
    df.loc[9, "a"] = 1e39
    _refused(CONFIG, df, tmp_path, r"number column 'a' has 1 value too large for float32 \(row 9")


def test_a_run_that_diverges_after_resume_names_a_checkpoint_that_exists(df, tmp_path):
    import re

    config = """\
input_features:
  - {name: a, type: number}
output_features:
  - {name: t, type: number, preprocessing: {normalization: null}}
trainer: {epochs: 200, batch_size: 16}
"""
    data = df.assign(t=df["a"] * 2.0)
    first = _train(config, data, tmp_path)
    sub = first.subscribe()
    while not first.is_done:
        if any(e.type == "checkpoint_saved" for e in sub.drain()):
            first.stop()
        first.wait(0.01)
    # targets whose squared error overflows float32: the loss is inf at the first step
    exploding = data.assign(t=1e20)
    resumed = _train(config, exploding, tmp_path, resume_from=first.directory).wait(120)
    assert resumed.status == "failed" and "loss became" in resumed.state.error
    named = re.search(r"is (\S+latest\.ckpt)", resumed.state.error)
    assert named, resumed.state.error
    from pathlib import Path

    assert Path(named.group(1)).is_file()


# -- GPU alarms and runs on the CPU --------------------------------------------------------
HOT_ALARM = """\
gpu_watch:
  interval: 0.25
  alarms:
    - {metric: temperature, threshold: 80, consecutive: 1, action: stop}
    - {metric: throttle, action: pause}
"""


@pytest.fixture
def hot_gpu(monkeypatch):
    """The kernel's sampler reads one GPU at 99 °C (a fake at the driver: no GPU here)."""
    from ludwig_nb import gpu

    source = gpu.SimulatedGpu(load=lambda: 1.0, start_temperature=99.0, name="Hot GPU")
    sampler = gpu.Sampler(source, gpu.HostSource(), interval=0.25)
    monkeypatch.setattr(gpu, "kernel_sampler", lambda start=True: sampler)
    sampler.start()
    yield sampler
    sampler.stop()


@pytest.mark.parametrize("device", ["cpu", None])
def test_a_hot_gpus_stop_alarm_never_stops_a_run_on_the_cpu(df, tmp_path, hot_gpu, device):
    config = ab_config("{epochs: 30, batch_size: 4, early_stop: -1}") + HOT_ALARM
    ticks = []
    hot_gpu.subscribe(ticks.append)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = _train(config, ab_frame(200), tmp_path, device=device, wait=True)
    assert run.status == "completed" and not run.control.stop_requested
    assert not [e for e in run.events if e.type.startswith("alarm")]
    assert len(ticks) >= 3  # the GPU was read, hot, while the run prepared and trained
    said = [str(w.message) for w in caught]
    cannot = "this run trains on the CPU (its device): this temperature alarm (stop) cannot act"
    # known before it starts (device "cpu"): the alarms the config wrote say so
    assert any(cannot in text for text in said) == (device == "cpu")


def test_alarms_with_no_gpu_here_say_they_cannot_act(df, tmp_path):
    from ludwig_nb.config import ConfigWarning
    from ludwig_nb.gpu import kernel_sampler

    if kernel_sampler(start=False).gpu_available:
        pytest.skip("this machine has a GPU")
    config = ab_config("{epochs: 1, batch_size: 16}") + HOT_ALARM
    with pytest.warns(ConfigWarning) as caught:
        run = _train(config, df, tmp_path, wait=True)
    assert run.status == "completed"
    first, second = (w.message for w in caught)
    assert first.line == 10 and first.path == "gpu_watch.alarms[0]"
    assert str(first).startswith("line 10, gpu_watch.alarms[0]: no GPU to watch here (")
    assert "this temperature alarm (stop) cannot act on the run" in str(first)
    assert "this throttle alarm (pause) cannot act on the run" in str(second)
    assert "simulate: true" in first.hint


@pytest.mark.parametrize(
    ("trainer", "where"),
    [
        ("{epochs: 1, learning_rate: .nan}", "trainer.learning_rate"),
        ("{epochs: 1, regularization_lambda: .nan}", "trainer.regularization_lambda"),
    ],
)
def test_a_nan_number_is_refused_at_its_line_before_the_thread(df, tmp_path, trainer, where):
    from ludwig_nb.config import ConfigError

    threads = set(threading.enumerate())
    with pytest.raises(ConfigError) as info:
        _train(ab_config(trainer), df, tmp_path)
    assert (info.value.line, info.value.path) == (6, where)
    assert "must be a number, not NaN" in str(info.value)
    assert not (tmp_path / "results").exists() and not _new_threads(threads)


def test_a_whole_float_where_an_integer_belongs_trains_as_the_integer(df, tmp_path):
    run = _train(ab_config("{epochs: 2.0, batch_size: 16.0}"), df, tmp_path, wait=True)
    assert run.status == "completed" and run.state.total_steps == 2 * -(-84 // 16)
    assert (
        run.config["trainer"]["batch_size"] == 16 and type(run.config["trainer"]["epochs"]) is int
    )
