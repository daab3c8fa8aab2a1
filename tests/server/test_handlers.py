"""The sidebar's REST routes, through a real jupyter server with authentication on."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth import Authorizer
from tornado.httpclient import HTTPClientError
from tornado.routing import PathMatches, Router

from ludwig_nb.server.handlers import AUTH_RESOURCE
from ludwig_nb.store import rundir

RUN_ID = "demo-20261130-080000-abc123"


def _routes(router: Any) -> list[str]:
    """Every path pattern registered under ``router``, nested routers included."""
    found: list[str] = []
    for rule in getattr(router, "rules", []):
        if isinstance(rule.target, Router):
            found += _routes(rule.target)
        elif isinstance(rule.matcher, PathMatches):
            found.append(rule.matcher.regex.pattern)
    return found


def _concrete(pattern: str) -> str:
    """A request path for a route pattern: the named groups filled with real values."""
    path = pattern.rstrip("$")
    path = re.sub(r"\(\?P<run_id>[^)]*\)", RUN_ID, path)
    return re.sub(r"\(\?P<action>[^)]*\)", "stop", path)


async def _status(jp_fetch: Any, *parts: str, **kwargs: Any) -> int:
    try:
        response = await jp_fetch(*parts, **kwargs)
    except HTTPClientError as err:
        return err.code
    return int(response.code)


def _json(response: Any) -> Any:
    return json.loads(response.body.decode())


async def test_every_route_requires_authentication(jp_fetch, jp_serverapp, make_run, jp_base_url):
    make_run(RUN_ID)
    patterns = [p for p in _routes(jp_serverapp.web_app.default_router) if "ludwig-nb" in p]
    assert len(patterns) == 5, patterns
    anonymous = {"Authorization": ""}
    for pattern in patterns:
        path = _concrete(pattern)[len(jp_base_url) :]
        method = "POST" if path.endswith("/stop") else "GET"
        body = b"" if method == "POST" else None
        assert await _status(jp_fetch, path, method=method, body=body) in (200, 202), path
        code = await _status(jp_fetch, path, method=method, body=body, headers=anonymous)
        assert code in (401, 403), f"{method} {path} answered {code} without authentication"


class _DenyLudwig(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource != AUTH_RESOURCE


@pytest.mark.parametrize("extra_server_config", [{"ServerApp": {"authorizer_class": _DenyLudwig}}])
async def test_authorizer_can_deny_every_route(jp_fetch, make_run):
    make_run(RUN_ID)
    assert await _status(jp_fetch, "api", "status") == 200  # the user is authenticated
    assert await _status(jp_fetch, "ludwig-nb", "runs") == 403
    assert await _status(jp_fetch, "ludwig-nb", "gpus") == 403
    assert (
        await _status(jp_fetch, "ludwig-nb", "runs", RUN_ID, "stop", method="POST", body=b"") == 403
    )


async def test_post_with_cookie_but_no_xsrf_is_refused(jp_fetch, jp_serverapp, make_run):
    run = make_run(RUN_ID)
    token = jp_serverapp.identity_provider.token
    login = await jp_fetch(
        "ludwig-nb", "runs", params={"token": token}, headers={"Authorization": ""}
    )
    cookies = [c.split(";")[0] for c in login.headers.get_list("Set-Cookie")]
    assert cookies, "logging in with ?token= should set a login cookie"
    headers = {"Authorization": "", "Cookie": "; ".join(cookies)}
    assert await _status(jp_fetch, "ludwig-nb", "runs", headers=headers) == 200  # cookie works
    code = await _status(
        jp_fetch, "ludwig-nb", "runs", RUN_ID, "stop", method="POST", body=b"", headers=headers
    )
    assert code == 403
    assert not (run.directory / rundir.CONTROL_FILE).exists()


async def test_runs_lists_registered_runs(jp_fetch, make_run):
    make_run(RUN_ID, name="<img src=x onerror=alert(1)>")
    body = _json(await jp_fetch("ludwig-nb", "runs"))
    [run] = body["runs"]
    assert run["run_id"] == RUN_ID
    assert (
        run["name"] == "<img src=x onerror=alert(1)>"
    )  # data, not markup: escaping is the view's job
    assert run["status"] == "training" and run["alive"] is True
    assert run["notebook"] == "nb.ipynb" and run["total_steps"] == 100


async def test_runs_of_this_servers_kernels_are_marked(jp_fetch, make_run):
    # a real kernel of this server: its id is what a run in it writes into its registry entry
    kernel = _json(await jp_fetch("api", "kernels", method="POST", body=b"{}"))
    make_run("mine-20261130-080000-abc123", kernel=kernel["id"])
    make_run("script-20261130-080000-abc123", kernel="")  # a script or the CLI: no kernel
    make_run("elsewhere-20261130-080000-abc123", kernel="kernel-of-another-server")

    async def marks() -> dict[str, bool]:
        runs = _json(await jp_fetch("ludwig-nb", "runs"))["runs"]
        return {r["run_id"].split("-")[0]: r["this_server"] for r in runs}

    assert await marks() == {"mine": True, "script": False, "elsewhere": False}
    await jp_fetch("api", "kernels", kernel["id"], method="DELETE")
    # the kernel is gone, its runs stay this server's (it was seen running here)
    assert await marks() == {"mine": True, "script": False, "elsewhere": False}


async def test_snapshot_is_the_runs_readable_state(jp_fetch, make_run, dead_pid):
    run = make_run(RUN_ID)
    run.write_status(
        status="completed",
        step=100,
        reason="early stopping",
        best_step=60,
        evaluations_since_best=5,
    )
    body = _json(await jp_fetch("ludwig-nb", "runs", RUN_ID, "snapshot"))
    assert body["run_id"] == RUN_ID and body["status"] == "completed" and body["final"] is True
    text = body["bundle"]["text/plain"]
    assert text.startswith("demo: completed, step 100 / 100")
    assert "stopped early: no validation improvement in 5 evaluations; best at step 60" in text
    assert 'data-status="completed"' in body["bundle"]["text/html"]
    make_run("other-20261130-080000-abc123", pid=dead_pid)  # its kernel died mid-run
    body = _json(await jp_fetch("ludwig-nb", "runs", "other-20261130-080000-abc123", "snapshot"))
    assert body["status"] == "interrupted" and body["final"] is True
    assert "its process ended before the run did" in body["bundle"]["text/plain"]


async def test_stale_pid_shows_interrupted(jp_fetch, make_run, dead_pid):
    make_run(RUN_ID, pid=dead_pid)
    [run] = _json(await jp_fetch("ludwig-nb", "runs"))["runs"]
    assert run["status"] == "interrupted" and run["alive"] is False
    assert (
        await _status(jp_fetch, "ludwig-nb", "runs", RUN_ID, "stop", method="POST", body=b"") == 409
    )


async def test_run_events_since_offset(jp_fetch, make_run):
    run = make_run(RUN_ID)
    run.step(0)
    run.step(1)
    first = _json(await jp_fetch("ludwig-nb", "runs", RUN_ID))
    assert [e["step"] for e in first["events"]] == [0, 1]
    assert first["run"]["step"] == 2
    run.step(2)
    later = _json(await jp_fetch("ludwig-nb", "runs", RUN_ID, params={"offset": first["offset"]}))
    assert [e["step"] for e in later["events"]] == [2]
    assert later["offset"] > first["offset"] and later["more"] is False


async def test_a_long_event_log_comes_in_pages(jp_fetch, make_run, monkeypatch):
    from ludwig_nb.store import rundir

    monkeypatch.setattr(rundir, "EVENTS_PAGE_BYTES", 512)
    run = make_run(RUN_ID)
    for step in range(100):
        run.step(step)
    steps: list[int] = []
    offset, replies, more = 0, 0, True
    while more:
        reply = _json(await jp_fetch("ludwig-nb", "runs", RUN_ID, params={"offset": offset}))
        steps += [e["step"] for e in reply["events"]]
        offset, more = reply["offset"], reply["more"]
        replies += 1
    assert steps == list(range(100)) and replies > 3


async def test_stop_request_reaches_the_run(jp_fetch, make_run):
    run = make_run(RUN_ID)
    run.step(0)
    response = await jp_fetch("ludwig-nb", "runs", RUN_ID, "stop", method="POST", body=b"")
    assert response.code == 202
    assert run.poll() == "stop"  # what the training process does within a second
    body = _json(await jp_fetch("ludwig-nb", "runs", RUN_ID))
    assert body["run"]["status"] == "stopped"
    assert body["events"][-1]["type"] == "run_finished"
    assert body["events"][-1]["status"] == "stopped"


@pytest.mark.parametrize("action", ["pause", "resume"])
async def test_pause_and_resume_reach_the_run(jp_fetch, make_run, action):
    run = make_run(RUN_ID)
    await jp_fetch("ludwig-nb", "runs", RUN_ID, action, method="POST", body=b"")
    assert run.poll() == action


@pytest.mark.parametrize(
    "raw_id",
    ["..%2F..%2Fetc%2Fpasswd", "..", "%2E%2E", ".hidden", "a%00b", "a%20b", "x" * 200],
)
async def test_bad_run_ids_are_rejected(
    http_server_client, jp_auth_header, jp_base_url, make_run, raw_id
):
    """Sent verbatim (not re-quoted), so encoded separators reach tornado's decoder."""
    make_run(RUN_ID)
    base = f"{jp_base_url}ludwig-nb/runs/{raw_id}"
    for url, method in ((base, "GET"), (f"{base}/stop", "POST")):
        body = b"" if method == "POST" else None
        response = await http_server_client.fetch(
            url, method=method, body=body, headers=jp_auth_header, raise_error=False
        )
        assert response.code in (400, 404), (url, response.code)


async def test_traversal_never_reads_outside_the_registry(jp_fetch, registry, tmp_path):
    # a run directory that exists on disk but is not registered is invisible
    outside = tmp_path / "elsewhere" / "secret-run"
    outside.mkdir(parents=True)
    rundir.write_json_atomic(outside / rundir.STATUS_FILE, {"status": "training"})
    assert await _status(jp_fetch, "ludwig-nb", "runs", "secret-run") == 404
    assert (
        await _status(jp_fetch, "ludwig-nb", "runs", "secret-run", "stop", method="POST", body=b"")
        == 404
    )
    assert not (outside / rundir.CONTROL_FILE).exists()


@pytest.mark.parametrize("where", ["root", "home", "another run"])
async def test_a_registry_entry_naming_a_directory_without_its_run_is_no_run(
    jp_fetch, registry, tmp_path, where
):
    """An entry pointing at ``/``, at a home directory or at another run's folder: its files
    are neither served nor written (the sidebar lists it, marked, without a directory)."""
    import os

    folder = {"root": Path("/"), "home": tmp_path / "user", "another run": tmp_path / "other"}[
        where
    ]
    if where != "root":
        folder.mkdir()
        (folder / rundir.EVENTS_FILE).write_text('{"type": "run_finished", "secret": 1}\n')
    if where == "another run":
        rundir.write_json_atomic(
            folder / rundir.STATUS_FILE, {"run_id": "other", "status": "training"}
        )
    registry.mkdir(parents=True, exist_ok=True)
    pointer = {"run_id": "posing", "name": "x", "directory": str(folder), "pid": os.getpid()}
    (registry / "posing.json").write_text(json.dumps(pointer))
    assert await _status(jp_fetch, "ludwig-nb", "runs", "posing") == 404
    for action in ("stop", "pause", "resume"):
        status = await _status(
            jp_fetch, "ludwig-nb", "runs", "posing", action, method="POST", body=b""
        )
        assert status == 404
    assert not (folder / rundir.CONTROL_FILE).exists()
    listed = json.loads((await jp_fetch("ludwig-nb", "runs")).body)["runs"]
    (run,) = [r for r in listed if r["run_id"] == "posing"]
    if where == "another run":
        assert run["directory"] == "" and run["status"] == "queued" and run["problems"]


async def test_unknown_action_is_not_routed(jp_fetch, make_run):
    make_run(RUN_ID)
    assert (
        await _status(jp_fetch, "ludwig-nb", "runs", RUN_ID, "delete", method="POST", body=b"")
        == 404
    )


async def test_bad_offset_is_a_client_error(jp_fetch, make_run):
    make_run(RUN_ID)
    assert await _status(jp_fetch, "ludwig-nb", "runs", RUN_ID, params={"offset": "x"}) == 400


def test_registry_dir_follows_jupyter_runtime_dir(jp_serverapp, jp_runtime_dir):
    from ludwig_nb.server.handlers import REGISTRY_KEY

    assert (
        Path(jp_serverapp.web_app.settings[REGISTRY_KEY]) == jp_runtime_dir / "ludwig_nb" / "runs"
    )


# -- faults: bad files never break the list, every reply is strict JSON (issue 11) ---------
def _strict(response: Any) -> Any:
    """The body parsed as JSON that a browser accepts: NaN/Infinity tokens raise."""

    def refuse(token: str) -> Any:
        raise AssertionError(f"reply holds the non-JSON token {token}")

    return json.loads(response.body.decode(), parse_constant=refuse)


@pytest.mark.parametrize("offset", [str(2**53), str(10**30), "-1", "1e3"])
async def test_huge_or_negative_offsets_are_a_client_error(jp_fetch, make_run, offset):
    make_run(RUN_ID)
    assert await _status(jp_fetch, "ludwig-nb", "runs", RUN_ID, params={"offset": offset}) == 400


async def test_an_overflowing_metric_is_null_and_flagged_in_every_reply(jp_fetch, make_run):
    from ludwig_nb.core.events import EvaluationFinished

    run = make_run(RUN_ID)
    metrics = {"validation": {"y": {"loss": float("inf"), "accuracy": 0.5}}}
    run.emit(EvaluationFinished(time=1.0, step=0, epoch=0, start_time=0.5, metrics=metrics))
    run.status.update(latest_metrics=metrics, last_loss=float("nan"))
    # the bare tokens an older writer (Python's json) put in status.json
    (run.directory / rundir.STATUS_FILE).write_text(json.dumps(run.status))
    [listed] = _strict(await jp_fetch("ludwig-nb", "runs"))["runs"]
    assert listed["latest_metrics"]["validation"]["y"] == {"loss": None, "accuracy": 0.5}
    assert set(listed["nonfinite"]) == {"latest_metrics.validation.y.loss", "last_loss"}
    assert listed["problems"] == []
    reply = _strict(await jp_fetch("ludwig-nb", "runs", RUN_ID))
    [event] = reply["events"]
    assert event["metrics"]["validation"]["y"]["loss"] is None
    assert event["nonfinite"] == ["metrics.validation.y.loss"]


def _json_values() -> Any:
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=8,
    )


def _bad_runs(count: int) -> list[tuple[dict[str, Any], Any]]:
    """``count`` (registry entry, status.json content) pairs drawn by hypothesis: every
    registry and status field may hold any JSON value, the status file any bytes."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    entry_keys = ("name", "directory", "pid", "kernel", "notebook", "started_at")
    status_keys = (
        "status",
        "step",
        "total_steps",
        "progress",
        "last_loss",
        "latest_metrics",
        "best_metrics",
        "alarms",
        "eta",
        "error",
        "pid",
        "written_at",
    )
    entry = st.fixed_dictionaries({}, optional={k: _json_values() for k in entry_keys})
    status = (
        st.fixed_dictionaries({}, optional={k: _json_values() for k in status_keys})
        | _json_values()
        | st.binary(max_size=20)
    )
    drawn: list[tuple[dict[str, Any], Any]] = []

    @settings(
        max_examples=count, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(entry=entry, status=status)
    def collect(entry: dict[str, Any], status: Any) -> None:
        drawn.append((entry, status))

    collect()
    return drawn


async def test_arbitrary_registry_and_status_files_never_break_a_reply(
    jp_fetch, registry, tmp_path
):
    registry.mkdir(parents=True, exist_ok=True)
    ids = []
    for i, (entry, status) in enumerate(_bad_runs(120)):
        run_id = f"bad-{i:03d}"
        directory = tmp_path / "results" / run_id
        directory.mkdir(parents=True)
        if isinstance(status, bytes):
            (directory / rundir.STATUS_FILE).write_bytes(status)
        else:  # Python's json writes NaN/Infinity here, as an old or foreign writer would
            (directory / rundir.STATUS_FILE).write_text(json.dumps(status))
        pointer = {"run_id": run_id, "directory": str(directory), **entry}
        (registry / f"{run_id}.json").write_text(json.dumps(pointer))
        ids.append(run_id)
    (registry / "garbage.json").write_bytes(b"\xff{not json")
    listed = _strict(await jp_fetch("ludwig-nb", "runs"))["runs"]
    assert sorted(r["run_id"] for r in listed) == ids
    for run in listed:
        assert isinstance(run["problems"], list) and isinstance(run["nonfinite"], list)
        assert isinstance(run["pid"], int) and isinstance(run["alarms"], list)
        assert run["step"] is None or isinstance(run["step"], int | float)
    assert any(r["problems"] for r in listed)  # the drawn shapes include bad ones: marked
    for run_id in ids[:40]:
        response = await jp_fetch("ludwig-nb", "runs", run_id, raise_error=False)
        assert response.code in (200, 404)  # 404: the entry's directory was not text
        _strict(response)
    assert (await jp_fetch("ludwig-nb", "gpus")).code == 200  # the server is still up


# -- the sidebar parses every reply shape: the real replies, recorded for vitest -----------
REPLIES_FIXTURE = (
    Path(__file__).resolve().parents[2] / "labextension" / "test" / "server_replies.json"
)
_SHAPES: dict[str, tuple[dict[str, Any], Any]] = {
    "good": ({}, {"status": "training", "step": 3, "total_steps": 10, "progress": 0.3}),
    "nonfinite": (
        {},
        {
            "run_id": "nonfinite",  # the run the directory holds: the server serves it
            "status": "training",
            "last_loss": float("inf"),
            "latest_metrics": {"validation": {"y": {"loss": float("nan")}}},
        },
    ),
    "pid-text": ({"pid": "123"}, {"status": "completed"}),
    "metrics-list": ({}, {"status": "training", "latest_metrics": [1, 2]}),
    "alarms-object": ({}, {"status": "training", "alarms": {"a": 1}}),
    "status-unknown": ({}, {"status": "exploded"}),
    "status-list": ({}, ["training"]),
    "status-garbage": ({}, b"\xff{half"),
    "early-stop-paused": ({}, "paused-by-alarm"),  # written by the run's own wording below
    "early-stopped": ({}, "stopped-early"),
    "early-stop-list": ({}, {"status": "training", "early_stop": [5]}),
    "late-and-hot": ({}, "late-and-hot"),  # a margin alarm, a GPU slowdown, a deadline
    "deadline-garbage": ({}, {"status": "training", "deadline": {"at": "soon"}}),
    "disk-full": (
        {},
        {
            "status": "failed",
            "error": "OSError: no space left on the device",
            "write_error": "[Errno 28] No space left on device",
        },
    ),
}


def _worded_status(kind: str) -> dict[str, Any]:
    """A status.json as a run writes it, worded by the run's own functions
    (``core/status_words.py``): paused by a temperature alarm with an early-stop forecast,
    or ended by early stopping."""
    import datetime as dt

    from ludwig_nb.core import events as ev
    from ludwig_nb.core.early_stop import forecast_stop
    from ludwig_nb.core.eta import Estimate
    from ludwig_nb.core.eta.display import format_estimate
    from ludwig_nb.core.state import reduce_all
    from ludwig_nb.core.status_words import early_stop_block, status_words

    schedule = ev.ScheduleInfo(total_steps=11000, steps_per_epoch=1100, epochs=10, batch_size=8)
    events: list[ev.Event] = [
        ev.RunStarted(
            time=1.0, run_id="r", name="churn", engine="builtin", device="cuda:0", schedule=schedule
        ),
        ev.StepFinished(time=2.0, step=1199, epoch=1, start_time=1.9, batch_size=8, loss=0.3),
        ev.EvaluationFinished(
            time=2.0,
            step=599,
            epoch=0,
            start_time=1.9,
            improved=True,
            metrics={"validation": {"combined": {"loss": 0.38}}},
        ),
    ]
    if kind == "late-and-hot":
        events += [
            ev.AlarmRaised(
                time=3.0,
                rule="margin<5",
                device=0,
                value=84.0,
                threshold=83.0,
                action="warn",
                message="GPU 0 at 84°C, 3 °C to slowdown (alarm under 5 °C of margin): warn",
                margin=3.0,
            ),
            ev.GpuSlowdown(
                time=3.5,
                device=0,
                active=True,
                share=0.4,
                causes=("thermal",),
                clock_ratio=0.8,
                text="GPU 0 throttled 40 % of the last minute (thermal 40 %)",
            ),
            ev.DeadlineWarning(
                time=4.0,
                kind="warn",
                deadline=7200.0,
                verdict="late",
                message="⏰ likely finishes 20 min after your deadline (02:00)",
            ),
        ]
        state = reduce_all(events)
        deadline = {
            "at": 7200.0,
            "label": "your deadline",
            "action": "checkpoint",
            "verdict": "late",
            "text": "likely finishes 20 min after your deadline (02:00)",
        }
        throttle = "throttled 12 % of the run (thermal 12 %)"
        estimate = Estimate(
            remaining_s=4800.0, low_s=4200.0, high_s=5400.0, state="stable", at=4.0, step_s=0.4
        )
        eta_text = format_estimate(estimate, 4.0, dt.timezone.utc)
        words = status_words(state, None, throttle, deadline, eta_text)
        return {**state.to_dict(), **words}
    if kind == "paused-by-alarm":
        events += [
            ev.AlarmRaised(
                time=3.0,
                rule="temperature>=slowdown-5",
                device=0,
                value=88.0,
                threshold=87.0,
                action="pause",
                message="GPU 0 at 88 °C: pause",
            ),
            ev.Paused(time=3.0, step=1200, reason="alarm:temperature>=slowdown-5"),
        ]
    else:
        events.append(
            ev.RunFinished(time=4.0, status="completed", step=3100, reason="early stopping")
        )
    state = reduce_all(events)
    steps = [200, 400, 600, 800, 1000, 1200]
    values = [0.6, 0.45, 0.38, 0.35, 0.34, 0.338]
    forecast = forecast_stop(steps, values, patience=5, total_steps=11000)
    words = status_words(state, early_stop_block(state, 5, "loss", forecast))
    return {**state.to_dict(), **words}


def _normalised(value: Any, tmp: str) -> Any:
    """The reply with this test's paths, pids and clock times made stable."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            stable = item
            if key == "pid" and isinstance(item, int):
                stable = 4242
            elif key in ("time", "written_at", "started_at") and isinstance(item, float):
                stable = 1000.0
            out[key] = _normalised(stable, tmp)
        return out
    if isinstance(value, list):
        return [_normalised(v, tmp) for v in value]
    return value.replace(tmp, "/results") if isinstance(value, str) else value


async def test_every_reply_shape_is_recorded_for_the_sidebar_tests(jp_fetch, registry, tmp_path):
    """The replies the real server gives for good, non-finite and malformed runs are the
    fixture ``labextension/test/server_replies.test.ts`` feeds to the sidebar's code.
    ``LUDWIG_NB_WRITE_REPLIES=1`` rewrites it after a deliberate change."""
    import os

    from ludwig_nb.core.events import EvaluationFinished

    registry.mkdir(parents=True, exist_ok=True)
    for i, (run_id, (entry, status)) in enumerate(_SHAPES.items()):
        directory = tmp_path / run_id
        directory.mkdir()
        written = _worded_status(status) if isinstance(status, str) else status
        if isinstance(written, dict) and "run_id" in written:
            written = {**written, "run_id": run_id}  # the run the directory holds
        raw = written if isinstance(written, bytes) else json.dumps(written).encode()
        (directory / rundir.STATUS_FILE).write_bytes(raw)
        pointer = {
            "run_id": run_id,
            "name": run_id,
            "directory": str(directory),
            "pid": os.getpid(),
            "started_at": float(100 - i),
            **entry,
        }
        (registry / f"{run_id}.json").write_text(json.dumps(pointer))
    metrics = {"validation": {"y": {"loss": float("inf")}}}
    with open(tmp_path / "nonfinite" / rundir.EVENTS_FILE, "w") as handle:
        handle.write(
            EvaluationFinished(time=1.0, step=0, epoch=0, start_time=0.5, metrics=metrics).to_json()
            + "\n"
        )
    replies = {"runs": _strict(await jp_fetch("ludwig-nb", "runs"))}
    replies["run"] = _strict(await jp_fetch("ludwig-nb", "runs", "nonfinite"))
    recorded = _normalised(replies, str(tmp_path))
    if os.environ.get("LUDWIG_NB_WRITE_REPLIES"):
        REPLIES_FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    assert json.loads(REPLIES_FIXTURE.read_text()) == recorded, (
        "the server's replies changed: rerun with LUDWIG_NB_WRITE_REPLIES=1 and check the "
        "sidebar's tests (jlpm test)"
    )
