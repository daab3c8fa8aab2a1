"""The README's and the guide's links lead somewhere: every relative link names a file of
the clone (an image, a page, a notebook), none leads out of it, and every guide page is
listed in the guide's index."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"
PAGES = [ROOT / "README.md", ROOT / "docs" / "benchmarks.md", *sorted(GUIDE.glob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(page: Path) -> list[str]:
    links = _LINK.findall(page.read_text(encoding="utf-8"))
    return [link for link in links if not re.match(r"[a-z]+:", link)]


def test_every_relative_link_names_a_file_in_the_clone() -> None:
    broken = []
    for page in PAGES:
        for link in _relative_links(page):
            target = (page.parent / link.split("#")[0]).resolve()
            if not target.is_relative_to(ROOT) or not target.exists():
                broken.append(f"{page.relative_to(ROOT)}: {link}")
    assert broken == []


def test_the_guide_index_lists_every_page() -> None:
    index = (GUIDE / "README.md").read_text(encoding="utf-8")
    listed = {link.split("#")[0] for link in _LINK.findall(index)}
    pages = {p.name for p in GUIDE.glob("*.md")} - {"README.md"}
    assert pages - listed == set()
