"""Every code block of the README and the user guide runs, as written.

A page's ```python blocks, its cell blocks (```yaml or ```python that start with a ``%``
magic) and its ```bash blocks run in order, in one real kernel per page (nbclient, which
fails on any error, a magic's UsageError and a failing shell command included), in a fresh
folder. A ```yaml block that is not a cell is a piece of a config: it is checked by
``ludwig_nb.load_config`` on its own when it is a whole config, else merged over a small
valid config, so every key a page shows is one the config language accepts. Blocks without
a language (printed output) are not run. A block is left out only with a reason, written
just above it as ``<!-- no-run: why -->`` (e.g. ``pip install``, or a command that needs a
GPU); the README's walkthrough runs in ``tests/notebooks/test_readme.py``.

What a page needs from this machine that a user's machine has (a model from the Hugging
Face hub, which this machine cannot download) is substituted by :data:`SUBSTITUTES` below,
in the text of the blocks, and nowhere else.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_NO_RUN = re.compile(r"<!--\s*no-run:\s*(.+?)\s*-->\s*$")
_SHELL = {"bash", "sh", "shell", "console"}
_BASE = {
    "input_features": [{"name": "total_day_minutes", "type": "number"}],
    "output_features": [{"name": "churn", "type": "binary"}],
}
HUB_MODEL = "HuggingFaceTB/SmolLM2-135M"


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, first line (1-based), language, code and skip reason."""

    page: Path
    line: int
    lang: str
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def kind(self) -> str:
        """``cell``, ``shell``, ``fragment`` (a piece of a config) or ``output``."""
        if self.lang in _SHELL:
            return "shell"
        if self.lang in ("python", "yaml") and self.code.lstrip().startswith("%"):
            return "cell"
        return {"python": "cell", "yaml": "fragment"}.get(self.lang, "output")


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` outside the README's walkthrough."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        if _in_walkthrough(text, match.start()):
            continue
        before = text[: match.start()].rstrip().splitlines()
        reason = _NO_RUN.search(before[-1]) if before else None
        line = text.count("\n", 0, match.start()) + 1
        found.append(
            Block(page, line, match.group(1), match.group(2), reason.group(1) if reason else None)
        )
    return found


def _in_walkthrough(text: str, at: int) -> bool:
    start, end = text.find("<!-- walkthrough"), text.find("<!-- /walkthrough -->")
    return 0 <= start < at < end


def _all(kind: str) -> list[Block]:
    return [b for p in PAGES for b in blocks(p) if b.kind == kind and b.skip is None]


def test_every_page_has_blocks_and_every_left_out_block_says_why():
    for page in PAGES:
        for block in blocks(page):
            if block.skip is not None:
                assert len(block.skip) > 10, f"{block.where}: say why it is not run"
    runnable = [b for p in PAGES for b in blocks(p) if b.kind != "output" and b.skip is None]
    assert len(runnable) >= len(PAGES), "most pages show something that runs"


@pytest.mark.parametrize("block", _all("fragment"), ids=lambda b: b.where)
def test_each_config_piece_is_accepted_by_the_config_language(block: Block) -> None:
    import ludwig_nb

    piece = yaml.safe_load(block.code)
    assert isinstance(piece, dict), f"{block.where}: a yaml block should be a mapping"
    config = piece if "input_features" in piece else {**_BASE, **piece}
    ludwig_nb.load_config(config)  # raises a located ConfigError when a key is wrong


def _pages_to_run() -> list[Path]:
    return [p for p in PAGES if any(b.kind in ("cell", "shell") and not b.skip for b in blocks(p))]


def _cell_source(block: Block, substitutes: dict[str, str]) -> str:
    code = block.code
    for old, new in substitutes.items():
        code = code.replace(old, new)
    if block.kind == "shell":
        bindir = str(Path(sys.executable).parent)
        code = code.replace("bash scripts/setup.sh && ", "")  # the setup the tests run in
        code = code.replace(".venv/bin/", bindir + "/")
        return f"%%bash\nset -euo pipefail\nexport PATH={bindir}:$PATH\n{code}"
    return code


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages_to_run(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_of_the_page_runs_as_written(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    import nbformat
    from nbclient import NotebookClient

    substitutes = {}
    if HUB_MODEL in page.read_text(encoding="utf-8"):  # a tiny local model of the same kind
        substitutes[HUB_MODEL] = str(request.getfixturevalue("tiny_llm")("llama"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    work = tmp_path / "work"
    work.mkdir()
    runnable = [b for b in blocks(page) if b.kind in ("cell", "shell") and b.skip is None]
    cells = [nbformat.v4.new_code_cell(_cell_source(b, substitutes)) for b in runnable]
    nb = nbformat.v4.new_notebook(cells=cells)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    )
    try:
        client.execute()
    except Exception as exc:  # name the block that failed: page and line
        failed = next((b for b, c in zip(runnable, nb.cells, strict=True) if _errored(c)), None)
        where = failed.where if failed else str(page.relative_to(ROOT))
        raise AssertionError(f"{where}: the block failed\n{exc}") from None


def _errored(cell: Any) -> bool:
    return any(o.get("output_type") == "error" for o in cell.get("outputs", []))
