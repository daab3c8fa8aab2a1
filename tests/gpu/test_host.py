"""Host CPU/RAM through psutil."""

from __future__ import annotations

import pytest

from ludwig_nb.gpu import HostSource


def test_reads_cpu_and_memory() -> None:
    sample = HostSource(clock=lambda: 5.0).sample()
    assert sample.time == 5.0
    assert sample.cpu_percent is not None and 0.0 <= sample.cpu_percent <= 100.0
    assert sample.memory_total is not None and sample.memory_used is not None
    assert 0 < sample.memory_used <= sample.memory_total
    assert sample.memory_percent is not None and 0 < sample.memory_percent <= 100


def test_a_psutil_failure_gives_empty_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    import psutil

    def broken() -> None:
        raise OSError("no /proc")

    monkeypatch.setattr(psutil, "virtual_memory", broken)
    sample = HostSource(clock=lambda: 1.0).sample()
    assert (sample.time, sample.cpu_percent, sample.memory_used) == (1.0, None, None)
