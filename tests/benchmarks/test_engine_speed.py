"""The speed benchmark compares like with like: its hand-written loop is the engine's math."""

import torch
from torch.nn import functional as F

from benchmarks.engine_speed import _hand_inputs, _rendered, issue_config, issue_frame
from benchmarks.hand_torch import HandModel
from ludwig_nb.engines.builtin.model import ECD, Objective
from ludwig_nb.engines.builtin.setup import prepare_splits


def test_hand_loop_with_the_engines_weights_gives_the_engines_loss():
    config = _rendered(issue_config(numbers=5))
    frame = issue_frame(rows=400, numbers=5)
    metadata, splits = prepare_splits(config, frame, 42)
    module, objective = ECD(config, metadata), Objective(config, metadata)
    data, vocabs = _hand_inputs(config, frame)
    hand = HandModel(data, vocabs)
    with torch.no_grad():
        hand.out.weight.copy_(module.decoders[0].decoder.dense.weight)
        hand.out.bias.copy_(module.decoders[0].decoder.dense.bias)
    index = torch.arange(0, 200, 3)
    batch = splits["training"].gather(index)
    engine_loss, _ = objective(module(batch), batch)
    x, c, t, y = data.batch(index)
    assert data.count == splits["training"].rows
    assert torch.allclose(F.binary_cross_entropy_with_logits(hand(x, c, t), y), engine_loss)
