"""engine: ray's half of the contract that needs no Ray: the ``backend:`` check (located
errors), engine selection, the plan of one rank."""

from __future__ import annotations

import pytest

from ludwig_nb.config import load_config
from ludwig_nb.config.errors import ConfigError, UnsupportedByEngine
from ludwig_nb.engines import registry
from ludwig_nb.engines.base import EngineUnavailable
from ludwig_nb.engines.ray import RayBackend
from ludwig_nb.engines.ray.engine import RayEngine

BASE = """\
input_features:
  - {name: x, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 2, batch_size: 16}
"""


def config(backend: str):
    return load_config(BASE + backend)


@pytest.fixture
def ray_installed(monkeypatch):
    monkeypatch.setattr("ludwig_nb.engines.ray.engine.ray_missing", lambda: None)


def test_a_full_backend_section_reads_into_the_backend(ray_installed):
    cfg = config(
        "backend:\n  type: ray\n  address: auto\n  storage_path: /shared/ckpt\n"
        "  trainer: {strategy: ddp, num_workers: 3, use_gpu: true, "
        "resources_per_worker: {CPU: 2, GPU: 1}, placement_strategy: SPREAD, max_failures: 1}\n"
    )
    RayEngine().check(cfg)
    backend = RayBackend.from_config(cfg.to_dict())
    assert backend == RayBackend(
        num_workers=3,
        use_gpu=True,
        resources_per_worker={"CPU": 2.0, "GPU": 1.0},
        placement_strategy="SPREAD",
        max_failures=1,
        address="auto",
        storage_path="/shared/ckpt",
    )
    assert backend.world_size == 3


def test_zero_workers_is_refused_with_a_pointer_to_the_builtin_engine(ray_installed):
    with pytest.raises(UnsupportedByEngine) as caught:
        RayEngine().check(config("backend: {type: ray, trainer: {num_workers: 0}}\n"))
    assert caught.value.path == "backend.trainer.num_workers" and caught.value.line == 6
    assert "num_workers must be an integer >= 1 (the Ray Train workers), not 0" in str(caught.value)
    assert "leave the backend out" in caught.value.hint


@pytest.fixture
def two_cpus_no_gpu(ray_installed, monkeypatch):
    """What a local Ray started here would have: 2 CPUs, no GPU (the machine's, faked)."""
    monkeypatch.setattr(
        "ludwig_nb.engines.ray.resources.local_resources", lambda: {"CPU": 2.0, "GPU": 0.0}
    )


@pytest.mark.parametrize(
    ("trainer", "path", "words"),
    [
        (
            "{num_workers: 2, use_gpu: true}",
            "backend.trainer.use_gpu",
            "2 workers x 1 GPU need 2 GPU, and this machine has 0: Ray would wait for them forever",
        ),
        ("{num_workers: 4}", "backend.trainer.num_workers", "need 4 CPU, and this machine has 2"),
        (
            "{num_workers: 1, resources_per_worker: {TPU: 1}}",
            "backend.trainer.resources_per_worker.TPU",
            "1 worker x 1 TPU need 1 TPU, and this machine has 0",
        ),
    ],
)
def test_workers_a_local_ray_could_never_place_are_refused_at_their_line(
    two_cpus_no_gpu, trainer, path, words
):
    with pytest.raises(ConfigError) as caught:
        RayEngine().check(config(f"backend:\n  type: ray\n  trainer: {trainer}\n"))
    assert (caught.value.path, caught.value.line) == (path, 8)
    assert words in str(caught.value)
    assert not isinstance(caught.value, UnsupportedByEngine)  # not "another engine runs it"


def test_a_run_that_joins_a_cluster_is_not_judged_by_this_machine(two_cpus_no_gpu):
    RayEngine().check(
        config("backend: {type: ray, address: auto, trainer: {num_workers: 8, use_gpu: true}}\n")
    )


@pytest.mark.parametrize(
    ("trainer", "path", "words"),
    [
        ("{strategy: horovod}", "backend.trainer.strategy", "strategy 'horovod'"),
        ("{num_workers: -1}", "backend.trainer.num_workers", "integer >= 1"),
        ("{num_workers: two}", "backend.trainer.num_workers", "integer >= 1"),
        ("{use_gpu: 1}", "backend.trainer.use_gpu", "true or false"),
        ("{placement_strategy: RANDOM}", "backend.trainer.placement_strategy", "PACK"),
        ("{resources_per_worker: {CPU: -2}}", "backend.trainer.resources_per_worker.CPU", ">= 0"),
        ("{num_wokers: 2}", "backend.trainer.num_wokers", "unknown key"),
    ],
)
def test_a_bad_backend_value_is_refused_at_its_line(ray_installed, trainer, path, words):
    with pytest.raises(UnsupportedByEngine) as caught:
        RayEngine().check(config(f"backend:\n  type: ray\n  trainer: {trainer}\n"))
    problem = caught.value
    assert problem.path == path
    assert problem.line == 8  # the YAML line of backend.trainer
    assert words in str(problem)


def test_a_typo_gets_a_suggestion(ray_installed):
    with pytest.raises(UnsupportedByEngine, match="did you mean 'num_workers'"):
        RayEngine().check(config("backend:\n  type: ray\n  trainer: {num_wokers: 2}\n"))


def test_a_config_without_a_ray_backend_is_not_ray_s(ray_installed):
    with pytest.raises(UnsupportedByEngine, match="no backend section") as caught:
        RayEngine().check(config(""))
    assert caught.value.path == "backend"


def test_model_parts_the_builtin_loop_lacks_are_refused_too(ray_installed):
    cfg = load_config(
        BASE.replace("binary}", "binary}\ncombiner: {type: tabnet}") + "backend: {type: ray}\n"
    )
    with pytest.raises(ConfigError, match="tabnet combiner is not run"):
        RayEngine().check(cfg)


def test_without_ray_the_check_names_the_extra(monkeypatch):
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(EngineUnavailable, match=r"ludwig_nb\[ray\]"):
        RayEngine().check(config("backend: {type: ray}\n"))


def test_auto_picks_ray_for_a_ray_backend(ray_installed):
    engine = registry.select_engine("auto", config("backend: {type: ray}\n"))
    assert engine.name == "ray"
    assert registry.select_engine("auto", config("")).name == "builtin"


def test_the_builtin_engine_points_a_ray_backend_at_engine_ray():
    with pytest.raises(UnsupportedByEngine, match="engine: ray") as caught:
        registry.select_engine("builtin", config("backend: {type: ray}\n"))
    assert caught.value.line == 6


def test_the_plan_is_one_rank_s_shard_at_the_per_worker_batch_size():
    cfg = config("backend: {type: ray, trainer: {num_workers: 2}}\n").to_dict()
    info = RayEngine().plan(cfg, rows=100)  # 50 rows per rank, batch 16 -> 4 steps an epoch
    assert (info.steps_per_epoch, info.total_steps, info.batch_size) == (4, 8, 16)
    auto = config("backend: {type: ray, trainer: {num_workers: 2}}\n").to_dict()
    auto["trainer"]["batch_size"] = "auto"
    assert RayEngine().plan(auto, rows=1000).batch_size == 128
