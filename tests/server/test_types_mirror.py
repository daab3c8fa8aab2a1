"""labextension/src/types.ts mirrors the Python shapes; a field on one side only fails here."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from ludwig_nb.core.events import EVENT_TYPES
from ludwig_nb.core.gpu_sample import GpuSample, HostSample
from ludwig_nb.server.runs_view import run_summary

TYPES_TS = Path(__file__).resolve().parents[2] / "labextension" / "src" / "types.ts"
_INTERFACE = re.compile(r"export interface (\w+)(?: extends (\w+))? \{(.*?)\n\}", re.S)
_FIELD = re.compile(r"^\s*(\w+)\??:", re.M)


def _interfaces() -> dict[str, tuple[str | None, set[str], str]]:
    source = TYPES_TS.read_text(encoding="utf-8")
    source += "\n" + re.sub(r"^interface ", "export interface ", source, flags=re.M)
    found = {}
    for name, base, body in _INTERFACE.findall(source):
        found[name] = (base or None, set(_FIELD.findall(body)), body)
    return found


def _fields(name: str) -> set[str]:
    interfaces = _interfaces()
    base, fields, _ = interfaces[name]
    return fields | (_fields(base) if base else set())


@pytest.mark.parametrize("tag", sorted(EVENT_TYPES))
def test_every_event_is_mirrored_field_for_field(tag):
    cls = EVENT_TYPES[tag]
    matches = [n for n, (_, _, body) in _interfaces().items() if f"type: '{tag}'" in body]
    assert len(matches) == 1, f"no TypeScript interface for event {tag!r}"
    # "nonfinite" is added by to_json only when a number was inf/nan (core/strict_json.py)
    python_fields = {f.name for f in dataclasses.fields(cls)} | {"type", "v", "nonfinite"}
    assert _fields(matches[0]) == python_fields


@pytest.mark.parametrize("cls", [GpuSample, HostSample])
def test_gpu_samples_are_mirrored(cls):
    assert _fields(cls.__name__) == {f.name for f in dataclasses.fields(cls)}


def test_run_summary_is_mirrored(tmp_path):
    entry = {"run_id": "r", "directory": str(tmp_path), "pid": 1}
    summary = run_summary(entry, pid_alive=lambda pid: True)
    ts_fields = _fields("RunSummary")
    missing_in_ts = set(summary) - ts_fields
    # fields the server sends that the sidebar does not use yet are allowed, but listed here
    assert missing_in_ts <= {"engine", "device", "steps_per_epoch", "batch_size", "paused_seconds"}
    assert ts_fields <= set(summary)
