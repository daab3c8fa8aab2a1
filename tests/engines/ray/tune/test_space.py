"""Ludwig's spaces between the config and Tune (no Ray: the values, not the domains)."""

from __future__ import annotations

from ludwig_nb.engines.ray.tune.space import decode, encode

PARAMETERS = {
    "trainer.learning_rate": {"space": "loguniform", "lower": 0.001, "upper": 0.1},
    "combiner": {"space": "choice", "categories": [{"type": "concat"}, {"type": "tabnet"}]},
    "trainer.batch_size": {"space": "grid_search", "values": [16, 32]},
}


def test_choices_of_mappings_travel_as_indices_and_come_back_as_values():
    values = {
        "trainer.learning_rate": 0.01,
        "combiner": {"type": "tabnet"},
        "trainer.batch_size": 32,
    }
    encoded = encode(PARAMETERS, values)
    assert encoded == {"trainer.learning_rate": 0.01, "combiner": 1, "trainer.batch_size": 32}
    assert decode(PARAMETERS, encoded) == values
    assert decode(PARAMETERS, {"unknown": 1}) == {}
