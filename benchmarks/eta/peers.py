"""Faithful replicas of the ETAs other tools show, driven by the same events as ours.

Each replica reads only what its tool can see: step ends on the wall clock (all), the
total step count (all; updated when the plan changes), step start/end pairs without hook
time (detectron2), and evaluation wall time (Composer). Formulas and defaults are those of
the versions named in ``shared/design/notes/ETA_METHODS.md`` section 1.
``remaining(now)`` returns seconds, or ``None`` where the tool shows no number.
"""

from __future__ import annotations

import collections
import math
import statistics

from ludwig_nb.core import events as ev

__all__ = ["PEERS", "Peer"]


class Peer:
    """Base: tracks the run start, steps done (``n``) and the planned total."""

    name = "peer"

    def __init__(self) -> None:
        self.start: float | None = None
        self.total = 0
        self.n = 0

    def observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.RunStarted):
            self.start = event.time
            self.total = event.schedule.total_steps
        elif isinstance(event, ev.ScheduleChanged):
            self.total = event.schedule.total_steps
        elif isinstance(event, ev.StepFinished):
            self.n = event.step + 1
            self.on_step(event)
        elif isinstance(event, ev.EvaluationFinished):
            self.on_eval(event)

    def on_step(self, event: ev.StepFinished) -> None:
        """Hook for replicas that sample per step."""

    def on_eval(self, event: ev.EvaluationFinished) -> None:
        """Hook for replicas that see evaluations."""

    def remaining(self, now: float) -> float | None:
        raise NotImplementedError


class _Ema:
    """tqdm.std.EMA: exponential moving average with bias correction."""

    def __init__(self, smoothing: float = 0.3) -> None:
        self.alpha = smoothing
        self.last = 0.0
        self.calls = 0

    def __call__(self, x: float | None = None) -> float:
        beta = 1 - self.alpha
        if x is not None:
            self.last = self.alpha * x + beta * self.last
            self.calls += 1
        return self.last / (1 - beta**self.calls) if self.calls else self.last


class Tqdm(Peer):
    """tqdm 4.x ``update``: EMA(dn)/EMA(dt), smoothing 0.3, mininterval 0.1 s, dynamic
    miniters, maxinterval 10 s; the shown remaining is the one of the last refresh."""

    name = "tqdm"

    def __init__(self) -> None:
        super().__init__()
        self.ema_dn, self.ema_dt, self.ema_miniters = _Ema(), _Ema(), _Ema()
        self.last_print_n = 0
        self.last_print_t: float | None = None
        self.miniters = 0.0
        self.shown: float | None = None

    def on_step(self, event: ev.StepFinished) -> None:
        if self.last_print_t is None:
            self.last_print_t = self.start if self.start is not None else event.start_time
        if self.n - self.last_print_n < self.miniters:
            return
        cur_t = event.time
        dt = cur_t - self.last_print_t
        if dt < 0.1:
            return
        dn = self.n - self.last_print_n
        if dt and dn:
            self.ema_dn(dn)
            self.ema_dt(dt)
        rate = self.ema_dn() / self.ema_dt() if self.ema_dt() else None
        self.shown = (self.total - self.n) / rate if rate else None
        if dt >= 10.0:
            self.miniters = dn * 0.1 / dt
        else:
            self.miniters = self.ema_miniters(dn * 0.1 / dt)
        self.last_print_n, self.last_print_t = self.n, cur_t

    def remaining(self, now: float) -> float | None:
        return self.shown


class CumulativeMean(Peer):
    """fastprogress (and enlighten, Lightning's TQDM bar with smoothing=0): elapsed / n."""

    name = "fastprogress"

    def remaining(self, now: float) -> float | None:
        if not self.n or self.start is None:
            return None
        return (now - self.start) / self.n * (self.total - self.n)


class SkipFirstMean(Peer):
    """HF ``NotebookProgressBar`` / Keras ``Progbar``: the mean from the end of step 1."""

    name = "hf_notebook/keras"

    def __init__(self) -> None:
        super().__init__()
        self.t1: float | None = None

    def on_step(self, event: ev.StepFinished) -> None:
        if self.t1 is None:
            self.t1, self.n1 = event.time, self.n

    def remaining(self, now: float) -> float | None:
        if self.t1 is None or self.n <= self.n1:
            return None
        return (now - self.t1) / (self.n - self.n1) * (self.total - self.n)


class RichWindow(Peer):
    """rich ``Task.speed``: samples of the last 30 s (deque <= 1000); the first sample's
    progress is not counted; a window with one sample shows nothing (``-:--:--``)."""

    name = "rich"

    def __init__(self) -> None:
        super().__init__()
        self.samples: collections.deque[tuple[float, int]] = collections.deque(maxlen=1000)

    def on_step(self, event: ev.StepFinished) -> None:
        t = event.time
        while self.samples and self.samples[0][0] < t - 30.0:
            self.samples.popleft()
        self.samples.append((t, 1))

    def remaining(self, now: float) -> float | None:
        if len(self.samples) < 2:
            return None
        span = self.samples[-1][0] - self.samples[0][0]
        if span <= 0:
            return None
        speed = sum(c for _, c in list(self.samples)[1:]) / span
        return float(math.ceil((self.total - self.n) / speed))


class Detectron2(Peer):
    """detectron2: median of the last 1000 step times (hooks excluded, the first 2
    iterations skipped) times the iterations left."""

    name = "detectron2"

    def __init__(self) -> None:
        super().__init__()
        self.times: collections.deque[float] = collections.deque(maxlen=1000)
        self.seen = 0

    def on_step(self, event: ev.StepFinished) -> None:
        self.seen += 1
        if self.seen >= 3:
            self.times.append(event.time - event.start_time)

    def remaining(self, now: float) -> float | None:
        if not self.times:
            return None
        return statistics.median(self.times) * (self.total - self.n)


class Composer(Peer):
    """Composer ``RuntimeEstimator`` (skip_batches=1): training rate without eval wall
    time, plus the mean eval (first excluded once there are two) times evals left, the
    eval frequency inferred from the evals seen."""

    name = "composer"

    def __init__(self) -> None:
        super().__init__()
        self.t_start: float | None = None
        self.start_dur = 0.0
        self.eval_wct: list[float] = []
        self.total_eval = 0.0
        self.eval_freq = 0.0
        self.shown: float | None = None

    def on_step(self, event: ev.StepFinished) -> None:
        if self.n == 1 and self.t_start is None:
            return  # the skipped batch
        if self.t_start is None:
            self.t_start = event.start_time  # batch_start of the first counted batch
            self.start_dur = (self.n - 1) / self.total
        dur = self.n / self.total
        if dur <= self.start_dur:
            return
        rate = (event.time - self.t_start - self.total_eval) / (dur - self.start_dur)
        remaining = rate * (1 - dur)
        if self.eval_wct:
            k = len(self.eval_wct)
            avg = sum(self.eval_wct[1:]) / (k - 1) if k > 1 else self.eval_wct[0]
            if self.eval_freq > 0:
                remaining += avg * (1 / self.eval_freq - k)
        self.shown = remaining

    def on_eval(self, event: ev.EvaluationFinished) -> None:
        if self.t_start is None:
            return
        wct = event.time - event.start_time
        self.total_eval += wct
        self.eval_wct.append(wct)
        self.eval_freq = (self.n / self.total) / len(self.eval_wct)

    def remaining(self, now: float) -> float | None:
        return self.shown


PEERS: tuple[type[Peer], ...] = (
    Tqdm,
    CumulativeMean,
    SkipFirstMean,
    RichWindow,
    Detectron2,
    Composer,
)
