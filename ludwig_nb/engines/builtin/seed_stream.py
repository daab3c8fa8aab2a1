"""Ludwig's shape probes, drawn as Ludwig draws them: the same seed gives the same weights.

Ludwig 0.11 learns some modules' output sizes by running a random batch through them as it
builds the model (``LudwigModule.output_shape``: ``torch.rand(2, *input_shape)``, then a forward
pass in training mode). Those draws come from the seed's stream, between the draws of the
weights, so every weight initialised after them depends on them. The built-in engine knows its
sizes without a probe; it makes the same draws and passes at the same points so that a config
and seed give the weights Ludwig gives them (and the batch-norm statistics Ludwig's probes
leave behind).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

__all__ = ["probe", "probe_each"]


def probe(module: Callable[[torch.Tensor], object], *shape: int) -> None:
    """Ludwig's ``output_shape`` probe: a random batch of two rows of ``shape``, run through."""
    with torch.no_grad():
        module(torch.rand(2, *shape))


def probe_each(module: Callable[[list[torch.Tensor]], object], sizes: Sequence[int]) -> None:
    """Ludwig's combiner probe: one random batch per input (``[2, size]``), run through."""
    pseudo = [torch.rand(2, size) for size in sizes]
    with torch.no_grad():
        module(pseudo)
