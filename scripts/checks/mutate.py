#!/usr/bin/env python
"""Mutation tests over the behaviour that matters: does a test fail when the code is wrong?

Each mutation changes one line of the package (the text must occur exactly once, so a
mutation that no longer fits the code fails loudly instead of passing silently). The
mutations are applied one at a time to a scratch copy of the working tree, never to the
tree itself, and the test modules that guard that behaviour run against the copy with a
timeout. A mutation is *killed* when those tests fail, *survived* when they pass (a gap in
the tests), *timeout* when they ran past the limit. The unmutated copy runs first: a
module that fails without any mutation would kill everything and prove nothing, so the
script stops there.

    python scripts/checks/mutate.py                 # all, a table and a killed/survived line
    python scripts/checks/mutate.py --only M03 M07  # some
    python scripts/checks/mutate.py --list          # what each one breaks
    python scripts/checks/mutate.py --json out.json # the results, machine-readable
    python scripts/checks/mutate.py --rev HEAD~5    # an older commit's tree (mutations that
                                                    # do not fit it are listed as n/a)

No dependency beyond pytest (mutmut rewrites every line it can and needs hours here; this
list aims at the mechanisms a user relies on). Exits 1 when a mutation survived.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class Mutation:
    """Replace ``old`` (exactly once in ``path``) by ``new``; ``tests`` are pytest args."""

    id: str
    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


def _m(key: str, what: str, path: str, old: str, new: str, *tests: str) -> Mutation:
    return Mutation(key, what, f"ludwig_nb/{path}", old, new, tests)


MUTATIONS = [
    # -- the recorder: what survives a crash ----------------------------------------------
    _m(
        "M01",
        "recorder: no urgent flush of non-step events",
        "store/recorder.py",
        "urgent = not isinstance(event, ev.StepFinished)",
        "urgent = False",
        "tests/store/test_recorder.py",
    ),
    _m(
        "M02",
        "recorder: status.json not refreshed on an urgent event",
        "store/recorder.py",
        "                self._flush_events()\n                self._write_status(event.time)\n"
        "            elif",
        "                self._flush_events()\n            elif",
        "tests/store/test_recorder.py",
    ),
    # -- the run's GPU identity, from RunStarted ------------------------------------------
    _m(
        "M03",
        "ledger: RunStarted does not set the GPU index",
        "runs/ledger.py",
        "                self.device_index = device_index_of(event)",
        "                pass",
        "tests/runs/test_ledger.py",
    ),
    _m(
        "M04",
        "a bare 'cuda' device is not GPU 0",
        "runs/ledger.py",
        "return int(index) if index.isdigit() else 0",
        "return int(index) if index.isdigit() else None",
        "tests/runs/test_ledger.py",
    ),
    _m(
        "M05",
        "the engine's device_index is ignored",
        "runs/ledger.py",
        "    if event.device_index is not None:\n        return event.device_index",
        "    if False:\n        return event.device_index",
        "tests/runs/test_ledger.py",
    ),
    # -- one state and one ETA per run ------------------------------------------------------
    _m(
        "M06",
        "a feed's state does not follow its drains",
        "runs/ledger.py",
        "            self._position += len(new)\n            self.state = self._ledger.state",
        "            self._position += len(new)",
        "tests/runs/test_ledger.py",
        "tests/ui/test_eta_text.py",
    ),
    _m(
        "M07",
        "the ledger feeds no event to the ETA",
        "runs/ledger.py",
        "            self.eta.observe(event)",
        "            pass",
        "tests/ui/test_eta_text.py",
    ),
    _m(
        "M08",
        "the ledger feeds no event to the early-stop watch",
        "runs/ledger.py",
        "            self.early_stop.observe(event)",
        "            pass",
        "tests/runs/test_ledger.py",
        "tests/ui/test_dashboard.py",
    ),
    _m(
        "M09",
        "a paused ETA keeps moving",
        "ui/eta_text.py",
        "if paused and not force and self.text not in (ESTIMATING, WARMING_UP):",
        "if False:",
        "tests/ui/test_dashboard.py",
    ),
    _m(
        "M10",
        "the ETA text is not throttled",
        "ui/eta_text.py",
        "and mono_now - self._last_refresh < self.min_interval",
        "and mono_now - self._last_refresh < 0",
        "tests/ui/test_eta_text.py",
    ),
    # -- the early-stop forecast ------------------------------------------------------------
    _m(
        "M11",
        "forecast: a stop before the steps already done",
        "core/early_stop.py",
        "earliest = min(total_steps, max(earliest, done))",
        "earliest = min(total_steps, earliest)",
        "tests/core/test_early_stop.py",
    ),
    _m(
        "M12",
        "forecast: higher-is-better metrics read as losses",
        "core/early_stop.py",
        "ys = [-v if higher_is_better else v for _, v in pairs]",
        "ys = [v for _, v in pairs]",
        "tests/core/test_early_stop.py",
    ),
    _m(
        "M13",
        "forecast: patience 0 (early stopping off) still forecasts",
        "core/early_stop.py",
        "if patience <= 0 or len(pairs) < _MIN_EVALUATIONS or total_steps <= 0:",
        "if len(pairs) < _MIN_EVALUATIONS or total_steps <= 0:",
        "tests/core/test_early_stop.py",
    ),
    _m(
        "M14",
        "forecast: evaluations cost no time",
        "core/early_stop.py",
        "remaining = max(0, step - done) * step_s + evaluations_left * evaluation_s",
        "remaining = max(0, step - done) * step_s",
        "tests/core/test_early_stop.py",
    ),
    # -- alarms -----------------------------------------------------------------------------
    _m(
        "M15",
        "alarm: raised only above the level, not at it",
        "core/alarms.py",
        "return value > high if strict else value >= high",
        "return value > high if strict else value > high",
        "tests/core/test_alarms.py",
    ),
    _m(
        "M16",
        "alarm: no debounce",
        "core/alarms.py",
        "if state.streak < rule.consecutive:",
        "if state.streak < 1:",
        "tests/core/test_alarms.py",
    ),
    _m(
        "M17",
        "alarm: no hysteresis floor",
        "core/alarms.py",
        "return high, min(low, high)",
        "return high, low",
        "tests/core/test_alarms.py",
    ),
    _m(
        "M18",
        "alarm: a streak survives a contrary sample",
        "core/alarms.py",
        "state.streak = state.streak + 1 if wants_change else 0",
        "state.streak = state.streak + 1 if wants_change else state.streak",
        "tests/core/test_alarms.py",
    ),
    # -- strict JSON ------------------------------------------------------------------------
    _m(
        "M19",
        "strict JSON: non-finite paths not listed",
        "core/strict_json.py",
        '        found.append(path or ".")',
        "        pass",
        "tests/core/test_strict_json.py",
        "tests/store/test_rundir.py",
    ),
    _m(
        "M20",
        "strict JSON: earlier flagged paths forgotten on rewrite",
        "core/strict_json.py",
        "found = [str(p) for p in earlier if str(p) not in found] + found",
        "found = found",
        "tests/core/test_strict_json.py",
        "tests/store/test_recorder.py",
    ),
    _m(
        "M21",
        "strict JSON: numpy scalars left as they are",
        "core/strict_json.py",
        '    if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars',
        "    if False:",
        "tests/core/test_strict_json.py",
        "tests/core/test_events.py",
    ),
    # -- the throttle controller ------------------------------------------------------------
    _m(
        "M22",
        "throttle: does not engage early on a rising reading",
        "core/throttle.py",
        "if value >= self.target or (rising and value >= self.target - self.gains.engage_band):",
        "if value >= self.target:",
        "tests/core/test_throttle.py",
    ),
    _m(
        "M23",
        "throttle: released at once when cool",
        "core/throttle.py",
        "elif now - self._cool_since >= self.gains.release_after:",
        "elif True:",
        "tests/core/test_throttle.py",
    ),
    _m(
        "M24",
        "throttle: no minimum duty",
        "core/throttle.py",
        "return min(1.0, max(self.min_duty, duty))",
        "return min(1.0, duty)",
        "tests/core/test_throttle.py",
    ),
    _m(
        "M25",
        "throttle: a NaN reading steers the law",
        "core/throttle.py",
        "if value is None or not math.isfinite(value):",
        "if value is None:",
        "tests/core/test_throttle.py",
    ),
    # -- data checks ------------------------------------------------------------------------
    _m(
        "M26",
        "data: a twice-repeated column name passes",
        "data/value_checks.py",
        "repeated = [name for name, n in counts.items() if n > 1]",
        "repeated = [name for name, n in counts.items() if n > 2]",
        "tests/data/test_value_checks.py",
    ),
    _m(
        "M27",
        "data: an input that is also the output is no leak",
        "data/value_checks.py",
        "        if column in targets:",
        "        if False:",
        "tests/data/test_value_checks.py",
    ),
    # -- pause reasons, hardware, state ---------------------------------------------------
    _m(
        "M28",
        "a control file without a source says 'sidebar'",
        "runs/run.py",
        'source = str(request.get("source", "control_file"))',
        'source = str(request.get("source", "sidebar"))',
        "tests/runs/test_run.py",
    ),
    _m(
        "M29",
        "compare: a CPU run's hardware is its sampler's GPU",
        "runs/compare_sources.py",
        'if device and not device.startswith("cuda"):',
        "if False:",
        "tests/runs/test_compare.py",
        "-k",
        "hardware",
    ),
    _m(
        "M30",
        "state: samples seen not counted",
        "core/state.py",
        '"samples_seen": state.samples_seen + event.batch_size,',
        '"samples_seen": state.samples_seen,',
        "tests/core/test_state.py",
        "tests/ui",
    ),
    # -- what this round typed instead of probing ------------------------------------------
    _m(
        "M31",
        "a Config loaded again warns its upgrade notes again",
        "config/load.py",
        "    config.warnings = tuple(ctx.notes)\n",
        "    config.warnings = tuple(ctx.notes) + (source.warnings if isinstance(source, Config)"
        " else ())\n",
        "tests/config/test_load.py",
    ),
    _m(
        "M32",
        "gpu feed: the host sample is not sent",
        "server/gpu_feed.py",
        '"host": latest.host.to_dict() if latest.host is not None else None,',
        '"host": None,',
        "tests/server/test_gpu_feed.py",
    ),
]


def _copy_tree(target: Path, rev: str | None) -> None:
    """The files git tracks plus the untracked ones it does not ignore, as they are now;
    or the tree of commit ``rev``."""
    if rev is not None:
        archive = subprocess.run(
            ["git", "archive", rev], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        return
    listed = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _pytest(copy: Path, tests: tuple[str, ...], timeout: float) -> str:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    args = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(
            args, check=False, cwd=copy, env=env, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    return "passed" if done.returncode == 0 else "failed"


def main(argv: list[str] | None = None) -> int:
    """Run the mutations; 0 when every one was killed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="mutation ids (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutation")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--rev", help="mutate this commit's tree instead of the working tree")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.id in args.only]
    if args.list:
        for m in chosen:
            print(f"{m.id}  {m.what}  ({m.path}; {' '.join(m.tests)})")
        return 0
    with tempfile.TemporaryDirectory(prefix="ludwig_nb-mutate-") as scratch:
        copy = Path(scratch)
        _copy_tree(copy, args.rev)
        unfit = []
        for m in chosen:  # each mutation must still fit the code, exactly once
            path = copy / m.path
            count = path.read_text(encoding="utf-8").count(m.old) if path.is_file() else 0
            if count != 1:
                print(f"{m.id} n/a: {m.old!r} occurs {count} times in {m.path}", flush=True)
                unfit.append(m)
        chosen = [m for m in chosen if m not in unfit]
        modules = sorted({t for m in chosen for t in m.tests if t.startswith("tests/")})
        if _pytest(copy, tuple(modules), args.timeout * 4) != "passed":
            sys.exit(f"the unmutated tests fail ({' '.join(modules)}): fix them first")
        results = []
        for m in chosen:
            path = copy / m.path
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(m.old, m.new), encoding="utf-8")
            began = time.monotonic()
            try:
                outcome = _pytest(copy, m.tests, args.timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            verdict = {"failed": "killed", "passed": "survived"}.get(outcome, outcome)
            seconds = time.monotonic() - began
            results.append({"id": m.id, "what": m.what, "verdict": verdict, "s": round(seconds)})
            print(f"{m.id} {verdict:<9} {seconds:5.0f} s  {m.what}", flush=True)
    killed = sum(r["verdict"] == "killed" for r in results)
    survived = [r["id"] for r in results if r["verdict"] == "survived"]
    print(
        f"{killed} killed, {len(survived)} survived"
        + (f" ({', '.join(survived)})" if survived else "")
        + f", {len(results) - killed - len(survived)} timed out, of {len(results)}"
        + (f"; {len(unfit)} do not fit the code" if unfit else "")
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 1 if survived or unfit else 0


if __name__ == "__main__":
    sys.exit(main())
