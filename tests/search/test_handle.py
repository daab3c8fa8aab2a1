"""``hyperopt()`` end to end with the built-in engine: real trials, real Optuna, real pruning."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from ludwig_nb.config import ConfigError
from ludwig_nb.runs import Run
from ludwig_nb.runs.monitoring import sampler_of
from ludwig_nb.search import JOURNAL_FILE, STATISTICS_FILE, Search, hyperopt
from tests.runs.conftest import ab_frame, until

BASE = """\
input_features:
  - {name: a, type: number}
  - {name: b, type: category}
output_features:
  - {name: y, type: binary}
trainer: {epochs: EPOCHS, batch_size: 16, eval_batch_size: 256}
hyperopt:
"""


def _config(body: str, epochs: int = 3) -> str:
    """A config whose long trials (>= 100 epochs, to be stopped) never end by early stopping."""
    epochs_text = f"{epochs}, early_stop: -1" if epochs >= 100 else str(epochs)
    return BASE.replace("EPOCHS", epochs_text) + textwrap.indent(textwrap.dedent(body), "  ")


@pytest.fixture
def df():
    return ab_frame(200)


def _search(config, df, tmp_path, **kwargs) -> Search:
    return hyperopt(
        config,
        df,
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        threads=1,
        **kwargs,
    )


def _journal(search: Search) -> list[dict]:
    lines = (search.directory / JOURNAL_FILE).read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("algorithm", ["random", "optuna"])
def test_a_small_search_runs_every_trial_and_reports_ludwigs_statistics(df, tmp_path, algorithm):
    config = _config(
        f"""\
        parameters:
          trainer.learning_rate: {{space: loguniform, lower: 0.001, upper: 0.3}}
          combiner.output_size: {{space: choice, categories: [8, 32]}}
        search_alg: {{type: {algorithm}, random_state_seed: 3, n_startup_trials: 2}}
        executor: {{num_samples: 4}}
        """
    )
    search = _search(config, df, tmp_path, name=f"s-{algorithm}", wait=True)
    assert search.error is None
    trials = search.trials
    assert list(trials.columns[:4]) == [
        "trial",
        "state",
        "trainer.learning_rate",
        "combiner.output_size",
    ]
    assert list(trials["state"]) == ["completed"] * 4
    assert trials["trainer.learning_rate"].between(0.001, 0.3).all()
    assert set(trials["combiner.output_size"]) <= {8, 32}
    assert (trials["duration_s"] > 0).all() and (trials["epoch"] == 3).all()
    # each trial is an ordinary run, trained with its own parameters
    assert len(search.runs) == 4 and all(isinstance(r, Run) for r in search.runs)
    for run, (_, row) in zip(search.runs, trials.iterrows(), strict=True):
        assert Path(run.directory).parent == search.directory / "trials"
        saved = (run.directory / "config.yaml").read_text()
        assert f"output_size: {row['combiner.output_size']}" in saved
        best_loss = run.history["validation.combined.loss"].min()
        assert row["metric"] == pytest.approx(best_loss)
    best = search.best
    assert best["metric"] == trials["metric"].min() and best["state"] == "completed"
    stats = json.loads((search.directory / STATISTICS_FILE).read_text())
    assert stats["hyperopt_config"]["search_alg"]["type"] == algorithm
    scores = [r["metric_score"] for r in stats["hyperopt_results"]]
    assert scores == sorted(scores) and scores[0] == pytest.approx(best["metric"])
    first = stats["hyperopt_results"][0]
    assert set(first) == {"parameters", "metric_score", "training_stats", "eval_stats"}
    assert len(first["training_stats"]["validation"]["combined"]["loss"]) == 3
    assert "roc_auc" in first["eval_stats"]["y"]
    kinds = [e["event"] for e in _journal(search)]
    assert kinds.count("trial_started") == kinds.count("trial_finished") == 4
    assert kinds.count("trial_evaluated") == 12


def test_tpe_and_random_draw_differently_from_the_same_seed(df, tmp_path):
    body = """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.001, upper: 0.3}
        search_alg: {type: ALG, random_state_seed: 5, n_startup_trials: 1}
        executor: {num_samples: 3}
        """
    drawn = {}
    for alg in ("random", "optuna"):
        search = _search(
            _config(body.replace("ALG", alg), epochs=1), df, tmp_path, name=alg, wait=True
        )
        drawn[alg] = list(search.trials["trainer.learning_rate"])
    assert drawn["random"][0] == drawn["optuna"][0]  # the startup trial: both sample at random
    assert drawn["random"][1:] != drawn["optuna"][1:]  # then TPE models the results


def test_a_trial_worse_at_its_first_evaluation_is_pruned_there(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: loguniform, lower: 0.0000001, upper: 0.3}
        search_alg:
          type: random
          points_to_evaluate:
            - {trainer.learning_rate: 0.1}
            - {trainer.learning_rate: 0.0000001}
        executor:
          num_samples: 2
          scheduler: {type: median_stopping_rule, min_samples_required: 1, grace_period: 1}
        """,
        epochs=6,
    )
    search = _search(config, df, tmp_path, name="prune", wait=True)
    assert search.error is None
    first, second = search.records()
    assert first.params["trainer.learning_rate"] == 0.1 and first.state == "completed"
    assert len(first.curve) == 6
    assert second.params["trainer.learning_rate"] == pytest.approx(1e-7)
    assert second.state == "pruned"
    assert len(second.curve) == 1 and second.curve[0][1] > first.curve[0][1]
    assert second.run.status == "stopped"  # its run stopped at once, not after 6 epochs
    assert second.run.epoch < 6 and len(second.run.history) == 1
    assert list(search.trials["state"]) == ["completed", "pruned"]
    stats = json.loads((search.directory / STATISTICS_FILE).read_text())
    assert len(stats["hyperopt_results"]) == 1  # a pruned trial is not a result


def test_a_failing_trial_is_failed_not_pruned_and_the_search_goes_on(df, tmp_path):
    config = _config(
        """\
        parameters:
          combiner.type: {space: grid_search, values: [concat, tabnet]}
        """,
        epochs=1,
    )
    search = _search(config, df, tmp_path, name="fail", wait=True)
    states = dict(zip(search.trials["combiner.type"], search.trials["state"], strict=True))
    assert states == {"concat": "completed", "tabnet": "failed"}
    failed = next(r for r in search.records() if r.state == "failed")
    assert "tabnet" in failed.error
    assert search.total == 2 and search.error is None  # a pure grid runs its grid


def test_stop_ends_the_search_and_its_running_trial(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}
        executor: {num_samples: 5}
        """,
        epochs=400,
    )
    search = _search(config, df, tmp_path, name="stop")
    until(lambda: search.records() and search.records()[0].curve, timeout=120)
    search.stop()
    search.wait(120)
    assert search.is_done
    (trial,) = search.records()
    assert trial.state == "stopped" and trial.search_stopped
    assert trial.run.status == "stopped" and trial.epoch < 400
    assert search.counts()["stopped"] == 1


def test_pause_pauses_the_running_trial_and_resume_continues(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}
        executor: {num_samples: 1}
        """,
        epochs=30,
    )
    search = _search(config, df, tmp_path, name="pause")
    until(lambda: search.records() and search.records()[0].curve, timeout=120)
    search.pause()
    until(lambda: search.trials["state"].tolist() == ["paused"], timeout=60)
    assert search.is_paused and search.remaining_s() is not None
    search.resume()
    search.wait(120)
    assert search.trials["state"].tolist() == ["completed"]


def test_an_unfinished_trial_from_the_journal_reruns_first_with_its_parameters(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}
        executor: {num_samples: 1}
        """,
        epochs=1,
    )
    directory = tmp_path / "results" / "crash"
    directory.mkdir(parents=True)
    started = {
        "time": 1.0,
        "event": "trial_started",
        "trial": 0,
        "params": {"trainer.learning_rate": 0.0421},
    }
    (directory / JOURNAL_FILE).write_text(json.dumps(started) + "\n" + '{"time": 2.0, "event": "tr')
    search = _search(config, df, tmp_path, name="crash", wait=True)
    (trial,) = search.records()
    assert trial.params == {"trainer.learning_rate": 0.0421} and trial.state == "completed"


RESUME_SCRIPT = """
import sys, pandas as pd
from pathlib import Path
from ludwig_nb.search import hyperopt
from tests.runs.conftest import until
df = pd.read_csv(sys.argv[1])
search = hyperopt(open(sys.argv[2]).read(), df, name="resume", results_dir=sys.argv[3],
                  registry_dir=Path(sys.argv[4]), threads=1)
until(lambda: any(r.state == "completed" for r in search.records()), timeout=300)
until(lambda: len(search.records()) == 2 and search.records()[1].curve, timeout=300)
search.stop()
search.wait(300)
print(search.trials[["trial", "state"]].to_json())
"""


def test_a_new_process_resumes_the_search_and_never_reruns_a_finished_trial(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}
        search_alg: {type: random, random_state_seed: 1}
        executor: {num_samples: 3}
        """,
        epochs=40,
    )
    data, config_file = tmp_path / "data.csv", tmp_path / "config.yaml"
    df.to_csv(data, index=False)
    config_file.write_text(config)
    results, registry = tmp_path / "results", tmp_path / "registry"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RESUME_SCRIPT,
            str(data),
            str(config_file),
            str(results),
            str(registry),
        ],
        capture_output=True,
        check=False,
        text=True,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before = _lines(results / "resume" / JOURNAL_FILE)
    finished_first = next(
        e for e in before if e["event"] == "trial_finished" and e["state"] == "completed"
    )
    stopped = next(e for e in before if e["event"] == "trial_finished" and e["state"] == "stopped")
    params = {e["trial"]: e["params"] for e in before if e["event"] == "trial_started"}

    # "after the kernel restart": the same call again, in this process
    search = hyperopt(
        config,
        pd.read_csv(data),
        name="resume",
        results_dir=results,
        registry_dir=registry,
        threads=1,
    )
    search.wait(600)
    assert search.error is None
    records = search.records()
    assert [r.state for r in records] == ["completed"] * 3
    assert records[0].run is None  # restored from the journal, not trained again
    assert records[0].run_dir == finished_first["run_dir"]
    assert records[0].params == params[finished_first["trial"]]
    # the trial the search was stopped in reran with its parameters
    rerun = [r for r in records if r.params == params[stopped["trial"]]]
    assert len(rerun) == 1 and rerun[0].run is not None
    after = _lines(results / "resume" / JOURNAL_FILE)
    starts = [e for e in after if e["event"] == "trial_started"]
    assert len(starts) == 4  # 2 in the first process, 2 (the rerun and the last) now
    with pytest.raises(ValueError, match="holds a different search"):
        hyperopt(
            config.replace("num_samples: 3", "num_samples: 4"),
            df,
            name="resume",
            results_dir=results,
        )


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_config_without_hyperopt_is_refused_with_a_pointer(df, tmp_path):
    with pytest.raises(ConfigError, match="no hyperopt section"):
        _search(BASE.replace("EPOCHS", "1").replace("hyperopt:\n", ""), df, tmp_path)


def test_config_mistakes_are_located_before_any_trial(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learnin_rate: {space: uniform, lower: 0.01, upper: 0.1}
        """
    )
    with pytest.raises(ConfigError) as info:
        _search(config, df, tmp_path)
    assert info.value.line == 9 and "learning_rate" in str(info.value)
    assert not (tmp_path / "results").exists()


def test_max_concurrent_trials_runs_trials_side_by_side(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}
        executor: {num_samples: 4, max_concurrent_trials: 2}
        """,
        epochs=400,
    )
    search = _search(config, df, tmp_path, name="two")
    until(lambda: search.counts()["running"] == 2, timeout=120)
    running = [r.run for r in search.records() if r.state == "running"]
    assert len(running) == 2 and all(r.is_active for r in running)
    search.stop()
    search.wait(120)
    assert search.counts()["stopped"] == 2 and len(search.records()) == 2


def test_every_trial_is_watched_as_its_config_asks(df, tmp_path):
    # gpu_watch applies to each trial as to any run: its sampler, alarms and device
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: grid_search, values: [0.01, 0.05]}
        """,
        epochs=1,
    ).replace("hyperopt:\n", "gpu_watch: {simulate: true, interval: 0.25}\nhyperopt:\n")
    search = _search(config, df, tmp_path, name="watched", wait=True)
    assert search.error is None and len(search.runs) == 2
    for run in search.runs:
        assert sampler_of(run) is not None
        assert "gpu_watch" in (run.directory / "config.yaml").read_text()


def test_an_interrupt_while_waiting_stops_the_search_gracefully(df, tmp_path):
    import os
    import signal
    import threading

    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}
        executor: {num_samples: 3}
        """,
        epochs=400,
    )
    search = _search(config, df, tmp_path, name="interrupt")

    def interrupt_once_training():
        until(lambda: search.records() and search.records()[0].curve, timeout=120)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_once_training, daemon=True).start()
    search.wait()  # Ctrl-C here: the search stops, the call returns (no KeyboardInterrupt)
    assert search.is_done and [r.state for r in search.records()] == ["stopped"]


def test_a_spent_time_budget_stops_the_search_and_its_running_trial(df, tmp_path):
    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: uniform, lower: 0.01, upper: 0.1}
        executor: {num_samples: 5, time_budget_s: 1}
        """,
        epochs=400,
    )
    search = _search(config, df, tmp_path, name="budget", wait=True)
    assert search.error is None
    states = [r.state for r in search.records()]
    assert states == ["stopped"]  # budget spent during the first trial: no second one
    assert any(e["event"] == "time_budget_spent" for e in _journal(search))


def test_the_trials_train_on_the_engine_asked_for_checked_before_anything_is_written(
    df, tmp_path, monkeypatch
):
    from ludwig_nb.engines.base import EngineUnavailable
    from ludwig_nb.engines.ludwig import engine as ludwig_engine

    config = _config(
        """\
        parameters:
          trainer.learning_rate: {space: choice, categories: [0.01]}
        executor: {num_samples: 1}
        """,
        epochs=1,
    )
    monkeypatch.setattr(ludwig_engine, "ludwig_missing", lambda: "engine: ludwig needs Ludwig")
    with pytest.raises(EngineUnavailable, match="needs Ludwig"):
        _search(config, df, tmp_path, name="on-ludwig", engine="ludwig")
    assert not (tmp_path / "results").exists()
    search = _search(config, df, tmp_path, name="on-auto", wait=True)  # auto: the built-in one
    assert [r.run.engine_name for r in search.records()] == ["builtin"]
