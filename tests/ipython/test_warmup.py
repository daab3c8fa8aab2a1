"""The %load_ext warm-up: its torch step waits while a cell builds its dashboard."""

from __future__ import annotations

import threading

from ludwig_nb.ipython import warmup


def test_the_then_step_waits_for_a_holding_cell_and_runs_once_it_is_done():
    order: list[str] = []
    entered, go = threading.Event(), threading.Event()

    def cell() -> None:
        with warmup.holding():
            entered.set()
            go.wait(30)
            order.append("dashboard shown")

    holder = threading.Thread(target=cell)
    holder.start()
    entered.wait(30)
    worker = threading.Thread(
        target=warmup._import_all, args=(("json",), lambda: order.append("torch"), 30.0)
    )
    worker.start()
    go.set()  # an unheld step would race the cell here; a held one always comes second
    holder.join(30)
    worker.join(30)
    assert order == ["dashboard shown", "torch"]


def test_a_hold_that_never_ends_delays_the_step_at_most_its_limit():
    ran = threading.Event()
    with warmup.holding():
        warmup._import_all((), ran.set, 0.0)  # a limit of 0 s: runs at once regardless
    assert ran.is_set()


def test_without_a_cell_the_step_follows_the_imports():
    order: list[str] = []
    warmup._import_all(("json",), lambda: order.append("then"), 30.0)
    assert order == ["then"]
