"""Reading resource profiles: ours (``system_resource_usage.json``) and LudwigProfiler's.

``load_profile(path)`` reads ours; ``import_ludwig_profile(dir)`` reads what LudwigProfiler
wrote (``system_resource_usage/<tag>/run_*.json``) into the same shape, with its GPU
memory converted from gpustat's MiB to bytes; ``profile_frame`` is one row per sample.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludwig_nb.core import resource_profile as rp

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PROFILE_FILE",
    "PROFILE_VERSION",
    "import_ludwig_profile",
    "load_profile",
    "profile_frame",
]

PROFILE_FILE = "system_resource_usage.json"
PROFILE_VERSION = 1
_MIB = 1 << 20
_STATUS_PHASE = {"evaluating": "evaluation", "stopping": "training"}


def load_profile(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Our profile from a run directory or the file itself.

    A Ludwig output directory is imported (:func:`import_ludwig_profile`). Raises
    ``FileNotFoundError`` naming the path when there is neither, ``ValueError`` for a file that is
    not a JSON object.
    """
    where = Path(path)
    file = where / PROFILE_FILE if where.is_dir() else where
    if file.is_file():
        data = _read_object(file)
        if "samples" in data or "summary" in data:
            return data
        return _from_ludwig({"run": data})
    if where.is_dir() and _ludwig_profile_dirs(where):
        return import_ludwig_profile(where)
    raise FileNotFoundError(
        f"no resource profile at {str(where)!r}: expected {PROFILE_FILE} (ludwig_nb) or "
        "system_resource_usage/<tag>/run_*.json (LudwigProfiler)"
    )


def _read_object(file: Path) -> dict[str, object]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{file}: expected a JSON object, got {type(data).__name__}")
    return data


def _ludwig_profile_dirs(root: Path) -> list[Path]:
    base = root / "system_resource_usage"
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def import_ludwig_profile(directory: str | os.PathLike[str]) -> dict[str, object]:
    """LudwigProfiler's ``system_resource_usage/<tag>/run_*.json`` as our profile shape.

    Several ``run_*.json`` of one tag are averaged (as Ludwig's ``summarize`` does).
    ``cuda_<i>_*_memory_used`` is multiplied by 2**20: gpustat reports MiB and Ludwig
    stored that number where the key promises bytes. Raises ``FileNotFoundError``.
    """
    root = Path(directory)
    tags: dict[str, dict[str, object]] = {}
    for tag_dir in _ludwig_profile_dirs(root):
        files = sorted(tag_dir.glob("run_*.json"))
        if files:
            tags[tag_dir.name] = _average([_read_object(f) for f in files])
    if not tags:
        raise FileNotFoundError(f"no LudwigProfiler output under {str(root)!r}")
    return _from_ludwig(tags)


def _average(records: list[dict[str, Any]]) -> dict[str, object]:
    out = dict(records[0])
    for key, value in records[0].items():
        numbers = [float(r[key]) for r in records if isinstance(r.get(key), (int, float))]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and numbers:
            out[key] = sum(numbers) / len(numbers)
    return out


def _from_ludwig(tags: Mapping[str, Mapping[str, Any]]) -> dict[str, object]:
    phases = {}
    for tag, record in tags.items():
        fixed = dict(record)
        for key, value in record.items():
            if key.startswith("cuda_") and key.endswith("_memory_used") and value is not None:
                fixed[key] = float(value) * _MIB
        phases[tag] = fixed
    phase_s = {
        _STATUS_PHASE.get(t, t): float(r.get("total_execution_time") or 0.0) / 1e6
        for t, r in phases.items()
    }
    peak_gpu = [
        v for r in phases.values() for k, v in r.items() if k.endswith("_max_memory_used") and v
    ]
    summary = {
        "total_s": sum(phase_s.values()),
        "phase_s": phase_s,
        "peak_gpu_memory": max(peak_gpu) if peak_gpu else None,
        "host": {"peak_rss": _max_of(phases, "max_cpu_memory_usage")},
        "gpus": {},
    }
    return {
        "version": PROFILE_VERSION,
        "source": "ludwig_profiler",
        "units": rp.UNITS,
        "summary": summary,
        "phases": phases,
        "samples": [],
    }


def _max_of(phases: Mapping[str, Mapping[str, Any]], key: str) -> object:
    values = [r[key] for r in phases.values() if isinstance(r.get(key), (int, float))]
    return max(values) if values else None


def profile_frame(profile: Mapping[str, Any]) -> pd.DataFrame:
    """One row per sample.

    ``time``, ``elapsed_s``, ``phase``, ``step``, ``host_<field>`` and ``gpu<i>_<field>`` columns
    (bytes, s, J, W, °C, %).
    """
    import pandas as pd

    rows = []
    for sample in profile.get("samples") or ():
        row: dict[str, object] = {k: sample.get(k) for k in ("time", "phase", "step")}
        for key, value in (sample.get("host") or {}).items():
            if key != "time":
                row[f"host_{key}"] = value
        for gpu in sample.get("gpus") or ():
            prefix = f"gpu{gpu.get('index')}"
            if gpu.get("mig_index") is not None:
                prefix += f"_mig{gpu['mig_index']}"
            for key, value in gpu.items():
                if key in ("index", "mig_index", "time", "name", "uuid"):
                    continue
                row[f"{prefix}_{key}"] = ",".join(value) if isinstance(value, list) else value
        rows.append(row)
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame.insert(1, "elapsed_s", frame["time"] - frame["time"].iloc[0])
    return frame
