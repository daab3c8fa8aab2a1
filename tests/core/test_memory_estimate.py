import json

from ludwig_nb.core.memory_estimate import GPUS, PARTS, Advice, GpuFit, MemoryEstimate, fits_table

GIB = 1 << 30


def _estimate(**changes):
    parts = dict.fromkeys(PARTS, GIB)
    fields = {
        "parts": parts,
        "model": "HuggingFaceTB/SmolLM2-135M",
        "parameters": 134_515_008,
        "trainable": 921_600,
        "batch_size": 8,
        "sequence_length": 412,
        "device": "no GPU on this machine",
        "gpus": (
            GpuFit("T4 16 GB", 15 * GIB, False, -2 * GIB, 3600.0, "an extrapolation"),
            GpuFit("H100 80 GB", 79 * GIB, True, 73 * GIB, 300.0, "an extrapolation"),
        ),
        "advice": (Advice("quantization: {bits: 4}", 4 * GIB, ("T4 16 GB",)),),
        "notes": ("activations measured on 2-layer copies",),
    }
    return MemoryEstimate(**{**fields, **changes})


def test_the_total_is_the_parts():
    est = _estimate()
    assert est.total_bytes == 6 * GIB
    assert est.fits_here is None
    assert _estimate(device="H100", device_bytes=80 * GIB).fits_here is True
    assert _estimate(device="T4", device_bytes=5 * GIB).fits_here is False


def test_text_names_every_part_the_gpus_and_the_advice():
    text = str(_estimate())
    assert "≈ 6.0 GiB" in text
    assert "412 tokens, the longest row" in text
    for words in ("weights", "gradients", "optimizer states", "activations", "CUDA context"):
        assert words in text
    assert "T4 16 GB: does NOT fit, 2.0 GiB short" in text
    assert "H100 80 GB: fits, 73.0 GiB free; training ≈ 5 min" in text
    assert "try quantization: {bits: 4}: ≈ 4.0 GiB (fits T4 16 GB)" in text
    assert "this machine: no GPU on this machine" in text


def test_html_escapes_and_carries_the_table():
    html = _estimate(model="<evil>")._repr_html_()
    assert "&lt;evil&gt;" in html and "<evil>" not in html
    assert "does not fit" in html
    assert "921,600 of 134,515,008 parameters train" in html
    assert fits_table(()) == ""


def test_json_round_trip_of_the_dict():
    data = json.loads(json.dumps(_estimate().to_dict()))
    assert data["total_bytes"] == 6 * GIB
    assert data["parts"]["activations"] == GIB
    assert data["gpus"][0]["fits"] is False


def test_the_gpu_table_is_the_common_cards():
    names = [g.name for g in GPUS]
    assert names == ["T4 16 GB", "L4 24 GB", "A10 24 GB", "A100 40 GB", "A100 80 GB", "H100 80 GB"]
    assert [g.bf16 for g in GPUS].count(False) == 1  # the T4 computes in float16
    assert all(g.half_flops > g.fp32_flops for g in GPUS)
