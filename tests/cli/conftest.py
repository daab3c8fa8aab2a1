"""A small CSV and a config naming its columns, for the commands run end to end."""

import numpy as np
import pandas as pd
import pytest

CONFIG = """\
input_features:
  - {name: a, type: number}
  - {name: b, type: category}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 8, batch_size: 32, learning_rate: 0.01, eval_batch_size: 256, early_stop: -1}
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    rng = np.random.default_rng(0)
    a = rng.normal(size=300)
    df = pd.DataFrame({"a": a, "b": rng.choice(["x", "z"], 300), "y": a > 0})
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    return tmp_path, config, data
