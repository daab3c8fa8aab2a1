"""The bundled demo datasets load, match their configs and carry their licences."""

from __future__ import annotations

import pytest
import yaml

from ludwig_nb.data import DEMO_DATASETS, DataError, check_dataset, demo_config, demo_dataset


@pytest.mark.parametrize("name", sorted(DEMO_DATASETS))
def test_demo_dataset_fits_its_config(name):
    config = yaml.safe_load(demo_config(name).read_text())
    frame = check_dataset(config, demo_dataset(name))
    assert len(frame) > 300
    assert name in (demo_dataset(name).parent / "LICENSES.md").read_text()


def test_demo_datasets_are_small_and_named():
    total = sum(demo_dataset(n).stat().st_size for n in DEMO_DATASETS)
    assert total < 2_000_000
    with pytest.raises(DataError, match="choose one of churn"):
        demo_dataset("iris")


def test_demo_configs_render():
    from ludwig_nb.config import load_config

    for name in DEMO_DATASETS:
        assert load_config(demo_config(name).read_text()).to_dict()["output_features"]


def test_demo_name_is_accepted_wherever_a_dataset_is():
    from ludwig_nb.data import load_dataset, load_table

    frame = load_table("demo:churn")
    assert len(frame) == 5000 and "churn" in frame.columns
    splits = load_dataset({"training": "demo:cars", "test": "demo:cars"})
    assert set(splits) == {"training", "test"}
    config = yaml.safe_load(demo_config("churn").read_text())
    assert len(check_dataset(config, "demo:churn")) == 5000
    with pytest.raises(DataError, match="no demo dataset 'housing'; choose one of churn, cars"):
        load_table("demo:housing")
