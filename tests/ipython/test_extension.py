"""``%unload_ext`` in a real IPython shell: a run whose alarm says "stop at 90 °C" stays
watched after the extension is unloaded (issue 11, review item)."""

import numpy as np
import pandas as pd

from ludwig_nb.gpu import HostSource, Sampler, SimulatedGpu, ThermalProfile
from ludwig_nb.gpu import kernel as kernel_module
from tests.runs.conftest import until

CONFIG = """\
input_features:
  - {name: x, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 100000, batch_size: 8}
gpu_watch:
  enabled: true
  interval: 0.25
  alarms:
    - {metric: temperature, threshold: 90, action: stop, consecutive: 1}
"""


def _hot_card_sampler(hot):
    """The kernel's shared sampler over a simulated card that jumps to 97 °C once
    ``hot[0]`` is set (the driver is the seam this machine lacks)."""
    profile = ThermalProfile(ambient=40.0, hot=97.0, heat_tau=1e-3, cool_tau=1e-3)
    gpu = SimulatedGpu(load=lambda: 1.0 if hot[0] else 0.0, profile=profile)
    return Sampler(gpu, HostSource(), interval=0.25)


def test_unload_keeps_the_alarm_watching_a_running_run_then_stops_the_sampler(ip, tmp_path):
    from ludwig_nb.runs import train

    kernel_module.stop_kernel_sampler()
    hot = [False]
    kernel_module._Shared.sampler = sampler = _hot_card_sampler(hot)
    frame = pd.DataFrame({"x": np.linspace(0, 1, 64), "y": [0, 1] * 32})
    run = train(CONFIG, frame, results_dir=tmp_path / "r", registry_dir=tmp_path / "reg", threads=1)
    try:
        until(lambda: run.status == "training")
        # the run trains on the watched card (CUDA is the seam this machine lacks): a kernel's
        # alarm acts only on runs known to train on a GPU
        run._ledger.uses_gpu = True
        ip.run_line_magic("unload_ext", "ludwig_nb")
        assert sampler.running and run.is_active  # still watched: the run has an alarm
        hot[0] = True  # the card overheats after the unload
        until(lambda: run.is_done, timeout=60)
        assert run.status == "stopped" and "alarm" in run.state.reason
        until(lambda: not sampler.running)  # the last watched run ended: sampler stops
        assert kernel_module._Shared.sampler is None
    finally:
        run.stop()
        run.wait(30)
        ip.run_line_magic("load_ext", "ludwig_nb")


def test_unload_without_watched_runs_stops_the_sampler_at_once(ip):
    kernel_module.stop_kernel_sampler()
    kernel_module._Shared.sampler = sampler = _hot_card_sampler([False])
    sampler.start()
    try:
        ip.run_line_magic("unload_ext", "ludwig_nb")
        assert not sampler.running and kernel_module._Shared.sampler is None
    finally:
        ip.run_line_magic("load_ext", "ludwig_nb")


def test_a_kernel_that_loaded_the_extension_reads_its_runs_data_itself(ip, monkeypatch, tmp_path):
    """Its warm-up loads pandas for the charts anyway: a prefetch process only added start-up."""
    from ludwig_nb.engines.builtin import prefetch
    from ludwig_nb.ipython import extension, warmup

    monkeypatch.setattr(prefetch, "_in_this_process", prefetch.threading.Event())
    monkeypatch.setattr(prefetch, "engine_loaded", lambda: False)
    monkeypatch.setattr(prefetch.os, "cpu_count", lambda: 2)
    assert prefetch.wanted(str(tmp_path / "data.csv"), {})
    monkeypatch.setattr(warmup, "warm_imports", lambda **_: None)  # no second warm-up thread
    extension.load(ip)
    assert not prefetch.wanted(str(tmp_path / "data.csv"), {})
