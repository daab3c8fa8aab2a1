"""``ludwig-nb hyperopt``: search a config's ``hyperopt:`` section, a line per finished trial."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ludwig_nb.search import Search

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Run the search; one line per finished trial, the best at the end.

    Ctrl-C stops it gracefully (re-running the same command resumes it).
    """
    from ludwig_nb.search import hyperopt

    text = Path(args.config).read_text(encoding="utf-8")
    search = hyperopt(
        text,
        args.dataset,
        name=args.name,
        results_dir=args.output_directory,
        device=args.device,
        random_seed=args.seed,
        engine=args.engine,
    )
    told: set[int] = set()
    try:
        while not search.wait(0.5).is_done:
            told |= _tell_trials(search, told)
    except KeyboardInterrupt:
        print("ludwig-nb: stopping the search (run the same command again to resume)")
        search.stop("interrupt")
        search.wait()
    _tell_trials(search, told)
    best = search.best
    if search.error is not None:
        print(f"ludwig-nb: the search failed: {search.error}", file=sys.stderr)
        return 1
    if best is not None:
        print(f"best: trial {best['trial']} {search.section['metric']}={best['metric']:.6g}")
    print(f"search directory: {search.directory}")
    return 0


def _tell_trials(search: Search, told: set[int]) -> set[int]:
    new = set()
    for record in search.records():
        if record.number in told or record.state not in (
            "completed",
            "pruned",
            "failed",
            "stopped",
        ):
            continue
        params = ", ".join(f"{k}={v}" for k, v in record.params.items())
        metric = "" if record.metric is None else f" {record.metric:.6g}"
        print(f"trial {record.number}: {record.state}{metric} ({params})", flush=True)
        new.add(record.number)
    return new
