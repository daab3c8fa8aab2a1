"""Forward passes over whole splits: raw outputs, losses and metrics per output feature."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ludwig_nb.engines.builtin.device import Precision, TensorData
from ludwig_nb.engines.builtin.metrics import feature_metrics
from ludwig_nb.engines.builtin.model import ECD, Objective, targets_to_data_space, to_data_space

__all__ = ["evaluate_split", "forward_all"]


@torch.no_grad()
def forward_all(
    module: ECD,
    data: TensorData,
    batch_size: int,
    precision: Precision,
    objective: Objective | None = None,
) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """Raw outputs of every row and, optionally, the mean losses of a split.

    Raw outputs of every row (on the CPU) and mean losses (``{output, "combined"}``) when
    ``objective`` is given and ``data`` holds the outputs. The losses are computed once over the
    whole split (not per batch), where the targets are.
    """
    was_training = module.training
    module.eval()
    device = next(module.parameters()).device
    chunks: dict[str, list[torch.Tensor]] = {name: [] for name in module.output_names}
    copy = data.device != device  # pinned host data (too big for the GPU) or a CPU model
    try:
        for start in range(0, data.rows, batch_size):
            batch = data.rows_slice(start, start + batch_size)
            if copy:
                batch = {
                    k: tuple(t.to(device, non_blocking=True) for t in v) for k, v in batch.items()
                }
            with precision.autocast():
                outputs = module(batch)
            for name, raw in outputs.items():
                chunks[name].append(raw.float())
    finally:
        module.train(was_training)
    whole = {name: torch.cat(parts) for name, parts in chunks.items()}
    losses: dict[str, float] = {}
    if objective is not None:
        total, parts = objective({k: v.to(data.device) for k, v in whole.items()}, data.tensors)
        names = ["combined", *parts]
        values = torch.stack([total, *parts.values()]).tolist()  # one read
        losses = dict(zip(names, values, strict=True))
    return {name: raw.cpu() for name, raw in whole.items()}, losses


def evaluate_split(
    module: ECD,
    objective: Objective,
    data: TensorData,
    config: Mapping[str, Any],
    metadata: Mapping[str, Any],
    batch_size: int,
    precision: Precision,
) -> dict[str, dict[str, float]]:
    """``{output name | "combined": {metric: value}}`` for one split (data space)."""
    outputs, losses = forward_all(module, data, batch_size, precision, objective)
    result: dict[str, dict[str, float]] = {"combined": {"loss": losses.get("combined", math.nan)}}
    for feature in config["output_features"]:
        name, kind = feature["name"], feature["type"]
        meta = metadata["features"][name]
        prediction = to_data_space(kind, outputs[name], meta)
        target = targets_to_data_space(kind, data.tensors[name][0], meta)
        metrics = feature_metrics(kind, target, prediction, feature)
        metrics["loss"] = losses.get(name, math.nan)
        result[name] = {k: float(v) for k, v in metrics.items()}
    return result


def finite_only(metrics: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, Any]:
    """Metrics with NaN values left out (JSON has no NaN)."""
    return {
        split: {
            feat: {m: v for m, v in values.items() if not np.isnan(v)}
            for feat, values in per_feature.items()
        }
        for split, per_feature in metrics.items()
    }
