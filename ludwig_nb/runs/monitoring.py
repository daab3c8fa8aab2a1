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


def attach(run: Run, cfg: Config) -> None:
    """Give ``run`` a sampler and an alarm watch when its config asks for them."""
    section = _section(cfg)
    enabled = section.get("enabled", "auto")
    if enabled is False:
        return
    from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule
    from ludwig_nb.gpu import HostSource, Sampler, SimulatedGpu, kernel_sampler
    from ludwig_nb.runs.alarm_watch import AlarmWatch

    interval = float(section.get("interval", 1.0))
    if section.get("simulate"):
        source = SimulatedGpu(load=lambda: 1.0 if run.status in _LOADED_STATUSES else 0.0)
        sampler = Sampler(source, HostSource(), interval=interval)
        sampler.start()
        run.device_index = 0
        owned = True
    else:
        sampler = kernel_sampler()
        if enabled == "auto" and not sampler.gpu_available:
            run.sampler = sampler  # host CPU/RAM for the dashboard; nothing to alarm on
            return
        sampler.start()
        owned = False
    run.sampler = sampler
    rules = [AlarmRule.from_config(rule) for rule in section.get("alarms") or ()]
    if not rules:
        return
    watch = AlarmWatch(sampler, AlarmPolicy(rules), targets=lambda: [run] if run.is_active else [])

    def _detach(_: Run) -> None:
        watch.close()
        if owned:
            sampler.stop()

    run.add_finish_callback(_detach)
