"""Wires the sidebar's routes and the GPU feed into a running Jupyter server.

Called from ``ludwig_nb._load_jupyter_server_extension``. Loading starts no thread and
touches no driver: the GPU sampler starts on the first ``/ludwig-nb/gpus`` request and
stops when the server cleans up its extensions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_runtime_dir

from ludwig_nb.server.gpu_feed import GpuFeed
from ludwig_nb.server.handlers import FEED_KEY, KERNELS_KEY, REGISTRY_KEY, route_table
from ludwig_nb.server.notebook_fallback import strip_live_widgets
from ludwig_nb.store.registry import registry_dir

__all__ = ["load"]


def load(server_app: Any) -> None:
    """Register the routes on ``server_app.web_app`` and hook the feed's shutdown."""
    web_app = server_app.web_app
    web_app.settings[REGISTRY_KEY] = registry_dir(Path(jupyter_runtime_dir()))
    web_app.settings[FEED_KEY] = GpuFeed()
    web_app.settings[KERNELS_KEY] = set()
    web_app.add_handlers(".*$", route_table(web_app.settings["base_url"]))
    _register_save_hook(server_app)
    _stop_with_server(server_app)
    server_app.log.info("ludwig_nb: sidebar routes at %sludwig-nb/", web_app.settings["base_url"])


def _register_save_hook(server_app: object) -> None:
    """Saved notebooks get run snapshots instead of dashboard widgets (notebook_fallback)."""
    manager = getattr(server_app, "contents_manager", None)
    register = getattr(manager, "register_pre_save_hook", None)
    if register is not None:
        register(strip_live_widgets)


def _stop_with_server(server_app: Any) -> None:
    # A module-style extension (no ExtensionApp) gets no stop hook of its own, so the
    # feed rides on the server's extension cleanup, which every shutdown path awaits.
    original = server_app.cleanup_extensions
    settings = server_app.web_app.settings

    async def cleanup_extensions() -> None:
        feed: GpuFeed = settings[FEED_KEY]
        feed.close()
        await original()

    server_app.cleanup_extensions = cleanup_extensions
