"""Render the compare view and the batch-size sweep as PNGs with headless Chromium.

    python scripts/profile_screenshots.py [OUT_DIR]   # default artifacts/screenshots

Two real runs of the churn demo (a learning-rate and batch-size change, the simulated GPU
for the resource rows) and a sweep over four batch sizes; each HTML panel is written to a
file and shot with /usr/bin/chromium (or $CHROMIUM).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import yaml
from html_shot import shoot

import ludwig_nb
from ludwig_nb.data import demo_config, demo_dataset


def _shoot(html_text: str, out: Path, height: int) -> None:
    shoot(html_text, out, width=1100, height=height)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "artifacts/screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load(demo_config("churn").read_text(encoding="utf-8"))
    config["trainer"].update(epochs=8, early_stop=-1)
    config["gpu_watch"] = {"simulate": True, "interval": 0.25}
    data = demo_dataset("churn")
    with tempfile.TemporaryDirectory() as tmp:
        common = {"results_dir": tmp, "registry_dir": Path(tmp) / "reg", "wait": True}
        base = ludwig_nb.train(yaml.safe_dump(config), data, name="baseline", **common)
        config["trainer"].update(learning_rate=0.003, batch_size=256)
        wider = ludwig_nb.train(yaml.safe_dump(config), data, name="lr3e-3-bs256", **common)
        comparison = ludwig_nb.compare(base, wider)
        _shoot(comparison._repr_html_(), out / "compare_view.png", 1900)
    config["trainer"].update(learning_rate=0.001, batch_size=64)
    config.pop("gpu_watch")
    sweep = ludwig_nb.estimate(
        yaml.safe_dump(config), data, vary={"trainer.batch_size": [16, 64, 256, 1024]}
    )
    _shoot(sweep._repr_html_(), out / "batch_size_sweep.png", 420)


if __name__ == "__main__":
    main()
