"""``SimulatedGpu``: a GPU that heats up under load, for demos and tests without a GPU.

A first-order thermal model: the temperature relaxes exponentially toward an equilibrium
that depends on the load, ``T_eq = ambient + load * (hot - ambient)``, with time constant
``heat_tau`` while heating and ``cool_tau`` while cooling (seconds). Between two samples
the load is taken as constant, so the step is exact:
``T += (T_eq - T) * (1 - exp(-dt / tau))``. Under full load ``hot`` sits above the
slowdown threshold, so a long run throttles (``sw_thermal_slowdown``) and a pausing alarm
lets it cool. Time comes from an injectable clock, so tests run on virtual time.

It reads like the NVML adapter: a thermal margin to the nearest slowdown point, and, per
``ThermalProfile.generation``, the cumulative throttle counters and GPM activity of a Hopper
card (``"hopper"``), the counters without GPM (``"ampere"``), or neither (``"legacy"``). The
thermal counters are exact: the time above each threshold is integrated along the
exponential path between two samples, so they can be checked against the sampled flags.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from ludwig_nb.core.gpu_sample import GpuSample

__all__ = ["GENERATIONS", "SimulatedGpu", "ThermalProfile"]

_GIB = 1 << 30
#: what each simulated generation reports beyond the basics
GENERATIONS = ("hopper", "ampere", "legacy")
#: seconds throttled "since the driver loaded", before the simulation starts (counters are
#: read as differences; a non-zero start keeps them honest)
_COUNTER_START = 3600.0


@dataclasses.dataclass(frozen=True)
class ThermalProfile:
    """The simulated card: temperatures in °C, times in seconds, power in W, memory in bytes.

    The defaults resemble a data-centre card whose fan cannot keep up at full load.
    """

    ambient: float = 35.0
    hot: float = 95.0  # equilibrium at load 1.0 (above slowdown: it throttles)
    heat_tau: float = 120.0
    cool_tau: float = 90.0
    slowdown: float = 87.0
    shutdown: float = 97.0
    max_operating: float = 89.0
    idle_power: float = 60.0
    power_limit: float = 300.0
    memory_total: int = 16 * _GIB
    idle_memory: int = 300 << 20
    busy_memory: int = 9 * _GIB
    clock_sm_max: float = 1980.0
    clock_memory: float = 2619.0
    generation: str = "hopper"

    def __post_init__(self) -> None:
        if self.generation not in GENERATIONS:
            raise ValueError(f"generation {self.generation!r}: use {', '.join(GENERATIONS)}")

    @property
    def nearest_slowdown(self) -> float:
        """°C where the card first slows down for heat (the margin's zero)."""
        return min(self.slowdown, self.max_operating)

    @classmethod
    def demo(cls) -> ThermalProfile:
        """Fast time constants for a notebook demo.

        From ambient at full load the card crosses ``slowdown-5`` (82 °C) in about 9 s and, paused,
        cools below ``slowdown-10`` (77 °C) in about 1 s, then heats again in about 3 s: a pause and
        a resume within 15 s of training.
        """
        return cls(heat_tau=6.0, cool_tau=6.0)


class SimulatedGpu:
    """Same interface as :class:`~ludwig_nb.gpu.NvmlSource`; ``count`` identical cards.

    ``load``: a callable returning the load in [0, 1] (e.g. 1.0 while a run trains);
    values outside are clipped and an exception counts as 0. ``clock``: seconds (any
    origin). ``wall_clock``: the sample times. ``start_temperature``: °C (default ambient).

    Args:
        load: Returns the load in [0, 1].
        count: The number of identical cards.
        profile: The thermal model (time constants, temperatures, power); default a realistic card.
        clock: Seconds that drive the thermal model.
        wall_clock: Seconds stamped on the samples; default ``time.time``.
        start_temperature: °C at the start.
        name: The cards' name.
    """

    def __init__(
        self,
        load: Callable[[], float] = lambda: 0.0,
        count: int = 1,
        *,
        profile: ThermalProfile | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] | None = None,
        start_temperature: float | None = None,
        name: str = "Simulated GPU",
    ) -> None:
        if count < 1:
            raise ValueError("SimulatedGpu needs count >= 1")
        self.profile = profile or ThermalProfile()
        self._load = load
        self._clock = clock
        self._wall = wall_clock or time.time
        self._name = name
        self._count = count
        self._lock = threading.Lock()
        start = self.profile.ambient if start_temperature is None else start_temperature
        self._temps = [float(start)] * count
        #: per card: seconds above the slowdown and the maximum operating temperature
        self._above = [[_COUNTER_START, _COUNTER_START] for _ in range(count)]
        self._last: float | None = None

    available = True
    reason = ""

    @property
    def temperatures(self) -> list[float]:
        """The current model temperatures (°C), without advancing time."""
        with self._lock:
            return list(self._temps)

    def close(self) -> None:
        """Nothing to release."""

    def load(self) -> float:
        """The current load in [0, 1] (0 when the callable raises)."""
        try:
            value = float(self._load())
        except Exception:
            return 0.0
        return 0.0 if math.isnan(value) else min(1.0, max(0.0, value))

    def advance(self, load: float) -> None:
        """Move the thermal model to the clock's now, under ``load`` since the last call."""
        p = self.profile
        now = self._clock()
        with self._lock:
            dt = 0.0 if self._last is None else max(0.0, now - self._last)
            self._last = now
            target = p.ambient + load * (p.hot - p.ambient)
            for i, temp in enumerate(self._temps):
                tau = p.heat_tau if target > temp else p.cool_tau
                self._above[i][0] += _time_above(p.slowdown, temp, target, tau, dt)
                self._above[i][1] += _time_above(p.max_operating, temp, target, tau, dt)
                self._temps[i] = temp + (target - temp) * (1.0 - math.exp(-dt / tau))

    def sample(self) -> list[GpuSample]:
        """Advance the model and read every simulated card."""
        load = self.load()
        self.advance(load)
        now = self._wall()
        with self._lock:
            above = [tuple(a) for a in self._above]
        return [
            self._extras(self._reading(i, temp, load, now), load, above[i])
            for i, temp in enumerate(self.temperatures)
        ]

    def _extras(self, reading: GpuSample, load: float, above: tuple[float, ...]) -> GpuSample:
        """The margin, and the counters and GPM activity of the profile's generation."""
        p = self.profile
        extra: dict[str, Any] = {
            "temperature_margin": round(p.nearest_slowdown - (reading.temperature or 0.0), 1)
        }
        if p.generation != "legacy":
            extra.update(
                throttled_thermal_s=above[0],
                throttled_hw_thermal_s=above[1],
                throttled_power_s=0.0,
                throttled_power_brake_s=0.0,
                throttled_sync_boost_s=0.0,
            )
        if p.generation == "hopper":
            extra.update(
                sm_activity=round(92.0 * load, 1),
                sm_occupancy=round(45.0 * load, 1),
                tensor_activity=round(55.0 * load, 1),
                memory_bandwidth=round(60.0 * load, 1),
            )
        return dataclasses.replace(reading, **extra)

    def _reading(self, index: int, temp: float, load: float, now: float) -> GpuSample:
        p = self.profile
        reasons = []
        if load == 0.0:
            reasons.append("gpu_idle")
        power = p.idle_power + load * (p.power_limit - p.idle_power) * 0.97
        clock = p.clock_sm_max * (0.35 + 0.65 * load) if load else p.clock_sm_max * 0.1
        if temp >= p.slowdown:
            reasons.append("sw_thermal_slowdown")
            clock *= 0.8
        if temp >= p.max_operating:
            reasons.append("hw_thermal_slowdown")
        span = max(1e-9, p.hot - p.ambient)
        memory = int(p.idle_memory + load * (p.busy_memory - p.idle_memory))
        return GpuSample(
            index=index,
            name=f"{self._name} (simulated)",
            uuid=f"GPU-simulated-{index:04d}",
            utilization_gpu=round(100.0 * load, 1),
            utilization_memory=round(60.0 * load, 1),
            memory_used=memory,
            memory_total=p.memory_total,
            temperature=round(temp, 1),
            temperature_slowdown=p.slowdown,
            temperature_shutdown=p.shutdown,
            temperature_max=p.max_operating,
            power_draw=round(power, 1),
            power_limit=p.power_limit,
            fan=round(30.0 + 70.0 * min(1.0, max(0.0, (temp - p.ambient) / span)), 1),
            clock_sm=round(clock),
            clock_memory=p.clock_memory,
            pstate=0 if load else 8,
            clock_reasons=tuple(reasons),
            process_memory=memory - p.idle_memory,
            time=now,
        )


def _time_above(level: float, start: float, target: float, tau: float, dt: float) -> float:
    """Seconds of ``dt`` that ``T(s) = target + (start - target) * exp(-s / tau)`` is >= level."""
    if dt <= 0:
        return 0.0
    end = target + (start - target) * math.exp(-dt / tau)
    if start >= level and end >= level:
        return dt  # the path is monotonic: above at both ends is above throughout
    if start < level and end < level:
        return 0.0
    crossing = -tau * math.log((level - target) / (start - target))
    return dt - crossing if end >= level else crossing
