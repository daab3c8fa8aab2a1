"""Shared fixtures for browser tests: a JupyterLab server, Debian's Chromium via Playwright.

- ``lab_server_factory(root_dir, env=None, settings=None)`` starts ``jupyter lab`` on a free
  port with no token, a private runtime dir (so the run registry is per server), private
  workspaces and user settings (the news toast silenced), and
  ``--LabApp.expose_app_in_browser`` (``window.jupyterapp`` for test helpers). Every server
  is stopped at the end of the session; its log is kept in the artifacts dir.
- ``lab_browser`` (session) and ``lab_page`` (per test; console messages in
  ``page.console_messages``, JavaScript dialogs in ``page.dialogs``, dismissed).
- ``artifacts_dir``: ``artifacts/screenshots`` or ``$UI_ARTIFACTS``.

Chromium comes from Debian (``apt-get install -y chromium``); ``playwright install`` is
never needed. ``$CHROMIUM`` overrides the path. Tests are skipped when it is missing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROME_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
#: user settings every test server gets: no "news" toast covering the page
_QUIET_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/browser is a browser test."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where screenshots (and server logs) go: ``$UI_ARTIFACTS`` or artifacts/screenshots."""
    path = Path(os.environ.get("UI_ARTIFACTS") or REPO / "artifacts" / "screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        message = "Chromium not found: apt-get update && apt-get install -y chromium"
        if os.environ.get("CI"):  # in CI a skipped browser test would hide a missing install
            pytest.fail(message)
        pytest.skip(message)
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _checkout_labextension(home: Path) -> dict[str, str]:
    """``JUPYTER_PATH`` that puts this checkout's sidebar build (``jlpm build`` writes
    ``ludwig_nb/labextension``) before any installed copy, so that the browser tests test
    the code beside them; empty when it was not built here."""
    build = REPO / "ludwig_nb" / "labextension"
    if not (build / "package.json").exists():
        return {}
    share = home / "share"
    (share / "labextensions").mkdir(parents=True, exist_ok=True)
    link = share / "labextensions" / "ludwig-nb"
    if not link.exists():
        link.symlink_to(build, target_is_directory=True)
    paths = [str(share), os.environ.get("JUPYTER_PATH", "")]
    return {"JUPYTER_PATH": os.pathsep.join(p for p in paths if p)}


def _write_settings(settings_dir: Path, settings: Mapping[str, Mapping[str, Any]]) -> None:
    """``{"<package>/<plugin>": {...}}`` -> ``<dir>/<package>/<plugin>.jupyterlab-settings``."""
    for key, values in settings.items():
        package, plugin = key.rsplit("/", 1)
        target = settings_dir / package / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")


@dataclasses.dataclass
class LabServer:
    """A running ``jupyter lab``; ``runtime_dir`` holds the ludwig_nb run registry."""

    url: str
    root_dir: Path
    runtime_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _wait_until_up(server: LabServer, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited ({server.process.returncode}):\n{server.log()[-3000:]}"
            )
        try:
            with urllib.request.urlopen(f"{server.url}/api/status", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)  # waiting for a subprocess to listen, not a test assertion
    raise TimeoutError(f"jupyter lab did not answer in {timeout} s:\n{server.log()[-3000:]}")


LabServerFactory = Callable[..., LabServer]


@pytest.fixture(scope="session")
def lab_server_factory(
    tmp_path_factory: pytest.TempPathFactory, artifacts_dir: Path
) -> Iterator[LabServerFactory]:
    servers: list[LabServer] = []

    def start(
        root_dir: Path,
        env: Mapping[str, str] | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
        name: str = "lab",
    ) -> LabServer:
        """Start JupyterLab serving ``root_dir`` with ``env`` (default: os.environ)."""
        home = tmp_path_factory.mktemp(f"{name}-home")
        runtime_dir = home / "runtime"
        settings_dir = home / "settings"
        _write_settings(settings_dir, {**_QUIET_SETTINGS, **(settings or {})})
        port = _free_port()
        log_path = artifacts_dir / f"{name}-{port}.log"
        full_env = dict(os.environ if env is None else env)
        full_env.update(_checkout_labextension(home))
        full_env.update(
            JUPYTER_RUNTIME_DIR=str(runtime_dir),
            JUPYTER_CONFIG_DIR=str(home / "config"),
            PYTHONUNBUFFERED="1",
        )
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--allow-root",
            f"--ServerApp.root_dir={root_dir}",
            "--LabApp.expose_app_in_browser=True",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            f"--LabApp.user_settings_dir={settings_dir}",
        ]
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                cmd, cwd=root_dir, env=full_env, stdout=log, stderr=subprocess.STDOUT
            )
        server = LabServer(f"http://127.0.0.1:{port}", root_dir, runtime_dir, log_path, process)
        servers.append(server)
        _wait_until_up(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def lab_browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROME_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def lab_page(lab_browser: Any) -> Iterator[Any]:
    """A fresh 1400x900 page; ``page.console_messages`` and ``page.dialogs`` record events."""
    context = lab_browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.console_messages = []
    page.dialogs = []
    page.on("console", lambda msg: page.console_messages.append(msg.text))

    def on_dialog(dialog: Any) -> None:
        page.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield page
    context.close()


def wait_for_kernel_idle(page: Any, timeout_ms: int = 60_000) -> None:
    """Block until the current notebook's kernel is ``idle`` (needs expose_app_in_browser)."""
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget"
        "?.sessionContext?.session?.kernel?.status === 'idle'",
        timeout=timeout_ms,
    )


@pytest.fixture
def kernel_idle() -> Callable[..., None]:
    """``kernel_idle(page)``: wait until the open notebook's kernel is idle."""
    return wait_for_kernel_idle


def write_notebook(path: Path, cells: Iterable[str]) -> Path:
    """Write ``cells`` (code) as a notebook on the plain ``python3`` kernel at ``path``."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    nbformat.write(nb, path)
    return path
