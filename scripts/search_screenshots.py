"""Render the search panel, live and finished, as PNGs with headless Chromium.

    python scripts/search_screenshots.py [OUT_DIR] [--ray]   # default artifacts/screenshots

A real search on the cars demo (8 trials, 2 at once, ASHA pruning at each evaluation), shot
once when half of its trials have finished (``search_live*.png``) and once at its end
(``search_done*.png``). ``--ray`` runs the same search as Ray Tune trials on a local Ray
(run it with the Ray venv's python: ``scripts/setup_ray_env.sh``); its files end in
``_ray``. The panel's HTML is what the notebook's widget shows under its Stop/Pause
buttons (the buttons are widgets, not part of the HTML).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import yaml
from html_shot import shoot

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ludwig_nb.data import demo_config, demo_dataset
from ludwig_nb.runs import hyperopt
from ludwig_nb.ui.search_panel import search_html


def _shoot(html_text: str, out: Path, height: int = 760) -> None:
    shoot(html_text, out, width=1250, height=height)


def _config(on_ray: bool) -> str:
    config = yaml.safe_load(demo_config("cars").read_text(encoding="utf-8"))
    config["trainer"].update(epochs=8, early_stop=-1)
    config["hyperopt"] = {
        "goal": "minimize",
        "metric": "loss",
        "parameters": {
            "trainer.learning_rate": {"space": "loguniform", "lower": 0.0001, "upper": 0.1},
            "trainer.batch_size": {"space": "choice", "categories": [16, 32, 64]},
            "combiner.output_size": {"space": "choice", "categories": [16, 64, 128]},
        },
        "search_alg": {"type": "random", "random_state_seed": 3},
        "executor": {
            **({"type": "ray"} if on_ray else {}),  # local is the default (Ludwig's enum: ray)
            "num_samples": 8,
            "max_concurrent_trials": 2,
            "scheduler": {"type": "asha", "grace_period": 1, "reduction_factor": 2, "max_t": 8},
        },
    }
    return yaml.safe_dump(config)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    on_ray = "--ray" in sys.argv
    out = Path(args[0] if args else "artifacts/screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    suffix = "_ray" if on_ray else ""
    if on_ray:  # a Ray of this script's own (no dashboard: another Ray may hold its port)
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as tmp:
        search = hyperopt(_config(on_ray), str(demo_dataset("cars")), name="cars",
                          results_dir=tmp, registry_dir=Path(tmp) / "reg")  # fmt: skip
        live = None
        while not search.wait(0.5).is_done:
            counts = search.counts()
            done = sum(counts[s] for s in ("completed", "pruned", "failed", "stopped"))
            if live is None and done >= search.total // 2 and counts["running"]:
                live = search_html(search, time.time())
        if search.error is not None:
            raise SystemExit(f"the search failed: {search.error}")
        if live is not None:
            _shoot(live, out / f"search_live{suffix}.png")
        _shoot(search_html(search, time.time()), out / f"search_done{suffix}.png")
    if on_ray:
        ray.shutdown()


if __name__ == "__main__":
    main()
