"""A run directory's ``config.yaml`` with the batch sizes ``auto`` picked, and why.

``config.yaml`` is the config that ran. When it said ``batch_size: auto`` (or
``eval_batch_size: auto``), the engine's pick is what ran: once the run has its plan, the file
is rewritten with the numbers in place of ``auto`` and a comment above saying why they were
picked. Training again from that file trains with the same batch sizes (they are pinned).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ludwig_nb.core import events as ev
from ludwig_nb.store import rundir

__all__ = ["pin_batch_sizes", "pinned_config"]

log = logging.getLogger(__name__)

_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def pinned_config(config: Mapping[str, Any], schedule: ev.ScheduleInfo) -> dict[str, Any] | None:
    """``config`` with ``auto`` batch sizes replaced by the plan's; None when none was auto."""
    trainer = dict(config.get("trainer") or {})
    changed = False
    for key, size in (
        ("batch_size", schedule.batch_size),
        ("eval_batch_size", schedule.eval_batch_size),
    ):
        if trainer.get(key) == "auto" and size > 0:
            trainer[key] = int(size)
            changed = True
    if not changed:
        return None
    pinned = copy.deepcopy(dict(config))
    pinned["trainer"] = trainer
    return pinned


def pin_batch_sizes(directory: Path, config: Mapping[str, Any], schedule: ev.ScheduleInfo) -> bool:
    """Rewrite ``directory/config.yaml`` with the picked batch sizes; True when it did.

    Never raises for the file: a run is not failed for its copy of the config (the failure is
    logged).
    """
    pinned = pinned_config(config, schedule)
    if pinned is None:
        return False
    note = schedule.batch_note or "the batch sizes below are those auto picked for this run"
    header = "".join(f"# {line}\n" for line in _wrapped(note))
    text = header + yaml.dump(pinned, Dumper=_DUMPER, sort_keys=False)
    try:
        data = text.encode("utf-8")
        rundir.write_atomic(Path(directory) / rundir.CONFIG_FILE, lambda out: out.write(data))
    except OSError:
        log.exception("ludwig_nb: could not pin the batch sizes in %s", directory)
        return False
    return True


def _wrapped(text: str, width: int = 98) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines
