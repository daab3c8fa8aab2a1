"""Losses by Ludwig name, weights and options."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from ludwig_nb.engines.builtin.losses import build_loss

META = {"idx2str": ["a", "b", "c"]}


def test_defaults_per_output_type():
    logits = torch.tensor([0.5, -1.0])
    target = torch.tensor([1.0, 0.0])
    fn, weight = build_loss({"type": "binary"}, {})
    assert weight == 1.0
    assert fn(logits, target).item() == pytest.approx(
        F.binary_cross_entropy_with_logits(logits, target).item()
    )
    fn, _ = build_loss({"type": "number", "loss": {"type": "huber", "weight": 2}}, {})
    assert fn(torch.tensor([0.0]), torch.tensor([3.0])).item() == pytest.approx(2.5)


def test_category_class_weights_and_unknown_labels_are_ignored():
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    fn, _ = build_loss({"type": "category", "loss": {"class_weights": {"a": 0.0}}}, META)
    only_b = F.cross_entropy(logits[1:], torch.tensor([1]))
    assert fn(logits, torch.tensor([0, 1])).item() == pytest.approx(only_b.item())
    plain, _ = build_loss({"type": "category"}, META)
    assert plain(logits, torch.tensor([-1, 1])).item() == pytest.approx(only_b.item())


def test_robust_lambda_and_confidence_penalty():
    logits = torch.tensor([[3.0, 0.0, 0.0]])
    target = torch.tensor([0])
    base = F.cross_entropy(logits, target).item()
    robust, _ = build_loss({"type": "category", "loss": {"robust_lambda": 0.5}}, META)
    assert robust(logits, target).item() == pytest.approx(0.5 * base + 0.5 / 3)
    confident, _ = build_loss({"type": "category", "loss": {"confidence_penalty": 1.0}}, META)
    assert confident(logits, target).item() < base


def test_unknown_loss_is_refused():
    with pytest.raises(ValueError, match="poisson"):
        build_loss({"type": "number", "loss": {"type": "poisson"}}, {})
