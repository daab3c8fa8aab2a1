"""Every ``scripts/...`` path that the project's files name exists: a script that moves, or
a reference to one written on a branch before it moved, fails here, not in a user's shell.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# a path that starts a word (not the tail of another repository's path or a URL)
_PATH = re.compile(r"(?<![\w/.-])scripts/[\w./-]*[\w/]")
_SUFFIXES = {".py", ".sh", ".md", ".toml", ".cfg", ".ts", ".json", ".ipynb", ".txt", ""}
_LEFT_OUT: set[str] = set()


def _tracked() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / n for n in names if Path(n).suffix in _SUFFIXES and n not in _LEFT_OUT]


def test_every_scripts_path_named_in_the_project_exists() -> None:
    missing = []
    for path in _tracked():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for found in _PATH.findall(text):
            if any(c in found for c in "*<{") or (ROOT / found).exists():
                continue
            missing.append(f"{path.relative_to(ROOT)}: {found}")
    assert missing == []
