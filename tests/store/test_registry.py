"""The run registry: pointer files, newest first, pruned of old finished runs, never live ones."""

import os

import pytest

from ludwig_nb.store import registry


def test_registry_lists_newest_first_and_rejects_bad_ids(tmp_path):
    for i, rid in enumerate(["a-1", "b-2"]):
        registry.register_run(
            tmp_path, registry.registry_entry(rid, rid, tmp_path / rid, 1, float(i))
        )
    (tmp_path / "evil.json").write_text('{"run_id": "../../etc"}')
    assert [e["run_id"] for e in registry.iter_registry(tmp_path)] == ["b-2", "a-1"]
    with pytest.raises(ValueError):
        registry.register_run(tmp_path, {"run_id": "../x"})
    registry.unregister_run(tmp_path, "a-1")
    assert [e["run_id"] for e in registry.iter_registry(tmp_path)] == ["b-2"]


def test_pid_alive():
    assert registry.pid_alive(os.getpid())
    assert not registry.pid_alive(0)
    assert not registry.pid_alive(2**22 + 12345)


def test_prune_forgets_old_and_surplus_finished_runs_but_never_live_ones(tmp_path):
    live, dead = os.getpid(), 2**22 + 12345
    day = 86400.0
    entries = [("live-old", live, 0.0), ("dead-old", dead, 0.0)]
    entries += [(f"dead-{i}", dead, 10 * day + i) for i in range(5)]
    for rid, pid, started in entries:
        registry.register_run(tmp_path, registry.registry_entry(rid, rid, tmp_path, pid, started))
    removed = registry.prune_registry(tmp_path, now=10 * day + 10, max_age_s=7 * day, keep=4)
    left = [e["run_id"] for e in registry.iter_registry(tmp_path)]
    assert "dead-old" in removed and "live-old" in left
    assert left == ["dead-4", "dead-3", "dead-2", "live-old"]  # newest dead ones kept
    assert (tmp_path).is_dir()  # run directories are not touched
