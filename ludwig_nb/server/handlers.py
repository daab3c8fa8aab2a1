"""The REST routes of the sidebar, all under the server's ``base_url``.

``GET  /ludwig-nb/gpus``                       latest GPU + host sample (cached, never NVML here)
``GET  /ludwig-nb/runs``                       every run in the registry, each marked
                                               ``this_server`` when one of this server's
                                               kernels started it
``GET  /ludwig-nb/runs/<id>?offset=N``         one run, events from byte N (<= 1 MiB a page)
``GET  /ludwig-nb/runs/<id>/snapshot``         the run's readable snapshot (for a reopened
                                               notebook's saved output)
``POST /ludwig-nb/runs/<id>/(stop|pause|resume)``  a control request into the run directory

Every handler requires an authenticated, authorized user (401 / 403 otherwise); POSTs go
through Jupyter's XSRF check. File I/O runs in the executor, off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.ioloop import IOLoop

from ludwig_nb.core import strict_json
from ludwig_nb.server import runs_view
from ludwig_nb.server.gpu_feed import GpuFeed
from ludwig_nb.server.notebook_fallback import read_snapshot
from ludwig_nb.store import registry, rundir

__all__ = [
    "AUTH_RESOURCE",
    "FEED_KEY",
    "KERNELS_KEY",
    "REGISTRY_KEY",
    "ControlHandler",
    "GpusHandler",
    "RunHandler",
    "RunsHandler",
    "SnapshotHandler",
    "route_table",
]

#: the resource name Jupyter's authorizer sees (actions: read for GET, write for POST)
AUTH_RESOURCE = "ludwig_nb"
#: keys in ``web_app.settings``
REGISTRY_KEY = "ludwig_nb_registry_dir"
FEED_KEY = "ludwig_nb_gpu_feed"
#: the kernel ids this server has been seen running (a set, grown by every ``/runs`` request)
KERNELS_KEY = "ludwig_nb_kernel_ids"

_T = TypeVar("_T")


class _LudwigHandler(APIHandler):
    auth_resource = AUTH_RESOURCE

    @property
    def registry_dir(self) -> Path:
        return Path(self.settings[REGISTRY_KEY])

    async def _off_loop(self, fn: Callable[..., _T], *args: object) -> _T:
        return await IOLoop.current().run_in_executor(None, fn, *args)

    def _reply(self, data: object) -> None:
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(strict_json.dumps(data))

    async def _entry_or_error(self, run_id: str) -> dict[str, object]:
        if not rundir.is_valid_run_id(run_id):
            raise web.HTTPError(400, "invalid run id")
        entry = await self._off_loop(runs_view.find_run, self.registry_dir, run_id)
        if entry is None:
            raise web.HTTPError(404, "no such run")
        return entry


class GpusHandler(_LudwigHandler):
    """The latest GPU and host sample; the first request starts the sampler thread."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Reply with the latest GPU snapshot, starting the sampler on the first request."""
        feed: GpuFeed = self.settings[FEED_KEY]
        if not feed.started:
            await self._off_loop(feed.start)
        self._reply(feed.snapshot())


class RunsHandler(_LudwigHandler):
    """``GET <base_url>/ludwig-nb/runs``: every registered run, as the sidebar lists them.

    A run is ``this_server``'s when its registry entry names a kernel this server runs now or
    was seen running by an earlier request: a kernel shut down since keeps its runs here.
    """

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Reply with every registered run, each marked ``this_server`` or not."""
        kernel_ids = self._seen_kernel_ids()
        runs = await self._off_loop(
            runs_view.list_runs, self.registry_dir, registry.pid_alive, kernel_ids
        )
        self._reply({"runs": runs})

    def _seen_kernel_ids(self) -> frozenset[str]:
        seen: set[str] = self.settings.setdefault(KERNELS_KEY, set())
        manager = self.settings.get("kernel_manager")
        if manager is not None:
            seen.update(str(kernel_id) for kernel_id in manager.list_kernel_ids())
        return frozenset(seen)


class RunHandler(_LudwigHandler):
    """One run and a page of its events from byte ``offset``.

    Pass the returned offset back; ``more`` says the page was cut at ``rundir.EVENTS_PAGE_BYTES`` (a
    long run's log is never read into one reply).
    """

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        """Reply with run ``run_id``'s summary and its events after byte ``offset``.

        Raises:
            tornado.web.HTTPError: 400 for an invalid run id or ``offset``, 404 for an unknown run.
        """
        entry = await self._entry_or_error(run_id)
        offset = _offset(self.get_query_argument("offset", "0"))
        summary = await self._off_loop(runs_view.safe_summary, entry)
        events_path = Path(str(entry["directory"])) / rundir.EVENTS_FILE
        events, new_offset, more = await self._off_loop(
            rundir.read_events, events_path, offset, rundir.EVENTS_PAGE_BYTES
        )
        events = [strict_json.flagged(event) for event in events]  # old logs may hold NaN
        self._reply({"run": summary, "events": events, "offset": new_offset, "more": more})


class SnapshotHandler(_LudwigHandler):
    """The run's snapshot from its run directory (``notebook_fallback.read_snapshot``).

    The sidebar refreshes a reopened notebook's saved dashboard output with it.
    """

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        """Reply ``{"run_id", "status", "final", "bundle"}`` for run ``run_id``.

        Raises:
            HTTPError: 400 for an invalid id, 404 for a run not in the registry or one
                that has written no status yet.
        """
        entry = await self._entry_or_error(run_id)
        snapshot = await self._off_loop(read_snapshot, str(entry["directory"]))
        if snapshot is None:
            raise web.HTTPError(404, "the run has written no status yet")
        self._reply({"run_id": run_id, **snapshot})


#: the largest offset a client can hold exactly (a JavaScript number is a double)
MAX_OFFSET = 2**53 - 1


def _offset(text: str) -> int:
    """The ``offset`` query argument.

    A byte offset from 0 to :data:`MAX_OFFSET` (HTTP 400 otherwise).
    """
    try:
        offset = int(text)
    except ValueError as exc:
        raise web.HTTPError(400, "offset must be a whole number of bytes") from exc
    if not 0 <= offset <= MAX_OFFSET:
        raise web.HTTPError(400, f"offset must be between 0 and {MAX_OFFSET}")
    return offset


class ControlHandler(_LudwigHandler):
    """Writes ``control.json`` into the run directory; the run polls it (<= 1 s)."""

    @web.authenticated
    @authorized
    async def post(self, run_id: str, action: str) -> None:
        """Write ``action`` (one of ``rundir.CONTROL_ACTIONS``) to run ``run_id``'s control file.

        Raises:
            tornado.web.HTTPError: 400 for an invalid run id, 404 for an unknown run, 409 when it is
                not running.
        """
        entry = await self._entry_or_error(run_id)
        summary = await self._off_loop(runs_view.safe_summary, entry)
        if not summary["alive"]:
            raise web.HTTPError(409, f"run is not running (status {summary['status']})")
        await self._off_loop(rundir.request_control, Path(str(entry["directory"])), action)
        self.set_status(202)
        self._reply({"run_id": run_id, "action": action, "requested": True})


def route_table(base_url: str) -> list[tuple[str, type[APIHandler]]]:
    """The (pattern, handler) pairs, prefixed with ``base_url``."""
    run = r"/runs/(?P<run_id>[^/]+)"
    actions = "|".join(rundir.CONTROL_ACTIONS)
    return [
        (url_path_join(base_url, "ludwig-nb", "gpus"), GpusHandler),
        (url_path_join(base_url, "ludwig-nb", "runs"), RunsHandler),
        (url_path_join(base_url, "ludwig-nb") + run, RunHandler),
        (url_path_join(base_url, "ludwig-nb") + run + "/snapshot", SnapshotHandler),
        (url_path_join(base_url, "ludwig-nb") + run + rf"/(?P<action>{actions})", ControlHandler),
    ]
