"""What this machine's GPUs offer ludwig_nb, and whether the readings hold together.

For each GPU: which source answers the thermal margin, the thresholds, the T.Limit fields,
each throttle counter and GPM, with their values over a few seconds; the raw field values at
the ids the throttle counters have had across driver branches (251-253 and 269-271, plus the
older PERF_POLICY ids 74-76), so a person can see which numbering this driver uses; and the
checks (exit status 1 when one fails):

* the margin's zero (temperature + margin) lies within 2 °C of the nearest slowdown point
  the thresholds give;
* no counter grows faster than the wall clock (the units are nanoseconds), none goes back;
* GPM SM activity is reported as a percentage.

    python scripts/checks/gpu_support.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

COUNTERS = (
    "throttled_power_s",
    "throttled_thermal_s",
    "throttled_hw_thermal_s",
    "throttled_power_brake_s",
    "throttled_sync_boost_s",
)
FIELD_IDS = (74, 75, 76, 193, 194, 195, 196, 251, 252, 253, 269, 270, 271)


def raw_fields(index: int) -> dict[int, Any]:
    """Each probed field id's (return code, value type, value) on GPU ``index``."""
    import pynvml

    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    try:
        entries = pynvml.nvmlDeviceGetFieldValues(handle, list(FIELD_IDS))
    except pynvml.NVMLError as exc:
        return {"error": str(exc)}
    out: dict[int, Any] = {}
    for field, entry in zip(FIELD_IDS, entries, strict=True):
        value = entry.value
        out[field] = {
            "return": int(entry.nvmlReturn),
            "type": int(entry.valueType),
            "ull": int(value.ullVal),
            "si": int(value.siVal),
        }
    return out


def checks(first: Any, last: Any, elapsed: float) -> list[str]:
    """What does not hold together between two samples of one GPU."""
    problems = []
    if last.temperature_margin is not None and last.temperature is not None:
        points = [p for p in (last.temperature_max, last.temperature_slowdown) if p is not None]
        reference = last.temperature + last.temperature_margin
        if points and abs(reference - min(points)) > 2.0:
            problems.append(f"margin zero {reference:g} °C vs nearest slowdown {min(points):g} °C")
    for key in COUNTERS:
        a, b = getattr(first, key), getattr(last, key)
        if a is not None and b is not None and not 0 <= b - a <= elapsed * 1.1 + 0.05:
            problems.append(f"{key} grew {b - a:.3f} s in {elapsed:.1f} s")
    if last.sm_activity is not None and not 0 <= last.sm_activity <= 100:
        problems.append(f"sm_activity {last.sm_activity} is not a percentage")
    return problems


def main() -> None:
    from ludwig_nb.gpu import NvmlSource

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    source = NvmlSource()
    if not source.available:
        print(f"no GPU: {source.reason}")
        return
    first = source.sample()
    started = time.monotonic()
    time.sleep(args.seconds)
    last = source.sample()
    elapsed = time.monotonic() - started
    failed = False
    for before, after, support in zip(first, last, source.support(), strict=True):
        print(f"=== {after.label}: {after.name}")
        print(json.dumps(support, indent=1))
        readings = {
            k: getattr(after, k)
            for k in (
                "temperature",
                "temperature_margin",
                "temperature_slowdown",
                "temperature_shutdown",
                "temperature_max",
                "temperature_memory_max",
                *COUNTERS,
                "sm_activity",
                "tensor_activity",
                "memory_bandwidth",
            )
        }
        print(json.dumps(readings, indent=1))
        if after.mig_index is None:
            print("raw field values:", json.dumps(raw_fields(after.index)))
        for problem in checks(before, after, elapsed):
            failed = True
            print(f"CHECK FAILED: {problem}")
    source.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
