from ludwig_nb.core.eta.event_costs import Cost
from ludwig_nb.core.eta.interval import half_width


def _width(**changes: object) -> float:
    args: dict[str, object] = {
        "remaining_s": 100.0,
        "steps_left": 100,
        "steps_s": 100.0,
        "step_noise": (0.01, 400.0, 30),
        "events": [(2, Cost(5.0, 0.5, 3))],
        "level_error": 0.0,
    }
    args.update(changes)
    return half_width(**args)  # type: ignore[arg-type]


def test_every_source_of_doubt_widens_the_interval():
    base = _width()
    assert base > 0
    assert _width(step_noise=(0.04, 400.0, 30)) > base
    assert _width(events=[(2, Cost(5.0, 2.0, 3))]) > base
    assert _width(level_error=0.01) > base
    assert _width(step_noise=(0.01, 400.0, 3)) > base  # few batches: a wider t


def test_nothing_left_has_no_width():
    assert _width(remaining_s=0.0) == 0.0
