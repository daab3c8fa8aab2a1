"""Importing the config package stays cheap: no torch, no pydantic, no threads."""

from __future__ import annotations

import subprocess
import sys


def test_import_is_cheap() -> None:
    code = (
        "import sys, threading, ludwig_nb.config as c; "
        "c.load_config('input_features: [{name: x, type: number}]\\n"
        "output_features: [{name: y, type: binary}]'); "
        "print(sorted({'torch', 'pydantic', 'pandas'} & set(sys.modules)), "
        "threading.active_count())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["[]", "1"]
