"""Ludwig's model and the built-in engine's, part by part, and Ludwig's weights copied into ours.

Shared by the parity tests that run in the Ludwig env: the model test (same outputs with the
same weights) and the run test (same training from the same start).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ludwig_nb.engines.builtin.model import ECD


def parts(config: Mapping[str, Any], theirs: Any, ours: ECD) -> list[tuple[str, Any, Any]]:
    """(component, Ludwig's module, ours) for every encoder, the combiner, every output."""
    found = [
        (f"encoder {f['name']}", theirs.input_features.get(f["name"]).encoder_obj, enc)
        for f, enc in zip(config["input_features"], ours.encoders, strict=True)
    ]
    found.append(("combiner", theirs.combiner, ours.combiner))
    found += [
        (f"output {f['name']}", theirs.output_features.get(f["name"]), dec)
        for f, dec in zip(config["output_features"], ours.decoders, strict=True)
    ]
    return found


def vocab_order(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[int] | None:
    """For each of our vocabulary's entries, its index in Ludwig's (None: no vocabulary)."""
    mine, other = ours.get("idx2str"), theirs.get("idx2str")
    if not mine or not other:
        return None
    return [other.index(token) for token in mine]


def copy_weights(
    config: Mapping[str, Any],
    meta: Mapping[str, Any],
    ludwig_meta: Mapping[str, Any],
    theirs: Any,
    ours: ECD,
) -> None:
    """Ludwig's weights into ours, parameter by parameter (rows reordered to our vocabularies).

    ``config`` is our rendered config, ``meta`` our preprocessing metadata and ``ludwig_meta``
    Ludwig's training set metadata.
    """
    features = {f["name"] for f in config["input_features"] + config["output_features"]}
    for part, their_part, our_part in parts(config, theirs, ours):
        name = part.split(" ", 1)[-1]
        order, their_rows = None, -1
        if name in features:
            order = vocab_order(meta["features"][name], ludwig_meta[name])
            their_rows = len(ludwig_meta[name].get("idx2str") or ())
        pairs = zip(their_part.parameters(), our_part.parameters(), strict=True)
        for position, (source, target) in enumerate(pairs):
            value = source.detach().clone()
            # an embedding's rows, or an output's classes, as Ludwig's vocabulary orders them
            # (Ludwig's may hold more: it is fitted on every split, ours on the training rows)
            rows = (part.startswith("encoder") and value.dim() == 2 and position == 0) or (
                part.startswith("output")
            )
            if order is not None and rows and value.shape[0] == their_rows:
                value = value[order]
            if value.shape != target.shape:
                raise ValueError(
                    f"{part}, parameter {position}: Ludwig's is {tuple(value.shape)}, "
                    f"ours {tuple(target.shape)}"
                )
            with torch.no_grad():
                target.copy_(value)
        # batch norms' running statistics (Ludwig's combiner runs a batch through itself, in
        # training mode, to learn its output size: its statistics no longer start at 0 and 1)
        stats = [norm_stats(their_part), norm_stats(our_part)]
        for source, target in zip(*stats, strict=True):
            target.copy_(source)


def norm_stats(module: torch.nn.Module) -> list[torch.Tensor]:
    """A module's batch-norm running statistics, in order."""
    wanted = ("running_mean", "running_var", "num_batches_tracked")
    return [b for n, b in module.named_buffers() if n.rsplit(".", 1)[-1] in wanted]
