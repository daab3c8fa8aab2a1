"""``hyperopt_statistics.json`` in Ludwig's shape, read from the trials' event logs."""

import json

from ludwig_nb.search.statistics import STATISTICS_FILE, run_statistics, write_statistics
from ludwig_nb.search.trial import TrialRecord


def _events(run_dir, evaluations):
    run_dir.mkdir(parents=True)
    lines = [json.dumps({"type": "step_finished", "step": 0})]
    lines += [json.dumps({"type": "evaluation_finished", "metrics": m}) for m in evaluations]
    lines.append('{"type": "evaluation_fin')  # a line cut short
    (run_dir / "events.ndjson").write_text("\n".join(lines) + "\n")


def test_a_trials_statistics_are_per_evaluation_lists_and_its_last_test_split(tmp_path):
    _events(
        tmp_path / "t0",
        [
            {"validation": {"y": {"loss": 0.5}}, "test": {"y": {"loss": 0.6}}},
            {"validation": {"y": {"loss": 0.4}}, "test": {"y": {"loss": 0.45}}},
        ],
    )
    training, last = run_statistics(str(tmp_path / "t0"))
    assert training == {
        "validation": {"y": {"loss": [0.5, 0.4]}},
        "test": {"y": {"loss": [0.6, 0.45]}},
    }
    assert last == {"y": {"loss": 0.45}}
    assert run_statistics(None) == ({}, {})
    assert run_statistics(str(tmp_path / "missing")) == ({}, {})


def test_completed_trials_are_written_best_first_for_the_goal(tmp_path):
    for name in ("a", "b"):
        _events(tmp_path / name, [{"validation": {"y": {"accuracy": 0.5}}}])
    records = [
        TrialRecord(0, {"lr": 0.1}, state="completed", metric=0.7, run_dir=str(tmp_path / "a")),
        TrialRecord(1, {"lr": 0.2}, state="pruned", metric=0.9),
        TrialRecord(2, {"lr": 0.3}, state="completed", metric=0.8, run_dir=str(tmp_path / "b")),
        TrialRecord(3, {"lr": 0.4}, state="completed", metric=None),
    ]
    section = {"metric": "accuracy", "goal": "maximize", "_written": "left out"}
    write_statistics(tmp_path, section, "maximize", records)
    stats = json.loads((tmp_path / STATISTICS_FILE).read_text())
    assert stats["hyperopt_config"] == {"metric": "accuracy", "goal": "maximize"}
    assert [r["parameters"] for r in stats["hyperopt_results"]] == [{"lr": 0.3}, {"lr": 0.1}]
    first = stats["hyperopt_results"][0]
    assert first["metric_score"] == 0.8
    assert first["training_stats"] == {"validation": {"y": {"accuracy": [0.5]}}}
    assert not (tmp_path / (STATISTICS_FILE + ".tmp")).exists()
