"""``hyperopt()``: validate a config with a ``hyperopt:`` section and search it.

Everything is checked on the caller's thread before the search starts: the config (located
errors), the trials' engine, the executor (what to install), the dataset. The search lives in
``<results_dir>/<name>``; calling again with the same name resumes it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ludwig_nb.search.executor import Executor
from ludwig_nb.search.handle import Search

__all__ = ["SEARCH_CONFIG_FILE", "hyperopt", "make_executor"]

SEARCH_CONFIG_FILE = "search.yaml"


def hyperopt(
    config: object,
    dataset: object,
    name: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    wait: bool = False,
    *,
    device: str | None = None,
    random_seed: int | None = None,
    threads: int | None = None,
    registry_dir: Path | None = None,
    engine: str = "auto",
) -> Search:
    """Validate a config with a ``hyperopt:`` section and search it in a daemon thread.

    ``config``: YAML text or a dict (Ludwig 0.11's shape). ``dataset``: as for ``train``.
    The search lives in ``<results_dir>/<name>`` (``name`` defaults to "search"); calling
    again with the same name resumes it. ``wait=True`` returns when it ends. ``engine``: what
    the trials train on, as for ``train`` ("auto": the config's engine; the ``ray`` executor's
    trials train the built-in loop in Ray Tune's actors). Raises ``ConfigError`` (located) for
    a bad config or a missing ``hyperopt`` section, ``EngineUnavailable`` for an engine or
    executor that cannot run here, ``DataError`` for a bad dataset, ``ValueError`` when the
    directory holds a different search.
    """
    from ludwig_nb.config import ConfigError
    from ludwig_nb.config.hyperopt import trial_base
    from ludwig_nb.config.yaml_positions import parse_yaml
    from ludwig_nb.data import check_dataset

    raw = _raw(config, parse_yaml)
    cfg, rendered = _loaded(config)
    if rendered.get("hyperopt") is None:
        raise ConfigError(
            "the config has no hyperopt section to search",
            path="hyperopt",
            hint="add hyperopt: {parameters: {trainer.learning_rate: {space: loguniform, "
            "lower: 0.0001, upper: 0.1}}}, or train it with ludwig_nb.train()",
        )
    section = rendered["hyperopt"]
    executor = make_executor(section)
    planner = executor.check(trial_base(cfg), engine)
    check_dataset(rendered, dataset)
    name = name or "search"
    directory = _directory(Path(results_dir).resolve() / name, raw)
    search = Search(
        name=name,
        directory=directory,
        raw_config=raw,
        section=section,
        dataset=dataset,
        rendered=rendered,
        train_options={"device": device, "random_seed": random_seed, "threads": threads},
        registry_dir=registry_dir,
        engine=engine,
        executor=executor,
        planner=planner,
    )
    search.start()
    if wait:
        search.wait()
    return search


def make_executor(section: dict[str, Any], gpu_count: int | None = None) -> Executor:
    """The executor ``section["executor"]["type"]`` asks for (local: Optuna; ray: Ray Tune).

    Args:
        section: the rendered ``hyperopt`` section.
        gpu_count: GPUs the local executor packs trials onto (None: NVML's visible GPUs).

    Raises:
        ConfigError: ``gpu_resources_per_trial`` on the local executor where no GPU shows.
    """
    executor = section["executor"]
    if executor.get("type") == "ray":
        from ludwig_nb.search.tune import TuneExecutor

        return TuneExecutor(section)
    from ludwig_nb.search.gpus import packer_for
    from ludwig_nb.search.local import LocalExecutor

    share = float(executor.get("gpu_resources_per_trial") or 0)
    return LocalExecutor(packer_for(share, gpu_count) if share > 0 else None)


def _directory(directory: Path, raw: dict[str, object]) -> Path:
    """Create the search directory and write its ``search.yaml``.

    Raises ``ValueError`` when it holds a different search.
    """
    directory.mkdir(parents=True, exist_ok=True)
    saved = directory / SEARCH_CONFIG_FILE
    text = yaml.safe_dump(raw, sort_keys=True)
    if saved.exists() and saved.read_text(encoding="utf-8") != text:
        raise ValueError(
            f"{str(directory)!r} holds a different search (its {SEARCH_CONFIG_FILE} differs); "
            "pass another name, or delete that folder to start over"
        )
    saved.write_text(text, encoding="utf-8")
    return directory


def _raw(config: object, parse: Callable[[str], Any]) -> dict[str, object]:
    from ludwig_nb.config import Config, ConfigError

    if isinstance(config, Config):
        data = config.to_dict()
    elif isinstance(config, str):
        data = parse(config).data
    elif isinstance(config, dict):
        data = config
    else:
        raise ConfigError(f"a config is YAML text, a dict or a Config, not {type(config).__name__}")
    if not isinstance(data, dict):
        raise ConfigError("a config is a mapping (input_features, output_features, ...)")
    copied: dict[str, object] = json.loads(json.dumps(data, default=str))
    return copied


def _loaded(config: Any) -> tuple[Any, dict[str, Any]]:
    """The search's config (a ``Config``) and its rendering, its ``hyperopt`` section checked.

    Raises ``ConfigError`` with every problem located.
    """
    from ludwig_nb.config import load_config
    from ludwig_nb.config.hyperopt import load_search_config

    cfg = load_config(config)
    return cfg, load_search_config(cfg)
