"""Wire a run to GPU telemetry and temperature alarms, per its ``gpu_watch:`` section.

``enabled: auto`` watches when NVML finds a GPU; ``simulate: true`` puts a
``SimulatedGpu`` (whose temperature follows the run's load) in place of the driver, so an
alarm can pause a real run on a machine without a GPU.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ludwig_nb.config import Config
    from ludwig_nb.runs.run import Run

__all__ = ["attach"]

log = logging.getLogger(__name__)

_LOADED_STATUSES = frozenset({"training", "evaluating", "preprocessing"})


def _section(cfg: Config) -> Mapping[str, Any]:
    section = cfg.to_dict().get("gpu_watch") or {}
    return section if isinstance(section, Mapping) else {}


def _profile(simulate: Any) -> Any:
    """``simulate: true`` -> a realistic card; ``"demo"`` -> fast time constants (a pause
    and a resume within half a minute); a mapping -> ``ThermalProfile`` fields."""
    from ludwig_nb.gpu import ThermalProfile

    if simulate == "demo":
        return ThermalProfile.demo()
    if isinstance(simulate, Mapping):
        return ThermalProfile(**simulate)
    return ThermalProfile()


def attach(run: Run, cfg: Config) -> None:
    """Give ``run`` a sampler and an alarm watch when its config asks for them."""
    section = _section(cfg)
    enabled = section.get("enabled", "auto")
    if enabled is False:
        return
    from ludwig_nb.core.alarms import AlarmPolicy
    from ludwig_nb.gpu import HostSource, Sampler, SimulatedGpu, kernel_sampler
    from ludwig_nb.runs.alarm_watch import AlarmWatch

    simulate = section.get("simulate") or False
    owned = bool(simulate)
    if simulate:
        source = SimulatedGpu(
            # the card works the run's duty cycle (the throttle spaces the steps)
            load=lambda: run.control.duty if run.status in _LOADED_STATUSES else 0.0,
            profile=_profile(simulate),
        )
        sampler = Sampler(source, HostSource(), interval=float(section.get("interval", 1.0)))
        sampler.start()
        run.device_index = 0
    else:
        sampler = kernel_sampler()
    run.sampler = sampler
    if not simulate and enabled == "auto" and not sampler.gpu_available:
        return  # host CPU/RAM for the dashboard; no GPU to raise alarms on
    watch = AlarmWatch(sampler, AlarmPolicy.from_config(section), targets=lambda: [run]).start()

    def _detach(_: Run) -> None:
        watch.close()
        if owned:
            sampler.stop()

    run.add_finish_callback(_detach)
