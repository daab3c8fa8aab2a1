from __future__ import annotations

import io
import pickle

import pytest

from ludwig_nb.engines.builtin.image.workers import WorkerLost, WorkerPool, serve


def test_serve_runs_named_functions_until_none():
    tasks = io.BytesIO()
    for task in (("math:gcd", (12, 18)), ("builtins:max", (3, 9)), None):
        pickle.dump(task, tasks)
    tasks.seek(0)
    out = io.BytesIO()
    serve(tasks, out)
    out.seek(0)
    assert [pickle.load(out), pickle.load(out)] == [6, 9]


def test_a_pool_runs_every_task_once():
    with WorkerPool(2) as pool:
        got = dict(pool.map("math:gcd", [(12, 18), (7, 21), (10, 4)]))
    assert got == {0: 6, 1: 7, 2: 2}


def test_a_dead_worker_is_reported():
    with WorkerPool(1) as pool, pytest.raises(WorkerLost):
        list(pool.map("os:_exit", [(3,)]))
