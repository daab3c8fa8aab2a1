"""Config load time: the first ``load_config`` in a fresh process (it reads the Ludwig schema
snapshot) and later ones, on the repo's example and demo configs.

Each config is loaded in its own fresh interpreter for the first-load figure, then 50 more
times in that process; prints milliseconds per config and the median over configs. Compare
branches by running it on each in turn on the same machine.

    python benchmarks/config_load.py [--repeat 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = [
    *sorted((ROOT / "tests" / "fixtures" / "configs").glob("*.yaml")),
    *sorted((ROOT / "ludwig_nb" / "data" / "datasets").glob("*.yaml")),
]
_CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from ludwig_nb.config import load_config
text = open(sys.argv[1]).read()
start = time.perf_counter(); load_config(text); first = time.perf_counter() - start
n = int(sys.argv[2]); start = time.perf_counter()
for _ in range(n):
    load_config(text)
print(json.dumps({"first_ms": first * 1e3, "later_ms": (time.perf_counter() - start) / n * 1e3}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    firsts, laters = [], []
    for path in CONFIGS:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), str(args.repeat)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        row = json.loads(out.strip().splitlines()[-1])
        firsts.append(row["first_ms"])
        laters.append(row["later_ms"])
        print(f"{path.name:28s} first {row['first_ms']:6.1f} ms   later {row['later_ms']:6.2f} ms")
    first, later = statistics.median(firsts), statistics.median(laters)
    print(f"median: first {first:.1f} ms, later {later:.2f} ms")


if __name__ == "__main__":
    main()
