"""config.yaml keeps the batch sizes ``auto`` picked, with why, so that a rerun trains the same."""

from __future__ import annotations

import yaml

from ludwig_nb.core import events as ev
from ludwig_nb.runs.pinned_config import pin_batch_sizes, pinned_config
from ludwig_nb.store import rundir

NOTE = "batch_size auto: 64 (the reason, at some length); pin it with trainer.batch_size: 64"


def _schedule(batch_size=64, eval_batch_size=512, note=NOTE):
    return ev.ScheduleInfo(
        total_steps=10,
        steps_per_epoch=10,
        epochs=1,
        batch_size=batch_size,
        eval_batch_size=eval_batch_size,
        batch_note=note,
    )


def test_auto_sizes_are_replaced_by_the_picks_and_nothing_else_moves():
    config = {"trainer": {"batch_size": "auto", "eval_batch_size": "auto", "epochs": 3}}
    pinned = pinned_config(config, _schedule())
    assert pinned == {"trainer": {"batch_size": 64, "eval_batch_size": 512, "epochs": 3}}
    assert config["trainer"]["batch_size"] == "auto"  # the run's own config is left as it was
    assert pinned_config({"trainer": {"batch_size": 32}}, _schedule()) is None


def test_config_yaml_is_rewritten_with_the_reason_as_a_comment(tmp_path):
    config = {"trainer": {"batch_size": "auto", "eval_batch_size": 256}}
    (tmp_path / rundir.CONFIG_FILE).write_text(yaml.safe_dump(config))
    assert pin_batch_sizes(tmp_path, config, _schedule())
    text = (tmp_path / rundir.CONFIG_FILE).read_text()
    assert text.startswith("# batch_size auto: 64")
    assert yaml.safe_load(text) == {"trainer": {"batch_size": 64, "eval_batch_size": 256}}
    assert not pin_batch_sizes(tmp_path / "gone" / "deeper", {"trainer": {}}, _schedule())


def test_a_run_with_auto_sizes_pins_them_and_says_why(tmp_path):
    import json

    from ludwig_nb.runs import train
    from tests.runs.conftest import ab_config, ab_frame

    config = ab_config("{epochs: 1, batch_size: auto, eval_batch_size: auto}")
    run = train(
        config,
        ab_frame(300),
        results_dir=tmp_path / "results",
        registry_dir=tmp_path / "registry",
        wait=True,
    )
    assert run.status == "completed"
    (started,) = [e for e in run.events if isinstance(e, ev.RunStarted)]
    size = started.schedule.batch_size
    pinned = yaml.safe_load((run.directory / rundir.CONFIG_FILE).read_text())
    assert pinned["trainer"]["batch_size"] == size
    assert pinned["trainer"]["eval_batch_size"] == started.schedule.eval_batch_size
    status = json.loads((run.directory / rundir.STATUS_FILE).read_text())
    assert status["batch_note"].startswith(f"batch_size auto: {size} (")
    assert "warnings" in status
