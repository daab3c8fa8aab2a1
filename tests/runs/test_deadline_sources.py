"""Where a run's deadline comes from: config, kernel, environment, Colab (simulated clocks)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from ludwig_nb.runs import deadline_sources as ds

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 8, 12, 9, 0, tzinfo=UTC).timestamp()
AUTO = {"at": "auto", "action": "checkpoint", "reserve": 300.0, "session_limit": 43200.0}


@pytest.fixture(autouse=True)
def no_kernel_deadline() -> Iterator[None]:
    ds.clear_kernel_deadline()
    yield
    ds.clear_kernel_deadline()


def resolve(section: dict[str, object] | None, **kw: object) -> object:
    kw.setdefault("env", {})
    kw.setdefault("colab", lambda: False)
    return ds.resolve_deadline(section, T0, tz=UTC, **kw)  # type: ignore[arg-type]


def test_a_config_deadline_counts_from_the_run_start() -> None:
    deadline = resolve({**AUTO, "at": "2h", "action": "stop", "reserve": 60.0})
    assert deadline.at == T0 + 7200  # type: ignore[attr-defined]
    assert (deadline.action, deadline.reserve_s, deadline.source) == ("stop", 60.0, "config")  # type: ignore[attr-defined]
    assert resolve({**AUTO, "at": "18:30"}).at == T0 + 9.5 * 3600  # type: ignore[attr-defined]
    assert resolve(None) is None


def test_auto_takes_the_kernel_then_the_environment_then_colab(tmp_path: Path) -> None:
    (tmp_path / "uptime").write_text("3600.50 7000.00\n")  # the machine booted an hour ago
    colab = {"colab": lambda: True, "proc": tmp_path}
    in_colab = resolve(AUTO, **colab)
    assert in_colab.at == pytest.approx(T0 - 3600.5 + 43200)  # type: ignore[attr-defined]
    assert in_colab.label == "Colab's 12 h session limit" and in_colab.source == "colab"  # type: ignore[attr-defined]
    env = resolve(AUTO, env={ds.ENV_VAR: "2026-08-12T17:00Z"}, **colab)
    assert (env.at, env.source) == (T0 + 8 * 3600, "environment")  # type: ignore[attr-defined]
    assert env.label == "the instance's scheduled stop"  # type: ignore[attr-defined]
    assert resolve(AUTO, env={ds.ENV_VAR: str(T0 + 60)}).at == T0 + 60  # type: ignore[attr-defined]
    ds.set_kernel_deadline("90min", now=T0 - 600, tz=UTC)
    kernel = resolve(AUTO, env={ds.ENV_VAR: "2026-08-12T17:00Z"}, **colab)
    assert (kernel.at, kernel.source) == (T0 + 4800, "kernel")  # type: ignore[attr-defined]


def test_nothing_to_go_on_means_no_deadline(tmp_path: Path) -> None:
    assert resolve(AUTO) is None
    assert resolve({**AUTO, "at": "colab"}) is None  # not in Colab
    assert resolve(AUTO, colab=lambda: True, proc=tmp_path) is None  # no /proc/uptime
    assert resolve(AUTO, env={ds.ENV_VAR: "whenever"}) is None  # a bad value is not a time


def test_a_pro_session_limit_and_a_colab_only_deadline(tmp_path: Path) -> None:
    (tmp_path / "uptime").write_text("0 0\n")
    pro = resolve(
        {**AUTO, "at": "colab", "session_limit": 86400.0}, colab=lambda: True, proc=tmp_path
    )
    assert pro.at == T0 + 86400 and pro.label == "Colab's 24 h session limit"  # type: ignore[attr-defined]


def test_a_bad_kernel_deadline_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="bad deadline"):
        ds.set_kernel_deadline("later", now=T0)
    assert ds.kernel_deadline() is None


def test_colab_is_recognised_by_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "colab"
    assert not ds.in_colab()  # this machine is not Colab
    monkeypatch.syspath_prepend(str(fixture))  # the fake google.colab (tests/fixtures/colab)
    monkeypatch.delitem(sys.modules, "google", raising=False)
    assert ds.in_colab()
