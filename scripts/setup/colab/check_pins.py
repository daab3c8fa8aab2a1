"""Fail when a Colab pin moved: installed versions, and pip's plans, against pins.txt.

    python check_pins.py PINS [REPORT.json ...]

Run with the Colab venv's Python. Checks that every ``name==version`` line of PINS is the
version installed there, and that no pip ``--report`` given (the resolver's plan for
installing ludwig_nb's requirements) would install another version of a pinned package.
Prints one line per pin; exits 1 naming what moved.
"""

from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    out = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            out[_norm(name)] = version.strip()
    return out


def main(argv: list[str]) -> int:
    wanted = pins(Path(argv[1]))
    problems = []
    for name, version in wanted.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "missing"
        print(f"  {name:16} pinned {version:8} installed {installed}")
        if installed != version:
            problems.append(f"{name} is {installed}, Colab pins {version}")
    for report in argv[2:]:
        plan = json.loads(Path(report).read_text()).get("install", [])
        for item in plan:
            name, version = _norm(item["metadata"]["name"]), item["metadata"]["version"]
            if name in wanted and version != wanted[name]:
                why = (item.get("requested") and "requested") or "pulled in by a requirement"
                problems.append(f"pip would move {name} {wanted[name]} -> {version} ({why})")
        print(
            f"  {Path(report).name}: pip plans {len(plan)} install(s), none of them a pin"
            if not any(_norm(i["metadata"]["name"]) in wanted for i in plan)
            else f"  {Path(report).name}: pip plans to touch a pin"
        )
    for problem in problems:
        print(f"check_pins: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
