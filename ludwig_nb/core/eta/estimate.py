"""What the ETA answers: ``Estimate`` and its ``EtaState``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal

__all__ = ["Estimate", "EtaState"]

#: ``"warming_up"`` before the first stable segment (the number is provisional),
#: ``"adjusting"`` shortly after a regime change, else ``"stable"``.
EtaState = Literal["warming_up", "stable", "adjusting"]


@dataclasses.dataclass(frozen=True)
class Estimate:
    """Time to completion at ``at`` (seconds on the caller's clock).

    Attributes:
        remaining_s: the point estimate, seconds from ``at``.
        low_s: the 80 % interval's lower end, seconds from ``at`` (``0 <= low_s <=
            remaining_s``).
        high_s: its upper end (``high_s >= remaining_s``).
        state: see :data:`EtaState`.
        at: when the estimate was made.
        step_s: the step time in use, seconds.
        steps_done: steps finished.
        breakdown: ``remaining_s`` (before the in-progress allowance) split into
            ``steps``, ``epoch_starts``, ``evaluations`` and ``checkpoints`` seconds
            (and ``warmup`` in a pre-flight prediction).
    """

    remaining_s: float
    low_s: float
    high_s: float
    state: EtaState
    at: float
    step_s: float
    steps_done: int = 0
    breakdown: Mapping[str, float] = dataclasses.field(default_factory=dict)

    @property
    def finish_time(self) -> float:
        """Predicted end, on the caller's clock (seconds)."""
        return self.at + self.remaining_s
