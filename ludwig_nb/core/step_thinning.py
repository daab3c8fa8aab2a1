"""Which steps a long run keeps, in memory and in ``events.ndjson``: all, then fewer and fewer.

A week-long run (an LLM fine-tune trains for days) is millions of ``StepFinished`` events: at
about 60 bytes each in memory and 180 on disk, 10 million steps would hold 600 MB in the kernel
and write 1.8 GB. Past :data:`STEP_BUDGET` steps a run keeps one step in ``stride``, where the
stride is the power of two at or above ``(step // budget)²``: 1 up to twice the budget, 4 up to
three times, 16 up to four, 128 at ten times, 16,384 at a hundred times. Each further stretch of
``budget`` steps then adds fewer kept steps than the one before (about ``budget / k²`` for the
k-th), so however long the run, it keeps fewer than ``2.7 x budget`` steps in all.

What is kept is a sample, decided by the step's own number (the same steps in memory and on
disk, on any resume): rates over the kept steps stay right (samples per second of step time),
a curve keeps its shape, and every other event (evaluations, checkpoints, alarms, the end) is
always kept. The run's state, ETA and progress see every step; only the record thins.
"""

from __future__ import annotations

__all__ = ["STEP_BUDGET", "keeps_step", "stride_at"]

#: steps kept whole before thinning starts (and the unit of the stride's growth)
STEP_BUDGET = 100_000


def stride_at(step: int, budget: int | None = None) -> int:
    """One step in how many is kept at 0-based step ``step``.

    1 below twice ``budget``, then the power of two at or above ``(step // budget)²``
    (``budget``: None reads :data:`STEP_BUDGET` now).
    """
    ratio = max(0, step) // max(1, STEP_BUDGET if budget is None else budget)
    if ratio <= 1:
        return 1
    return 1 << (ratio * ratio - 1).bit_length()


def keeps_step(step: int, budget: int | None = None) -> bool:
    """Whether step ``step`` (0-based) is kept in the run's record (see the module doc).

    ``budget``: None reads :data:`STEP_BUDGET` now (tests lower it).
    """
    return step % stride_at(step, budget) == 0
