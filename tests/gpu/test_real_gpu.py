"""Checks on a real NVIDIA GPU (``-m gpu``, by scripts/checks/gpu_check.sh); skipped elsewhere."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from ludwig_nb.core.alarms import AlarmPolicy, AlarmRule, parse_threshold
from ludwig_nb.gpu import HostSource, NvmlSource, Sampler


def _real_gpu() -> bool:
    source = NvmlSource()
    try:
        return source.available
    finally:
        source.close()


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _real_gpu(), reason="needs an NVIDIA GPU and driver"),
]


@pytest.fixture
def source() -> Any:
    src = NvmlSource()
    yield src
    src.close()


def test_real_readings_are_sane_and_thresholds_present(source: NvmlSource) -> None:
    gpus = [g for g in source.sample() if g.mig_index is None]
    assert gpus, source.reason
    for gpu in gpus:
        assert gpu.name and gpu.uuid and not gpu.lost
        assert gpu.memory_total and gpu.memory_total > (1 << 30)
        assert gpu.memory_used is not None and 0 <= gpu.memory_used <= gpu.memory_total
        assert gpu.utilization_gpu is not None and 0 <= gpu.utilization_gpu <= 100
        assert gpu.temperature is not None and 10 <= gpu.temperature <= 110
        assert gpu.temperature_slowdown is not None and gpu.temperature_shutdown is not None
        assert gpu.temperature < gpu.temperature_slowdown < gpu.temperature_shutdown <= 130
        assert gpu.power_draw is not None and gpu.power_limit is not None
        assert 0 < gpu.power_draw <= 1.2 * gpu.power_limit
        assert gpu.clock_sm is not None and gpu.clock_sm > 0
        assert gpu.pstate is not None and 0 <= gpu.pstate <= 15


def test_relative_alarm_uses_the_real_slowdown_threshold(source: NvmlSource) -> None:
    gpus = [g for g in source.sample() if g.mig_index is None]
    rule = AlarmRule("temperature", parse_threshold("slowdown-200"), consecutive=1)  # always hot
    changes = AlarmPolicy([rule]).update(gpus, 0.0)
    assert [c.device for c in changes] == [g.index for g in gpus]
    assert all(
        c.threshold == g.temperature_slowdown - 200 for c, g in zip(changes, gpus, strict=True)
    )


def test_mixed_precision_training_is_seen_by_the_sampler(source: NvmlSource) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    index = torch.cuda.current_device()
    sampler = Sampler(source, HostSource(), interval=0.25)
    seen: list[Any] = []
    got_sample = threading.Event()

    def note(snapshot: Any) -> None:
        gpu = snapshot.gpu(index)
        if gpu is not None:
            seen.append(gpu)
            got_sample.set()

    sampler.subscribe(note)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1)
    ).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(4096, 1024, device="cuda")
    y = x[:, :1] * 0.5
    sampler.start()
    losses = []
    try:
        for step in range(3000):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if step % 100 == 0:
                losses.append(loss.item())
            if step >= 500 and len(seen) >= 4:
                break
        torch.cuda.synchronize()
        assert got_sample.wait(5.0)
    finally:
        sampler.stop()
    assert losses[-1] < losses[0]
    assert max(g.utilization_gpu or 0 for g in seen) > 0
    with_memory = [g.process_memory for g in seen if g.process_memory]
    if not with_memory:
        pytest.xfail(
            "the driver does not attribute memory to this pid (container without --pid=host)"
        )
    assert max(with_memory) > 64 << 20


def test_the_margin_agrees_with_the_thresholds_it_can_be_checked_against(
    source: NvmlSource,
) -> None:
    gpus = [g for g in source.sample() if g.mig_index is None]
    for gpu in gpus:
        if gpu.temperature_margin is None:
            pytest.skip(f"{gpu.label} ({gpu.name}) reports no margin and no thresholds")
        assert -30 <= gpu.temperature_margin <= 120
        assert gpu.temperature is not None
        reference = gpu.temperature + gpu.temperature_margin
        # the margin's zero is the nearest slowdown point: within 2 °C of what the
        # thresholds say (the margin may read another sensor than the GPU temperature)
        points = [p for p in (gpu.temperature_max, gpu.temperature_slowdown) if p is not None]
        if points:
            assert abs(reference - min(points)) <= 2.0, (gpu.name, reference, points)


def test_throttle_counters_count_seconds_not_faster_than_the_clock(source: NvmlSource) -> None:
    import time

    first = {g.index: g for g in source.sample() if g.mig_index is None}
    started = time.monotonic()
    time.sleep(3.0)
    last = {g.index: g for g in source.sample() if g.mig_index is None}
    elapsed = time.monotonic() - started
    checked = 0
    for index, gpu in last.items():
        for key in (
            "throttled_power_s",
            "throttled_thermal_s",
            "throttled_hw_thermal_s",
            "throttled_power_brake_s",
            "throttled_sync_boost_s",
        ):
            a, b = getattr(first[index], key), getattr(gpu, key)
            if a is None or b is None:
                continue
            checked += 1
            assert 0 <= b - a <= elapsed * 1.1 + 0.05, (gpu.name, key, a, b, elapsed)
    if not checked:
        pytest.skip("no throttle counter on this driver")
