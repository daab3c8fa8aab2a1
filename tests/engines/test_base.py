"""The engine protocol's defaults: an engine declares only what it has, the rest is asked safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from ludwig_nb.engines import registry
from ludwig_nb.engines.base import Engine
from ludwig_nb.engines.devices import NO_DEVICE_FACTS, TorchDeviceFacts
from tests.runs.conftest import BareEngine


def test_an_engine_that_declares_nothing_more_gets_the_safe_defaults(tmp_path: Path):
    engine = BareEngine()
    assert engine.gpus_on_workers is False  # the run layer's sampler reads its GPUs here
    assert engine.check_resume(tmp_path, {}) is None  # it checks a checkpoint in fit()
    assert engine.start_warm_up() is None  # nothing to start ahead
    assert engine.use_in_kernel() is None
    assert engine.check_modules == () and engine.data_modules == ()
    assert engine.devices() is NO_DEVICE_FACTS
    assert engine.search_backend() is None  # its searches run on the local executor


@pytest.mark.parametrize(
    ("name", "on_workers", "search_backend"),
    [("builtin", False, False), ("ludwig", False, False), ("ray", True, True)],
)
def test_each_engine_declares_what_it_has(name, on_workers, search_backend):
    engine = registry.get_engine(name)
    assert Engine in type(engine).__mro__  # it inherits the defaults
    assert engine.gpus_on_workers is on_workers
    assert (engine.search_backend() is not None) is search_backend
    assert isinstance(engine.devices(), TorchDeviceFacts)  # each trains with torch


def test_the_builtin_engine_warms_up_ahead_and_names_the_modules_a_kernel_imports_first():
    import importlib.util

    engine = registry.default_engine()
    assert engine.name == "builtin" == registry.DEFAULT
    for module in (*engine.check_modules, *engine.data_modules):
        assert importlib.util.find_spec(module) is not None, module
    # the other engines start nothing ahead (their first run imports what it needs)
    assert registry.get_engine("ludwig").start_warm_up() is None
    assert registry.get_engine("ray").start_warm_up() is None
