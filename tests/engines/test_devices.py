"""Device facts through the engine: from the torch already imported, never importing it."""

from __future__ import annotations

import sys
import types

import pytest

from ludwig_nb.engines.devices import NO_DEVICE_FACTS, TorchDeviceFacts


class FakeCuda:
    """torch.cuda on a machine with two GPUs, the allocator's counters held by the test."""

    def __init__(self, available=True, initialized=True):
        self.available, self.initialized = available, initialized
        self.calls: list[str] = []

    def is_available(self):
        return self.available

    def is_initialized(self):
        return self.initialized

    def memory_allocated(self, index):
        return 100 + index

    def memory_reserved(self, index):
        return 200 + index

    def max_memory_allocated(self, index=None):
        return 300 if index is None else 300 + index

    def device_count(self):
        return 2

    def get_device_name(self, index):
        return f"GPU {index}"

    def get_device_capability(self, index):
        return (8, index)

    def empty_cache(self):
        self.calls.append("empty_cache")

    def reset_peak_memory_stats(self):
        self.calls.append("reset_peak_memory_stats")

    def current_device(self):
        return 1

    def get_device_properties(self, index):
        return types.SimpleNamespace(total_memory=1000 * (index + 1))


@pytest.fixture
def fake_torch(monkeypatch):
    def install(**cuda):
        torch = types.SimpleNamespace(__version__="9.9.9", cuda=FakeCuda(**cuda))
        monkeypatch.setitem(sys.modules, "torch", torch)
        return torch

    return install


def test_without_torch_imported_there_are_no_facts_and_torch_is_not_imported(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    facts = TorchDeviceFacts()
    assert facts.allocator_memory(0) == {}
    assert facts.versions() == {}
    assert facts.accelerators() == []
    assert facts.peak_memory(None) is None
    assert "torch" not in sys.modules


def test_the_allocators_bytes_of_a_device_once_cuda_is_in_use(fake_torch):
    fake_torch()
    assert TorchDeviceFacts().allocator_memory(1) == {
        "torch_allocated": 101,
        "torch_reserved": 201,
        "torch_peak_allocated": 301,
    }


def test_cuda_not_yet_initialised_or_absent_gives_no_bytes_and_no_meter(fake_torch):
    fake_torch(initialized=False)
    assert TorchDeviceFacts().allocator_memory(0) == {}
    fake_torch(available=False)
    facts = TorchDeviceFacts()
    assert facts.accelerators() == [] and facts.peak_memory("cuda") is None
    assert facts.versions() == {"torch_version": "9.9.9"}


def test_the_gpus_torch_sees_are_ludwigs_devices(fake_torch):
    fake_torch()
    assert TorchDeviceFacts().accelerators() == [
        {"gpu_type": "GPU 0", "device_capability": [8, 0]},
        {"gpu_type": "GPU 1", "device_capability": [8, 1]},
    ]


def test_a_peak_meter_for_cuda_devices_only(fake_torch):
    torch = fake_torch()
    facts = TorchDeviceFacts()
    assert facts.peak_memory("cpu") is None
    meter = facts.peak_memory("cuda:1")
    meter.reset()
    assert torch.cuda.calls == ["empty_cache", "reset_peak_memory_stats"]
    assert meter.read() == (300, 2000)  # the peak, and the current device's total
    assert facts.peak_memory(None) is not None  # the default device, on a CUDA machine


def test_no_facts_is_the_default():
    assert NO_DEVICE_FACTS.allocator_memory(0) == {} and NO_DEVICE_FACTS.versions() == {}
    assert NO_DEVICE_FACTS.accelerators() == [] and NO_DEVICE_FACTS.peak_memory("cuda") is None
