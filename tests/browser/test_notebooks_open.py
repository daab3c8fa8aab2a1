"""The shipped notebooks open cleanly in a real JupyterLab, whose widget front ends match.

`jupyter labextension list`, in the environment the browser tests serve from, marks no
extension (bqplot above all) outdated or incompatible; and opening each
``notebooks/*.ipynb`` in Chromium logs no widget error in the console (a saved widget state
replayed by another bqplot version logs hundreds) and shows no "Error displaying widget".
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import _checkout_labextension, wait_for_kernel_idle

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
#: what the widget manager and bqplot log when a saved model cannot be recreated
WIDGET_ERROR = re.compile(
    r"Could not create (a )?(model|view)|is not registered|not found in module|"
    r"model not found|Error displaying widget|Failed to load model class",
    re.IGNORECASE,
)


def test_labextension_list_marks_no_extension_outdated(tmp_path: Path) -> None:
    env = {**os.environ, **_checkout_labextension(tmp_path)}
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)  # no colours
    [bqplot] = [line for line in text.splitlines() if line.strip().startswith("bqplot ")]
    assert bqplot.split()[2:4] == ["enabled", "OK"], bqplot
    assert "outdated" not in text and "incompatible" not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_shipped_notebook_opens_without_widget_errors(
    notebook: Path, lab_server_factory: Any, lab_page: Any, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(notebook, root / notebook.name)
    server = lab_server_factory(root, name=f"open-{notebook.stem}")
    page = lab_page
    page.goto(f"{server.url}/lab/tree/{notebook.name}?reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    wait_for_kernel_idle(page, 90_000)
    # the widget manager has restored whatever the file holds once its kernel is up
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-OutputArea-output').length > 0", timeout=30_000
    )
    page.wait_for_timeout(2000)  # console messages of the restore arrive after it
    errors = [m.splitlines()[0] for m in page.console_messages if WIDGET_ERROR.search(m)]
    assert errors == [], f"{len(errors)} widget errors, first: {errors[:3]}"
    assert page.get_by_text("Error displaying widget").count() == 0
