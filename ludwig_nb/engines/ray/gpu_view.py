"""The driver's view of a Ray run's GPUs and workers, built from the ranks' heartbeats.

:class:`WorkersView` takes the latest heartbeat of every rank (heartbeat.py) and returns:

* one merged :class:`~ludwig_nb.core.gpu_sample.Snapshot` of the GPUs the run uses, each
  sample tagged with its ``host``, Ray ``node_id`` and ``host_index`` (its NVML index on
  that host) and given a run-wide ``index`` (first seen, first numbered; stable for the
  run), so that the sampler's history, the gauges and the alarm policy, which key GPUs by
  one integer, work unchanged across nodes. A GPU is the run's when a rank trains on it
  (``cuda`` device, matched by index or UUID); a node whose ranks train on the CPU has all
  its GPUs counted, as a single-process CPU run is watched against every GPU of its machine.
* the workers row: one mapping per rank (``WorkersReported.workers``).

Pure: no Ray, no clock (times come in the reports and as arguments).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ludwig_nb.core.gpu_sample import GpuSample, HostSample, Snapshot

__all__ = ["WorkersView"]


class WorkersView:
    """Folds heartbeats into the run's GPU snapshot and workers row."""

    def __init__(self) -> None:
        self._numbers: dict[tuple[str, int], int] = {}  # (node id, NVML index) -> run-wide
        self._seen: dict[str, float] = {}  # node id -> time of its last snapshot used
        self._row: tuple[Mapping[str, Any], ...] = ()

    # -- the GPUs ------------------------------------------------------------------------
    def snapshot(self, beats: Iterable[Mapping[str, Any]], now: float) -> Snapshot | None:
        """The run's GPUs as of the newest node readings.

        Args:
            beats: The latest heartbeat of every rank.
            now: The driver's wall clock (seconds): the merged snapshot's time.

        Returns:
            The merged snapshot, or None when no node read anything new since the last call.
        """
        beats = sorted(beats, key=lambda b: int(b["rank"]))
        nodes: dict[str, Snapshot] = {}
        for beat in beats:
            if beat.get("snapshot") is not None and beat["node_id"] not in nodes:
                nodes[beat["node_id"]] = Snapshot.from_dict(beat["snapshot"])
        fresh = {n: s for n, s in nodes.items() if s.time > self._seen.get(n, float("-inf"))}
        if not fresh:
            return None
        self._seen.update({n: s.time for n, s in fresh.items()})
        hosts = _host_names(beats)
        gpus: list[GpuSample] = []
        host: HostSample | None = None
        reasons = []
        for node, snap in nodes.items():
            used = _used(snap, [b for b in beats if b["node_id"] == node])
            for sample in snap.gpus:
                if sample.index in used:
                    gpus.append(self._tag(sample, node, hosts.get(node, node)))
            if host is None:
                host = snap.host
            if snap.reason:
                reasons.append(f"{hosts.get(node, node)}: {snap.reason}")
        gpus.sort(key=lambda g: (g.index, g.mig_index if g.mig_index is not None else -1))
        reason = "" if gpus else ("; ".join(reasons) or "the workers use no GPU")
        return Snapshot(time=now, gpus=tuple(gpus), host=host, reason=reason)

    def _tag(self, sample: GpuSample, node: str, host: str) -> GpuSample:
        key = (node, sample.index)
        number = self._numbers.setdefault(key, len(self._numbers))
        return dataclasses.replace(
            sample, index=number, host=host, node_id=node, host_index=sample.index
        )

    # -- the workers row -----------------------------------------------------------------
    def workers(
        self, beats: Iterable[Mapping[str, Any]], now: float
    ) -> tuple[Mapping[str, Any], ...] | None:
        """The workers row: one mapping per rank (see ``WorkersReported``).

        Args:
            beats: The latest heartbeat of every rank.
            now: The driver's wall clock (seconds).

        Returns:
            The row, or None when nothing but the reports' age changed.
        """
        beats = sorted(beats, key=lambda b: int(b["rank"]))
        hosts = _host_names(beats)
        row = tuple(self._worker(b, hosts, now) for b in beats)
        if [_sans_age(w) for w in row] == [_sans_age(w) for w in self._row]:
            return None
        self._row = row
        return row

    def _worker(
        self, beat: Mapping[str, Any], hosts: Mapping[str, str], now: float
    ) -> dict[str, Any]:
        return {
            "rank": int(beat["rank"]),
            "host": hosts.get(beat["node_id"], beat["host"]),
            "node_id": beat["node_id"],
            "device": beat["device"],
            "gpu": self._gpu_number(beat),
            "steps": int(beat["steps"]),
            "steps_per_s": beat.get("steps_per_s"),
            "idle_s": float(beat.get("idle_s") or 0.0),
            "age_s": round(max(0.0, now - float(beat["time"])), 1),
        }

    def _gpu_number(self, beat: Mapping[str, Any]) -> int | None:
        """The run-wide number of the GPU a rank trains on (None: CPU or not read yet)."""
        gpu = beat.get("gpu")
        return None if gpu is None else self._numbers.get((beat["node_id"], int(gpu)))


def _sans_age(worker: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in worker.items() if k != "age_s"}


def _host_names(beats: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Map node id -> the name shown.

    The host name, with the node id's first 6 characters where two nodes share one
    (several Ray nodes on one machine).
    """
    by_node = {b["node_id"]: str(b["host"]) for b in beats}
    counts: dict[str, int] = {}
    for name in by_node.values():
        counts[name] = counts.get(name, 0) + 1
    return {
        node: name if counts[name] == 1 else f"{name}#{node[:6]}" for node, name in by_node.items()
    }


def _used(snapshot: Snapshot, beats: list[Mapping[str, Any]]) -> set[int]:
    """NVML indices of the node's GPUs the run uses (every one when a rank is on CPU)."""
    every = {g.index for g in snapshot.gpus}
    used: set[int] = set()
    for beat in beats:
        if beat.get("gpu") is not None:
            used.add(int(beat["gpu"]))
        elif beat.get("gpu_uuid"):
            used |= {g.index for g in snapshot.gpus if g.uuid == beat["gpu_uuid"]}
        else:
            return every
    return used
