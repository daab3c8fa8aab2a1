"""The graceful wrapper of Tune's schedulers: which STOP is a prune, which a cut at ``max_t``,
and which is the plan's own end (marker ``ray``: it subclasses Tune's TrialScheduler; no Ray
is started)."""

from __future__ import annotations

import types

import pytest

pytestmark = pytest.mark.ray


class _Inner:
    """A scheduler that decides what the test says."""

    metric = "metric"

    def __init__(self, decision: str) -> None:
        self.decision = decision

    def on_trial_result(self, controller, trial, result):
        return self.decision


class _Hooks:
    def __init__(self) -> None:
        self.pruned, self.cut = [], []

    def trial_pruned(self, tune_id):
        self.pruned.append(tune_id)

    def trial_cut(self, tune_id):
        self.cut.append(tune_id)


def _wrapped(decision, max_t, monkeypatch):
    from ludwig_nb.engines.ray.tune import schedulers

    sent = []
    monkeypatch.setattr(schedulers, "ray_get", lambda ref: ref)
    actor = types.SimpleNamespace(
        set_control=types.SimpleNamespace(remote=lambda *args: sent.append(args))
    )
    hooks = _Hooks()
    return schedulers.graceful(_Inner(decision), hooks, actor, max_t), hooks, sent


def _trial(tune_id: str):
    return types.SimpleNamespace(trial_id=tune_id)


def test_a_stop_before_max_t_prunes_and_one_at_max_t_cuts_a_longer_plan(monkeypatch):
    from ray.tune.schedulers import TrialScheduler

    wrapped, hooks, sent = _wrapped(TrialScheduler.STOP, 2, monkeypatch)
    at = {"training_iteration": 1, "planned": 3}
    assert wrapped.on_trial_result(None, _trial("a"), at) == TrialScheduler.CONTINUE
    assert wrapped.on_trial_result(None, _trial("b"), {**at, "training_iteration": 2}) == (
        TrialScheduler.CONTINUE
    )
    assert (hooks.pruned, hooks.cut) == (["a"], ["b"])
    assert sent == [("a", "pruned", None), ("b", "max_t", None)]
    wrapped.on_trial_result(None, _trial("a"), {**at, "training_iteration": 2})
    assert len(sent) == 2  # a trial is stopped once


def test_a_stop_at_the_plans_last_evaluation_is_no_stop_and_a_continue_passes(monkeypatch):
    from ray.tune.schedulers import TrialScheduler

    wrapped, hooks, sent = _wrapped(TrialScheduler.STOP, 3, monkeypatch)
    result = {"training_iteration": 3, "planned": 3}
    assert wrapped.on_trial_result(None, _trial("a"), result) == TrialScheduler.CONTINUE
    assert (hooks.pruned, hooks.cut, sent) == ([], [], [])
    going, hooks, sent = _wrapped(TrialScheduler.CONTINUE, 3, monkeypatch)
    result = {"training_iteration": 1, "planned": 3}
    assert going.on_trial_result(None, _trial("a"), result) == TrialScheduler.CONTINUE
    assert sent == []


def test_without_max_t_every_stop_is_a_prune(monkeypatch):
    from ray.tune.schedulers import TrialScheduler

    wrapped, hooks, sent = _wrapped(TrialScheduler.STOP, None, monkeypatch)
    wrapped.on_trial_result(None, _trial("m"), {"training_iteration": 5, "planned": 3})
    assert hooks.pruned == ["m"] and sent == [("m", "pruned", None)]
