import pytest

torch = pytest.importorskip("torch")

from ludwig_nb.engines.builtin.llm.saved_tensors import (  # noqa: E402
    SavedTensorMeter,
    model_storages,
    storage_bytes,
)


class _Two(torch.nn.Module):
    """Two linear layers and a tanh: what each saves for backward is known."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 16, bias=False)
        self.b = torch.nn.Linear(16, 4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x)))


def test_counts_what_backward_needs_and_not_the_weights():
    model = _Two()
    x = torch.randn(5, 8)
    meter = SavedTensorMeter(model)
    with meter:
        out = model(x).sum()
    # a saves its input x (5x8), tanh its output (5x16), b its input (the same 5x16 tensor)
    assert meter.saved == (5 * 8 + 5 * 16) * 4
    assert meter.live == meter.saved
    with meter:
        out.backward()
    assert meter.live == 0  # every saved tensor released once backward used it
    assert meter.peak == meter.saved


def test_views_of_one_storage_count_once():
    model = torch.nn.Linear(4, 4)
    base = torch.randn(10, 4)
    meter = SavedTensorMeter(model)
    with meter:
        (model(base[:5]).sum() + model(base[5:]).sum()).backward()
    assert meter.peak == 10 * 4 * 4  # two views, one storage of 160 bytes


def test_recomputation_in_the_backward_pass_is_metered():
    """With reentrant checkpointing the forward keeps only the inputs; the backward
    recomputes one block at a time through the same hooks."""
    from torch.utils.checkpoint import checkpoint

    blocks = torch.nn.ModuleList(
        torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.Tanh(), torch.nn.Linear(128, 32))
        for _ in range(4)
    )
    x = torch.randn(64, 32, requires_grad=True)

    def run(checkpointed: bool) -> tuple[SavedTensorMeter, int]:
        meter = SavedTensorMeter(blocks)
        with meter:
            h = x
            for block in blocks:
                h = checkpoint(block, h, use_reentrant=True) if checkpointed else block(h)
            after_forward = meter.live
            h.sum().backward()
        assert meter.live == 0
        return meter, after_forward

    (full, full_forward), (light, light_forward) = run(False), run(True)
    assert full.peak == full_forward  # without recomputation the peak is the forward's end
    assert light.peak < full.peak
    assert light.peak > light_forward  # a recomputed block came on top of the checkpoints


def test_model_storages_include_quantization_constants():
    class QuantState:  # the shape of bitsandbytes' quant_state: tensors, nested
        def __init__(self) -> None:
            self.absmax = torch.ones(16)
            self.state2 = type("S2", (), {})()
            self.state2.absmax = torch.ones(4)

    model = torch.nn.Linear(8, 8, bias=False)
    model.weight.quant_state = QuantState()  # type: ignore[attr-defined]
    sizes = dict(model_storages(model))
    assert sorted(sizes.values()) == [16, 64, 256]
    assert storage_bytes(model) == 8 * 8 * 4 + 16 * 4 + 4 * 4
