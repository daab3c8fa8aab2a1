"""The ETA line of the views: the run's one ETA, worded, refreshed at most once a second.

The estimate, the early-stopping forecast and the first stable prediction all come from
the run (:meth:`~ludwig_nb.runs.handle.RunHandle.eta_reading`) and are worded by
:func:`~ludwig_nb.core.eta.display.eta_sentence` (the words status.json carries for the
sidebar); this only bounds how often the words change. Before the run has a basis the text says
"estimating…", then "warming up…".
"""

from __future__ import annotations

from collections.abc import Mapping

from ludwig_nb.core.eta.display import WARMING_UP, eta_sentence
from ludwig_nb.core.state import RunState
from ludwig_nb.runs.handle import EtaReading, RunHandle

__all__ = ["ESTIMATING", "EtaText", "reading_words"]

ESTIMATING = "estimating…"


class EtaText:
    """The ETA words of one view of ``run``.

    ``min_interval`` (seconds, monotonic) bounds how often the text changes.

    Args:
        run: The run whose one ETA this words (:class:`~ludwig_nb.runs.handle.RunHandle`).
        min_interval: Seconds (monotonic) between changes of the text.
    """

    def __init__(self, run: RunHandle, min_interval: float = 1.0) -> None:
        self._run = run
        self.min_interval = min_interval
        self.text = ESTIMATING
        self._last_refresh: float | None = None
        self.first_finish: float | None = None  # wall time of the first stable prediction
        #: the deadline against the same estimate (``EtaReading.deadline``), None without one
        self.deadline: Mapping[str, object] | None = None

    def refresh(
        self, state: RunState, wall_now: float, mono_now: float, force: bool = False
    ) -> bool:
        """Reword the run's ETA at ``wall_now``; True if the text changed.

        Only once ``min_interval`` passed since the last time (or with ``force``). Paused, the
        words stay frozen where the pause found them.
        """
        if (
            not force
            and self._last_refresh is not None
            and mono_now - self._last_refresh < self.min_interval
        ):
            return False
        self._last_refresh = mono_now
        paused = state.status == "paused"
        if paused and not force and self.text not in (ESTIMATING, WARMING_UP):
            return False
        reading = self._run.eta_reading(wall_now)
        self._remember_first(reading, wall_now)
        text = reading_words(reading, state, wall_now)
        changed = text != self.text or reading.deadline != self.deadline
        self.text, self.deadline = text, reading.deadline
        return changed

    def _remember_first(self, reading: EtaReading, wall_now: float) -> None:
        if self.first_finish is not None:
            return
        if reading.first_finish is not None:
            self.first_finish = reading.first_finish  # the estimator saw it at its step
            return
        estimate = reading.estimate
        if estimate is not None and estimate.state != "warming_up":
            self.first_finish = wall_now + float(estimate.remaining_s)


def reading_words(reading: EtaReading, state: RunState, wall_now: float) -> str:
    """The run's ETA reading in words at ``wall_now`` (s): the one ETA sentence of every view.

    Under early stopping (with a planned total) the ETA is a bound and the forecast follows:
    ``"≤ <ETA> · at most 11,000 steps (early stopping); likely stops near step 2,900 (not
    before 2,400), ≈ 45 s from now"``.
    """
    bounded = state.total_steps if reading.early_stopping else 0
    return eta_sentence(reading.estimate, reading.forecast, wall_now, bounded_total=bounded)
