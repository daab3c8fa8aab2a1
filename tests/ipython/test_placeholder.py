"""The placeholder line: shown at once with a display id, updated in place, cleared."""

from __future__ import annotations

from typing import Any

from ludwig_nb.ipython.placeholder import EMPTY, Placeholder


class _Handle:
    def __init__(self, log: list[tuple[str, Any]]) -> None:
        self.log = log

    def update(self, bundle: Any, raw: bool = False) -> None:
        assert raw
        self.log.append(("update", bundle))


def _placeholder(now: list[float]) -> tuple[Placeholder, list[tuple[str, Any]]]:
    log: list[tuple[str, Any]] = []

    def display(bundle: Any, raw: bool = False, display_id: bool = False) -> _Handle:
        assert raw and display_id  # a raw bundle with an id, so that it can be replaced
        log.append(("display", bundle))
        return _Handle(log)

    return Placeholder("churn <1>", display, clock=lambda: now[0]), log


def test_it_is_displayed_once_then_updated_in_place_and_cleared():
    now = [10.0]
    placeholder, log = _placeholder(now)
    placeholder.say("reading the dataset demo:churn")
    now[0] = 12.4
    placeholder.say("checking the data and starting the run")
    placeholder.clear()
    placeholder.clear()
    placeholder.say("too late")
    kinds = [kind for kind, _ in log]
    assert kinds == ["display", "update", "update"]
    first, second, last = (bundle for _, bundle in log)
    assert first["text/plain"] == "churn <1>: reading the dataset demo:churn"
    assert "<b>churn &lt;1&gt;</b>" in first["text/html"]  # escaped
    assert "ludwig-nb-placeholder" in first["text/html"] and " s</div>" not in first["text/html"]
    assert "checking the data" in second["text/html"] and "· 2 s</div>" in second["text/html"]
    assert last == EMPTY


def test_without_a_front_end_nothing_is_displayed():
    class Terminal:  # a terminal shell has no kernel
        pass

    placeholder = Placeholder.for_shell(Terminal(), "run")
    placeholder.say("reading the dataset")  # would print a repr in a terminal: nothing
    placeholder.clear()
    assert placeholder.cleared


def test_a_kernel_shell_gets_ipythons_display():
    class Kernel:
        kernel = object()

    assert Placeholder.for_shell(Kernel(), "run")._display is not None
