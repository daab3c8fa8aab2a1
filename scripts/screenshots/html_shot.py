"""Shoot an HTML fragment as a PNG with headless Chromium (for the screenshot scripts).

    from html_shot import shoot   # scripts/screenshots/ is on sys.path when a script in it runs
    shoot(panel_html, Path("artifacts/screenshots/x.png"), width=1100, height=420)

The fragment is written beside the PNG as ``x.html`` in a plain page (sans-serif, 13 px)
and shot with /usr/bin/chromium, or ``$CHROMIUM``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PAGE = "<html><body style='font-family:sans-serif;font-size:13px;margin:12px'>{}</body></html>"


def shoot(html_text: str, out: Path, *, width: int, height: int) -> None:
    """Write ``html_text`` to ``out`` with suffix .html and shoot it to ``out`` (PNG).

    Args:
        html_text: The HTML fragment (a panel's ``_repr_html_``).
        out: The PNG's path; the page is written beside it.
        width: The window's width in CSS pixels.
        height: The window's height in CSS pixels (the PNG is cut there).

    Raises:
        subprocess.CalledProcessError: Chromium failed (its stderr is on the error).
        subprocess.TimeoutExpired: Chromium ran past 120 s.
    """
    page = out.with_suffix(".html")
    page.write_text(PAGE.format(html_text), encoding="utf-8")
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={out}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    print(out)
