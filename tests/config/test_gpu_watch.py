"""The gpu_watch section: defaults per docs/CONTRACTS.md, typed view, located mistakes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ludwig_nb.config import AlarmRuleConfig, ConfigError, GpuWatchConfig, load_config


def test_defaults(minimal: str) -> None:
    cfg = load_config(minimal)
    assert cfg.to_dict()["gpu_watch"] == {
        "enabled": "auto",
        "simulate": False,
        "interval": 1.0,
        "devices": None,
        "history": 600,
        "alarms": [
            {
                "metric": "temperature",
                "threshold": "slowdown-5",
                "clear_below": None,
                "name": None,
                "consecutive": 3,
                "action": "warn",
                "power_limit": False,
            }
        ],
        "gpu_memory_limit": None,
        "oom_recovery": "auto",
        "deadline": {
            "at": "auto",
            "action": "checkpoint",
            "reserve": 300.0,
            "session_limit": 43200.0,
        },
    }
    assert cfg.gpu_watch == GpuWatchConfig()


def test_typed_view(minimal: str) -> None:
    cfg = load_config(
        minimal + "gpu_watch:\n  enabled: true\n  simulate: true\n  devices: [0, 2]\n"
        "  alarms:\n    - {metric: temperature, threshold: 80, action: stop, clear_below: 70}\n"
        "    - {metric: memory}\n    - {metric: throttle, action: pause}\n"
    )
    watch = cfg.gpu_watch
    assert (watch.enabled, watch.simulate, watch.devices) == (True, True, (0, 2))
    assert watch.alarms == (
        AlarmRuleConfig("temperature", 80.0, 70.0, 3, "stop"),
        AlarmRuleConfig("memory", 90.0, None, 3, "warn"),
        AlarmRuleConfig("throttle", None, None, 3, "pause"),
    )
    assert GpuWatchConfig.from_dict(watch.to_dict()) == watch


def test_no_gpu_watch_in_the_ludwig_dict(minimal: str) -> None:
    assert (
        "gpu_watch" not in load_config(minimal + "gpu_watch:\n  simulate: true\n").to_ludwig_dict()
    )


@pytest.mark.parametrize(
    ("section", "line", "path"),
    [
        ("  enabled: maybe\n", 8, "gpu_watch.enabled"),
        ("  devices: [-1]\n", 8, "gpu_watch.devices[0]"),
        ("  intervall: 2\n", 8, "gpu_watch.intervall"),
        ("  alarms:\n    - {metric: temprature}\n", 9, "gpu_watch.alarms[0].metric"),
        ("  alarms:\n    - {threshold: hot}\n", 9, "gpu_watch.alarms[0].threshold"),
        (
            "  alarms:\n    - {metric: memory, threshold: slowdown-5}\n",
            9,
            "gpu_watch.alarms[0].threshold",
        ),
        ("  alarms:\n    - {metric: memory, threshold: 120}\n", 9, "gpu_watch.alarms[0].threshold"),
        ("  alarms:\n    - {metric: throttle, threshold: 3}\n", 9, "gpu_watch.alarms[0].threshold"),
        (
            "  alarms:\n    - {threshold: 80, clear_below: 85}\n",
            9,
            "gpu_watch.alarms[0].clear_below",
        ),
        ("  alarms:\n    - {action: reboot}\n", 9, "gpu_watch.alarms[0].action"),
        ("  alarms:\n    - {consecutive: 0}\n", 9, "gpu_watch.alarms[0].consecutive"),
    ],
)
def test_mistakes_are_located(
    fail: Callable[..., ConfigError], minimal: str, section: str, line: int, path: str
) -> None:
    err = fail(minimal + "gpu_watch:\n" + section)
    assert (err.line, err.path) == (line, path)


@pytest.mark.parametrize(
    ("section", "path", "words"),
    [
        ("  alarms:\n    - {metric: power, action: throttle}\n", "threshold", "watts"),
        ("  alarms:\n    - {metric: power, threshold: slowdown-5}\n", "threshold", "watts"),
        ("  alarms:\n    - {metric: power, threshold: -3}\n", "threshold", "positive"),
        (
            "  alarms:\n    - {metric: memory, threshold: 90, action: throttle}\n",
            "action",
            "temperature or a power",
        ),
        (
            "  alarms:\n    - {metric: temperature, action: pause, power_limit: true}\n",
            "power_limit",
            "metric: power, action: throttle",
        ),
    ],
)
def test_throttle_mistakes_are_located(
    fail: Callable[..., ConfigError], minimal: str, section: str, path: str, words: str
) -> None:
    err = fail(minimal + "gpu_watch:\n" + section)
    assert (err.line, err.path) == (9, f"gpu_watch.alarms[0].{path}")
    assert words in str(err)


def test_throttle_and_memory_keys_render(minimal: str) -> None:
    section = (
        "gpu_watch:\n  gpu_memory_limit: 0.5\n  oom_recovery: true\n  alarms:\n"
        "    - {metric: temperature, threshold: slowdown-5, action: throttle}\n"
        "    - {metric: power, threshold: 250, action: throttle, power_limit: true}\n"
    )
    watch = load_config(minimal + section).gpu_watch
    assert (watch.gpu_memory_limit, watch.oom_recovery) == (0.5, True)
    assert [(a.metric, a.action, a.power_limit) for a in watch.alarms] == [
        ("temperature", "throttle", False),
        ("power", "throttle", True),
    ]


def test_memory_limit_must_be_positive(fail: Callable[..., ConfigError], minimal: str) -> None:
    err = fail(minimal + "gpu_watch:\n  gpu_memory_limit: 0\n")
    assert err.path == "gpu_watch.gpu_memory_limit"


def test_margin_thresholds_render_and_build_rules(minimal: str) -> None:
    from ludwig_nb.core.alarms import AlarmPolicy

    section = (
        "gpu_watch:\n  alarms:\n    - {threshold: 'margin < 5', action: pause}\n"
        "    - {threshold: 'margin<=3', clear_below: 'margin>12', action: stop}\n"
    )
    watch = load_config(minimal + section).to_dict()["gpu_watch"]
    assert [(a["threshold"], a["clear_below"]) for a in watch["alarms"]] == [
        ("margin<5", None),
        ("margin<=3", "margin>12"),
    ]
    policy = AlarmPolicy.from_config(watch)
    assert [r.name for r in policy.rules] == ["margin<5", "margin<=3"]
    assert str(policy.rules[1].clear_below) == "margin>12"


@pytest.mark.parametrize(
    ("section", "path", "words"),
    [
        ("  alarms:\n    - {threshold: 'margin>5'}\n", "threshold", "little margin"),
        ("  alarms:\n    - {threshold: 'margin<5', clear_below: 80}\n", "clear_below", "both"),
        ("  alarms:\n    - {threshold: 80, clear_below: 'margin>9'}\n", "clear_below", "both"),
        (
            "  alarms:\n    - {threshold: 'margin<5', clear_below: 'margin>3'}\n",
            "clear_below",
            "less margin",
        ),
        ("  alarms:\n    - {threshold: 'margin<5', clear_below: 'margin<9'}\n", "clear_below", ">"),
        ("  alarms:\n    - {metric: memory, threshold: 'margin<5'}\n", "threshold", "percentage"),
        ("  alarms:\n    - {metric: power, threshold: 'margin<5'}\n", "threshold", "watts"),
        ("  alarms:\n    - {threshold: 'margin<hot'}\n", "threshold", "margin<N"),
    ],
)
def test_margin_mistakes_are_located(
    fail: Callable[..., ConfigError], minimal: str, section: str, path: str, words: str
) -> None:
    err = fail(minimal + "gpu_watch:\n" + section)
    assert (err.line, err.path) == (9, f"gpu_watch.alarms[0].{path}")
    assert words in str(err)


@pytest.mark.parametrize(
    ("written", "rendered"),
    [
        ("2h", {"at": "2h", "action": "checkpoint", "reserve": 300.0}),
        ("'18:30'", {"at": "18:30", "action": "checkpoint", "reserve": 300.0}),
        (
            "{at: 90min, action: stop, reserve: 10m}",
            {"at": "90min", "action": "stop", "reserve": 600.0},
        ),
        ("{at: colab, session_limit: 24h}", {"at": "colab", "session_limit": 86400.0}),
        ("{action: warn}", {"at": "auto", "action": "warn"}),
    ],
)
def test_deadline_renders(minimal: str, written: str, rendered: dict[str, object]) -> None:
    cfg = load_config(minimal + f"gpu_watch:\n  deadline: {written}\n")
    deadline = cfg.to_dict()["gpu_watch"]["deadline"]
    assert {k: deadline[k] for k in rendered} == rendered
    assert GpuWatchConfig.from_dict(cfg.gpu_watch.to_dict()) == cfg.gpu_watch


def test_deadline_off(minimal: str) -> None:
    assert load_config(minimal + "gpu_watch:\n  deadline: null\n").gpu_watch.deadline is None


@pytest.mark.parametrize(
    ("written", "path", "words"),
    [
        ("18:30", "gpu_watch.deadline", "quote a clock time"),
        ("soon", "gpu_watch.deadline", "a duration like 2h"),
        ("'25:10'", "gpu_watch.deadline", "not a time of day"),
        ("{att: 2h}", "gpu_watch.deadline.att", "did you mean 'at'"),
        ("{at: 2h, action: reboot}", "gpu_watch.deadline.action", "warn, checkpoint, stop"),
        ("{at: 2h, reserve: lots}", "gpu_watch.deadline.reserve", "duration"),
        ("[2h]", "gpu_watch.deadline", "a time like"),
    ],
)
def test_deadline_mistakes_are_located(
    fail: Callable[..., ConfigError], minimal: str, written: str, path: str, words: str
) -> None:
    err = fail(minimal + f"gpu_watch:\n  deadline: {written}\n")
    assert (err.line, err.path) == (8, path)
    assert words in str(err)
